use onekernel::prelude::*;

#[kernel(workgroup_size = 64)]
fn k(out: &mut [Vec4]) {
    let i = global_id().x;
    if i < out.len() {
        out[i].x = 1.0;
    }
}

fn main() {}
