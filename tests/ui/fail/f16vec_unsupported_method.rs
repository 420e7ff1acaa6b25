use onekernel::prelude::*;

#[kernel(workgroup_size = 64)]
fn k(a: &[F16Vec4], out: &mut [F16Vec4]) {
    let i = global_id().x;
    if i < a.len() {
        out[i] = a[i].sqrt();
    }
}

fn main() {}
