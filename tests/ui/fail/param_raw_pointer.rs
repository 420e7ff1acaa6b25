use onekernel::prelude::*;

#[kernel(workgroup_size = 64)]
fn k(p: *const f32, out: &mut [f32]) {
    let i = global_id().x;
    out[i] = 1.0;
}

fn main() {}
