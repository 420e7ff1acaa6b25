//! The launches docs/threads-blocks-grids.md shows, on the CPU executor and
//! the GPU.
use onekernel::prelude::*;

#[kernel(workgroup_size = (8, 4))]
pub fn builtins_2d(out: &mut [u32], width: u32) {
    let g = global_id();
    let idx = g.y * width as usize + g.x;
    if g.x < width as usize && idx < out.len() {
        out[idx] = 1;
    }
}

/// The elements `builtins_2d` sets when its grid covers `gx` x `gy`
/// threads (any depth) over `n` elements, in plain Rust.
fn builtins_2d_reference(n: usize, gx: usize, gy: usize, width: usize) -> Vec<u32> {
    let mut out = vec![0; n];
    for y in 0..gy {
        for x in 0..gx.min(width) {
            if let Some(v) = out.get_mut(y * width + x) {
                *v = 1;
            }
        }
    }
    out
}

#[test]
fn compiles_and_runs() -> Result<(), Box<dyn std::error::Error>> {
    let (w, h) = (21usize, 13usize);
    for device in super::devices() {
        let mut out = Buffer::<u32>::zeroed(&device, w * h)?;
        // one thread per pixel of a w x h image, in 8 x 4 blocks (rounded
        // up to 24 x 16 threads: the guard keeps the extra ones out)
        builtins_2d::launch(&device, Grid::threads([w, h]), &mut out, w as u32)?;
        assert_eq!(out.read()?, builtins_2d_reference(w * h, 24, 16, w), "{}", device.name());
        // 2 x 2 x 3 blocks of 8 x 4 x 1 threads: 16 x 8 threads (three
        // times over) of rows 16 wide, the first 128 elements
        let mut out = Buffer::<u32>::zeroed(&device, w * h)?;
        builtins_2d::launch(&device, Grid::blocks([2, 2, 3]), &mut out, 16)?;
        let want = builtins_2d_reference(w * h, 16, 8, 16);
        assert_eq!(want.iter().filter(|&&v| v == 1).count(), 128);
        assert_eq!(out.read()?, want, "{}", device.name());
    }
    Ok(())
}
