//! The CPU executor on hand-built kernels: builtins, grids, panics, errors.

use crate::common;
use common::*;
use onekernel_abi::DataType;
use onekernel_runtime::__private::*;
use onekernel_runtime::timing::Clock;
use onekernel_runtime::{BufferError, DeviceError};
use std::borrow::Cow;

fn run_scale_add(n: usize, grid: Grid) -> (Vec<f32>, Vec<f32>) {
    let dev = Device::cpu();
    let (a, out) = inputs(n);
    let ab = Buffer::from_slice(&dev, &a).unwrap();
    let mut ob = Buffer::from_slice(&dev, &out).unwrap();
    scale_add(&dev, grid, &ab, &mut ob, 0.5).unwrap();
    (ob.read().unwrap(), expected_scale_add(&a, &out, 0.5, usize::MAX))
}

#[test]
fn scale_add_lengths() {
    for n in [1, 255, 256, 257, 1000, 4096 * 3 + 5, 1 << 20] {
        let (got, want) = run_scale_add(n, Grid::threads(n));
        assert_eq!(got, want, "n = {n}");
    }
}

#[test]
fn scale_add_folded_grid() {
    // 70000 workgroups: folded on a GPU, plain on the CPU; results equal.
    let n = 70000 * 256 - 100;
    let (got, want) = run_scale_add(n, Grid::blocks(70000));
    assert_eq!(got, want);
}

#[test]
fn builtins_match_definitions() {
    let dev = Device::cpu();
    for blocks in [Dim3::new(1, 1, 1), Dim3::new(3, 2, 2), Dim3::new(5, 1, 3), Dim3::new(2000, 1, 1)] {
        let expected = expected_ids(blocks);
        let mut out = Buffer::<u32>::zeroed(&dev, expected.len()).unwrap();
        ids(&dev, blocks, &mut out).unwrap();
        assert_eq!(out.read().unwrap(), expected, "blocks = {blocks}");
    }
}

#[test]
fn empty_grid_is_a_no_op() {
    let dev = Device::cpu();
    let a = Buffer::from_slice(&dev, &[1.0f32]).unwrap();
    let mut out = Buffer::from_slice(&dev, &[2.0f32]).unwrap();
    scale_add(&dev, 0, &a, &mut out, 1.0).unwrap();
    scale_add(&dev, Grid::blocks((4, 0, 1)), &a, &mut out, 1.0).unwrap();
    assert_eq!(out.read().unwrap(), [2.0]);
}

#[test]
fn panic_in_body_becomes_an_error() {
    let dev = Device::cpu();
    let DeviceBackend::Cpu(cpu) = backend(&dev) else { unreachable!() };
    let data = [1u32, 2, 3, 4];
    let line = line!() + 3;
    let err = cpu
        .execute(&IDS, Grid::threads(1), |inv| {
            std::hint::black_box(data[inv.global_id.x + 9]);
        })
        .unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, LaunchError::CpuPanic { .. }));
    assert!(msg.starts_with("kernel `ids`: panicked on the CPU at "), "{msg}");
    assert!(msg.contains(&format!("tests/integration/cpu.rs:{line}:")), "{msg}");
    assert!(msg.ends_with("index out of bounds: the len is 4 but the index is 9"), "{msg}");
}

#[test]
fn panic_in_shared_store_points_at_the_caller() {
    let dev = Device::cpu();
    let DeviceBackend::Cpu(cpu) = backend(&dev) else { unreachable!() };
    let mut out = Buffer::<u32>::zeroed(&dev, 10).unwrap();
    let s = cpu_shared(&mut out, &IDS, 0, cpu).unwrap();
    // Big enough to use several rayon chunks: the first panic wins.
    let line = line!() + 1;
    let err = cpu.execute(&IDS, Grid::threads(1 << 20), |inv| s.store(inv.global_id.x, 1)).unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains(&format!("tests/integration/cpu.rs:{line}:")), "{msg}");
    assert!(msg.contains("index out of bounds: the len is 10 but the index is"), "{msg}");
}

/// Set in the process that `panics_outside_kernels_still_reach_the_previous_hook`
/// starts: there the test body runs.
const HOOK_CHILD: &str = "ONEKERNEL_TEST_PANIC_HOOK_CHILD";

