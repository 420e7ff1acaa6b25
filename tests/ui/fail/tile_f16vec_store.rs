use onekernel::prelude::*;

// Tiles load from `f16` vectors, but an accumulator is stored to scalars.
#[kernel(workgroup_size = 32)]
fn k(a: &[F16Vec4], out: &mut [F16Vec4]) {
    let ta = onekernel::tile::MatrixA::<16, 16>::load(&a, 0, 4);
    let tb = onekernel::tile::MatrixB::<16, 16>::load(&a, 64, 4);
    let c = onekernel::tile::mma(ta, tb, onekernel::tile::Accumulator::<f16, 16, 16>::zeros());
    c.store(&mut out, 0, 4);
}

fn main() {}
