//! A generic kernel (docs/supported-rust.md, "Generic kernels"): `axpy<T>`,
//! `y = a * x + y`, written once and launched for `f32` and `i32`.
//!
//! `#[kernel]` compiles the body once per type of the bound (`Num`: every
//! kernel scalar type), and rustc type-checks it once with the bound;
//! `axpy::launch` picks the instantiation from the element type of its
//! buffers.
//!
//!     cargo run --example axpy              # run and check on every device
//!     cargo run --example axpy -- --wgsl    # print the WGSL for f32 and i32

mod common;

use onekernel::prelude::*;

/// `y[i] = a * x[i] + y[i]`, for any kernel scalar type `T`.
///
/// The body may use what `Num` gives every type: the arithmetic operators,
/// comparisons, `T::ZERO`/`T::ONE`/`T::MIN`/`T::MAX`, `min`, `max` and
/// `clamp`. A literal is not a `T` (`a * 2.0` is rustc's error): write
/// `a + a`, or take the value as a parameter.
#[kernel(workgroup_size = 64)]
fn axpy<T: Num>(a: T, x: &[T], y: &mut [T]) {
    let i = global_id().x;
    if i < y.len() {
        y[i] = a * x[i] + y[i];
    }
}

/// The same computation in plain Rust, generic the same way.
fn axpy_reference<T: Num>(a: T, x: &[T], y: &[T]) -> Vec<T> {
    x.iter().zip(y).map(|(&x, &y)| a * x + y).collect()
}

/// Runs `axpy` for `T` on `device`. `axpy::Instance` is implemented for
/// every type the kernel is compiled for, and is what a generic caller
/// names as its bound.
fn run<T: axpy::Instance>(device: &Device, a: T, x: &[T], y: &[T]) -> Result<Vec<T>, Box<dyn std::error::Error>> {
    let x = Buffer::from_slice(device, x)?;
    let mut y = Buffer::from_slice(device, y)?;
    // T is inferred from the buffers: `axpy::launch::<T>(..)`.
    axpy::launch(device, x.len(), a, &x, &mut y)?;
    Ok(y.read()?)
}

/// `(x, y)` of `n` elements: small integers, negative ones too, in any
/// type that holds them.
fn inputs<T: Num + From<i16>>(n: usize) -> (Vec<T>, Vec<T>) {
    let x = (0..n).map(|i| T::from((i % 1001) as i16 - 500)).collect();
    let y = (0..n).map(|i| T::from(3 * (i % 77) as i16)).collect();
    (x, y)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    if common::wants_wgsl() {
        println!("{}\n{}", axpy::for_f32::WGSL, axpy::for_i32::WGSL);
        return Ok(());
    }
    let ((xf, yf), (xi, yi)) = (inputs::<f32>(1000), inputs::<i32>(1000));
    for device in common::devices(false) {
        // `2.5 * x + y` of small integers is exact on both devices.
        common::check("axpy f32", &run(&device, 2.5f32, &xf, &yf)?, &axpy_reference(2.5, &xf, &yf), 0.0);
        common::check("axpy i32", &run(&device, -3i32, &xi, &yi)?, &axpy_reference(-3, &xi, &yi), 0.0);
        println!("ok on {} (f32 and i32)", device.name());
    }
    Ok(())
}

#[test]
fn cpu_and_gpu_agree_with_plain_rust_for_f32_and_i32() {
    for n in [1, 1000, 64 * 20 + 5] {
        let ((xf, yf), (xi, yi)) = (inputs::<f32>(n), inputs::<i32>(n));
        for device in common::devices(true) {
            let what = format!("n={n} on {}", device.name());
            let got = run(&device, -1.75f32, &xf, &yf).unwrap();
            common::check(&format!("axpy f32 {what}"), &got, &axpy_reference(-1.75, &xf, &yf), 0.0);
            let got = run(&device, 7i32, &xi, &yi).unwrap();
            common::check(&format!("axpy i32 {what}"), &got, &axpy_reference(7, &xi, &yi), 0.0);
        }
    }
    // The instantiations are separate kernels, named by their type.
    assert_eq!(axpy::kernel_info::<f32>().name, "axpy::<f32>");
    assert!(axpy::for_i32::WGSL.contains("array<i32>"));
}
