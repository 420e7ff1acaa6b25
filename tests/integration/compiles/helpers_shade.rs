//! The helper example of docs/supported-rust.md, run on the CPU executor.
use onekernel::prelude::*;

#[helper]
fn clamp01(x: f32) -> f32 {
    if x < 0.0 {
        return 0.0;
    }
    x.min(1.0)
}

#[helper]
fn smoothstep(edge0: f32, edge1: f32, x: f32) -> f32 {
    let t = clamp01((x - edge0) / (edge1 - edge0));
    t * t * (3.0 - 2.0 * t)
}

#[kernel(workgroup_size = 64)]
fn shade(a: &[f32], out: &mut [f32], lo: f32, hi: f32) {
    let i = global_id().x;
    if i < a.len() {
        out[i] = smoothstep(lo, hi, a[i]);
    }
}

#[test]
fn compiles_and_runs() {
    let device = Device::cpu();
    let a = Buffer::from_slice(&device, &[-1.0f32, 0.5, 2.0]).unwrap();
    let mut out = Buffer::zeroed(&device, 3).unwrap();
    shade::launch(&device, 3, &a, &mut out, 0.0, 1.0).unwrap();
    assert_eq!(out.read().unwrap(), vec![0.0, 0.5, 1.0]);
    // Helpers stay ordinary functions on the host.
    assert_eq!(smoothstep(0.0, 1.0, 0.5), 0.5);
}
