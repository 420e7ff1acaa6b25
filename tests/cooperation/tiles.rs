//! Matrix tiles (tensor cores): tile kernels on the CPU executor against
//! plain-Rust matrix products computed in the documented order (so the
//! CPU's results are exact, not approximate), on the race-checked CPU
//! device, and on the GPU: with cooperative matrices the same products
//! within f16 tolerances, without them (lavapipe) the launch's `Err`
//! naming the kernel and the feature. The WGSL is snapshotted; SPIR-V
//! cannot go through our `spirv-val` (SPIRV-Tools 2023.1 predates
//! `SPV_KHR_cooperative_matrix`), so naga validates it at compile time and
//! its disassembly is snapshotted (docs/testing.md).

use onekernel::half::f16;
use onekernel::prelude::*;
use onekernel::tile::{mma, Accumulator, MatrixA, MatrixB};
use onekernel::{abi::Features, LaunchError};

/// C = A·B (+ C0 when `add` is 1) with 16×16×16 tiles and `f32`
/// accumulation: one subgroup (32 invocations) per 16×16 tile of C, at
/// block (x, y) = (tile column, tile row). A is M×K, B K×N, row-major.
#[kernel(workgroup_size = 32)]
pub fn tile_gemm(a: &[f16], b: &[f16], c: &mut [f32], n: u32, k: u32, add: u32) {
    let (row, col) = (block_id().y * 16, block_id().x * 16);
    let (n, k) = (n as usize, k as usize);
    let mut acc = Accumulator::<f32, 16, 16>::zeros();
    if add == 1 {
        acc = Accumulator::<f32, 16, 16>::load(&c, row * n + col, n);
    }
    let mut kk = 0;
    while kk < k {
        let ta = MatrixA::<16, 16>::load(&a, row * k + kk, k);
        let tb = MatrixB::<16, 16>::load(&b, kk * n + col, n);
        acc = mma(ta, tb, acc);
        kk += 16;
    }
    acc.store(&mut c, row * n + col, n);
}

/// One 8×8×8 product with an `f16` accumulator: A from a buffer, B staged
/// through shared memory and read column by column (it is given
/// transposed), the result stored column by column into shared memory and
/// copied out by the block's 32 threads. (GPUs offer 16×16×16 only: on
/// one with cooperative matrices this launch is `UnsupportedTileShape`.)
#[kernel(workgroup_size = 32)]
pub fn tile_small_f16(a: &[f16], bt: &[f16], out: &mut [f16]) {
    let tile_b = shared::<[f16; 64]>();
    let tile_c = shared::<[f16; 64]>();
    let t = thread_id().x;
    tile_b[t] = bt[t];
    tile_b[t + 32] = bt[t + 32];
    workgroup_barrier();
    let ta = MatrixA::<8, 8>::load(&a, 0, 8);
    let tb = MatrixB::<8, 8>::load_col_major(&tile_b, 0, 8);
    let c = mma(ta, tb, Accumulator::<f16, 8, 8>::zeros());
    c.store_col_major(&tile_c, 0, 8);
    workgroup_barrier();
    out[t * 2] = tile_c[t * 2];
    out[t * 2 + 1] = tile_c[t * 2 + 1];
}

/// Two 16×16×16 products accumulated in `f16` onto a loaded tile, stored
/// column by column.
#[kernel(workgroup_size = 32)]
pub fn tile_f16_acc(a: &[f16], b: &[f16], c: &mut [f16]) {
    let mut acc = Accumulator::<f16, 16, 16>::load(&c, 0, 16);
    for kk in 0..2 {
        acc = mma(MatrixA::<16, 16>::load(&a, kk * 16, 32), MatrixB::<16, 16>::load(&b, kk * 256, 16), acc);
    }
    acc.store_col_major(&mut c, 0, 16);
}

