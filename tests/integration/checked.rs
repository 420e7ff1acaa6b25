//! Checked GPU launches (`Device::checked`): out-of-bounds indices into
//! buffers, shared arrays and local arrays, and integer division by zero,
//! are `Err`s naming the kernel, the source line, the parameter or array,
//! the index and the length, where an unchecked launch returns `Ok` with
//! wrong data. Correct kernels give the same results checked and unchecked.

use onekernel::abi::{KernelInfo, ModuleKey};
use onekernel::prelude::*;
use onekernel::LaunchError;

/// No guard: threads past the end index both buffers.
#[kernel(workgroup_size = 64)]
fn unguarded_copy(a: &[f32], out: &mut [f32]) {
    let i = global_id().x;
    out[i] = a[i] * 2.0; // SITE unguarded_copy
}

/// Divides by a parameter that may be zero.
#[kernel(workgroup_size = 64)]
fn divide(a: &[u32], out: &mut [u32], d: u32) {
    let i = global_id().x;
    if i < out.len() {
        out[i] = a[i] / d; // SITE divide
    }
}

/// Reads one past the end of a shared tile.
#[kernel(workgroup_size = 64)]
fn shared_overrun(a: &[f32], out: &mut [f32]) {
    let tile = shared::<[f32; 64]>();
    let t = thread_id().x;
    let i = global_id().x;
    tile[t] = a[i];
    workgroup_barrier();
    out[i] = tile[t + 1]; // SITE shared_overrun
}

/// Indexes a local array with a value that reaches its length.
#[kernel(workgroup_size = 64)]
fn local_overrun(out: &mut [u32]) {
    let i = global_id().x;
    let table = [10u32, 20, 30, 40];
    if i < out.len() {
        out[i] = table[i % 5]; // SITE local_overrun
    }
}

/// A correct tiled reduction: checks pass, results match.
#[kernel(workgroup_size = 64)]
fn block_sums(a: &[f32], out: &mut [f32]) {
    let tile = shared::<[f32; 64]>();
    let t = thread_id().x;
    let i = global_id().x;
    tile[t] = if i < a.len() { a[i] } else { 0.0 };
    workgroup_barrier();
    let mut stride = 32;
    while stride > 0 {
        if t < stride {
            tile[t] += tile[t + stride];
        }
        workgroup_barrier();
        stride /= 2;
    }
    if t == 0 {
        out[block_id().x] = tile[0];
    }
}

/// One thread per workgroup, so that a grid past 65535 workgroups (folded
/// into 2-D dispatches) stays cheap.
#[kernel(workgroup_size = 1)]
fn tiny_blocks(out: &mut [u32]) {
    let b = block_id().x;
    out[b] = b as u32; // SITE tiny_blocks
}

/// Spins until `flag[0]` is set: endless when it is not.
#[kernel(workgroup_size = 64)]
fn spin(flag: &[u32], out: &mut [u32]) {
    let i = global_id().x;
    let mut n = 0u32;
    while flag[0] == 0 {
        n += 1;
    }
    if i < out.len() {
        out[i] = n;
    }
}

/// `file:line:` of the line of this file marked `// SITE name`.
fn site(name: &str) -> String {
    let source = include_str!("checked.rs");
    let marker = format!("// SITE {name}");
    let line = source.lines().position(|l| l.ends_with(&marker)).expect("marked line") + 1;
    format!("{}:{line}:", file!())
}

fn gpu() -> Device {
    Device::gpu().expect("the test needs a GPU adapter (source .ci/env.sh for lavapipe)")
}

