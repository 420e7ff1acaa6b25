use onekernel::prelude::*;

#[kernel(workgroup_size = 64)]
fn k(a: &[Vec4], out: &mut [Vec4]) {
    let i = global_id().x;
    if i < a.len() {
        out[i] = a[i].powf(2.0);
    }
}

fn main() {}