/// The book's tensor-core snippet, line for line: A from a buffer, B from
/// shared memory, at the same offset and stride.
#[kernel(workgroup_size = 32)]
pub fn tile_book_snippet(a_buf: &[f16], b_buf: &[f16], out: &mut [f32], offset: u32, stride: u32) {
    let b_tile = shared::<[f16; 512]>();
    for i in 0..16 {
        b_tile[thread_id().x * 16 + i] = b_buf[thread_id().x * 16 + i];
    }
    workgroup_barrier();
    let (offset, stride) = (offset as usize, stride as usize);
    let a = MatrixA::<16, 16>::load(&a_buf, offset, stride);
    let b = MatrixB::<16, 16>::load(&b_tile, offset, stride);
    let mut c = Accumulator::<f32, 16, 16>::zeros();
    c = mma(a, b, c);
    c.store(&mut out, offset, stride);
}

/// Tiles loaded from `f16` vectors, as the fast f16 GEMM stages them
/// (8-byte `vec4<f16>` loads and stores, issue #14): A straight from an
/// `&[F16Vec4]` buffer, B through a shared `F16Vec4` array, and a second B
/// column by column from an `&[F16Vec2]` buffer. Offsets and strides count
/// vectors, as indexing the arrays does. `tile_from_halves` is the same
/// kernel on `f16` memory, offsets and strides in halves.
#[kernel(workgroup_size = 32)]
pub fn tile_from_vectors(a: &[F16Vec4], b: &[F16Vec4], bt: &[F16Vec2], c: &mut [f32], stride: u32) {
    let b_s = shared::<[F16Vec4; 64]>();
    let (t, stride) = (thread_id().x, stride as usize);
    // B's 16×16 tile at vector column 1: 4 vectors per row.
    for e in 0..2 {
        let v = t + e * 32;
        b_s[v] = b[(v / 4) * stride + 1 + v % 4];
    }
    workgroup_barrier();
    let ta = MatrixA::<16, 16>::load(&a, 1, stride);
    let tb = MatrixB::<16, 16>::load(&b_s, 0, 4);
    let acc = mma(ta, tb, Accumulator::<f32, 16, 16>::zeros());
    let tb2 = MatrixB::<16, 16>::load_col_major(&bt, 0, 8);
    mma(ta, tb2, acc).store(&mut c, 0, 16);
}

/// `tile_from_vectors` on `f16` memory.
#[kernel(workgroup_size = 32)]
pub fn tile_from_halves(a: &[f16], b: &[f16], bt: &[f16], c: &mut [f32], stride: u32) {
    let b_s = shared::<[f16; 256]>();
    let (t, stride) = (thread_id().x, stride as usize * 4);
    for e in 0..8 {
        let h = t + e * 32;
        b_s[h] = b[(h / 16) * stride + 4 + h % 16];
    }
    workgroup_barrier();
    let ta = MatrixA::<16, 16>::load(&a, 4, stride);
    let tb = MatrixB::<16, 16>::load(&b_s, 0, 16);
    let acc = mma(ta, tb, Accumulator::<f32, 16, 16>::zeros());
    let tb2 = MatrixB::<16, 16>::load_col_major(&bt, 0, 16);
    mma(ta, tb2, acc).store(&mut c, 0, 16);
}

/// Shared arrays of a tile kernel start 16-byte aligned, as tile loads
/// need (on the H200 a misaligned one read zeros): `count` (12 bytes) and
/// `odd` (20 bytes) are lengthened to multiples of 16 bytes by the
/// compiler, so that `b_s`, after them, starts where a tile load may.
#[kernel(workgroup_size = 32)]
pub fn tile_padded_shared(a: &[f16], b: &[f16], c: &mut [f32], marks: &mut [f32]) {
    let count = shared::<[u32; 3]>();
    let odd = shared::<[f16; 10]>();
    let b_s = shared::<[f16; 256]>();
    let t = thread_id().x;
    if t < 3 {
        count[t] = t as u32 + 1;
    }
    if t < 10 {
        odd[t] = f16::from_f32(t as f32);
    }
    for e in 0..8 {
        b_s[t + e * 32] = b[t + e * 32];
    }
    workgroup_barrier();
    let ta = MatrixA::<16, 16>::load(&a, 0, 16);
    let tb = MatrixB::<16, 16>::load(&b_s, 0, 16);
    mma(ta, tb, Accumulator::<f32, 16, 16>::zeros()).store(&mut c, 0, 16);
    if t < 3 {
        marks[t] = count[t] as f32 + odd[9 - t].to_f32();
    }
}

