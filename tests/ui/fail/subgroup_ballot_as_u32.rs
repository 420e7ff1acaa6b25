use onekernel::prelude::*;

// `subgroup_ballot` returns WGSL's whole mask, a `UVec4`, not a `u32`.
#[kernel(workgroup_size = 64)]
fn voters(x: &[f32], out: &mut [u32]) {
    let i = global_id().x;
    let mask: u32 = subgroup_ballot(x[i] > 0.0);
    out[i] = mask;
}

fn main() {}
