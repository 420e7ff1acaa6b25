use onekernel::prelude::*;

#[kernel(workgroup_size = 64)]
fn k(a: &[f32], out: &mut [f32]) {
    let i = global_id().x;
    let x = a[i];
    let r = &x;
    out[i] = *r * 2.0;
}

fn main() {}