#[test]
fn panics_outside_kernels_still_reach_the_previous_hook() {
    // The runtime installs its hook once per process, around the hook it
    // finds then, and other tests of this binary may have installed it
    // already: so the check runs in a fresh process of this binary (this
    // test alone), where a recording hook is installed first.
    if std::env::var_os(HOOK_CHILD).is_some() {
        return panic_hook_child();
    }
    let name =
        format!("{}::panics_outside_kernels_still_reach_the_previous_hook", module_path!().split_once("::").unwrap().1);
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([name.as_str(), "--exact", "--test-threads=1", "--nocapture"])
        .env(HOOK_CHILD, "1")
        .output()
        .unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    let report = format!("the child process:\n{stdout}\n{stderr}");
    assert!(out.status.success(), "{report}");
    assert!(stdout.contains("the launch: kernel `ids`: panicked on the CPU at "), "{report}");
    assert!(
        stdout.contains("seen after a kernel's panic: []\n"),
        "a kernel's panic reached the previous hook: {report}"
    );
    assert!(
        stdout.contains("seen after an ordinary panic: [\"ordinary panic\"]\n"),
        "an ordinary panic did not reach the previous hook: {report}"
    );
}

/// In a fresh process: a hook that records every panic it sees, installed
/// before the runtime's; then a panic in a kernel body (it must become the
/// launch's error, not reach the hook) and an ordinary panic (it must). It
/// prints what happened; the parent checks.
fn panic_hook_child() {
    static SEEN: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    std::panic::set_hook(Box::new(|info| {
        let p = info.payload();
        let msg = p.downcast_ref::<&str>().map(|s| s.to_string()).or_else(|| p.downcast_ref::<String>().cloned());
        SEEN.lock().unwrap().push(msg.unwrap_or_default());
    }));
    let dev = Device::cpu();
    let DeviceBackend::Cpu(cpu) = backend(&dev) else { unreachable!() };
    let err = cpu.execute(&IDS, Grid::threads(1), |_| panic!("in a kernel")).unwrap_err();
    println!("the launch: {err}");
    println!("seen after a kernel's panic: {:?}", SEEN.lock().unwrap().clone());
    assert!(std::panic::catch_unwind(|| panic!("ordinary panic")).is_err());
    println!("seen after an ordinary panic: {:?}", SEEN.lock().unwrap().clone());
}

#[test]
fn empty_buffers_are_launched_with_len_zero() {
    let dev = Device::cpu();
    for ((blocks, a, out, b), want) in lens_cases() {
        assert_eq!(lens_on(&dev, blocks, a, out, b), want, "blocks {blocks}, lengths {a}, {out}, {b}");
    }
    // The empty grid over empty buffers of every kind of parameter.
    let a = Buffer::<f32>::from_slice(&dev, &[]).unwrap();
    let mut out = Buffer::<f32>::zeroed(&dev, 0).unwrap();
    scale_add(&dev, 0, &a, &mut out, 1.0).unwrap();
    scale_add(&dev, 4, &a, &mut out, 1.0).unwrap();
}

#[test]
fn buffer_from_another_device_is_rejected() {
    let d1 = Device::cpu();
    let d2 = Device::cpu();
    let a = Buffer::from_slice(&d1, &[1.0f32]).unwrap();
    let mut out = Buffer::from_slice(&d2, &[1.0f32]).unwrap();
    let err = scale_add(&d1, 1, &a, &mut out, 1.0).unwrap_err();
    let want =
        format!(
        "kernel `scale_add`, argument `out`: buffer belongs to device #{} ({}), but the launch is on device #{} ({})",
        d2.id(), d2.name(), d1.id(), d1.name()
    );
    assert_eq!(err.to_string(), want);
}

#[test]
fn multi_dimensional_grid_over_the_limit_is_rejected() {
    let dev = Device::cpu();
    let a = Buffer::from_slice(&dev, &[1.0f32]).unwrap();
    let mut out = Buffer::from_slice(&dev, &[1.0f32]).unwrap();
    let err = scale_add(&dev, Grid::blocks((70000, 70000)), &a, &mut out, 1.0).unwrap_err();
    assert_eq!(
        err.to_string(),
        "kernel `scale_add`: grid of 70000 x 70000 x 1 workgroups exceeds the device limit of 65535 per dimension; only 1-D grids are folded"
    );
}

