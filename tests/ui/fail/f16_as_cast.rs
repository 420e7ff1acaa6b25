use onekernel::prelude::*;

// `half::f16` is not a primitive: rustc has no `as` for it (the kernel
// leaves the error to rustc, which says so once).
#[kernel(workgroup_size = 64)]
fn k(h: &[f16], out: &mut [f32]) {
    let i = global_id().x;
    out[i] = h[i] as f32;
}

fn main() {}
