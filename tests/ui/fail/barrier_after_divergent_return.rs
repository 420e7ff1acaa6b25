use onekernel::prelude::*;

#[kernel(workgroup_size = 64)]
fn guarded(a: &[f32], out: &mut [f32]) {
    let tile = shared::<[f32; 64]>();
    let i = global_id().x;
    if i >= a.len() {
        return;
    }
    tile[thread_id().x] = a[i];
    workgroup_barrier();
    out[i] = tile[0];
}

fn main() {}
