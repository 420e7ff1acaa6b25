use onekernel::prelude::*;

#[kernel(workgroup_size = 64)]
fn partial_sums(out: &mut [f32]) {
    let tile = shared::<[f32; 64]>();
    let t = thread_id().x;
    tile[t] = t as f32;
    if t < 32 {
        workgroup_barrier();
    }
    out[global_id().x] = tile[63 - t];
}

fn main() {}
