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
    println!("{}", norms::WGSL.len());
    assert_eq!(norm(3.0, 4.0), 5.0);
}
