use onekernel::prelude::*;

#[kernel(workgroup_size = 64)]
fn k(out: &mut [F16Vec2]) {
    let i = global_id().x;
    if i < out.len() {
        out[i] = F16Vec2::X;
    }
}

fn main() {}
