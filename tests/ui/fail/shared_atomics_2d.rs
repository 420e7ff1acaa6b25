use onekernel::prelude::*;
use std::sync::atomic::AtomicU32;

#[kernel(workgroup_size = 64)]
fn bins(out: &mut [u32]) {
    let counts = shared::<[[AtomicU32; 8]; 8]>();
    workgroup_barrier();
    out[global_id().x] = 0;
}

fn main() {}
