use onekernel::prelude::*;

// Rust can evaluate `u32::BITS`; the kernel compiler cannot (yet).
#[kernel(workgroup_size = 64)]
fn k(out: &mut [u32]) {
    const WIDTH: u32 = u32::BITS;
    out[global_id().x] = WIDTH;
}

fn main() {}
