use onekernel::prelude::*;

const SCALE: f64 = 2.0;
const UNUSED: u32 = 3;
const BLOCK: u32 = 64;

// A constant of the kernel's Rust scope becomes a WGSL `override`: `u32`,
// `i32`, `usize`, `f32` or `bool`, of a type its uses tell.
#[kernel(workgroup_size = 64)]
fn wide(a: &[f64], out: &mut [f64]) {
    let i = global_id().x;
    out[i] = a[i] * SCALE;
}

#[kernel(workgroup_size = 64)]
fn untyped(out: &mut [u32]) {
    let n = UNUSED;
    out[global_id().x] = 1;
}

// An array's length is a `usize` in Rust: rustc refuses a `u32` there.
#[kernel(workgroup_size = 64)]
fn sized(out: &mut [f32]) {
    let tile = shared::<[f32; BLOCK]>();
    out[global_id().x] = tile[0];
}

fn main() {}
