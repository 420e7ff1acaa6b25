//! Learning path, step 3: **guards** (docs/learning-path.md).
//!
//! A GPU never launches "exactly n threads": it launches whole *blocks*
//! (WGSL workgroups) of a fixed size, here 256 threads. With n = 1000
//! elements that is 4 blocks = 1024 threads, and threads 1000..1023 have no
//! element. Every kernel therefore starts with a **guard**: a thread whose
//! index is past the end of the data does nothing.
//!
//! To make the point visible this example launches even more threads than
//! rounding up needs: `Grid::blocks(..)` asks for an exact number of blocks,
//! and we ask for two more than the data needs. The result is still right,
//! because the extra threads stop at the guard.
//!
//!     cargo run --example guards              # run and check on every device
//!     cargo run --example guards -- --wgsl    # print the generated WGSL

mod common;

use onekernel::prelude::*;

/// Threads per block, the same number as in `workgroup_size` below.
const BLOCK: usize = 256;

/// `out[i] = 2 * a[i] + 1`, for every `i < out.len()`; other threads return.
#[kernel(workgroup_size = 256)]
fn guards(a: &[f32], out: &mut [f32]) {
    let i = global_id().x;
    // The guard, written as an early return: "no element for me, stop".
    // `if i < out.len() { ... }` around the body is the same thing.
    // Without it, on the CPU executor the read `a[i]` would panic (out of
    // bounds) and the launch would return `Err`; on the GPU, wgpu contains
    // the stray access (it reads some element or 0, and may drop or
    // misplace the write): a silent bug instead of a crash.
    if i >= out.len() {
        return;
    }
    out[i] = 2.0 * a[i] + 1.0;
}

fn guards_reference(a: &[f32]) -> Vec<f32> {
    a.iter().map(|x| 2.0 * x + 1.0).collect()
}

/// Blocks needed for `n` elements, plus `extra` blocks that have no work.
fn blocks_for(n: usize, extra: usize) -> usize {
    n.div_ceil(BLOCK) + extra
}

/// Launches `guards` on `blocks_for(a.len(), 2)` blocks: at least 512
/// threads more than there are elements.
fn run(device: &Device, a: &[f32]) -> Result<Vec<f32>, Box<dyn std::error::Error>> {
    let a_buf = Buffer::from_slice(device, a)?;
    let mut out = Buffer::<f32>::zeroed(device, a.len())?;
    // `Grid::blocks(b)` means exactly `b` blocks of 256 threads, instead of
    // "at least `n` threads" (`a.len()` or `Grid::threads(n)`).
    guards::launch(device, Grid::blocks(blocks_for(a.len(), 2)), &a_buf, &mut out)?;
    Ok(out.read()?)
}

fn input(n: usize) -> Vec<f32> {
    (0..n).map(|i| (i % 100) as f32 - 50.0).collect()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    if common::wants_wgsl() {
        println!("{}", guards::WGSL);
        return Ok(());
    }
    let n = 1000;
    let threads = blocks_for(n, 2) * BLOCK;
    println!(
        "{n} elements, {} blocks of {BLOCK} = {threads} threads: {} threads stop at the guard",
        blocks_for(n, 2),
        threads - n
    );
    let a = input(n);
    let want = guards_reference(&a);
    for device in common::devices(false) {
        let got = run(&device, &a)?;
        common::check("guards", &got, &want, 0.0);
        println!("ok on {}", device.name());
    }
    Ok(())
}

#[test]
fn cpu_and_gpu_agree_with_plain_rust() {
    // 1 element (3 blocks, 767 idle threads); 1000 (not a multiple of 256);
    // 256 * 20 + 1 (21 blocks of work, 2 idle blocks).
    for n in [1, 1000, 256 * 20 + 1] {
        let a = input(n);
        let want = guards_reference(&a);
        for device in common::devices(true) {
            let got = run(&device, &a).unwrap();
            common::check(&format!("guards n={n} on {}", device.name()), &got, &want, 0.0);
        }
    }
}
