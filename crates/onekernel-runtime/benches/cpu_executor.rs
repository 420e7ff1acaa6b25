//! CPU executor vs a hand-written rayon loop on vector_add.
//! Run: `cargo bench -p onekernel-runtime --bench cpu_executor`.
//! The target is 0.8x the hand-written loop. `executor` is what the macro
//! generates for `vector_add` (an own-element kernel: partitioned windows,
//! and each chunk the buffers cover run as one loop over plain slices);
//! `shared` is the per-invocation path every other independent kernel
//! takes, through the shared output view, whose relaxed atomic stores (the
//! price of sound racing writes, see `SharedSliceMut`) LLVM never
//! vectorises; the `hand-atomic` column isolates that cost.

use onekernel_abi::DataType;
use onekernel_runtime::__private::*;
use rayon::prelude::*;
use std::borrow::Cow;
use std::time::{Duration, Instant};

static VECTOR_ADD: KernelInfo = KernelInfo {
    name: Cow::Borrowed("vector_add"),
    entry_point: Cow::Borrowed("vector_add"),
    modules: Cow::Borrowed(&[]),
    explain: Cow::Borrowed(""),
    workgroup_size: [256, 1, 1],
    params: Cow::Borrowed(&[
        ParamInfo { name: Cow::Borrowed("a"), kind: ParamKind::ReadOnlyBuffer, ty: DataType::F32, slot: 0 },
        ParamInfo { name: Cow::Borrowed("b"), kind: ParamKind::ReadOnlyBuffer, ty: DataType::F32, slot: 1 },
        ParamInfo { name: Cow::Borrowed("out"), kind: ParamKind::ReadWriteBuffer, ty: DataType::F32, slot: 2 },
    ]),
    uniform_binding: 3,
    uniform_size: 32,
    max_workgroup_invocations: 256,
    cpu: CpuPlan::OwnElement { chunk_loop: false },
    workgroup_memory_words: 0,
    features: onekernel_abi::Features::NONE,
    ..KernelInfo::EMPTY
};

/// What the macro generates for the CPU path of `vector_add` (its
/// `cpu_chunk` and `cpu_body` inlined).
fn vector_add(cpu: &CpuDevice, a: &Buffer<f32>, b: &Buffer<f32>, out: &mut Buffer<f32>) -> Result<(), LaunchError> {
    let n = out.len();
    let k = &VECTOR_ADD;
    let a = cpu_slice(a, k, 0, cpu)?;
    let b = cpu_slice(b, k, 1, cpu)?;
    let out = cpu_shared(out, k, 2, cpu)?;
    let grid = Grid::threads(n);
    assert!(cpu.can_partition(k, &grid));
    cpu.execute_partitioned(k, grid, (out,), |chunk, (mut out,)| {
        let covered = chunk.x_range().is_some_and(|x| {
            if a.len() < x.end || b.len() < x.end || out.len() < x.end {
                return false;
            }
            let (lo, n) = (x.start, x.end - x.start);
            let (a, b) = (&a[x.clone()], &b[x.clone()]);
            let out = &mut out.window_mut()[..n];
            for j in 0..n {
                // `i < out.len()`, decided: the chunk is covered.
                let _i = lo + j;
                out[j] = a[j] + b[j];
            }
            true
        });
        if !covered {
            chunk.for_each(|inv| {
                let i = inv.global_id.x;
                if i < out.len() {
                    out.store(i, a[i] + b[i]);
                }
            })
        }
    })
}

/// The per-invocation path through the shared view (a kernel the compiler
/// cannot prove writes only its own element).
fn vector_add_shared(
    cpu: &CpuDevice,
    a: &Buffer<f32>,
    b: &Buffer<f32>,
    out: &mut Buffer<f32>,
) -> Result<(), LaunchError> {
    let n = out.len();
    let k = &VECTOR_ADD;
    let a = cpu_slice(a, k, 0, cpu)?;
    let b = cpu_slice(b, k, 1, cpu)?;
    let out = cpu_shared(out, k, 2, cpu)?;
    cpu.execute(k, Grid::threads(n), |inv| {
        let i = inv.global_id.x;
        if i < out.len() {
            out.store(i, a[i] + b[i]);
        }
    })
}

