use onekernel::prelude::*;

const SCALE: f32 = 2.0;

// A kernel's launch supplies the constants of its scope; a helper is
// compiled on its own and sees only its own body.
#[helper]
fn scaled(x: f32) -> f32 {
    x * SCALE
}

#[kernel(workgroup_size = 64)]
fn scale(a: &[f32], out: &mut [f32]) {
    out[global_id().x] = scaled(a[global_id().x]);
}

fn main() {}
