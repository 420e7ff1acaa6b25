use onekernel::prelude::*;

#[kernel(workgroup_size = 64)]
fn k(a: &[u32], out: &mut [u32]) {
    let i = global_id().x;
    out[i] = match (a[i], 1u32) {
        (0, _) => 1,
        _ => 2,
    };
}

fn main() {}
