//! `onekernel::inspect`: every view of a compiled kernel, snapshot-tested
//! (the kernels' line numbers in the explain views are this file's).

use onekernel::inspect;
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

/// A helper, a scalar parameter and a loop, for the explain view.
#[kernel(workgroup_size = 64)]
fn sum_squares(a: &[f32], out: &mut [f32], n: u32) {
    let i = global_id().x;
    let mut acc = 0.0;
    for j in 0..n {
        acc += square(a[(i + j as usize) % a.len()]);
    }
    if i < out.len() {
        out[i] = acc;
    }
}

#[test]
fn wgsl() {
    assert_eq!(inspect::wgsl(&vector_add::KERNEL), vector_add::WGSL);
    insta::assert_snapshot!(inspect::wgsl(&vector_add::KERNEL));
}

#[test]
fn spirv_words_and_disassembly() {
    let words = inspect::spirv(&vector_add::KERNEL);
    assert_eq!(words, vector_add::SPIRV);
    assert_eq!(words[0], 0x0723_0203, "the SPIR-V magic number");
    insta::assert_snapshot!(inspect::spirv_disassembly(&vector_add::KERNEL));
}

#[test]
fn naga_ir() {
    insta::assert_snapshot!(inspect::naga_ir(&vector_add::KERNEL));
}

#[test]
fn bindings() {
    insta::assert_snapshot!(inspect::bindings(&vector_add::KERNEL));
    insta::assert_snapshot!("bindings_sum_squares", inspect::bindings(&sum_squares::KERNEL));
}

#[test]
fn explain() {
    assert_eq!(inspect::explain(&vector_add::KERNEL), vector_add::EXPLAIN);
    insta::assert_snapshot!(inspect::explain(&vector_add::KERNEL));
    insta::assert_snapshot!("explain_sum_squares", inspect::explain(&sum_squares::KERNEL));
}

/// The explain view is made from a separate module: the markers it uses
/// never reach the WGSL that runs.
#[test]
fn explain_markers_stay_out_of_the_real_wgsl() {
    for m in vector_add::KERNEL.modules.iter().chain(sum_squares::KERNEL.modules.iter()) {
        assert!(!m.wgsl.contains("explain_line"), "{}", m.wgsl);
    }
    assert!(!vector_add::EXPLAIN.contains("explain_line"));
}

/// A generic kernel, for inspection per instantiation.
#[kernel(workgroup_size = 64)]
fn clamp_all<T: Num>(a: &[T], lo: T, hi: T, out: &mut [T]) {
    let i = global_id().x;
    if i < out.len() {
        out[i] = a[i].clamp(lo, hi);
    }
}

#[test]
fn generic_kernel_per_instantiation() {
    let (f, u) = (clamp_all::kernel_info::<f32>(), clamp_all::kernel_info::<u64>());
    assert_eq!(inspect::wgsl(f), clamp_all::for_f32::WGSL);
    assert_eq!(inspect::wgsl(u), clamp_all::for_u64::WGSL);
    assert!(inspect::wgsl(u).contains("array<u64>") && !inspect::wgsl(f).contains("u64"));
    assert_eq!(inspect::spirv(f), clamp_all::for_f32::SPIRV);
    // The explain view shows the same Rust line beside each type's WGSL.
    for info in [f, u] {
        let explain = inspect::explain(info).to_string();
        assert!(explain.contains("out[i] = a[i].clamp(lo, hi);"), "{explain}");
        assert!(explain.contains("clamp("), "{explain}");
    }
    assert!(inspect::bindings(u).to_string().contains("u64"), "{}", inspect::bindings(u));
}
