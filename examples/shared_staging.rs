//! Learning path, step 8: **shared_staging** (docs/learning-path.md).
//!
//! Threads of one block can share data through **shared memory** (WGSL
//! `var<workgroup>`): a small, fast scratch area that every thread of the
//! block sees, and that lives only while the block runs. The usual pattern:
//!
//! 1. each thread loads ONE element from the big (slow) buffer into the tile;
//! 2. `workgroup_barrier()`: wait until every thread of the block got there;
//! 3. each thread reads whatever tile elements it needs, its neighbours'
//!    included.
//!
//! Here thread `t` of a block computes `tile[t] + tile[(t + 1) % 256]`: its
//! own value plus its right neighbour's, wrapping around inside the block.
//!
//!     cargo run --example shared_staging              # run and check on every device
//!     cargo run --example shared_staging -- --wgsl    # print the generated WGSL

mod common;

use onekernel::prelude::*;

/// Threads per block, and elements of the shared tile.
const BLOCK: usize = 256;

/// `out[i] = tile[t] + tile[(t + 1) % 256]`, where `tile` holds this block's
/// 256 elements of `a` (0 past the end of `a`) and `t = thread_id().x`.
#[kernel(workgroup_size = 256)]
fn shared_staging(a: &[f32], out: &mut [f32]) {
    // One tile per block, shared by its 256 threads. Every block has its own.
    let tile = shared::<[f32; 256]>();
    let t = thread_id().x;
    let i = global_id().x;
    // 1. Load. Threads past the end of `a` store 0, so that the whole tile
    //    is defined (their neighbours read it).
    tile[t] = if i < a.len() { a[i] } else { 0.0 };
    // 2. Barrier. Thread t is about to read tile[t + 1], written by thread
    //    t + 1. Nothing orders two threads otherwise: without the barrier,
    //    thread t could read tile[t + 1] before thread t + 1 has stored it
    //    (and get a stale value). The barrier is a meeting point: no thread
    //    of the block passes it until all have reached it, and all shared
    //    memory writes made before it are visible after it.
    //    Every thread must reach the same barrier, so it is never inside
    //    an `if` that depends on the thread: load, barrier, *then* guard.
    workgroup_barrier();
    // 3. Use. Only threads with an element write a result.
    if i < out.len() {
        out[i] = tile[t] + tile[(t + 1) % 256];
    }
}

/// Plain Rust: the same, block by block. The neighbour of the last element
/// of a block is the block's first element; past the end of `a` it is 0.
fn shared_staging_reference(a: &[f32]) -> Vec<f32> {
    (0..a.len())
        .map(|i| {
            let start = i / BLOCK * BLOCK;
            let neighbour = start + (i - start + 1) % BLOCK;
            a[i] + a.get(neighbour).copied().unwrap_or(0.0)
        })
        .collect()
}

fn run(device: &Device, a: &[f32]) -> Result<Vec<f32>, Box<dyn std::error::Error>> {
    let a_buf = Buffer::from_slice(device, a)?;
    let mut out = Buffer::<f32>::zeroed(device, a.len())?;
    shared_staging::launch(device, a.len(), &a_buf, &mut out)?;
    Ok(out.read()?)
}

fn input(n: usize) -> Vec<f32> {
    (0..n).map(|i| (i % 300) as f32).collect()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    if common::wants_wgsl() {
        println!("{}", shared_staging::WGSL);
        return Ok(());
    }
    let a = input(1000);
    let want = shared_staging_reference(&a);
    for device in common::devices(false) {
        let got = run(&device, &a)?;
        common::check("shared_staging", &got, &want, 0.0);
        println!("ok on {}", device.name());
    }
    // Thread 255 of block 0 wraps around to the block's first element.
    println!("out[254] = a[254] + a[255] = {}, out[255] = a[255] + a[0] = {}", want[254], want[255]);
    Ok(())
}

#[test]
fn cpu_and_gpu_agree_with_plain_rust() {
    // 1 element (its neighbour is a padding 0); 300 (not a multiple of 256);
    // 256 * 12 + 100 (13 blocks).
    for n in [1, 300, 256 * 12 + 100] {
        let a = input(n);
        let want = shared_staging_reference(&a);
        for device in common::devices(true) {
            let got = run(&device, &a).unwrap();
            common::check(&format!("shared_staging n={n} on {}", device.name()), &got, &want, 0.0);
        }
    }
}
