use onekernel::prelude::*;

// The GPU's bit-counting instructions are 32-bit only.
#[kernel(workgroup_size = 64)]
fn k(a: &[i64], out: &mut [u32]) {
    let i = global_id().x;
    out[i] = a[i].count_ones();
}

fn main() {}
