//! docs/cpu-executor.md: the borrow checker stops one buffer from being
//! read and written by the same launch (what makes `&[T]` parameters
//! plain shared slices on the CPU sound).
use onekernel::prelude::*;

#[kernel(workgroup_size = 256)]
fn vector_add(a: &[f32], b: &[f32], out: &mut [f32]) {
    let i = global_id().x;
    if i < out.len() {
        out[i] = a[i] + b[i];
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let device = Device::cpu();
    let n = 4;
    let mut x = Buffer::<f32>::zeroed(&device, n)?;
    vector_add::launch(&device, n, &x, &x, &mut x)?;
    Ok(())
}