#[test]
fn workgroup_over_the_limit_is_rejected() {
    let dev = Device::cpu();
    let DeviceBackend::Cpu(cpu) = backend(&dev) else { unreachable!() };
    let err = cpu.execute(&BIG_WORKGROUP, Grid::threads(1), |_| {}).unwrap_err();
    assert_eq!(err.to_string(), "kernel `big_workgroup`: workgroup of 512 invocations exceeds the device limit of 256");
}

#[test]
fn buffer_write_read_and_length_mismatch() {
    let dev = Device::cpu();
    let mut b = Buffer::<i32>::zeroed(&dev, 3).unwrap();
    assert_eq!(b.read().unwrap(), [0, 0, 0]);
    b.write(&[1, -2, 3]).unwrap();
    assert_eq!(b.read().unwrap(), [1, -2, 3]);
    assert!(matches!(b.write(&[1]), Err(BufferError::LengthMismatch { expected: 3, got: 1, .. })));
    assert_eq!(b.len(), 3);
    assert!(!b.is_empty());
    assert!(b.device().is_cpu());
}

#[test]
fn wrong_element_type_is_rejected() {
    let dev = Device::cpu();
    let DeviceBackend::Cpu(cpu) = backend(&dev) else { unreachable!() };
    let a = Buffer::from_slice(&dev, &[1u32]).unwrap();
    let err = cpu_slice(&a, &SCALE_ADD, 0, cpu).unwrap_err();
    assert_eq!(err.to_string(), "kernel `scale_add`, argument `a`: buffer of u32 passed for a parameter of f32");
}

#[test]
fn device_basics() {
    let dev = Device::cpu();
    assert!(dev.is_cpu() && !dev.is_gpu());
    assert!(dev.name().starts_with("CPU executor (rayon, "), "{}", dev.name());
    assert_eq!(dev.to_string(), dev.name());
    assert!(dev.wgpu().is_none());
    dev.synchronize().unwrap();
    let clone = dev.clone();
    assert_eq!(clone.id(), dev.id());
    assert_ne!(Device::cpu().id(), dev.id());
}

/// `fn split(a: &[f32], lo: &mut [f32], hi: &mut [u32])`, each invocation
/// writing only element `global_id().x` of both outputs.
static SPLIT: KernelInfo = kernel_64("split", CpuPlan::OwnElement { chunk_loop: false }, &SPLIT_PARAMS);
static SPLIT_PARAMS: [ParamInfo; 3] = [
    ParamInfo { name: Cow::Borrowed("a"), kind: ParamKind::ReadOnlyBuffer, ty: DataType::F32, slot: 0 },
    ParamInfo { name: Cow::Borrowed("lo"), kind: ParamKind::ReadWriteBuffer, ty: DataType::F32, slot: 1 },
    ParamInfo { name: Cow::Borrowed("hi"), kind: ParamKind::ReadWriteBuffer, ty: DataType::U32, slot: 2 },
];

/// A kernel of workgroup 64 with buffer parameters only.
const fn kernel_64(name: &'static str, cpu: CpuPlan, params: &'static [ParamInfo]) -> KernelInfo {
    KernelInfo {
        name: Cow::Borrowed(name),
        entry_point: Cow::Borrowed("main"),
        modules: Cow::Borrowed(&[]),
        explain: Cow::Borrowed(""),
        workgroup_size: [64, 1, 1],
        max_workgroup_invocations: 256,
        params: Cow::Borrowed(params),
        uniform_binding: params.len() as u32,
        uniform_size: 16,
        cpu,
        workgroup_memory_words: 0,
        features: onekernel_abi::Features::NONE,
        ..KernelInfo::EMPTY
    }
}