fn halves(n: usize, seed: u32) -> Vec<f16> {
    // Small values with few significant bits: exact in f16, varied signs.
    (0..n).map(|i| f16::from_f32(((i as u32 * 37 + seed * 11) % 17) as f32 / 8.0 - 1.0)).collect()
}

/// C0 + A·B in f32, k ascending: the CPU executor's documented order.
fn reference(a: &[f16], b: &[f16], c0: &[f32], m: usize, n: usize, k: usize) -> Vec<f32> {
    let mut c = c0.to_vec();
    for i in 0..m {
        for j in 0..n {
            let mut s = c[i * n + j];
            for p in 0..k {
                s += a[i * k + p].to_f32() * b[p * n + j].to_f32();
            }
            c[i * n + j] = s;
        }
    }
    c
}

/// The GPU runs tiles only with cooperative matrices: then its results
/// agree within f16-input tolerances; otherwise the launch is an `Err`
/// naming the kernel and the feature.
fn on_gpu<T>(name: &str, run: impl Fn(&Device) -> Result<T, LaunchError>) -> Option<T> {
    let gpu = super::gpu();
    match run(gpu) {
        Ok(v) => {
            assert!(gpu.features().contains(Features::COOPERATIVE_MATRIX));
            Some(v)
        }
        Err(LaunchError::MissingFeature { kernel, missing, .. }) => {
            assert_eq!(kernel, name);
            assert!(missing.contains(Features::COOPERATIVE_MATRIX), "{missing:?}");
            assert!(!gpu.features().contains(Features::COOPERATIVE_MATRIX));
            None
        }
        Err(e) => panic!("{e}"),
    }
}

fn run_gemm(
    d: &Device,
    a: &[f16],
    b: &[f16],
    c0: &[f32],
    (m, n, k): (usize, usize, usize),
) -> Result<Vec<f32>, LaunchError> {
    let a = Buffer::from_slice(d, a).unwrap();
    let b = Buffer::from_slice(d, b).unwrap();
    let mut c = Buffer::from_slice(d, c0).unwrap();
    let add = u32::from(c0.iter().any(|&x| x != 0.0));
    tile_gemm::launch(d, Grid::blocks((n / 16, m / 16)), &a, &b, &mut c, n as u32, k as u32, add)?;
    Ok(c.read().unwrap())
}

#[test]
fn tile_gemm_matches_the_matrix_product() {
    for (m, n, k) in [(16, 16, 16), (32, 48, 64), (48, 16, 160)] {
        let (a, b) = (halves(m * k, 1), halves(k * n, 2));
        for add in [false, true] {
            let c0: Vec<f32> = (0..m * n).map(|i| if add { (i % 5) as f32 - 2.0 } else { 0.0 }).collect();
            let want = reference(&a, &b, &c0, m, n, k);
            let cpu = run_gemm(&Device::cpu(), &a, &b, &c0, (m, n, k)).unwrap();
            assert_eq!(cpu, want, "cpu {m}x{n}x{k} add={add}");
            let checked = run_gemm(&Device::cpu_race_checked(), &a, &b, &c0, (m, n, k)).unwrap();
            assert_eq!(checked, want, "race-checked {m}x{n}x{k}");
            if let Some(g) = on_gpu("tile_gemm", |d| run_gemm(d, &a, &b, &c0, (m, n, k))) {
                for (x, y) in g.iter().zip(&want) {
                    assert!((x - y).abs() <= 1e-3 * (1.0 + y.abs()), "gpu {x} vs {y}");
                }
            }
        }
    }
}

