use onekernel::prelude::*;

#[kernel(workgroup_size = 64)]
fn k(limit: Option<u32>, out: &mut [u32]) {
    let i = global_id().x;
    out[i] = 1;
}

fn main() {}
