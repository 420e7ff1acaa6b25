//! What moving data costs: `Buffer::from_slice` (allocate + upload),
//! `buf.write` (upload into an existing buffer) and `buf.read` (read-back),
//! timed for 1 KiB to 64 MiB on the GPU and on the CPU executor.
//!
//!     cargo run --release --example transfers
//!     cargo run --release --example transfers -- --max-mib 16
//!
//! Every time is the wall clock of the call and, on the GPU, of waiting for
//! it (`device.synchronize()` after `from_slice` and `write`, which only
//! queue the copy; `read` waits by itself); the median of several runs.
//! Without a GPU adapter it times the CPU device only.

mod common;

use onekernel::prelude::*;

/// Seconds for (from_slice, write, read) of `data` on `device`.
#[derive(Clone, Copy, Debug)]
struct Times {
    from_slice: f64,
    write: f64,
    read: f64,
}

// ANCHOR: measure
/// Times the three ways data crosses between the program and `device`, and
/// checks that what comes back is what went in.
fn measure(device: &Device, data: &[u32], reps: usize) -> Times {
    // Allocate a buffer and upload `data` into it.
    let from_slice = common::wall(reps, || {
        let buf = Buffer::from_slice(device, data).unwrap();
        device.synchronize().unwrap(); // on the GPU the copy is only queued
        drop(buf);
    });

    // Upload into a buffer that already exists (no allocation).
    let mut buf = Buffer::<u32>::zeroed(device, data.len()).unwrap();
    let write = common::wall(reps, || {
        buf.write(data).unwrap();
        device.synchronize().unwrap();
    });

    // Read back: waits for queued work, copies into a new Vec.
    let mut back = Vec::new();
    let read = common::wall(reps, || back = buf.read().unwrap());
    assert!(back == data, "{}: the data read back differs from what was written", device.name());
    Times { from_slice, write, read }
}
// ANCHOR_END: measure

fn label(bytes: usize) -> String {
    if bytes >= 1 << 20 {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{} KiB", bytes >> 10)
    }
}

fn main() {
    let max_mib: usize =
        std::env::args().skip_while(|a| a != "--max-mib").nth(1).and_then(|v| v.parse().ok()).unwrap_or(64);
    for device in common::devices(false) {
        println!("\n{}\n", device.name());
        println!(
            "| size | from_slice (µs) | write (µs) | read (µs) | from_slice (GB/s) | write (GB/s) | read (GB/s) |"
        );
        println!("|---|---|---|---|---|---|---|");
        let mut bytes = 1024;
        while bytes <= max_mib << 20 {
            let data: Vec<u32> = (0..bytes / 4).map(|i| i as u32 * 2_654_435_761).collect();
            let reps = ((64usize << 20) / bytes).clamp(5, 200);
            let t = measure(&device, &data, reps);
            let gbs = |s: f64| bytes as f64 / s * 1e-9;
            println!(
                "| {} | {:.1} | {:.1} | {:.1} | {:.2} | {:.2} | {:.2} |",
                label(bytes),
                t.from_slice * 1e6,
                t.write * 1e6,
                t.read * 1e6,
                gbs(t.from_slice),
                gbs(t.write),
                gbs(t.read)
            );
            bytes *= 4;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Small sizes on the CPU device and the GPU: the data survives the
    /// round trip and every time is measured.
    #[test]
    fn round_trips_on_cpu_and_gpu() {
        for device in common::devices(true) {
            for len in [1, 256, 3000] {
                let data: Vec<u32> = (0..len as u32).map(|i| i ^ 0x5a5a).collect();
                let t = measure(&device, &data, 2);
                assert!(t.from_slice >= 0.0 && t.write >= 0.0 && t.read >= 0.0);
            }
        }
    }
}
