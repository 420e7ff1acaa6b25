use onekernel::prelude::*;

// A literal is not a `T`: rustc says so at the generic body, which it
// checks once with the bound. Write `T::ONE + T::ONE`, or pass the value.
#[kernel(workgroup_size = 64)]
fn double<T: Num>(a: &[T], out: &mut [T]) {
    let i = global_id().x;
    if i < out.len() {
        out[i] = a[i] * 2.0;
    }
}

fn main() {}
