use onekernel::prelude::*;

#[helper]
fn square(x: f32) -> f32 {
    x * x
}

#[kernel(workgroup_size = 64)]
fn k(a: &[f32], out: &mut [f32]) {
    let i = global_id().x;
    out[i] = square(a);
}

fn main() {}
