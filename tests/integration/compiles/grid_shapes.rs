//! The launches docs/threads-blocks-grids.md shows, on the CPU executor.
use onekernel::prelude::*;

#[kernel(workgroup_size = (8, 4))]
pub fn builtins_2d(out: &mut [u32], width: u32) {
    let g = global_id();
    let idx = g.y * width as usize + g.x;
    if g.x < width as usize && idx < out.len() {
        out[idx] = 1;
    }
}

#[test]
fn compiles_and_runs() -> Result<(), Box<dyn std::error::Error>> {
    let device = Device::cpu();
    let (w, h) = (21usize, 13usize);
    let mut out = Buffer::<u32>::zeroed(&device, w * h)?;
    // one thread per pixel of a w x h image, in 8 x 4 blocks
    builtins_2d::launch(&device, Grid::threads([w, h]), &mut out, w as u32)?;
    assert!(out.read()?.iter().all(|&v| v == 1));
    // 2 x 2 x 3 blocks of 8 x 4 x 1 threads
    builtins_2d::launch(&device, Grid::blocks([2, 2, 3]), &mut out, 16)?;
    Ok(())
}
