use onekernel::prelude::*;

#[kernel(workgroup_size = 64)]
fn k(out: &mut [u32]) {
    let i = global_id().w;
    out[i] = 1;
}

fn main() {}
