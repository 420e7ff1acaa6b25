use onekernel::prelude::*;

#[kernel(workgroup_size = 64)]
fn k(out: &mut [f32]) {
    let i = global_id().x;
    // 65536 x 65536 elements: far past what a thread keeps, and past the
    // 4 GiB a GPU type may take.
    let tile = [[0.0f32; 65536]; 65536];
    out[i] = tile[0][0];
}

fn main() {}