#[test]
fn out_of_bounds_buffer_index_is_an_error_naming_the_line() {
    let plain = gpu();
    let checked = plain.checked();
    assert!(checked.is_checked() && !plain.is_checked());
    let a = Buffer::from_slice(&plain, &[1.0f32; 50]).unwrap();
    let mut out = Buffer::<f32>::zeroed(&plain, 50).unwrap();
    // Unchecked: the GPU says nothing.
    unguarded_copy::launch(&plain, 64, &a, &mut out).unwrap();
    // Checked: the first failure, with every failure counted.
    let err = unguarded_copy::launch(&checked, 64, &a, &mut out).unwrap_err();
    let LaunchError::OutOfBounds { kernel, location, what, index, len, failures } = &err else {
        panic!("expected OutOfBounds, got {err:?}")
    };
    assert_eq!((*kernel, *what, *len), ("unguarded_copy", "a", 50));
    assert!((50..64).contains(index), "index {index}");
    // 14 threads past the end, each failing on `a[i]` and `out[i]`.
    assert_eq!(*failures, 28);
    assert!(location.starts_with(&site("unguarded_copy")), "{location}");
    let message = err.to_string();
    assert!(message.contains("the len of `a` is 50 but the index is"), "{message}");
    assert!(message.contains("(and 27 more failed checks)"), "{message}");
    // In bounds elements are still written; nothing past them.
    assert_eq!(out.read().unwrap(), vec![2.0; 50]);
    // The CPU executor stops at the same line.
    let cpu = Device::cpu();
    let a = Buffer::from_slice(&cpu, &[1.0f32; 50]).unwrap();
    let mut out = Buffer::<f32>::zeroed(&cpu, 50).unwrap();
    let err = unguarded_copy::launch(&cpu, 64, &a, &mut out).unwrap_err();
    assert!(matches!(&err, LaunchError::CpuPanic { location: Some(l), .. } if l.starts_with(&site("unguarded_copy"))));
}

#[test]
fn division_by_zero_is_an_error() {
    let device = gpu().checked();
    let a = Buffer::from_slice(&device, &[7u32; 100]).unwrap();
    let mut out = Buffer::<u32>::zeroed(&device, 100).unwrap();
    divide::launch(&device, 100, &a, &mut out, 2).unwrap();
    assert_eq!(out.read().unwrap(), vec![3; 100]);
    let err = divide::launch(&device, 100, &a, &mut out, 0).unwrap_err();
    let LaunchError::DivisionByZero { kernel, location, what, failures } = &err else {
        panic!("expected DivisionByZero, got {err:?}")
    };
    assert_eq!((*kernel, *what, *failures), ("divide", "/", 100));
    assert!(location.starts_with(&site("divide")), "{location}");
}

#[test]
fn shared_and_local_array_overruns_are_errors() {
    let device = gpu().checked();
    let a = Buffer::from_slice(&device, &[1.0f32; 128]).unwrap();
    let mut out = Buffer::<f32>::zeroed(&device, 128).unwrap();
    let err = shared_overrun::launch(&device, 128, &a, &mut out).unwrap_err();
    let LaunchError::OutOfBounds { what, index, len, failures, location, .. } = &err else {
        panic!("expected OutOfBounds, got {err:?}")
    };
    // Thread 63 of each of the 2 workgroups reads tile[64].
    assert_eq!((*what, *index, *len, *failures), ("tile", 64, 64, 2));
    assert!(location.starts_with(&site("shared_overrun")), "{location}");

    let mut out = Buffer::<u32>::zeroed(&device, 100).unwrap();
    let err = local_overrun::launch(&device, 100, &mut out).unwrap_err();
    let LaunchError::OutOfBounds { what, index, len, failures, location, .. } = &err else {
        panic!("expected OutOfBounds, got {err:?}")
    };
    // i % 5 == 4 for 20 of the 100 threads.
    assert_eq!((*what, *index, *len, *failures), ("table", 4, 4, 20));
    assert!(location.starts_with(&site("local_overrun")), "{location}");
}

