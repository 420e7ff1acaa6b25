//! Learning path, step 1: **map** (docs/learning-path.md).
//!
//! The simplest GPU program: apply the same operation to every element of a
//! vector, with one GPU thread per element. Here each thread adds a constant
//! `c` (a scalar parameter of the kernel) to its element.
//!
//!     cargo run --example map              # run and check on every device
//!     cargo run --example map -- --wgsl    # print the generated WGSL

mod common;

use onekernel::prelude::*;

/// `out[i] = a[i] + c`, one thread per element.
///
/// A kernel is a plain Rust function, but it describes the work of ONE
/// thread. The launch runs it once per thread, thousands of times in
/// parallel; each run asks "who am I?" with `global_id()` and works on that
/// element only. There is no loop over the data: the grid *is* the loop.
#[kernel(workgroup_size = 256)]
fn map(a: &[f32], out: &mut [f32], c: f32) {
    // This thread's position in the whole grid: 0, 1, 2, ...
    let i = global_id().x;
    // Threads come in blocks of 256 (the `workgroup_size`), so the launch
    // rounds the thread count up to a multiple of 256: with 1000 elements,
    // 1024 threads run. The last 24 have no element and must do nothing
    // (step 3, `guards`, is about this).
    if i < out.len() {
        out[i] = a[i] + c;
    }
}

/// The same computation as a plain Rust loop: what the kernel must match.
fn map_reference(a: &[f32], c: f32) -> Vec<f32> {
    a.iter().map(|x| x + c).collect()
}

/// Uploads `a`, launches `map` with one thread per element, reads `out` back.
fn run(device: &Device, a: &[f32], c: f32) -> Result<Vec<f32>, Box<dyn std::error::Error>> {
    // Buffers live in the device's memory (on the GPU: VRAM).
    let a_buf = Buffer::from_slice(device, a)?;
    let mut out = Buffer::<f32>::zeroed(device, a.len())?;
    // Grid: `a.len()` threads (rounded up to whole blocks). The arguments
    // follow the kernel's parameters: `&Buffer` for `&[f32]`, `&mut Buffer`
    // for `&mut [f32]`, a plain value for the scalar `c`.
    map::launch(device, a.len(), &a_buf, &mut out, c)?;
    // On the GPU `launch` only queues the work; `read` waits for it.
    Ok(out.read()?)
}

/// Some input data: `0, 0.5, 1, ..., 8, 0, 0.5, ...`.
fn input(n: usize) -> Vec<f32> {
    (0..n).map(|i| (i % 17) as f32 * 0.5).collect()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    if common::wants_wgsl() {
        println!("{}", map::WGSL);
        return Ok(());
    }
    let a = input(1000);
    let want = map_reference(&a, 10.0);
    for device in common::devices(false) {
        let got = run(&device, &a, 10.0)?;
        // An f32 addition is exact to the last bit on every device.
        common::check("map", &got, &want, 0.0);
        println!("ok on {}", device.name());
    }
    Ok(())
}

#[test]
fn cpu_and_gpu_agree_with_plain_rust() {
    // 1 element; 1000 (not a multiple of 256: the last block is partly
    // idle); 256 * 40 + 3 (41 blocks).
    for n in [1, 1000, 256 * 40 + 3] {
        let a = input(n);
        for device in common::devices(true) {
            let got = run(&device, &a, -3.25).unwrap();
            common::check(&format!("map n={n} on {}", device.name()), &got, &map_reference(&a, -3.25), 0.0);
        }
    }
}