/// What the macro generates for `split` (the partitioned path when it
/// applies); `wrong` makes invocation 0 write the last element too, as a
/// wrongly proved kernel would.
fn split(
    dev: &Device,
    grid: Grid,
    a: &Buffer<f32>,
    lo: &mut Buffer<f32>,
    hi: &mut Buffer<u32>,
    wrong: bool,
) -> Result<(), LaunchError> {
    let DeviceBackend::Cpu(cpu) = backend(dev) else { unreachable!() };
    let a = cpu_slice(a, &SPLIT, 0, cpu)?;
    let lo = cpu_shared(lo, &SPLIT, 1, cpu)?;
    let hi = cpu_shared(hi, &SPLIT, 2, cpu)?;
    let body = |inv: &Invocation, lo: &dyn OutputSlice<f32>, hi: &dyn OutputSlice<u32>| {
        let i = inv.global_id.x;
        if i < lo.len() {
            lo.store(i, a[i].floor());
            hi.store(i, (a[i] * 4.0) as u32 % 4);
        }
        if wrong && i == 0 {
            lo.store(lo.len() - 1, -1.0);
        }
    };
    if cpu.can_partition(&SPLIT, &grid) {
        cpu.execute_partitioned(&SPLIT, grid, (lo, hi), |chunk, (lo, hi)| chunk.for_each(|inv| body(inv, &lo, &hi)))
    } else {
        cpu.execute(&SPLIT, grid, |inv| body(inv, &lo, &hi))
    }
}

#[test]
fn partitioned_launch_gives_each_chunk_its_windows() {
    let dev = Device::cpu();
    let DeviceBackend::Cpu(cpu) = backend(&dev) else { unreachable!() };
    for n in [0, 1, 63, 64, 65, 4096 * 8 + 3, 1 << 20] {
        let a: Vec<f32> = (0..n).map(|i| i as f32 * 0.25).collect();
        let ab = Buffer::from_slice(&dev, &a).unwrap();
        let mut lo = Buffer::<f32>::zeroed(&dev, n).unwrap();
        let mut hi = Buffer::<u32>::zeroed(&dev, n).unwrap();
        assert!(cpu.can_partition(&SPLIT, &Grid::threads(n)));
        split(&dev, Grid::threads(n), &ab, &mut lo, &mut hi, false).unwrap();
        assert_eq!(lo.read().unwrap(), a.iter().map(|x| x.floor()).collect::<Vec<_>>(), "n = {n}");
        assert_eq!(hi.read().unwrap(), (0..n).map(|i| (i % 4) as u32).collect::<Vec<_>>(), "n = {n}");
    }
    // A 2-D grid cannot be partitioned: the shared path runs it.
    assert!(!cpu.can_partition(&SPLIT, &Grid::threads((64, 2))));
    // An independent kernel is never partitioned.
    assert!(!cpu.can_partition(&IDS, &Grid::threads(64)));
}

