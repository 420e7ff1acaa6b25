use onekernel::prelude::*;

// `F16Vec4` lanes are `f16`: arithmetic with an `f32` is a type error.
#[kernel(workgroup_size = 64)]
fn k(a: &[F16Vec4], out: &mut [F16Vec4]) {
    let i = global_id().x;
    if i < a.len() {
        out[i] = a[i] * 2.0f32;
    }
}

fn main() {}
