use onekernel::prelude::*;

// `Num` has no unary minus (`u32` has none): rustc's error at the generic
// body, which it checks once with the bound. `T: Float` has it.
#[kernel(workgroup_size = 64)]
fn negate<T: Num>(a: &[T], out: &mut [T]) {
    let i = global_id().x;
    if i < out.len() {
        out[i] = -a[i];
    }
}

fn main() {}
