//! Learning path, step 2: **zip** (docs/learning-path.md).
//!
//! Combine two vectors element by element: `out[i] = a[i] + b[i]`. It is a
//! map (step 1) that reads two inputs at the same position. Each thread
//! still owns exactly one index `i`, and reads `a[i]` and `b[i]`.
//!
//!     cargo run --example zip              # run and check on every device
//!     cargo run --example zip -- --wgsl    # print the generated WGSL

mod common;

use onekernel::prelude::*;

/// `out[i] = a[i] + b[i]`, one thread per element.
///
/// Each buffer parameter becomes a binding of the shader: `&[f32]` is a
/// read-only storage buffer, `&mut [f32]` a read-write one (see the WGSL
/// with `--wgsl`). Threads never write the same element, so they need no
/// coordination at all: this is an "embarrassingly parallel" kernel.
#[kernel(workgroup_size = 256)]
fn zip(a: &[f32], b: &[f32], out: &mut [f32]) {
    let i = global_id().x;
    // Guard: the grid is rounded up to whole blocks of 256 threads.
    if i < out.len() {
        out[i] = a[i] + b[i];
    }
}

/// The plain Rust version: `Iterator::zip`, which gives the example its name.
fn zip_reference(a: &[f32], b: &[f32]) -> Vec<f32> {
    a.iter().zip(b).map(|(x, y)| x + y).collect()
}

/// Uploads `a` and `b`, launches `zip` with one thread per element, reads
/// `out` back.
fn run(device: &Device, a: &[f32], b: &[f32]) -> Result<Vec<f32>, Box<dyn std::error::Error>> {
    assert_eq!(a.len(), b.len(), "zip needs two vectors of the same length");
    let a_buf = Buffer::from_slice(device, a)?;
    let b_buf = Buffer::from_slice(device, b)?;
    let mut out = Buffer::<f32>::zeroed(device, a.len())?;
    // The borrow checker helps here: `out` is `&mut`, so it cannot also be
    // passed as `a` or `b` in the same launch.
    zip::launch(device, a.len(), &a_buf, &b_buf, &mut out)?;
    Ok(out.read()?)
}

/// Two input vectors of length `n`.
fn inputs(n: usize) -> (Vec<f32>, Vec<f32>) {
    let a = (0..n).map(|i| i as f32 * 0.5).collect();
    let b = (0..n).map(|i| (i % 1000) as f32 * 0.25).collect();
    (a, b)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    if common::wants_wgsl() {
        println!("{}", zip::WGSL);
        return Ok(());
    }
    let (a, b) = inputs(100_000);
    let want = zip_reference(&a, &b);
    for device in common::devices(false) {
        let got = run(&device, &a, &b)?;
        common::check("zip", &got, &want, 0.0);
        println!("ok on {}", device.name());
    }
    Ok(())
}

#[test]
fn cpu_and_gpu_agree_with_plain_rust() {
    // 1 element; 300 (not a multiple of 256); 256 * 50 + 17 (51 blocks).
    for n in [1, 300, 256 * 50 + 17] {
        let (a, b) = inputs(n);
        let want = zip_reference(&a, &b);
        for device in common::devices(true) {
            let got = run(&device, &a, &b).unwrap();
            common::check(&format!("zip n={n} on {}", device.name()), &got, &want, 0.0);
        }
    }
}
