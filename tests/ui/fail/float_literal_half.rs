use onekernel::prelude::*;

#[kernel(workgroup_size = 64)]
fn k(out: &mut [u32]) {
    let i = global_id().x;
    // An unused, untyped float literal is an f64 for rustc: the help
    // suggests this literal's own value with the suffix.
    let half = 0.5;
    out[i] = 1;
}

fn main() {}
