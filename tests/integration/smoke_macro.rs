use onekernel::prelude::*;

#[kernel(workgroup_size = 256)]
fn vector_add(a: &[f32], b: &[f32], out: &mut [f32]) {
    let i = global_id().x;
    if i < out.len() {
        out[i] = a[i] + b[i];
    }
}

#[helper]
fn square(x: f32) -> f32 {
    x * x
}

#[kernel(workgroup_size = 64)]
fn squares(a: &[f32], out: &mut [f32], bias: f32) {
    let i = global_id().x;
    if i < out.len() {
        out[i] = square(a[i]) + bias;
        out[i] += 1.0;
    }
}

#[test]
fn runs_on_cpu() {
    let device = Device::cpu();
    let a = Buffer::from_slice(&device, &[1.0f32, 2.0, 3.0]).unwrap();
    let b = Buffer::from_slice(&device, &[10.0f32, 20.0, 30.0]).unwrap();
    let mut out = Buffer::zeroed(&device, 3).unwrap();
    vector_add::launch(&device, 3, &a, &b, &mut out).unwrap();
    assert_eq!(out.read().unwrap(), vec![11.0, 22.0, 33.0]);
    squares::launch(&device, 3, &a, &mut out, 0.5).unwrap();
    assert_eq!(out.read().unwrap(), vec![2.5, 5.5, 10.5]);
    println!("{}", squares::WGSL);
}

/// The in-place update pattern of the book's launch chapter (one `&mut [T]`
/// parameter read and written), which `launch(&d, n, &x, &mut x)` cannot be.
#[kernel(workgroup_size = 256)]
fn scale_in_place(x: &mut [f32], s: f32) {
    let i = global_id().x;
    if i < x.len() {
        x[i] = x[i] * s;
    }
}

#[test]
fn scales_in_place_on_cpu_and_gpu() {
    let data: Vec<f32> = (0..1000).map(|i| i as f32 * 0.5 - 7.0).collect();
    let expected: Vec<f32> = data.iter().map(|v| v * 3.0).collect();
    let gpu = Device::gpu().expect("the test needs a GPU adapter (source .ci/env.sh for lavapipe)");
    for device in [Device::cpu(), gpu] {
        let mut x = Buffer::from_slice(&device, &data).unwrap();
        scale_in_place::launch(&device, data.len(), &mut x, 3.0).unwrap();
        assert_eq!(x.read().unwrap(), expected, "{device:?}");
    }
}
