use onekernel::prelude::*;

#[kernel(workgroup_size = 64)]
fn k(a: &[f32], out: &mut [f32]) {
    let i = global_id().x;
    let double = |x: f32| x * 2.0;
    out[i] = a[i];
}

fn main() {}
