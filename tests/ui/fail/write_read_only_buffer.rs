use onekernel::prelude::*;

#[kernel(workgroup_size = 64)]
fn k(a: &[f32], b: &[f32]) {
    let i = global_id().x;
    a[i] = b[i] * 2.0;
}

fn main() {}
