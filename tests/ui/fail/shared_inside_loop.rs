use onekernel::prelude::*;

#[kernel(workgroup_size = 64)]
fn per_round(out: &mut [f32]) {
    for r in 0..4 {
        let tile = shared::<[f32; 64]>();
        tile[thread_id().x] = r as f32;
        workgroup_barrier();
        out[global_id().x] += tile[0];
    }
}

fn main() {}
