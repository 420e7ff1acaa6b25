use onekernel::prelude::*;

struct Point {
    x: f32,
    y: f32,
}

#[kernel(workgroup_size = 64)]
fn k(a: &[f32], out: &mut [f32]) {
    let i = global_id().x;
    let p = Point { x: a[i], y: 0.0 };
    out[i] = a[i];
}

fn main() {}
