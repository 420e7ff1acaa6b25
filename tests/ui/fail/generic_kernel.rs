use onekernel::prelude::*;

// A type parameter without a bound: one error, which says which bounds
// there are; the parameters that use `T` add none.
#[kernel(workgroup_size = 64)]
fn k<T>(a: &[T], out: &mut [T]) {
    let i = global_id().x;
    out[i] = a[i];
}

fn main() {}
