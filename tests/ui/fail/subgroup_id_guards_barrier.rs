use onekernel::prelude::*;

// `subgroup_id()` differs between the subgroups of a block, so it cannot
// guard a barrier (`num_subgroups()` could: it is the same in the block).
#[kernel(workgroup_size = 64)]
fn first_subgroup_waits(out: &mut [u32]) {
    let tile = shared::<[u32; 64]>();
    let t = thread_id().x;
    tile[t] = subgroup_invocation_id();
    if subgroup_id() < num_subgroups() - 1 {
        workgroup_barrier();
    }
    out[global_id().x] = tile[63 - t];
}

fn main() {}
