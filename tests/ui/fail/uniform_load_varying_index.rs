use onekernel::prelude::*;

#[kernel(workgroup_size = 64)]
fn per_thread(x: &[u32], out: &mut [u32]) {
    let tile = shared::<[u32; 64]>();
    let t = thread_id().x;
    tile[t] = x[global_id().x];
    let v = workgroup_uniform_load(&tile[t]);
    out[global_id().x] = v;
}

fn main() {}
