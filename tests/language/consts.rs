//! Compile-time parameters: const generic kernels (`fn k<const N: u32>`,
//! launched as `k::launch::<128>(..)`) and constants of a plain kernel's
//! Rust scope (`const BLOCK: usize = 256;` beside it). The CPU runs the
//! body monomorphised by rustc; the GPU runs one module whose WGSL
//! `override`s are set per value tuple. Each kernel is compared with plain
//! Rust for several value tuples on both devices.

use super::{buf, gpu, ints, on_both, zeros, SIZES};
use onekernel::prelude::*;

/// Const parameters in expressions and as a loop bound.
#[kernel(workgroup_size = 64)]
pub fn const_affine<const N: u32, const M: i32>(a: &[i32], out: &mut [i32]) {
    let i = global_id().x;
    if i < a.len() {
        let mut acc = a[i].wrapping_mul(M);
        for k in 0..N {
            acc = acc.wrapping_add(k as i32);
        }
        out[i] = acc.wrapping_add(N as i32) - M;
    }
}

fn const_affine_ref(a: &[i32], n: u32, m: i32) -> Vec<i32> {
    a.iter()
        .map(|&x| {
            let mut acc = x.wrapping_mul(m);
            for k in 0..n {
                acc = acc.wrapping_add(k as i32);
            }
            acc.wrapping_add(n as i32) - m
        })
        .collect()
}

fn run_const_affine<const N: u32, const M: i32>() {
    for n in SIZES {
        let a = ints(n, 7, 1000);
        let want = const_affine_ref(&a, N, M);
        let (c, g) = on_both(|d| {
            let mut out = zeros::<i32>(d, n);
            const_affine::launch::<N, M>(d, n, &buf(d, &a), &mut out).unwrap();
            out.read().unwrap()
        });
        assert_eq!(c, want, "cpu N = {N}, M = {M}, n = {n}");
        assert_eq!(g, want, "gpu N = {N}, M = {M}, n = {n}");
    }
}

#[test]
fn const_parameters_in_expressions_and_loop_bounds() {
    run_const_affine::<0, 1>();
    run_const_affine::<3, -2>();
    run_const_affine::<17, 5>();
    run_const_affine::<3, 5>();
    // Each value tuple is a pipeline of its own; the same tuple again
    // compiles nothing more.
    let before = pipelines();
    run_const_affine::<3, -2>();
    assert_eq!(pipelines(), before, "a tuple launched before compiles nothing");
    run_const_affine::<4, -2>();
    assert!(pipelines() > before, "a new tuple is a new pipeline");
}

/// Pipelines the GPU device has compiled so far.
fn pipelines() -> usize {
    match onekernel::__private::backend(gpu()) {
        onekernel::__private::DeviceBackend::Gpu(g) => g.compiled_kernels(),
        onekernel::__private::DeviceBackend::Cpu(_) => unreachable!("gpu() is a GPU"),
    }
}

/// A type parameter and a `usize` const parameter.
#[kernel(workgroup_size = 64)]
pub fn generic_strided<T: Num, const STRIDE: usize>(a: &[T], out: &mut [T]) {
    let i = global_id().x;
    if i < out.len() {
        let mut acc = T::ZERO;
        let mut j = i * STRIDE;
        while j < a.len() && j < (i + 1) * STRIDE {
            acc = acc + a[j];
            j += 1;
        }
        out[i] = acc;
    }
}

fn run_generic_strided<
    T: generic_strided::Instance + From<u8> + std::ops::Add<Output = T> + PartialEq + std::fmt::Debug,
    const STRIDE: usize,
>() {
    for n in SIZES {
        let a: Vec<T> = (0..n * STRIDE).map(|i| T::from((i * 7 % 40) as u8)).collect();
        let want: Vec<T> =
            (0..n).map(|i| a[i * STRIDE..(i + 1) * STRIDE].iter().fold(T::from(0), |s, x| s + *x)).collect();
        let (c, g) = on_both(|d| {
            let mut out = zeros::<T>(d, n);
            generic_strided::launch::<_, STRIDE>(d, n, &buf(d, &a), &mut out).unwrap();
            out.read().unwrap()
        });
        assert_eq!(c, want, "cpu STRIDE = {STRIDE}, n = {n}");
        assert_eq!(g, want, "gpu STRIDE = {STRIDE}, n = {n}");
    }
}

