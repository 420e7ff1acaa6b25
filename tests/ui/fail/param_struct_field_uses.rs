use onekernel::prelude::*;

struct Params {
    scale: f32,
    offset: f32,
}

// One error for the struct parameter; its field uses add none.
#[kernel(workgroup_size = 64)]
fn k(a: &[f32], out: &mut [f32], p: Params) {
    let i = global_id().x;
    if i < out.len() {
        out[i] = a[i] * p.scale + p.offset;
    }
}

fn main() {}
