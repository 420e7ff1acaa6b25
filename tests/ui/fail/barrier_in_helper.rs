use onekernel::prelude::*;

#[helper]
fn sync_and_double(x: f32) -> f32 {
    workgroup_barrier();
    x * 2.0
}

#[kernel(workgroup_size = 64)]
fn doubled(a: &[f32], out: &mut [f32]) {
    let i = global_id().x;
    out[i] = sync_and_double(a[i]);
}

fn main() {}
