use onekernel::prelude::*;

#[helper]
fn first(a: &[f32]) -> f32 {
    a[0]
}

#[kernel(workgroup_size = 64)]
fn k(a: &[f32], out: &mut [f32]) {
    let i = global_id().x;
    out[i] = first(a);
}

fn main() {}
