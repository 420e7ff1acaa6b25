use onekernel::prelude::*;

#[kernel(workgroup_size = 64)]
fn k(a: &[Vec3], out: &mut [f32]) {
    let i = global_id().x;
    if i < a.len() {
        out[i] = a[i].x;
    }
}

fn main() {}
