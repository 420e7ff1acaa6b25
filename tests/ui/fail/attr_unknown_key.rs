use onekernel::prelude::*;

#[kernel(workgroup_size = 64, block_size = 64)]
fn k(out: &mut [f32]) {
    out[0] = 1.0;
}

fn main() {}
