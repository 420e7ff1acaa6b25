use onekernel::prelude::*;
use std::sync::atomic::{AtomicU32, Ordering};

#[kernel(workgroup_size = 64)]
fn claim(slots: &[AtomicU32], out: &mut [u32]) {
    let i = global_id().x;
    let r = slots[0].compare_exchange(0, 1, Ordering::Relaxed, Ordering::Relaxed);
    out[i] = 1;
}

fn main() {}
