use onekernel::prelude::*;

// A const parameter is a WGSL `override`: a 32-bit `u32`, `i32` or
// `usize`; rustc refuses a default.
#[kernel(workgroup_size = 64)]
fn wide<const N: u64>(out: &mut [u32]) {
    out[global_id().x] = 1;
}

#[kernel(workgroup_size = 64)]
fn flag<const B: bool>(out: &mut [u32]) {
    out[global_id().x] = 1;
}

#[kernel(workgroup_size = 64)]
fn defaulted<const N: u32 = 4>(out: &mut [u32]) {
    out[global_id().x] = 1;
}

// An array's length is a `usize` in Rust: rustc refuses a `u32` there.
#[kernel(workgroup_size = 64)]
fn sized<const N: u32>(out: &mut [f32]) {
    let tile = shared::<[f32; N]>();
    out[global_id().x] = tile[0];
}

fn main() {}
