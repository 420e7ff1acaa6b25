use onekernel::prelude::*;

#[kernel(workgroup_size = 64)]
fn rows(out: &mut [f32]) {
    let tile = shared::<[[f32; 8]; 8]>();
    tile[thread_id().x % 8][0] = 1.0;
    workgroup_barrier();
    out[global_id().x] = tile[1];
}

fn main() {}