#[test]
fn small_tiles_with_an_f16_accumulator_through_shared_memory() {
    let (a, b) = (halves(64, 3), halves(64, 4));
    // B given transposed: bt[j * 8 + p] = b[p * 8 + j].
    let bt: Vec<f16> = (0..64).map(|i| b[(i % 8) * 8 + i / 8]).collect();
    // f32 sums rounded once to f16, stored column by column.
    let sums = reference(&a, &b, &[0.0; 64], 8, 8, 8);
    let want: Vec<f16> = (0..64).map(|i| f16::from_f32(sums[(i % 8) * 8 + i / 8])).collect();
    let run = |d: &Device| {
        let a = Buffer::from_slice(d, &a).unwrap();
        let bt = Buffer::from_slice(d, &bt).unwrap();
        let mut out = Buffer::<f16>::zeroed(d, 64).unwrap();
        tile_small_f16::launch(d, Grid::blocks(1), &a, &bt, &mut out)?;
        Ok(out.read().unwrap())
    };
    assert_eq!(run(&Device::cpu()).unwrap(), want);
    assert_eq!(run(&Device::cpu_race_checked()).unwrap(), want);
    match run(super::gpu()) {
        Err(LaunchError::MissingFeature { kernel: "tile_small_f16", .. }) => {}
        Err(LaunchError::UnsupportedTileShape { kernel: "tile_small_f16", shape, .. }) => assert_eq!(shape.m, 8),
        Ok(g) => {
            for (x, y) in g.iter().zip(&want) {
                assert!((x.to_f32() - y.to_f32()).abs() <= 1e-2 * (1.0 + y.to_f32().abs()), "gpu {x} vs {y}");
            }
        }
        Err(e) => panic!("{e}"),
    }
}

#[test]
fn f16_accumulation_rounds_once_per_product() {
    let (a, b) = (halves(16 * 32, 5), halves(32 * 16, 6));
    let c0: Vec<f16> = (0..256).map(|i| f16::from_f32((i % 9) as f32 / 4.0)).collect();
    // Each mma: f32 sum from the f16 accumulator, rounded to f16.
    let mut acc: Vec<f16> = c0.clone();
    for kk in 0..2 {
        let a_part: Vec<f16> = (0..256).map(|i| a[(i / 16) * 32 + kk * 16 + i % 16]).collect();
        let sums = reference(
            &a_part,
            &b[kk * 256..kk * 256 + 256],
            &acc.iter().map(|h| h.to_f32()).collect::<Vec<_>>(),
            16,
            16,
            16,
        );
        acc = sums.iter().map(|&s| f16::from_f32(s)).collect();
    }
    let want: Vec<f16> = (0..256).map(|i| acc[(i % 16) * 16 + i / 16]).collect();
    let run = |d: &Device| {
        let (a, b) = (Buffer::from_slice(d, &a).unwrap(), Buffer::from_slice(d, &b).unwrap());
        let mut c = Buffer::from_slice(d, &c0).unwrap();
        tile_f16_acc::launch(d, Grid::blocks(1), &a, &b, &mut c)?;
        Ok(c.read().unwrap())
    };
    assert_eq!(run(&Device::cpu()).unwrap(), want);
    if let Some(g) = on_gpu("tile_f16_acc", run) {
        for (x, y) in g.iter().zip(&want) {
            assert!((x.to_f32() - y.to_f32()).abs() <= 2e-2 * (1.0 + y.to_f32().abs()), "gpu {x} vs {y}");
        }
    }
}

