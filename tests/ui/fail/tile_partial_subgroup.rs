use onekernel::half::f16;
use onekernel::prelude::*;

#[kernel(workgroup_size = 16)]
fn tiles(a: &[f16], c: &mut [f16]) {
    let t = onekernel::tile::Accumulator::<f16, 16, 16>::load(&a, 0, 16);
    t.store(&mut c, 0, 16);
}

fn main() {}
