use onekernel::prelude::*;

#[kernel(workgroup_size = 64)]
fn k(a: &[f32], out: &mut [f32]) {
    let i = global_id().x;
    let b: Box<f32> = Box::new(a[i]);
    out[i] = *b;
}

fn main() {}
