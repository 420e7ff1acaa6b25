//! Devices and data shared by the tests.

use onekernel::prelude::*;

/// The CPU executor and the GPU (a missing GPU is a failure: CI uses
/// Mesa's lavapipe, see .ci/run).
pub fn devices() -> Vec<Device> {
    vec![Device::cpu(), gpu()]
}

/// The GPU.
pub fn gpu() -> Device {
    Device::gpu().unwrap_or_else(|e| panic!("these tests need a GPU adapter (CI uses lavapipe): {e}"))
}

/// The lengths every op is tested at: edges of a subgroup, a block, a tile,
/// primes, powers of two ± 1.
pub const LENGTHS: &[usize] = &[0, 1, 2, 31, 32, 33, 255, 256, 257, 1009, 2047, 2048, 2049, 4099, 8191, 16385];

/// A deterministic pseudo-random `u32` stream (xorshift).
pub fn hash(i: usize, seed: u32) -> u32 {
    let mut x = (i as u32).wrapping_mul(0x9E37_79B9) ^ seed.wrapping_mul(0x85EB_CA6B) ^ 0x2545_F491;
    x ^= x >> 16;
    x = x.wrapping_mul(0x7FEB_352D);
    x ^= x >> 15;
    x = x.wrapping_mul(0x846C_A68B);
    x ^ (x >> 16)
}
