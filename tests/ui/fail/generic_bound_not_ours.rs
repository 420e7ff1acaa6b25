use onekernel::prelude::*;
use std::ops::Add;

// A bound that is not one of the element traits: one error per bound.
#[kernel(workgroup_size = 64)]
fn k<T: Clone>(a: &[T], out: &mut [T]) {
    let i = global_id().x;
    out[i] = a[i];
}

#[kernel(workgroup_size = 64)]
fn k2<T>(a: &[T], out: &mut [T])
where
    T: Add<Output = T>,
{
    let i = global_id().x;
    out[i] = a[i] + a[i];
}

fn main() {}
