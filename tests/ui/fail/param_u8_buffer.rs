use onekernel::prelude::*;

#[kernel(workgroup_size = 64)]
fn k(bytes: &[u8], out: &mut [u32]) {
    let i = global_id().x;
    out[i] = bytes[i] as u32;
}

fn main() {}
