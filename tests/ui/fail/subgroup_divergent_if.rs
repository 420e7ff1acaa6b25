use onekernel::prelude::*;

#[kernel(workgroup_size = 64)]
fn guarded_sum(x: &[f32], out: &mut [f32]) {
    let i = global_id().x;
    if i < x.len() {
        out[i] = subgroup_add(x[i]);
    }
}

fn main() {}
