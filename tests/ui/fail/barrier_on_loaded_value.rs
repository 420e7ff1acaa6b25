use onekernel::prelude::*;

#[kernel(workgroup_size = 64)]
fn data_dependent(flags: &[u32], out: &mut [u32]) {
    let i = global_id().x;
    let flag = flags[i];
    while flag > 0 {
        workgroup_barrier();
        break;
    }
    out[i] = flag;
}

fn main() {}
