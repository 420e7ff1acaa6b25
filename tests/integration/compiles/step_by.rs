use onekernel::prelude::*;

#[kernel(workgroup_size = 64)]
fn strided(a: &[f32], out: &mut [f32]) {
    let i = global_id().x;
    let mut sum = 0.0f32;
    for j in (i..a.len()).step_by(64) {
        sum += a[j];
    }
    for k in (0..=10u32).step_by(5) {
        sum += k as f32;
    }
    let stride = grid_dim().x * block_dim().x;
    for j in (i..out.len()).step_by(stride) {
        out[j] = sum;
    }
}

#[test]
fn compiles_and_runs() {
    println!("{}", strided::WGSL.len());
}