/// The baseline with the executor's store semantics (relaxed atomic
/// stores, which LLVM never vectorises): shows how much of the gap to
/// `hand_written` is the atomics rather than the executor.
fn hand_atomic(a: &[f32], b: &[f32], out: &mut [f32]) {
    let chunk = (out.len() / (rayon::current_num_threads() * 4)).max(4096);
    out.par_chunks_mut(chunk).zip(a.par_chunks(chunk)).zip(b.par_chunks(chunk)).for_each(|((o, a), b)| {
        let o = SharedSliceMut::new(o);
        for i in 0..o.len() {
            o.store(i, a[i] + b[i]);
        }
    });
}

fn hand_written(a: &[f32], b: &[f32], out: &mut [f32]) {
    let chunk = (out.len() / (rayon::current_num_threads() * 4)).max(4096);
    out.par_chunks_mut(chunk).zip(a.par_chunks(chunk)).zip(b.par_chunks(chunk)).for_each(|((o, a), b)| {
        for ((o, a), b) in o.iter_mut().zip(a).zip(b) {
            *o = a + b;
        }
    });
}

/// Median time of `f` over enough runs to fill ~0.3 s.
fn time(mut f: impl FnMut()) -> Duration {
    f();
    let start = Instant::now();
    let mut samples = Vec::new();
    while samples.len() < 5 || (start.elapsed() < Duration::from_millis(300) && samples.len() < 10_000) {
        let t = Instant::now();
        f();
        samples.push(t.elapsed());
    }
    samples.sort();
    samples[samples.len() / 2]
}

fn main() {
    let dev = Device::cpu();
    let DeviceBackend::Cpu(cpu) = backend(&dev) else { unreachable!() };
    println!("{dev}");
    println!(
        "{:>10} {:>12} {:>12} {:>12} {:>12} {:>7} {:>7} {:>7}",
        "n", "executor", "shared", "hand", "hand-atomic", "x hand", "shr/hand", "shr/atom"
    );
    let mut n = 1 << 10;
    while n <= 64 << 20 {
        let a: Vec<f32> = (0..n).map(|i| i as f32).collect();
        let b: Vec<f32> = (0..n).map(|i| (2 * i) as f32).collect();
        let ab = Buffer::from_slice(&dev, &a).unwrap();
        let bb = Buffer::from_slice(&dev, &b).unwrap();
        let mut ob = Buffer::<f32>::zeroed(&dev, n).unwrap();
        let mut out = vec![0f32; n];
        let t_exec = time(|| vector_add(cpu, &ab, &bb, &mut ob).unwrap());
        let mut sb = Buffer::<f32>::zeroed(&dev, n).unwrap();
        let t_shared = time(|| vector_add_shared(cpu, &ab, &bb, &mut sb).unwrap());
        let t_atomic = time(|| hand_atomic(&a, &b, &mut out));
        let t_hand = time(|| hand_written(&a, &b, &mut out));
        assert_eq!(ob.read().unwrap(), out);
        assert_eq!(sb.read().unwrap(), out);
        let ratio = t_hand.as_secs_f64() / t_exec.as_secs_f64();
        let shared_ratio = t_hand.as_secs_f64() / t_shared.as_secs_f64();
        let shared_atomic = t_atomic.as_secs_f64() / t_shared.as_secs_f64();
        println!(
            "{n:>10} {t_exec:>12.3?} {t_shared:>12.3?} {t_hand:>12.3?} {t_atomic:>12.3?} {ratio:>7.2} {shared_ratio:>7.2} \
             {shared_atomic:>7.2}"
        );
        n *= 4;
    }
}
