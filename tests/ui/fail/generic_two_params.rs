use onekernel::prelude::*;

// One type parameter at most (const parameters aside); lifetime parameters are not
// generics a kernel can have.
#[kernel(workgroup_size = 64)]
fn k<T: Num, U: Num>(a: &[T], out: &mut [U]) {
    let i = global_id().x;
}

#[kernel(workgroup_size = 64)]
fn k2<'a, T: Num>(a: &'a [T], out: &mut [T]) {
    let i = global_id().x;
    out[i] = a[i];
}

fn main() {}
