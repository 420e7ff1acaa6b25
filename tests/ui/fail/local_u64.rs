use onekernel::prelude::*;

#[kernel(workgroup_size = 64)]
fn k(a: &[u32], out: &mut [u32]) {
    let i = global_id().x;
    let wide: u64 = 1;
    out[i] = a[i];
}

fn main() {}
