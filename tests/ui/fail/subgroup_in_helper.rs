use onekernel::prelude::*;

#[helper]
fn warp_total(v: f32) -> f32 {
    subgroup_add(v)
}

#[kernel(workgroup_size = 64)]
fn totals(x: &[f32], out: &mut [f32]) {
    let i = global_id().x;
    out[i] = warp_total(x[i]);
}

fn main() {}
