use onekernel::prelude::*;

// `T::EPSILON` is not a constant of `Num`.
#[kernel(workgroup_size = 64)]
fn k<T: Float>(a: &[T], out: &mut [T]) {
    let i = global_id().x;
    if i < out.len() {
        out[i] = a[i] + T::EPSILON;
    }
}

fn main() {}
