use onekernel::prelude::*;

#[kernel(workgroup_size = 64)]
fn first_of_buffer(x: &[u32], out: &mut [u32]) {
    let n = workgroup_uniform_load(&x[0]);
    out[global_id().x] = n;
}

fn main() {}
