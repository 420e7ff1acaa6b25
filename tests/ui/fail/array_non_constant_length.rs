use onekernel::prelude::*;

// An array's length is fixed when the kernel is compiled.
#[kernel(workgroup_size = 64)]
fn k(out: &mut [f32], n: u32) {
    let i = global_id().x;
    let scratch = [0.0f32; n];
    out[i] = scratch[0];
}

fn main() {}