/// The chunk-slice loop's view of a partitioned launch (what `cpu_chunk`
/// uses): each chunk's `x_range` is its invocations' `global_id().x`,
/// the ranges tile the grid, and `window_mut` is exactly the range's
/// elements of each output, clipped to the buffer.
#[test]
fn partitioned_chunks_lend_their_windows_as_slices() {
    let dev = Device::cpu();
    let DeviceBackend::Cpu(cpu) = backend(&dev) else { unreachable!() };
    for (threads, n) in [(1, 1), (64, 63), (200, 300), (4096 * 8 + 3, 4096 * 8 + 3), (1 << 20, 1 << 20)] {
        let mut lo = Buffer::from_slice(&dev, &vec![-1.0f32; n]).unwrap();
        let mut hi = Buffer::<u32>::zeroed(&dev, n).unwrap();
        let (lo_view, hi_view) =
            (cpu_shared(&mut lo, &SPLIT, 1, cpu).unwrap(), cpu_shared(&mut hi, &SPLIT, 2, cpu).unwrap());
        let ranges = std::sync::Mutex::new(Vec::new());
        let grid = Grid::threads(threads);
        assert!(cpu.can_partition(&SPLIT, &grid));
        cpu.execute_partitioned(&SPLIT, grid, (lo_view, hi_view), |chunk, (mut lo, mut hi)| {
            let x = chunk.x_range().expect("a partitioned launch has ranges");
            let (lo_s, hi_s) = (lo.window_mut(), hi.window_mut());
            let covered = x.start.min(n)..x.end.min(n);
            assert_eq!((lo_s.len(), hi_s.len()), (covered.len(), covered.len()), "{x:?}");
            for (j, (l, h)) in lo_s.iter_mut().zip(hi_s).enumerate() {
                *l = (covered.start + j) as f32;
                *h += 1;
            }
            ranges.lock().unwrap().push(x);
        })
        .unwrap();
        let mut ranges = ranges.into_inner().unwrap();
        ranges.sort_by_key(|r| r.start);
        assert_eq!(ranges.first().map(|r| r.start), Some(0));
        assert_eq!(ranges.last().map(|r| r.end), Some(threads.next_multiple_of(64)));
        assert!(ranges.windows(2).all(|w| w[0].end == w[1].start), "{ranges:?}");
        let covered = threads.next_multiple_of(64).min(n);
        let want: Vec<f32> = (0..n).map(|i| if i < covered { i as f32 } else { -1.0 }).collect();
        assert_eq!(lo.read().unwrap(), want, "n = {n}");
        assert_eq!(hi.read().unwrap(), (0..n).map(|i| u32::from(i < covered)).collect::<Vec<_>>(), "n = {n}");
    }
    // Unpartitioned (a 2-D grid), the one chunk has no range.
    let mut lo = Buffer::<f32>::zeroed(&dev, 128).unwrap();
    let view = cpu_shared(&mut lo, &SPLIT, 1, cpu).unwrap();
    let grid = Grid::threads((64, 2));
    cpu.execute_partitioned(&SPLIT, grid, (view,), |chunk, _| assert!(chunk.x_range().is_none())).unwrap();
}

#[test]
fn partitioned_launch_outside_its_window_is_a_panic_not_ub() {
    let dev = Device::cpu();
    let n = 1 << 20;
    let ab = Buffer::from_slice(&dev, &vec![1.0f32; n]).unwrap();
    let mut lo = Buffer::<f32>::zeroed(&dev, n).unwrap();
    let mut hi = Buffer::<u32>::zeroed(&dev, n).unwrap();
    let err = split(&dev, Grid::threads(n), &ab, &mut lo, &mut hi, true).unwrap_err();
    assert!(matches!(err, LaunchError::CpuPanic { .. }), "{err}");
    assert!(err.to_string().contains("outside the elements"), "{err}");
}

#[test]
fn independent_launch_of_a_cooperative_kernel_is_refused() {
    static COOP: KernelInfo = kernel_64("coop", CpuPlan::Cooperative { phased: false }, &[]);
    let dev = Device::cpu();
    let DeviceBackend::Cpu(cpu) = backend(&dev) else { unreachable!() };
    let err = cpu.execute(&COOP, Grid::threads(1), |_| {}).unwrap_err();
    assert!(matches!(err, LaunchError::InvalidKernel { kernel: "coop", .. }), "{err}");
}

/// The cooperative executor's second line of defence (the compiler
/// rejects divergent barriers): invocations at two different barriers, or
/// returning while others wait, fail the launch with the barriers' lines.
#[test]
fn divergent_barriers_are_an_error_naming_their_lines() {
    static COOP: KernelInfo = kernel_64("coop", CpuPlan::Cooperative { phased: false }, &[]);
    let dev = Device::cpu();
    let DeviceBackend::Cpu(cpu) = backend(&dev) else { unreachable!() };
    let pool = cpu.workgroups(&COOP);
    let first = line!() + 4;
    let err = cpu
        .execute_cooperative(&COOP, Grid::threads(64), &pool, |inv, wg| async move {
            if inv.thread_id.x < 32 {
                wg.barrier(0).await;
            } else {
                wg.barrier(1).await;
            }
        })
        .unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, LaunchError::CpuPanic { .. }), "{msg}");
    assert!(msg.contains("wait at two different barriers"), "{msg}");
    for line in [first, first + 2] {
        assert!(
            msg.contains(&format!("the barrier at crates/onekernel-runtime/tests/integration/cpu.rs:{line}:")),
            "{msg}"
        );
    }

    let line = line!() + 4;
    let err = cpu
        .execute_cooperative(&COOP, Grid::threads(64), &pool, |inv, wg| async move {
            if inv.thread_id.x != 5 {
                wg.barrier(0).await;
            }
        })
        .unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("1 returned while 63 wait at the barrier at crates/onekernel-runtime/tests/integration/cpu.rs:"),
        "{msg}"
    );
    assert!(msg.contains(&format!("cpu.rs:{line}:")), "{msg}");
}

