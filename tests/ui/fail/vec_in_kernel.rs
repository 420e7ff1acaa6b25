use onekernel::prelude::*;

#[kernel(workgroup_size = 64)]
fn k(out: &mut [f32]) {
    let i = global_id().x;
    let tmp = vec![0.0f32; 4];
    out[i] = 1.0;
}

fn main() {}
