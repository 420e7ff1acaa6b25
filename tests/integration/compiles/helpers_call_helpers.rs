use onekernel::prelude::*;

#[helper]
fn square(x: f32) -> f32 {
    x * x
}

#[helper]
fn sum_of_squares(x: f32, y: f32) -> f32 {
    square(x) + square(y)
}

#[helper]
fn norm(x: f32, y: f32) -> f32 {
    sum_of_squares(x, y).sqrt()
}

#[helper]
fn clamp_index(i: usize, n: usize) -> usize {
    if i < n {
        i
    } else {
        n - 1
    }
}

#[kernel(workgroup_size = 64)]
fn norms(x: &[f32], y: &[f32], out: &mut [f32]) {
    let i = global_id().x;
    let j = clamp_index(i, x.len());
    if i < out.len() {
        out[i] = norm(x[j], y[j]) + square(1.5);
    }
}

#[test]
fn compiles_and_runs() {
    // Pythagorean triples: `norm` is a whole number. More outputs than
    // inputs: `clamp_index` repeats the last one.
    let x = [3.0f32, 5.0, 8.0, 7.0, 20.0];
    let y = [4.0f32, 12.0, 15.0, 24.0, 21.0];
    let want: Vec<f32> = [5.0f32, 13.0, 17.0, 25.0, 29.0, 29.0, 29.0].iter().map(|h| h + 2.25).collect();
    // Helpers stay ordinary functions on the host.
    assert_eq!(norm(3.0, 4.0), 5.0);
    for device in super::devices() {
        let (xb, yb) = (Buffer::from_slice(&device, &x).unwrap(), Buffer::from_slice(&device, &y).unwrap());
        let mut out = Buffer::<f32>::zeroed(&device, want.len()).unwrap();
        norms::launch(&device, want.len(), &xb, &yb, &mut out).unwrap();
        // A GPU's `sqrt` is within a few ulps (WGSL), not correctly rounded.
        for (i, (g, w)) in out.read().unwrap().iter().zip(&want).enumerate() {
            assert!((g - w).abs() <= w * 1e-6, "out[{i}] on {}: got {g}, want {w}", device.name());
        }
    }
}
