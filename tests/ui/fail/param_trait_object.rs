use onekernel::prelude::*;

#[kernel(workgroup_size = 64)]
fn k(f: &dyn Fn(f32) -> f32, a: &[f32], out: &mut [f32]) {
    let i = global_id().x;
    out[i] = f(a[i]);
}

fn main() {}
