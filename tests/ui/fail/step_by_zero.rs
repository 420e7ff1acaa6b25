use onekernel::prelude::*;

#[kernel(workgroup_size = 64)]
fn k(out: &mut [u32]) {
    let mut s = 0u32;
    for j in (0..8u32).step_by(0) {
        s += j;
    }
    out[global_id().x] = s;
}

fn main() {}
