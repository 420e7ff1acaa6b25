use onekernel::prelude::*;

#[kernel(workgroup_size = 64, workgroup_size = 128)]
fn k(out: &mut [f32]) {
    out[0] = 1.0;
}

fn main() {}