#[test]
fn the_book_snippet_multiplies_tiles_at_an_offset() {
    // 16 × 32 matrices; the tiles start at column 8 of row 0.
    let (a, b) = (halves(512, 7), halves(512, 8));
    let (offset, stride) = (8usize, 32usize);
    let mut want = vec![0.0f32; 512];
    for i in 0..16 {
        for j in 0..16 {
            let mut s = 0.0f32;
            for p in 0..16 {
                s += a[offset + i * stride + p].to_f32() * b[offset + p * stride + j].to_f32();
            }
            want[offset + i * stride + j] = s;
        }
    }
    let run = |d: &Device| {
        let (a, b) = (Buffer::from_slice(d, &a).unwrap(), Buffer::from_slice(d, &b).unwrap());
        let mut out = Buffer::<f32>::zeroed(d, 512).unwrap();
        tile_book_snippet::launch(d, Grid::blocks(1), &a, &b, &mut out, offset as u32, stride as u32)?;
        Ok(out.read().unwrap())
    };
    assert_eq!(run(&Device::cpu_race_checked()).unwrap(), want);
    if let Some(g) = on_gpu("tile_book_snippet", run) {
        for (x, y) in g.iter().zip(&want) {
            assert!((x - y).abs() <= 1e-3 * (1.0 + y.abs()), "gpu {x} vs {y}");
        }
    }
}

#[test]
fn tiles_load_from_f16_vectors_as_from_their_lanes() {
    // A and B: 16 rows of 6 `F16Vec4`s (24 halves); the tiles start at
    // vector column 1 (half 4). Bᵀ: 16 columns of 8 `F16Vec2`s.
    let stride = 6usize;
    let (a, b, bt) = (halves(16 * 24, 9), halves(16 * 24, 10), halves(256, 11));
    let tile = |m: &[f16]| -> Vec<f16> { (0..256).map(|i| m[(i / 16) * 24 + 4 + i % 16]).collect() };
    let b2: Vec<f16> = (0..256).map(|i| bt[(i % 16) * 16 + i / 16]).collect();
    let want = reference(&tile(&a), &b2, &reference(&tile(&a), &tile(&b), &[0.0; 256], 16, 16, 16), 16, 16, 16);
    let vectors = |d: &Device| {
        let a = Buffer::<F16Vec4>::from_slice(d, bytemuck::cast_slice(&a)).unwrap();
        let b = Buffer::<F16Vec4>::from_slice(d, bytemuck::cast_slice(&b)).unwrap();
        let bt = Buffer::<F16Vec2>::from_slice(d, bytemuck::cast_slice(&bt)).unwrap();
        let mut c = Buffer::<f32>::zeroed(d, 256).unwrap();
        tile_from_vectors::launch(d, Grid::blocks(1), &a, &b, &bt, &mut c, stride as u32)?;
        Ok(c.read().unwrap())
    };
    let scalars = |d: &Device| {
        let (a, b, bt) = (
            Buffer::from_slice(d, &a).unwrap(),
            Buffer::from_slice(d, &b).unwrap(),
            Buffer::from_slice(d, &bt).unwrap(),
        );
        let mut c = Buffer::<f32>::zeroed(d, 256).unwrap();
        tile_from_halves::launch(d, Grid::blocks(1), &a, &b, &bt, &mut c, stride as u32).map(|_| c.read().unwrap())
    };
    let from_halves = scalars(&Device::cpu()).unwrap();
    assert_eq!(from_halves, want);
    assert_eq!(vectors(&Device::cpu()).unwrap(), from_halves);
    assert_eq!(vectors(&Device::cpu_race_checked()).unwrap(), from_halves);
    if let Some(g) = on_gpu("tile_from_vectors", vectors) {
        for (x, y) in g.iter().zip(&want) {
            assert!((x - y).abs() <= 1e-3 * (1.0 + y.abs()), "gpu {x} vs {y}");
        }
    }
}

