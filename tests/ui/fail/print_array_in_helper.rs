use onekernel::prelude::*;

// A helper prints as a kernel does, and the same values: the error is at
// the helper's argument.
#[helper]
fn show(x: f32) -> f32 {
    let pair = [x, 2.0];
    println!("{:?}", pair);
    x
}

#[kernel(workgroup_size = 64)]
fn k(a: &[f32], out: &mut [f32]) {
    let i = global_id().x;
    out[i] = show(a[i]);
}

fn main() {}
