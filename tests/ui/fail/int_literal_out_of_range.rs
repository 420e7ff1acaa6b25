use onekernel::prelude::*;

#[kernel(workgroup_size = 64)]
fn k(out: &mut [u32]) {
    let i = global_id().x;
    let x: u32 = 5_000_000_000;
    out[i] = x;
}

fn main() {}
