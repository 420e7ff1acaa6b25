use onekernel::prelude::*;

// `f16` has no literals: rustc's mismatched types, once.
#[kernel(workgroup_size = 64)]
fn k(h: &[f16], out: &mut [f16]) {
    let i = global_id().x;
    out[i] = h[i] * 0.5;
}

fn main() {}
