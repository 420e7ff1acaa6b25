use onekernel::prelude::*;

#[kernel(workgroup_size = 64)]
fn k(out: &mut [u32]) {
    let i = global_id(0).x;
    out[i] = 1;
}

fn main() {}
