use onekernel::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering};

#[kernel(workgroup_size = 64)]
fn count(total: &[AtomicU64]) {
    total[0].fetch_add(1, Ordering::Relaxed);
}

fn main() {}
