use onekernel::prelude::*;

// The kernel declares 20000 bytes of shared memory and asks for 32768.
#[kernel(workgroup_size = 256, max_shared_bytes = 20000)]
fn big_tile(out: &mut [f32]) {
    let tile = shared::<[[f32; 128]; 64]>();
    tile[0][thread_id().x % 128] = 1.0;
    workgroup_barrier();
    out[global_id().x] = tile[0][0];
}

fn main() {}
