use onekernel::prelude::*;
use onekernel::tile::MatrixA;

#[kernel(workgroup_size = 32)]
fn tiles(a: &[f32], out: &mut [f32]) {
    let t = MatrixA::<16, 16>::load(&a, 0, 16);
    out[0] = 0.0;
}

fn main() {}
