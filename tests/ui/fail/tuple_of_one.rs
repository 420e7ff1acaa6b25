use onekernel::prelude::*;

#[kernel(workgroup_size = 64)]
fn k(a: &[f32], out: &mut [f32]) {
    let i = global_id().x;
    let one = (a[i],);
    out[i] = one.0;
}

fn main() {}
