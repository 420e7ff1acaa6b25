use onekernel::prelude::*;

#[kernel(workgroup_size = 64)]
fn k(a: &[u32], out: &mut [u32]) {
    let i = global_id().x;
    let found = Some(a[i]);
    out[i] = 1;
}

fn main() {}