#[test]
fn shared_arrays_of_tile_kernels_are_padded_to_16_bytes() {
    // The WGSL declares the padded lengths: 3 u32 → 4, 10 f16 → 16.
    let wgsl = tile_padded_shared::WGSL;
    for want in ["array<u32, 4>", "array<f16, 16>", "array<f16, 256>"] {
        assert!(wgsl.contains(want), "{want} missing from\n{wgsl}");
    }
    let (a, b) = (halves(256, 3), halves(256, 4));
    let want = reference(&a, &b, &[0.0; 256], 16, 16, 16);
    let run = |d: &Device| {
        let (ab, bb) = (Buffer::from_slice(d, &a).unwrap(), Buffer::from_slice(d, &b).unwrap());
        let (mut c, mut marks) = (Buffer::<f32>::zeroed(d, 256).unwrap(), Buffer::<f32>::zeroed(d, 3).unwrap());
        tile_padded_shared::launch(d, Grid::blocks(1), &ab, &bb, &mut c, &mut marks)?;
        Ok((c.read().unwrap(), marks.read().unwrap()))
    };
    let (c, marks) = run(&Device::cpu()).unwrap();
    assert_eq!((c, marks), (want.clone(), vec![10.0, 10.0, 10.0]));
    if let Some((g, marks)) = on_gpu("tile_padded_shared", run) {
        assert_eq!(marks, [10.0, 10.0, 10.0]);
        for (x, y) in g.iter().zip(&want) {
            assert!((x - y).abs() <= 1e-3 * (1.0 + y.abs()), "gpu {x} vs {y}");
        }
    }
}

#[test]
fn kernel_info_records_the_feature_and_the_tile_shapes() {
    use onekernel::abi::{ScalarType as S, TileShape};
    assert!(tile_gemm::KERNEL.features.contains(Features::COOPERATIVE_MATRIX.union(Features::F16)));
    assert_eq!(&*tile_gemm::KERNEL.tile_shapes, &[TileShape { m: 16, n: 16, k: 16, ab: S::F16, acc: S::F32 }]);
    assert_eq!(&*tile_small_f16::KERNEL.tile_shapes, &[TileShape { m: 8, n: 8, k: 8, ab: S::F16, acc: S::F16 }]);
    assert_eq!(&*tile_f16_acc::KERNEL.tile_shapes, &[TileShape { m: 16, n: 16, k: 16, ab: S::F16, acc: S::F16 }]);
}

#[test]
fn lavapipe_refuses_tile_kernels_with_an_error_naming_the_feature() {
    let gpu = super::gpu();
    if gpu.features().contains(Features::COOPERATIVE_MATRIX) {
        return;
    }
    let err = run_gemm(gpu, &halves(256, 1), &halves(256, 2), &[0.0; 256], (16, 16, 16)).unwrap_err();
    let text = err.to_string();
    assert!(text.contains("kernel `tile_gemm`") && text.contains("EXPERIMENTAL_COOPERATIVE_MATRIX"), "{text}");
}

/// Readable WGSL for the tile kernels; their SPIR-V's disassembly (naga
/// validated it when the kernel compiled; our spirv-val cannot).
mod shaders {
    use super::*;

    #[test]
    fn tile_wgsl_and_spirv() {
        insta::assert_snapshot!("tile_gemm", tile_gemm::WGSL);
        insta::assert_snapshot!("tile_small_f16", tile_small_f16::WGSL);
        insta::assert_snapshot!("tile_from_vectors", tile_from_vectors::WGSL);
        insta::assert_snapshot!("tile_f16_acc_spirv", onekernel::inspect::spirv_disassembly(&tile_f16_acc::KERNEL));
        super::super::shader_checks::reparse_with_tiles("tile_gemm", tile_gemm::WGSL);
        super::super::shader_checks::reparse_with_tiles("tile_small_f16", tile_small_f16::WGSL);
        super::super::shader_checks::reparse_with_tiles("tile_from_vectors", tile_from_vectors::WGSL);
        super::super::shader_checks::reparse_with_tiles("tile_padded_shared", tile_padded_shared::WGSL);
        // The checked variant: the last vector of each tile is checked.
        let checked = &tile_from_vectors::KERNEL.module(onekernel::abi::ModuleKey::CHECKED).expect("checked").wgsl;
        super::super::shader_checks::reparse_with_tiles("tile_from_vectors (checked)", checked);
    }
}