#[test]
fn buffer_ranges_copies_and_errors() {
    let dev = Device::cpu();
    let mut a = Buffer::from_slice(&dev, &[0u32, 1, 2, 3, 4, 5]).unwrap();
    a.write_range(4, &[40, 50]).unwrap();
    a.write_range(6, &[]).unwrap();
    assert_eq!(a.read_range(3..).unwrap(), [3, 40, 50]);
    assert_eq!(a.read_range(..=1).unwrap(), [0, 1]);
    assert_eq!(a.read_range(2..2).unwrap(), []);
    let mut out = [0u32; 6];
    a.read_into(&mut out).unwrap();
    assert_eq!(out, [0, 1, 2, 3, 40, 50]);
    let mut b = Buffer::<u32>::zeroed(&dev, 6).unwrap();
    b.copy_from(&a).unwrap();
    assert_eq!(b.read().unwrap(), out);
    b.copy_range_from(0, &a, 4..6).unwrap();
    assert_eq!(b.read().unwrap(), [40, 50, 2, 3, 40, 50]);
    assert_eq!(pollster::block_on(b.read_range_async(1..3)).unwrap(), [50, 2]);

    let err = a.write_range(5, &[1, 2]).unwrap_err();
    assert_eq!(err.to_string(), "Buffer::write_range: elements 5..7 are out of bounds of a buffer of 6 elements");
    let err = a.write_range(usize::MAX, &[1]).unwrap_err();
    assert!(matches!(err, BufferError::OutOfRange { len: 6, .. }), "{err}");
    let err = a.read_range(4..9).unwrap_err();
    assert_eq!(err.to_string(), "Buffer::read_range: elements 4..9 are out of bounds of a buffer of 6 elements");
    #[allow(clippy::reversed_empty_ranges)]
    let err = a.read_range(3..2).unwrap_err();
    assert!(matches!(err, BufferError::OutOfRange { .. }), "{err}");
    let err = a.read_into(&mut [0u32; 2]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "Buffer::read_into: 2 elements given for a buffer of 6 elements; the lengths must be equal"
    );
    let short = Buffer::<u32>::zeroed(&dev, 2).unwrap();
    assert!(matches!(b.copy_from(&short), Err(BufferError::LengthMismatch { expected: 6, got: 2, .. })));
    assert!(matches!(b.copy_range_from(5, &a, 0..2), Err(BufferError::OutOfRange { .. })));
    let other = Buffer::from_slice(&Device::cpu(), &[0u32; 6]).unwrap();
    let err = b.copy_from(&other).unwrap_err();
    assert!(matches!(err, BufferError::WrongDevice { operation: "Buffer::copy_range_from", .. }), "{err}");
    assert!(err.to_string().contains("the buffers live on different devices"), "{err}");
}

#[test]
fn empty_buffers_work() {
    let dev = Device::cpu();
    let mut e = Buffer::<f32>::from_slice(&dev, &[]).unwrap();
    assert!(e.is_empty());
    assert_eq!(e.read().unwrap(), []);
    e.write(&[]).unwrap();
    e.read_into(&mut []).unwrap();
    let z = Buffer::<f32>::zeroed(&dev, 0).unwrap();
    e.copy_from(&z).unwrap();
    assert_eq!(pollster::block_on(e.read_async()).unwrap(), []);
}

