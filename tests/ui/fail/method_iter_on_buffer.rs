use onekernel::prelude::*;

#[kernel(workgroup_size = 64)]
fn k(a: &[f32], out: &mut [f32]) {
    let i = global_id().x;
    let total: f32 = a.iter().sum();
    out[i] = total;
}

fn main() {}
