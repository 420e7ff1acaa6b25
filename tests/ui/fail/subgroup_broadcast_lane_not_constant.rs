use onekernel::prelude::*;

#[kernel(workgroup_size = 64)]
fn from_lane(x: &[u32], out: &mut [u32], lane: u32) {
    let i = global_id().x;
    out[i] = subgroup_broadcast(x[i], lane);
}

fn main() {}