#[test]
fn correct_kernels_match_unchecked_results() {
    let plain = gpu();
    let checked = plain.checked();
    let data: Vec<f32> = (0..1000).map(|i| (i % 17) as f32 * 0.5).collect();
    let a = Buffer::from_slice(&plain, &data).unwrap();
    let sums = |device: &Device| {
        let mut out = Buffer::<f32>::zeroed(&plain, 16).unwrap();
        block_sums::launch(device, 1024, &a, &mut out).unwrap();
        out.read().unwrap()
    };
    let (unchecked_sums, checked_sums) = (sums(&plain), sums(&checked));
    assert_eq!(unchecked_sums, checked_sums);
    assert_eq!(checked_sums.iter().sum::<f32>(), data.iter().sum::<f32>());
    let mut out = Buffer::<u32>::zeroed(&checked, 10).unwrap();
    local_overrun::launch(&checked, 0, &mut out).unwrap();
}

#[test]
fn folded_grids_are_checked_too() {
    let device = gpu().checked();
    // 70000 workgroups: past one dispatch axis, so the folded module runs.
    let mut out = Buffer::<u32>::zeroed(&device, 70_000).unwrap();
    tiny_blocks::launch(&device, 70_000, &mut out).unwrap();
    let got = out.read().unwrap();
    assert!(got.iter().enumerate().all(|(i, &b)| b == i as u32));
    let mut short = Buffer::<u32>::zeroed(&device, 69_990).unwrap();
    let err = tiny_blocks::launch(&device, 70_000, &mut short).unwrap_err();
    let LaunchError::OutOfBounds { what, len, failures, location, .. } = &err else {
        panic!("expected OutOfBounds, got {err:?}")
    };
    assert_eq!((*what, *len, *failures), ("out", 69_990, 10));
    assert!(location.starts_with(&site("tiny_blocks")), "{location}");
}

#[test]
fn checked_wgsl_reads_as_the_plain_module_plus_checks() {
    let checked = |k: &'static KernelInfo| &k.module(ModuleKey::CHECKED).expect("a checked module").wgsl;
    insta::assert_snapshot!("checked_unguarded_copy", checked(&unguarded_copy::KERNEL));
    insta::assert_snapshot!("checked_shared_overrun", checked(&shared_overrun::KERNEL));
}

/// Every checked launch has a loop budget: an endless loop in an ordinary
/// `#[kernel]` ends within seconds on lavapipe with an `Err` naming the
/// kernel and the loop's line, and the budget can be changed per handle.
#[test]
fn checked_launches_end_an_endless_loop() {
    let device = gpu();
    let mut flag = Buffer::from_slice(&device, &[0u32]).unwrap();
    let mut out = Buffer::<u32>::zeroed(&device, 64).unwrap();
    let start = std::time::Instant::now();
    let err = spin::launch(&device.checked(), 64, &flag, &mut out).unwrap_err();
    let elapsed = start.elapsed();
    let LaunchError::LoopBudget { kernel, location, budget } = &err else { panic!("expected LoopBudget, got {err:?}") };
    assert_eq!((*kernel, *budget), ("spin", 1 << 24), "{err}");
    let line = include_str!("checked.rs").lines().position(|l| l.trim() == "while flag[0] == 0 {").unwrap() + 1;
    assert_eq!(*location, format!("{}:{line}:5", file!()), "the loop's line");
    assert!(err.to_string().contains("ran past the budget of 16777216 loop iterations"), "{err}");
    assert!(elapsed < std::time::Duration::from_secs(60), "took {elapsed:?}");
    assert_eq!(out.read().unwrap(), vec![1 << 24; 64]);
    // Another budget, per handle.
    let small = device.with_loop_budget(1000);
    assert!(small.is_checked() && small.loop_budget() == Some(1000));
    let err = spin::launch(&small, 64, &flag, &mut out).unwrap_err();
    assert!(matches!(err, LaunchError::LoopBudget { budget: 1000, .. }), "{err:?}");
    assert_eq!(out.read().unwrap(), vec![1000; 64]);
    // A loop that ends is no error.
    flag.write(&[1]).unwrap();
    spin::launch(&device.checked(), 64, &flag, &mut out).unwrap();
    assert_eq!(out.read().unwrap(), vec![0; 64]);
}

