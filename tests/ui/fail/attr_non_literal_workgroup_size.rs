use onekernel::prelude::*;

const N: u32 = 64;

#[kernel(workgroup_size = N * 2)]
fn k(out: &mut [f32]) {
    out[0] = 1.0;
}

fn main() {}
