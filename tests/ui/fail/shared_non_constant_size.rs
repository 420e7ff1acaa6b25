use onekernel::prelude::*;

const TILE: usize = 64;

#[kernel(workgroup_size = 64)]
fn staged(a: &[f32], out: &mut [f32]) {
    let tile = shared::<[f32; TILE]>();
    let t = thread_id().x;
    tile[t] = a[global_id().x];
    workgroup_barrier();
    out[global_id().x] = tile[t];
}

fn main() {}
