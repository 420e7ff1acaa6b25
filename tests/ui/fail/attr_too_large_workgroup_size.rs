use onekernel::prelude::*;

#[kernel(workgroup_size = 1024)]
fn k(out: &mut [f32]) {
    out[0] = 1.0;
}

fn main() {}
