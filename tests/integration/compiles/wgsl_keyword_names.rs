// Rust names that are WGSL keywords or reserved words must be renamed in
// the generated WGSL, not break it.
use onekernel::prelude::*;

#[helper]
fn bitcast(texture: f32, sample: f32) -> f32 {
    let var_ = texture;
    let override_ = sample;
    var_ * override_
}

#[kernel(workgroup_size = 64)]
fn array(uniform: &[f32], storage: &mut [f32], workgroup: f32) {
    let vec3 = global_id().x;
    let texture = uniform[vec3];
    let sample = workgroup;
    let mut function = 0.0f32;
    let mat4x4 = 2.0f32;
    let ptr = bitcast(texture, sample);
    let r#override = 1.0f32;
    let atomic = 3u32;
    let enable = atomic as f32;
    function += ptr * mat4x4 + r#override + enable;
    if vec3 < storage.len() {
        storage[vec3] = function;
    }
}

#[kernel(workgroup_size = 64)]
fn sample(var: &[u32], out: &mut [u32]) {
    let discard = global_id().x;
    let read = var[discard];
    let write = 1u32;
    let read_write = read + write;
    let private = read_write * 2;
    let struct_ = private;
    if discard < out.len() {
        out[discard] = struct_;
    }
}

#[test]
fn compiles_and_runs() {
    // One thread per element, in whole workgroups (`array` reads without
    // a guard): `storage[i] = uniform[i] * workgroup * 2 + 1 + 3` and
    // `out[i] = (var[i] + 1) * 2`, exact for these numbers.
    let x: Vec<f32> = (0..64).map(|i| i as f32 - 20.0).collect();
    let v: Vec<u32> = (0..64).map(|i| i * 3).collect();
    let want_x: Vec<f32> = x.iter().map(|x| x * 1.5 * 2.0 + 1.0 + 3.0).collect();
    let want_v: Vec<u32> = v.iter().map(|v| (v + 1) * 2).collect();
    for device in super::devices() {
        let xb = Buffer::from_slice(&device, &x).unwrap();
        let mut out = Buffer::<f32>::zeroed(&device, x.len()).unwrap();
        array::launch(&device, x.len(), &xb, &mut out, 1.5).unwrap();
        assert_eq!(out.read().unwrap(), want_x, "array on {}", device.name());
        let vb = Buffer::from_slice(&device, &v).unwrap();
        let mut out = Buffer::<u32>::zeroed(&device, v.len()).unwrap();
        sample::launch(&device, v.len(), &vb, &mut out).unwrap();
        assert_eq!(out.read().unwrap(), want_v, "sample on {}", device.name());
    }
}