/// A tool that runs untrusted kernels (the playground) may compile them
/// with another default loop budget: an endless loop ends, and the launch
/// says which loop.
#[test]
fn loop_budget_ends_an_endless_loop() {
    let item: syn::ItemFn = syn::parse_quote! {
        fn spin(flag: &[u32], out: &mut [u32]) {
            let i = global_id().x;
            let mut n = 0u32;
            while flag[0] == 0 {
                n += 1;
            }
            if i < out.len() {
                out[i] = n;
            }
        }
    };
    let options = onekernel_compiler::Options { loop_budget: Some(1000) };
    let kernel = onekernel_compiler::Kernel { attr: quote_attr(), item, module: Default::default() };
    let compiled = onekernel_compiler::compile_kernel(&kernel, &[], &options).unwrap().remove(0);
    let counts = |key| compiled.info.module(key).expect("built").wgsl.contains("loop_iterations");
    assert!(counts(ModuleKey::CHECKED) && counts(ModuleKey::CHECKED_FOLDED));
    assert!(!counts(ModuleKey::PLAIN) && !counts(ModuleKey::FOLDED), "only the checked modules count");
    let info: &'static onekernel::abi::KernelInfo = Box::leak(Box::new(compiled.info));
    let device = gpu();
    let flag = Buffer::from_slice(&device, &[0u32]).unwrap();
    let mut out = Buffer::<u32>::zeroed(&device, 64).unwrap();
    let onekernel::__private::DeviceBackend::Gpu(gpu) = onekernel::__private::backend(&device) else { unreachable!() };
    let args = [
        onekernel::__private::gpu_arg(&flag, info, 0, gpu).unwrap(),
        onekernel::__private::gpu_arg_mut(&mut out, info, 1, gpu).unwrap(),
    ];
    let err = gpu.dispatch_with(info, 64.into(), &args, &[], true).unwrap_err();
    let LaunchError::LoopBudget { kernel, budget, .. } = &err else { panic!("expected LoopBudget, got {err:?}") };
    assert_eq!((*kernel, *budget), ("spin", 1000));
    // Each invocation stopped after the budget: 1000 iterations counted.
    assert_eq!(out.read().unwrap(), vec![1000; 64]);
}

fn quote_attr() -> proc_macro2::TokenStream {
    "workgroup_size = 64".parse().unwrap()
}

/// Divides vectors lane by lane; a zero lane of `d` divides by zero.
#[kernel(workgroup_size = 64)]
fn divide_lanes(a: &[IVec4], out: &mut [IVec4], d: IVec4) {
    let i = global_id().x;
    if i < out.len() {
        out[i] = a[i] / d; // SITE divide_lanes
    }
}

#[test]
fn vector_division_by_a_zero_lane_is_an_error() {
    let device = gpu().checked();
    let a = Buffer::from_slice(&device, &[IVec4::new(7, -8, 9, 10); 100]).unwrap();
    let mut out = Buffer::<IVec4>::zeroed(&device, 100).unwrap();
    divide_lanes::launch(&device, 100, &a, &mut out, IVec4::new(2, 2, -3, 5)).unwrap();
    assert_eq!(out.read().unwrap(), vec![IVec4::new(3, -4, -3, 2); 100]);
    let err = divide_lanes::launch(&device, 100, &a, &mut out, IVec4::new(1, 1, 0, 1)).unwrap_err();
    let LaunchError::DivisionByZero { kernel, location, what, failures } = &err else {
        panic!("expected DivisionByZero, got {err:?}")
    };
    assert_eq!((*kernel, *what, *failures), ("divide_lanes", "/", 100));
    assert!(location.starts_with(&site("divide_lanes")), "{location}");
    // The CPU divides as glam does: the zero lane panics there.
    let cpu = Device::cpu();
    let a = Buffer::from_slice(&cpu, &[IVec4::ONE; 4]).unwrap();
    let mut out = Buffer::<IVec4>::zeroed(&cpu, 4).unwrap();
    assert!(divide_lanes::launch(&cpu, 4, &a, &mut out, IVec4::new(1, 0, 1, 1)).is_err());
}
