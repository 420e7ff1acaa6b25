use onekernel::prelude::*;

#[kernel(workgroup_size = 64)]
fn steps(out: &mut [u32]) {
    let i = global_id().x;
    for _ in 0..i {
        workgroup_barrier();
    }
    out[i] = 1;
}

fn main() {}