#[test]
fn time_measures_cpu_launches_on_the_wall_clock() {
    let dev = Device::cpu();
    let a = Buffer::from_slice(&dev, &[1.0f32; 5000]).unwrap();
    let mut out = Buffer::<f32>::zeroed(&dev, 5000).unwrap();
    let (result, timing) = dev
        .time(|| {
            for _ in 0..3 {
                scale_add(&dev, 5000, &a, &mut out, 1.0)?;
            }
            scale_add(&dev, 0, &a, &mut out, 1.0)?; // no work: not counted
            Ok::<_, LaunchError>(())
        })
        .unwrap();
    result.unwrap();
    assert_eq!(timing.clock, Clock::Wall);
    assert_eq!(timing.launches(), 3);
    assert!(timing.total <= timing.elapsed, "{timing:?}");
    assert!(timing.mean().unwrap() <= timing.total);
    assert!(timing.to_string().starts_with("3 launches in "), "{timing}");
    assert_eq!(out.read().unwrap(), vec![3.0; 5000]);
    // Other CPU devices are not timed by this scope.
    let (_, t) = dev.time(|| scale_add(&Device::cpu(), 0, &a, &mut out, 1.0)).unwrap();
    assert_eq!(t.launches(), 0);
    // Nesting is refused; a panic inside closes the scope.
    let (inner, _) = dev.time(|| dev.time(|| ())).unwrap();
    let err = inner.unwrap_err();
    assert!(matches!(err, DeviceError::TimingInProgress { .. }));
    assert!(err.to_string().contains("Device::time calls cannot nest or overlap"), "{err}");
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| dev.time(|| panic!("in the closure"))));
    assert!(caught.is_err());
    assert_eq!(dev.time(|| ()).unwrap().1.launches(), 0);
    // Hand-recorded passes need a GPU.
    let err = dev.run_compute_pass("x", |_| {}).unwrap_err();
    assert!(matches!(err, DeviceError::NotAGpu { .. }), "{err}");
}

/// What the compiler generates for subgroup collectives, driven by hand
/// past its uniformity check: diverging invocations fail the launch with an
/// error naming the workgroup, instead of hanging.
#[test]
fn diverging_subgroup_collectives_are_errors() {
    static COOP: KernelInfo = kernel_64("subgroups", CpuPlan::Cooperative { phased: false }, &[]);
    let dev = Device::cpu();
    let DeviceBackend::Cpu(cpu) = backend(&dev) else { unreachable!() };
    let pool = cpu.workgroups(&COOP);
    // Thread 0 returns; the rest of its subgroup waits for it.
    let err = cpu
        .execute_cooperative(&COOP, Grid::threads(64), &pool, |inv, wg| async move {
            if inv.thread_id.x != 0 {
                wg.subgroup(&inv, 0, SubgroupCollective::Add, 1u32, 0).await;
            }
        })
        .unwrap_err();
    assert!(
        err.to_string().contains("wait at a subgroup operation that others of their subgroup never reach"),
        "{err}"
    );
    // Two call sites in one subgroup.
    let err = cpu
        .execute_cooperative(&COOP, Grid::threads(64), &pool, |inv, wg| async move {
            let site = u32::from(inv.thread_id.x == 5);
            wg.subgroup(&inv, site, SubgroupCollective::Max, 1.5f32, 0).await;
        })
        .unwrap_err();
    assert!(err.to_string().contains("two different subgroup operations (#0 and #1)"), "{err}");
    // Subgroup meetings and a barrier in one workgroup; the pool is
    // reusable after the failures.
    let sums = std::sync::Mutex::new(Vec::new());
    cpu.execute_cooperative(&COOP, Grid::threads(128), &pool, |inv, wg| {
        let sums = &sums;
        async move {
            let s = wg.subgroup(&inv, 0, SubgroupCollective::Add, inv.thread_id.x as u32, 0).await;
            wg.barrier(1).await;
            let lane0 = wg.subgroup(&inv, 2, SubgroupCollective::Broadcast, inv.global_id.x as u32, 0).await;
            if inv.subgroup_invocation_id() == 0 {
                sums.lock().unwrap().push((inv.global_id.x, s, lane0));
            }
        }
    })
    .unwrap();
    let mut sums = sums.into_inner().unwrap();
    sums.sort();
    let want: Vec<(usize, u32, u32)> =
        (0..4).map(|g| (g * 32, ((g % 2) * 32..(g % 2) * 32 + 32).sum::<usize>() as u32, (g * 32) as u32)).collect();
    assert_eq!(sums, want);
}
