use onekernel::prelude::*;

#[kernel(workgroup_size = 64)]
fn k(out: &mut [UVec2]) {
    let i = global_id().x;
    if i < out.len() {
        out[i] = UVec2::NEG_ONE;
    }
}

fn main() {}
