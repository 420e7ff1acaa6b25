use onekernel::prelude::*;

#[kernel(workgroup_size = 64)]
fn count_positive(x: &[f32], out: &mut [u32]) {
    let i = global_id().x;
    let any = subgroup_add(x[i] > 0.0);
    out[i] = any as u32;
}

fn main() {}
