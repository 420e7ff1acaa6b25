use onekernel::prelude::*;
use std::sync::atomic::AtomicU32;

#[kernel(workgroup_size = 64)]
fn peek(counts: &[AtomicU32], out: &mut [u32]) {
    let i = global_id().x;
    out[i] = counts[i];
}

fn main() {}
