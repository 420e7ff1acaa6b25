use onekernel::half::f16;
use onekernel::prelude::*;

#[kernel(workgroup_size = 32)]
fn tiles(a: &[f16], out: &mut [f32]) {
    let t = onekernel::tile::MatrixA::<32, 16>::load(&a, 0, 16);
    out[0] = 0.0;
}

fn main() {}
