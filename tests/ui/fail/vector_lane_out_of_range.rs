use onekernel::prelude::*;

#[kernel(workgroup_size = 64)]
fn k(a: &[Vec4], out: &mut [f32]) {
    let i = global_id().x;
    if i < a.len() {
        let v = a[i];
        out[i] = v[4];
    }
}

fn main() {}
