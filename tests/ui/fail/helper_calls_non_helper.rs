use onekernel::prelude::*;

fn square(x: f32) -> f32 {
    x * x
}

#[helper]
fn norm(x: f32, y: f32) -> f32 {
    (square(x) + y * y).sqrt()
}

#[kernel(workgroup_size = 64)]
fn k(a: &[f32], b: &[f32], out: &mut [f32]) {
    let i = global_id().x;
    out[i] = norm(a[i], b[i]);
}

fn main() {}