#[test]
fn type_and_const_parameters_together() {
    run_generic_strided::<f32, 1>();
    run_generic_strided::<f32, 4>();
    run_generic_strided::<u32, 3>();
    run_generic_strided::<i32, 2>();
}

const REPEAT: usize = 3;
const OFFSET: f32 = 0.5;
const NEGATE: bool = true;
const STEP: u64 = 2;

/// Constants of the kernel's Rust scope, in expressions and a loop bound:
/// the launch supplies their values.
#[kernel(workgroup_size = 64)]
pub fn scope_constants(a: &[f32], out: &mut [f32]) {
    let i = global_id().x;
    if i < a.len() {
        let mut x = a[i];
        for _ in 0..REPEAT {
            x = x * 2.0 + OFFSET + STEP as f32;
        }
        out[i] = if NEGATE { -x } else { x };
    }
}

#[test]
fn constants_of_the_kernels_scope() {
    for n in SIZES {
        let a: Vec<f32> = (0..n).map(|i| i as f32 * 0.25).collect();
        let want: Vec<f32> = a
            .iter()
            .map(|&v| {
                let mut x = v;
                for _ in 0..REPEAT {
                    x = x * 2.0 + OFFSET + STEP as f32;
                }
                if NEGATE {
                    -x
                } else {
                    x
                }
            })
            .collect();
        let (c, g) = on_both(|d| {
            let mut out = zeros::<f32>(d, n);
            scope_constants::launch(d, n, &buf(d, &a), &mut out).unwrap();
            out.read().unwrap()
        });
        assert_eq!(c, want, "cpu n = {n}");
        assert_eq!(g, want, "gpu n = {n}");
    }
}

#[test]
fn wgsl_declares_overrides() {
    insta::assert_snapshot!("const_affine", const_affine::WGSL);
    insta::assert_snapshot!("scope_constants", scope_constants::WGSL);
}

use crate::spirv::shader_checks;

/// naga's SPIR-V writer takes the overrides' values: a kernel with them
/// has no SPIR-V of its own, and each specialisation (naga's
/// `process_overrides`, then the writer) passes `spirv-val`.
#[test]
fn specialised_modules_pass_spirv_val() {
    assert!(const_affine::SPIRV.is_empty(), "SPIR-V exists per specialisation only");
    for module in const_affine::KERNEL.modules.iter() {
        let wgsl = &*module.wgsl;
        shader_checks::reparse("const_affine", wgsl);
        for (n, m) in [(0u32, 1i32), (17, -5), (u32::MAX, i32::MIN)] {
            let values = [("1".to_string(), f64::from(n)), ("2".to_string(), f64::from(m))];
            let words = onekernel_compiler::emit::specialised_spirv(wgsl, &values).unwrap();
            shader_checks::spirv_val(&format!("const_affine::<{n}, {m}>"), &words);
        }
    }
    let values = [("1".to_string(), 3.0), ("2".to_string(), 0.5), ("3".to_string(), 2.0), ("4".to_string(), 1.0)];
    let words = onekernel_compiler::emit::specialised_spirv(scope_constants::WGSL, &values).unwrap();
    shader_checks::spirv_val("scope_constants", &words);
}

/// A value the GPU type cannot hold is an error naming the constant, on
/// both devices.
#[test]
fn a_value_out_of_range_is_an_error_naming_it() {
    for d in [super::cpu(), gpu()] {
        let a = buf(d, &[1.0f32; 4]);
        let mut out = zeros::<f32>(d, 4);
        big_constant::launch(d, 4, &a, &mut out).expect("fits");
        let err = too_big_constant::launch(d, 4, &a, &mut out).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("TOO_BIG"), "{text}");
    }
}

const BIG: u64 = 1 << 20;
const TOO_BIG: u64 = 1 << 40;

/// A constant whose type its uses leave open (`0..BIG`): `i32` on the GPU,
/// whatever its Rust integer type, if its value fits.
#[kernel(workgroup_size = 64)]
pub fn big_constant(a: &[f32], out: &mut [f32]) {
    let i = global_id().x;
    if i < a.len() {
        let mut n = 0;
        for _ in 0..BIG {
            n += 1;
            break;
        }
        out[i] = a[i] + n as f32;
    }
}

#[kernel(workgroup_size = 64)]
pub fn too_big_constant(a: &[f32], out: &mut [f32]) {
    let i = global_id().x;
    if i < a.len() {
        let mut n = 0;
        for _ in 0..TOO_BIG {
            n += 1;
            break;
        }
        out[i] = a[i] + n as f32;
    }
}
