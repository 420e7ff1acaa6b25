use onekernel::prelude::*;

const TILE: usize = 64;

// A constant of the scope sizes shared memory (the launch sets it), but
// as one name: an expression of it is not a length Rust's const generics
// could write either.
#[kernel(workgroup_size = 64)]
fn staged(a: &[f32], out: &mut [f32]) {
    let tile = shared::<[f32; TILE + 1]>();
    let t = thread_id().x;
    tile[t] = a[global_id().x];
    workgroup_barrier();
    out[global_id().x] = tile[t];
}

fn main() {}
