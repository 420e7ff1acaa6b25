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
    println!("{} {}", array::WGSL.len(), sample::WGSL.len());
}
