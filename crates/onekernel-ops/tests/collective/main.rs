//! The ops of `reduce`, `scan`, `histogram` and `transpose` against plain
//! Rust on every device: the CPU executor running the kernels
//! (`Device::cpu_serial()`), the parallel CPU executor (`Device::cpu()`,
//! which runs the host implementation where an op documents one) and the
//! GPU (lavapipe in CI).

use onekernel::prelude::*;
pub use onekernel::Layout2d;
use std::sync::OnceLock;

mod histogram;
mod reduce;
mod scan;
mod transpose;
mod tuning;

/// Lengths at the edges: empty, one, around a subgroup, around a
/// workgroup, around the 1024-element step, primes, 2^k ± 1.
pub const SIZES: &[usize] = &[0, 1, 2, 3, 31, 32, 33, 255, 256, 257, 1000, 1023, 1024, 1025, 4097, 65_537];

/// Longer lengths (a prime, 2^k + 1), on the GPU and the parallel CPU
/// executor only (the serial executor in a debug build is slow).
pub const LONG_SIZES: &[usize] = &[100_003, 262_145];

/// The devices for a length: all three up to a few thousand elements
/// (every edge of `SIZES` up to 4097: several segments and steps of every
/// kernel), the fast two past that (the serial executor in a debug build
/// runs a scan's 14 barriers a tile one invocation at a time: 65_537
/// elements there cost tens of seconds and test nothing new).
pub fn devices_for(n: usize) -> Vec<(&'static str, &'static Device)> {
    let all = devices();
    if n > 5_000 {
        all[1..].to_vec()
    } else {
        all.to_vec()
    }
}

pub fn gpu() -> &'static Device {
    static GPU: OnceLock<Device> = OnceLock::new();
    GPU.get_or_init(|| match Device::gpu() {
        Ok(d) => {
            // The default plans here; every plan is run by the `*_plan*`
            // tests, and `tuning.rs` tunes on a device of its own.
            onekernel::ops::tuning::set_mode(&d, onekernel::ops::tuning::Mode::Off);
            d
        }
        Err(e) => panic!("GPU tests need a GPU adapter (CI uses Mesa's lavapipe; see .ci/run): {e}"),
    })
}

pub fn cpu() -> &'static Device {
    static CPU: OnceLock<Device> = OnceLock::new();
    CPU.get_or_init(Device::cpu)
}

pub fn serial() -> &'static Device {
    static CPU: OnceLock<Device> = OnceLock::new();
    CPU.get_or_init(Device::cpu_serial)
}

/// The three devices, named for messages.
pub fn devices() -> [(&'static str, &'static Device); 3] {
    [("cpu kernels", serial()), ("cpu host", cpu()), ("gpu", gpu())]
}

/// Deterministic pseudo-random `u32`s.
pub fn hash(i: usize, seed: u32) -> u32 {
    let mut x = (i as u32).wrapping_mul(0x9E37_79B9) ^ seed.wrapping_mul(0x85EB_CA6B);
    x ^= x >> 16;
    x = x.wrapping_mul(0x7FEB_352D);
    x ^= x >> 15;
    x = x.wrapping_mul(0x846C_A68B);
    x ^ (x >> 16)
}
