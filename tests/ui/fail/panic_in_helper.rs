use onekernel::prelude::*;

#[helper]
fn checked_sqrt(x: f32) -> f32 {
    assert!(x >= 0.0, "negative input");
    x.sqrt()
}

#[kernel(workgroup_size = 64)]
fn k(a: &[f32], out: &mut [f32]) {
    let i = global_id().x;
    out[i] = checked_sqrt(a[i]);
}

fn main() {}
