use onekernel::prelude::*;

#[kernel(workgroup_size = 64)]
fn k(a: &[f32], out: &mut [f32]) {
    let i = global_id().x;
    out[i] = dbg!(a[i]);
}

fn main() {}
