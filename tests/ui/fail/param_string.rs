use onekernel::prelude::*;

#[kernel(workgroup_size = 64)]
fn k(name: String, out: &mut [f32]) {
    out[0] = 1.0;
}

fn main() {}
