//! The README's quick start, verbatim (tests/integration/doc_snippets.rs checks that
//! the README quotes this file), plus its inspection snippet.

use onekernel::prelude::*;

/// `out[i] = a[i] + b[i]`, one GPU thread per element.
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

fn main() -> Result<(), Box<dyn std::error::Error>> {
    const N: usize = 1_000_000;
    let device = Device::new(); // the GPU, or the CPU executor with a notice
    println!("device: {}", device.name());

    let a: Vec<f32> = (0..N).map(|i| i as f32 * 0.5).collect();
    let b: Vec<f32> = (0..N).map(|i| (i % 1000) as f32 * 0.25).collect();

    let a_buf = Buffer::from_slice(&device, &a)?;
    let b_buf = Buffer::from_slice(&device, &b)?;
    let mut out = Buffer::<f32>::zeroed(&device, N)?;

    // One thread per element; on a GPU this queues the work...
    vector_add::launch(&device, N, &a_buf, &b_buf, &mut out)?;
    // ...and reading waits for it.
    let result = out.read()?;

    assert!(result.iter().zip(a.iter().zip(&b)).all(|(r, (x, y))| *r == x + y));
    println!("{}", vector_add::WGSL); // the generated shader

    // README, "Seeing the generated WGSL and SPIR-V":
    println!("{}", vector_add::BINDINGS);
    // SPIR-V to a file, then: spirv-dis vector_add.spv
    let bytes: Vec<u8> = vector_add::SPIRV.iter().flat_map(|w| w.to_le_bytes()).collect();
    std::fs::write("vector_add.spv", bytes)?;
    Ok(())
}
