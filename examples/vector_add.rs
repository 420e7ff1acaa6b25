//! The main demo: one kernel, written as an ordinary Rust function, run on
//! the GPU (through wgpu) and on the CPU executor, and checked against a
//! plain Rust loop.
//!
//!     cargo run --release --example vector_add
//!
//! Without a usable GPU adapter `Device::new()` falls back to the CPU
//! executor and says so on stderr. To run on Mesa's lavapipe (a software
//! Vulkan GPU), install it with `bash .ci/run` and `source .ci/env.sh` first.

use onekernel::prelude::*;
use std::process::ExitCode;

// ANCHOR: kernel
/// `out[i] = a[i] + b[i]`, one GPU thread per element.
///
/// `#[kernel]` compiles this body to WGSL and SPIR-V at build time and turns
/// `vector_add` into a module holding `vector_add::WGSL`,
/// `vector_add::BINDINGS`, `vector_add::launch(..)`, ...
#[kernel(workgroup_size = 256)]
fn vector_add(a: &[f32], b: &[f32], out: &mut [f32]) {
    // This thread's position in the whole grid.
    let i = global_id().x;
    // The grid is rounded up to whole workgroups of 256 threads, so the last
    // workgroup has threads past the end of the data: they do nothing.
    if i < out.len() {
        out[i] = a[i] + b[i];
    }
}
// ANCHOR_END: kernel

/// Number of elements.
const N: usize = 1_000_000;

fn main() -> ExitCode {
    match demo() {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

fn demo() -> Result<(), String> {
    // 1. Pick a device: the GPU if wgpu finds one, else the CPU executor
    //    (with a one-line notice on stderr saying why).
    let device = Device::new();
    println!("device: {}", device.name());

    // 2. What the compiler made of the function, generated at build time.
    println!("\n--- vector_add::WGSL ---\n{}", vector_add::WGSL);
    println!("--- vector_add::BINDINGS ---\n{}", vector_add::BINDINGS);

    // 3. Input data, and the answer computed by a plain Rust loop.
    let a: Vec<f32> = (0..N).map(|i| i as f32 * 0.5).collect();
    let b: Vec<f32> = (0..N).map(|i| (i % 1000) as f32 * 0.25).collect();
    let expected: Vec<f32> = a.iter().zip(&b).map(|(x, y)| x + y).collect();

    // 4. Run the kernel on the chosen device, then on the CPU executor.
    let on_device = run(&device, &a, &b)?;
    let cpu = Device::cpu();
    let on_cpu = run(&cpu, &a, &b)?;

    // 5. Every path must give exactly the same numbers (an f32 addition is
    //    correctly rounded on the CPU and in WGSL alike).
    compare(&device.name(), &on_device, &expected)?;
    compare(&cpu.name(), &on_cpu, &expected)?;

    let block = vector_add::WORKGROUP_SIZE[0] as usize;
    let paths = if device.is_gpu() {
        "the GPU, the CPU executor and plain Rust"
    } else {
        "the CPU executor and plain Rust (no GPU)"
    };
    println!(
        "ok: vector_add over {N} elements ({} workgroups of {block} threads) agrees bit for bit on {paths}",
        N.div_ceil(block)
    );
    Ok(())
}

// ANCHOR: run
/// Uploads `a` and `b` to `device`, launches `vector_add` and reads `out` back.
fn run(device: &Device, a: &[f32], b: &[f32]) -> Result<Vec<f32>, String> {
    let on = |what: &str| format!("{what} on {}", device.name());
    let a = Buffer::from_slice(device, a).map_err(|e| format!("{}: {e}", on("uploading `a`")))?;
    let b = Buffer::from_slice(device, b).map_err(|e| format!("{}: {e}", on("uploading `b`")))?;
    let mut out = Buffer::<f32>::zeroed(device, N).map_err(|e| format!("{}: {e}", on("allocating `out`")))?;

    // One thread per element. On a GPU `launch` only queues the work;
    // `read` waits for it. Errors (a wrong device, a grid too large, a panic
    // on the CPU executor) come back as `Err`, never as a crash.
    vector_add::launch(device, N, &a, &b, &mut out).map_err(|e| on(&e.to_string()))?;
    out.read().map_err(|e| format!("{}: {e}", on("reading `out`")))
}
// ANCHOR_END: run

/// Checks `got` against `want` element by element.
fn compare(who: &str, got: &[f32], want: &[f32]) -> Result<(), String> {
    if got.len() != want.len() {
        return Err(format!("{who}: {} results, expected {}", got.len(), want.len()));
    }
    match got.iter().zip(want).position(|(g, w)| g.to_bits() != w.to_bits()) {
        None => Ok(()),
        Some(i) => Err(format!("{who}: out[{i}] = {}, but a[{i}] + b[{i}] = {}", got[i], want[i])),
    }
}
