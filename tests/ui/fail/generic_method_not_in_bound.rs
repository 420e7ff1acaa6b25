use onekernel::prelude::*;

// `Num` has no `sqrt` (the integers have none): rustc's error at the
// generic body. `T: Float` has it.
#[kernel(workgroup_size = 64)]
fn root<T: Num>(a: &[T], out: &mut [T]) {
    let i = global_id().x;
    if i < out.len() {
        out[i] = a[i].sqrt();
    }
}

fn main() {}
