use onekernel::prelude::*;

fn foo(x: f32) -> f32 {
    x + 1.0
}

#[kernel(workgroup_size = 64)]
fn k(a: &[f32], out: &mut [f32]) {
    let i = global_id().x;
    out[i] = foo(a[i]);
}

fn main() {}
