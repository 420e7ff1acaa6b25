use onekernel::prelude::*;

// Rust compares arrays; WGSL cannot.
#[kernel(workgroup_size = 64)]
fn k(a: &[f32], out: &mut [u32]) {
    let i = global_id().x;
    let p = [a[i], 1.0];
    let q = [1.0f32, a[i]];
    out[i] = if p == q { 1 } else { 0 };
}

fn main() {}
