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
    // compiles nothing more. (On a device of its own: the other tests
    // compile pipelines on `gpu()` meanwhile.)
    let d = Device::gpu().expect("a GPU");
    let (a, mut out) = (buf(&d, &[1i32; 8]), zeros::<i32>(&d, 8));
    const_affine::launch::<3, -2>(&d, 8, &a, &mut out).unwrap();
    let before = pipelines(&d);
    const_affine::launch::<3, -2>(&d, 8, &a, &mut out).unwrap();
    assert_eq!(pipelines(&d), before, "a tuple launched before compiles nothing");
    const_affine::launch::<4, -2>(&d, 8, &a, &mut out).unwrap();
    assert_eq!(pipelines(&d), before + 1, "a new tuple is a new pipeline");
}

/// Pipelines the GPU device `d` has compiled so far.
fn pipelines(d: &Device) -> usize {
    match onekernel::__private::backend(d) {
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
/// has no SPIR-V of its own, and each specialisation (the one route,
/// `onekernel_abi::specialised_wgsl`, then the writer) passes `spirv-val`.
#[test]
fn specialised_modules_pass_spirv_val() {
    assert!(const_affine::SPIRV.is_empty(), "SPIR-V exists per specialisation only");
    for module in const_affine::KERNEL.modules.iter() {
        let wgsl = &*module.wgsl;
        shader_checks::reparse("const_affine", wgsl);
        for (n, m) in [(0u32, 1i32), (17, -5), (u32::MAX, i32::MIN)] {
            let values = [f64::from(n), f64::from(m)];
            let params = &const_affine::KERNEL.consts.params;
            let words = onekernel_compiler::emit::specialised_spirv(wgsl, params, &values).unwrap();
            shader_checks::spirv_val(&format!("const_affine::<{n}, {m}>"), &words);
        }
    }
    let values = [3.0, 0.5, 2.0, 1.0];
    let params = &scope_constants::KERNEL.consts.params;
    let words = onekernel_compiler::emit::specialised_spirv(scope_constants::WGSL, params, &values).unwrap();
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

/// A shared array whose length is a const parameter: each workgroup of
/// 64 stages its first `N` elements and every invocation sums them.
#[kernel(workgroup_size = 64)]
pub fn shared_sized<const N: usize>(a: &[f32], out: &mut [f32]) {
    let tile = shared::<[f32; N]>();
    let (i, l) = (global_id().x, thread_id().x);
    if l < N {
        tile[l] = if i < a.len() { a[i] } else { 0.0 };
    }
    workgroup_barrier();
    if i < a.len() {
        let mut s = 0.0f32;
        for k in 0..N {
            s += tile[k];
        }
        out[i] = s + tile.len() as f32;
    }
}

fn shared_sized_ref(a: &[f32], n: usize) -> Vec<f32> {
    (0..a.len())
        .map(|i| {
            let start = i / 64 * 64;
            let s = (start..start + n).map(|j| a.get(j).copied().unwrap_or(0.0)).fold(0.0f32, |s, x| s + x);
            s + n as f32
        })
        .collect()
}

fn run_shared_sized<const N: usize>() {
    for n in SIZES {
        let a: Vec<f32> = (0..n).map(|i| (i % 13) as f32 * 0.5).collect();
        let want = shared_sized_ref(&a, N);
        let (c, g) = on_both(|d| {
            let mut out = zeros::<f32>(d, n);
            shared_sized::launch::<N>(d, n, &buf(d, &a), &mut out).unwrap();
            out.read().unwrap()
        });
        assert_eq!(c, want, "cpu N = {N}, n = {n}");
        assert_eq!(g, want, "gpu N = {N}, n = {n}");
    }
}

#[test]
fn const_parameter_sizes_shared_memory() {
    run_shared_sized::<1>();
    run_shared_sized::<16>();
    run_shared_sized::<64>();
}

const ROWS: usize = 4;
const COLS: usize = 8;

/// Constants of the kernel's scope as the lengths of a 2-D shared array,
/// after a shared array of a literal length (whose offset on the CPU
/// comes first) and before another.
#[kernel(workgroup_size = 32)]
pub fn shared_scope_sized(a: &[u32], out: &mut [u32]) {
    let first = shared::<[u32; 4]>();
    let grid = shared::<[[u32; COLS]; ROWS]>();
    let last = shared::<[u32; 32]>();
    let (i, l) = (global_id().x, thread_id().x);
    let v = if i < a.len() { a[i] } else { 0 };
    grid[l / COLS][l % COLS] = v;
    last[l] = v * 2;
    if l < 4 {
        first[l] = l as u32 + 1;
    }
    workgroup_barrier();
    if i < a.len() {
        let r = (l + 1) % ROWS;
        out[i] = grid[r][l % COLS] + last[31 - l] + first[l % 4];
    }
}

fn shared_scope_sized_ref(a: &[u32]) -> Vec<u32> {
    (0..a.len())
        .map(|i| {
            let (start, l) = (i / 32 * 32, i % 32);
            let at = |j: usize| a.get(start + j).copied().unwrap_or(0);
            let r = (l + 1) % ROWS;
            at(r * COLS + l % COLS) + at(31 - l) * 2 + (l % 4) as u32 + 1
        })
        .collect()
}

#[test]
fn constants_of_the_scope_size_shared_memory() {
    for n in SIZES {
        let a: Vec<u32> = (0..n as u32).map(|i| i * 7 % 1000).collect();
        let want = shared_scope_sized_ref(&a);
        let (c, g) = on_both(|d| {
            let mut out = zeros::<u32>(d, n);
            shared_scope_sized::launch(d, n, &buf(d, &a), &mut out).unwrap();
            out.read().unwrap()
        });
        assert_eq!(c, want, "cpu n = {n}");
        assert_eq!(g, want, "gpu n = {n}");
    }
}

/// Local arrays whose lengths are const parameters (a 2-D register tile
/// and a row), read through `.len()`, in an `#[unroll]`ed loop over a
/// parameter (a loop in the module, unrolled by each specialisation).
#[kernel(workgroup_size = 64)]
pub fn local_sized<const TM: usize, const TN: usize>(a: &[f32], out: &mut [f32]) {
    let i = global_id().x;
    if i < a.len() {
        let mut acc = [[0.0f32; TN]; TM];
        let mut row: [f32; TM] = [0.0; TM];
        #[unroll]
        for r in 0..TM {
            row[r] = a[i] + r as f32;
            for c in 0..TN {
                acc[r][c] = row[r] * c as f32;
            }
        }
        let mut s = 0.0f32;
        for r in 0..acc.len() {
            for c in 0..acc[r].len() {
                s += acc[r][c];
            }
        }
        out[i] = s;
    }
}

fn local_sized_ref(a: &[f32], tm: usize, tn: usize) -> Vec<f32> {
    a.iter()
        .map(|&x| {
            let mut s = 0.0f32;
            for r in 0..tm {
                for c in 0..tn {
                    s += (x + r as f32) * c as f32;
                }
            }
            s
        })
        .collect()
}

fn run_local_sized<const TM: usize, const TN: usize>() {
    for n in SIZES {
        let a: Vec<f32> = (0..n).map(|i| (i % 7) as f32).collect();
        let want = local_sized_ref(&a, TM, TN);
        let (c, g) = on_both(|d| {
            let mut out = zeros::<f32>(d, n);
            local_sized::launch::<TM, TN>(d, n, &buf(d, &a), &mut out).unwrap();
            out.read().unwrap()
        });
        assert_eq!(c, want, "cpu TM = {TM}, TN = {TN}, n = {n}");
        assert_eq!(g, want, "gpu TM = {TM}, TN = {TN}, n = {n}");
    }
}

#[test]
fn const_parameters_size_local_arrays() {
    run_local_sized::<1, 1>();
    run_local_sized::<4, 8>();
    run_local_sized::<8, 3>();
}

/// A value tuple the device cannot run is an error naming the kernel and
/// the parameter, on both devices: no wgpu validation panic.
#[test]
fn a_tuple_the_device_cannot_run_is_an_error_naming_the_parameter() {
    for d in [super::cpu(), gpu()] {
        let a = buf(d, &[1.0f32; 4]);
        let mut out = zeros::<f32>(d, 4);
        // Zero elements.
        let text = shared_sized::launch::<0>(d, 4, &a, &mut out).unwrap_err().to_string();
        assert!(text.contains("shared_sized::<N = 0>") && text.contains("`N` = 0"), "{text}");
        let text = local_sized::launch::<0, 4>(d, 4, &a, &mut out).unwrap_err().to_string();
        assert!(text.contains("`TM` = 0") && text.contains("`acc`"), "{text}");
        // More shared memory than the device has (4 MiB).
        let text = shared_sized::launch::<{ 1 << 20 }>(d, 4, &a, &mut out).unwrap_err().to_string();
        assert!(text.contains("shared_sized::<N = 1048576>") && text.contains("shared memory from `N`"), "{text}");
        // A local array over the limit.
        let text = local_sized::launch::<2048, 1024>(d, 4, &a, &mut out).unwrap_err().to_string();
        assert!(text.contains("`TM`, `TN`") && text.contains("local array `acc`"), "{text}");
        // The kernel still runs with a good tuple.
        shared_sized::launch::<4>(d, 4, &a, &mut out).unwrap();
        assert_eq!(out.read().unwrap(), vec![8.0; 4]);
    }
}

/// Const parameters whose names end in a digit: naga's WGSL writer
/// renames them (`BK4` is written `BK4_`), so every consumer finds an
/// override by its `@id` (`onekernel_abi::override_decl`), never by its
/// Rust name. The tile a parameter sizes, filled and summed in
/// `#[unroll]`ed loops, becomes scalars in each specialisation.
#[kernel(workgroup_size = 64)]
pub fn digit_named<const BK4: usize, const T2: u32>(a: &[f32], out: &mut [f32]) {
    let i = global_id().x;
    if i < a.len() {
        let mut tile = [0.0f32; BK4];
        #[unroll]
        for k in 0..BK4 {
            tile[k] = a[i] * (k as f32 + T2 as f32);
        }
        let mut s = 0.0f32;
        #[unroll]
        for k in 0..BK4 {
            s += tile[k];
        }
        out[i] = s;
    }
}

fn digit_named_ref(a: &[f32], bk4: usize, t2: u32) -> Vec<f32> {
    a.iter()
        .map(|&x| {
            let tile: Vec<f32> = (0..bk4).map(|k| x * (k as f32 + t2 as f32)).collect();
            tile.iter().fold(0.0f32, |s, v| s + v)
        })
        .collect()
}

fn run_digit_named<const BK4: usize, const T2: u32>() {
    for n in SIZES {
        let a: Vec<f32> = (0..n).map(|i| (i % 11) as f32 - 5.0).collect();
        let want = digit_named_ref(&a, BK4, T2);
        let (c, g) = on_both(|d| {
            let mut out = zeros::<f32>(d, n);
            digit_named::launch::<BK4, T2>(d, n, &buf(d, &a), &mut out).unwrap();
            out.read().unwrap()
        });
        assert_eq!(c, want, "cpu BK4 = {BK4}, T2 = {T2}, n = {n}");
        assert_eq!(g, want, "gpu BK4 = {BK4}, T2 = {T2}, n = {n}");
        // The checked module too (its own specialisation).
        let d = gpu().checked();
        let mut out = zeros::<f32>(&d, n);
        digit_named::launch::<BK4, T2>(&d, n, &buf(&d, &a), &mut out).unwrap();
        assert_eq!(out.read().unwrap(), want, "gpu checked BK4 = {BK4}, T2 = {T2}, n = {n}");
    }
}

#[test]
fn const_parameters_named_with_digits() {
    assert!(digit_named::WGSL.contains("override BK4_: u32;"), "naga renames it:\n{}", digit_named::WGSL);
    run_digit_named::<1, 0>();
    run_digit_named::<4, 3>();
    run_digit_named::<7, 2>();
    let kernel = &digit_named::KERNEL;
    let text = onekernel::abi::specialised_wgsl(digit_named::WGSL, &kernel.consts.params, &[4.0, 3.0]).unwrap();
    insta::assert_snapshot!("digit_named", digit_named::WGSL);
    insta::assert_snapshot!("digit_named_specialised_4_3", text);
}

/// Every module of a specialisation, the checked ones too, has its
/// `#[unroll]` loops over parameters unrolled and the arrays they index
/// split into scalars: the checked module's loop budget does not hide a
/// loop from the unroller (a checked launch is never the slow loop).
#[test]
fn every_module_of_a_specialisation_is_unrolled_and_split() {
    let kernel = &digit_named::KERNEL;
    assert_eq!(kernel.modules.len(), 4);
    for module in kernel.modules.iter() {
        assert!(module.wgsl.contains("unroll_k"), "the {} module marks the loops", module.key);
        let text = onekernel::abi::specialised_wgsl(&module.wgsl, &kernel.consts.params, &[4.0, 3.0]).unwrap();
        assert!(!text.contains("unroll_k"), "the {} module keeps a loop:\n{text}", module.key);
        assert!(!text.contains("array<f32, 4>"), "the {} module keeps the tile an array:\n{text}", module.key);
    }
}

/// A specialisation whose module does not validate (a compiler bug) is an
/// `Err` naming the kernel and the values, never a silent fallback.
#[test]
fn a_specialisation_that_does_not_validate_is_an_error_naming_the_values() {
    let mut broken = digit_named::KERNEL.clone();
    broken.modules = broken
        .modules
        .iter()
        .map(|m| onekernel::abi::Module {
            wgsl: format!("{}\nfn broken() -> u32 {{ return 1.5f; }}\n", m.wgsl).into(),
            ..m.clone()
        })
        .collect::<Vec<_>>()
        .into();
    let broken: &'static onekernel::abi::KernelInfo = Box::leak(Box::new(broken));
    let e = onekernel::__private::specialise(broken, &[4.0, 3.0]).unwrap_err();
    assert!(matches!(e, LaunchError::InvalidKernel { .. }), "{e:?}");
    let text = e.to_string();
    assert!(text.contains("digit_named") && text.contains("BK4 = 4, T2 = 3"), "{text}");
}

/// A specialisation unrolls the `#[unroll]` loop over `TM`: no loop over
/// it is left, `row` is indexed by constants only (so split into
/// scalars), and the unrolled
/// module runs (`const_parameters_size_local_arrays` compares it with
/// plain Rust on the GPU).
#[test]
fn a_specialisation_unrolls_loops_over_parameters() {
    let kernel = &local_sized::KERNEL;
    assert!(local_sized::WGSL.contains("unroll_r"), "the loop is marked:\n{}", local_sized::WGSL);
    let text = onekernel::abi::specialised_wgsl(local_sized::WGSL, &kernel.consts.params, &[3.0, 2.0]).unwrap();
    assert!(!text.contains("= unroll_r") && !text.contains("unroll_r ="), "{text}");
    // Indexed by constants only, `row` is split into scalars (naga's
    // writer appends `_` to a name that ends in a digit).
    for r in 0..3 {
        assert!(text.contains(&format!("var row_{r}_: f32;")), "{text}");
    }
    assert!(!text.contains("var row:"), "{text}");
    insta::assert_snapshot!("local_sized_specialised_3_2", text);
}

#[test]
fn wgsl_names_the_lengths() {
    insta::assert_snapshot!("shared_sized", shared_sized::WGSL);
    insta::assert_snapshot!("shared_scope_sized", shared_scope_sized::WGSL);
    insta::assert_snapshot!("local_sized", local_sized::WGSL);
}

/// Each module specialised as the runtime does (the overrides written as
/// constants, the marked loops unrolled) validates, and its SPIR-V passes
/// `spirv-val`.
#[test]
fn specialised_sized_modules_pass_spirv_val() {
    let cases: [(&onekernel::abi::KernelInfo, &[f64]); 4] = [
        (&shared_sized::KERNEL, &[16.0]),
        (&shared_scope_sized::KERNEL, &[4.0, 8.0]),
        (&local_sized::KERNEL, &[4.0, 8.0]),
        (&local_sized::KERNEL, &[1.0, 1.0]),
    ];
    for (case, (kernel, values)) in cases.into_iter().enumerate() {
        for (m, module) in kernel.modules.iter().enumerate() {
            let text = onekernel::abi::specialised_wgsl(&module.wgsl, &kernel.consts.params, values).unwrap();
            shader_checks::reparse(&kernel.name, &text);
            let words =
                onekernel_compiler::emit::specialised_spirv(&module.wgsl, &kernel.consts.params, values).unwrap();
            shader_checks::spirv_val(&format!("{}-{case}-{m}", kernel.name), &words);
        }
    }
}

/// `workgroup_size` set by a const parameter, which also sizes the shared
/// array: each workgroup reverses its block.
#[kernel(workgroup_size = BLOCK, max_workgroup_invocations = 1024)]
pub fn block_sized<const BLOCK: usize>(a: &[u32], out: &mut [u32]) {
    let tile = shared::<[u32; BLOCK]>();
    let (i, l) = (global_id().x, thread_id().x);
    tile[l] = if i < a.len() { a[i] } else { 0 };
    workgroup_barrier();
    if i < a.len() {
        out[i] = tile[BLOCK - 1 - l] + block_dim().x as u32;
    }
}

fn block_sized_ref(a: &[u32], b: usize) -> Vec<u32> {
    (0..a.len()).map(|i| a.get(i / b * b + b - 1 - i % b).copied().unwrap_or(0) + b as u32).collect()
}

fn run_block_sized<const BLOCK: usize>() {
    for n in SIZES {
        let a: Vec<u32> = (0..n as u32).map(|i| i * 3 % 1001).collect();
        let want = block_sized_ref(&a, BLOCK);
        let (c, g) = on_both(|d| {
            let mut out = zeros::<u32>(d, n);
            block_sized::launch::<BLOCK>(d, n, &buf(d, &a), &mut out).unwrap();
            out.read().unwrap()
        });
        assert_eq!(c, want, "cpu BLOCK = {BLOCK}, n = {n}");
        assert_eq!(g, want, "gpu BLOCK = {BLOCK}, n = {n}");
    }
}

#[test]
fn const_parameter_sets_the_workgroup_size() {
    assert_eq!(block_sized::KERNEL.workgroup_size, [0, 1, 1], "set at the launch");
    assert_eq!(block_sized::KERNEL.consts.workgroup_size, [Some(0), None, None]);
    run_block_sized::<1>();
    run_block_sized::<32>();
    run_block_sized::<256>();
    run_block_sized::<1024>();
}

const BX: u32 = 8;
const BY: u32 = 4;

/// A 2-D `workgroup_size` of constants of the kernel's scope.
#[kernel(workgroup_size = (BX, BY))]
pub fn scope_sized_workgroup(a: &[u32], out: &mut [u32]) {
    let i = global_id().x;
    if thread_id().y == 0 && i < a.len() {
        out[i] = a[i] * block_dim().x as u32 + block_dim().y as u32 + thread_id().x as u32;
    }
}

#[test]
fn constants_of_the_scope_set_the_workgroup_size() {
    for n in SIZES {
        let a: Vec<u32> = (0..n as u32).map(|i| i % 97).collect();
        let want: Vec<u32> = a.iter().enumerate().map(|(i, &x)| x * BX + BY + (i % BX as usize) as u32).collect();
        let (c, g) = on_both(|d| {
            let mut out = zeros::<u32>(d, n);
            scope_sized_workgroup::launch(d, n, &buf(d, &a), &mut out).unwrap();
            out.read().unwrap()
        });
        assert_eq!(c, want, "cpu n = {n}");
        assert_eq!(g, want, "gpu n = {n}");
    }
}

#[test]
fn a_workgroup_size_the_device_cannot_run_is_an_error_naming_it() {
    for d in [super::cpu(), gpu()] {
        let a = buf(d, &[1u32; 4]);
        let mut out = zeros::<u32>(d, 4);
        let text = block_sized::launch::<0>(d, 4, &a, &mut out).unwrap_err().to_string();
        assert!(text.contains("block_sized::<BLOCK = 0>") && text.contains("`BLOCK` = 0"), "{text}");
        let text = block_sized::launch::<4096>(d, 4, &a, &mut out).unwrap_err().to_string();
        assert!(text.contains("block_sized::<BLOCK = 4096>") && text.contains("`BLOCK`"), "{text}");
    }
}

#[test]
fn wgsl_names_the_workgroup_size() {
    insta::assert_snapshot!("block_sized", block_sized::WGSL);
    insta::assert_snapshot!("scope_sized_workgroup", scope_sized_workgroup::WGSL);
    for (kernel, values) in [(&block_sized::KERNEL, [64.0].as_slice()), (&scope_sized_workgroup::KERNEL, &[8.0, 4.0])] {
        for (m, module) in kernel.modules.iter().enumerate() {
            let text = onekernel::abi::specialised_wgsl(&module.wgsl, &kernel.consts.params, values).unwrap();
            shader_checks::reparse(&kernel.name, &text);
            let words =
                onekernel_compiler::emit::specialised_spirv(&module.wgsl, &kernel.consts.params, values).unwrap();
            shader_checks::spirv_val(&format!("{}-{m}", kernel.name), &words);
        }
    }
}
