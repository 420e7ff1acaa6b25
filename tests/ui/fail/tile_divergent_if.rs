use onekernel::half::f16;
use onekernel::prelude::*;

#[kernel(workgroup_size = 32)]
fn tiles(a: &[f16], b: &[f16], c: &mut [f32]) {
    let mut acc = onekernel::tile::Accumulator::<f32, 16, 16>::zeros();
    if thread_id().x < 16 {
        let ta = onekernel::tile::MatrixA::<16, 16>::load(&a, 0, 16);
        acc = onekernel::tile::mma(ta, onekernel::tile::MatrixB::<16, 16>::load(&b, 0, 16), acc);
    }
    acc.store(&mut c, 0, 16);
}

fn main() {}
