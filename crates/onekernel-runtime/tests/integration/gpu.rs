//! The GPU path on hand-built kernels, checked against the CPU executor.
//! These tests FAIL (not skip) when no GPU adapter exists: run them with
//! lavapipe (`source .ci/env.sh`).

use crate::common;
use common::*;
use onekernel_runtime::__private::*;
use onekernel_runtime::timing::Clock;
use onekernel_runtime::{wgpu, BufferError, DeviceError};
use std::sync::OnceLock;

/// One GPU device per test binary: lavapipe's JIT makes devices and
/// pipelines slow to create.
fn gpu_device() -> &'static Device {
    static DEVICE: OnceLock<Device> = OnceLock::new();
    DEVICE.get_or_init(|| match Device::gpu() {
        Ok(d) => d,
        Err(e) => panic!("the GPU tests need a GPU adapter (try `source .ci/env.sh` for lavapipe): {e}"),
    })
}

fn gpu(dev: &Device) -> &GpuDevice {
    match backend(dev) {
        DeviceBackend::Gpu(g) => g,
        DeviceBackend::Cpu(_) => panic!("not a GPU device"),
    }
}

/// Runs scale_add on `dev` and returns the output.
fn scale_add_on(dev: &Device, n: usize, grid: Grid) -> Vec<f32> {
    let (a, out) = inputs(n);
    let ab = Buffer::from_slice(dev, &a).unwrap();
    let mut ob = Buffer::from_slice(dev, &out).unwrap();
    scale_add(dev, grid, &ab, &mut ob, 0.5).unwrap();
    ob.read().unwrap()
}

/// A kernel whose launch block is a read-only storage buffer (kernels with
/// matrix tiles, `ParamsBinding::Storage`) binds and reads it like the
/// uniform one, on plain and folded grids and through the bind cache.
#[test]
fn params_in_a_storage_buffer() {
    let dev = gpu_device();
    for n in [1, 1000, 70000 * 256] {
        let (a, out) = inputs(n);
        // 0.25: a power of two, so a fused multiply-add rounds the same.
        let want = expected_scale_add(&a, &expected_scale_add(&a, &out, 0.25, n), 0.25, n);
        let ab = Buffer::from_slice(dev, &a).unwrap();
        let mut ob = Buffer::from_slice(dev, &out).unwrap();
        scale_add_with(&SCALE_ADD_STORAGE_PARAMS, dev, Grid::threads(n), &ab, &mut ob, 0.25).unwrap();
        // Twice on the same buffers: the second launch reuses the bind
        // group and rewrites the block.
        scale_add_with(&SCALE_ADD_STORAGE_PARAMS, dev, Grid::threads(n), &ab, &mut ob, 0.25).unwrap();
        assert!(ob.read().unwrap() == want, "n = {n}");
    }
}

#[test]
fn device_basics() {
    let dev = gpu_device();
    assert!(dev.is_gpu() && !dev.is_cpu());
    let g = gpu(dev);
    eprintln!("GPU: {dev}\nlimits: {:?}\nfeatures: {:?}", g.limits(), g.features());
    assert!(dev.name().contains(&g.adapter_info().name));
    assert!(dev.wgpu().is_some());
    dev.synchronize().unwrap();
}

#[test]
fn scale_add_matches_cpu() {
    let dev = gpu_device();
    let cpu = Device::cpu();
    for n in [1, 256, 1000, 70000 * 256] {
        let want = expected_scale_add(&inputs(n).0, &inputs(n).1, 0.5, n);
        let on_gpu = scale_add_on(dev, n, Grid::threads(n));
        let on_cpu = scale_add_on(&cpu, n, Grid::threads(n));
        assert!(on_gpu == want, "GPU result wrong for n = {n}");
        assert!(on_cpu == want, "CPU result wrong for n = {n}");
    }
}

#[test]
fn folded_grid_with_partial_data() {
    // 70000 workgroups of 256 (folded into 65535 x 2) over 100 fewer elements.
    let dev = gpu_device();
    let n = 70000 * 256 - 100;
    let want = expected_scale_add(&inputs(n).0, &inputs(n).1, 0.5, n);
    assert!(scale_add_on(dev, n, Grid::blocks(70000)) == want);
    assert!(scale_add_on(&Device::cpu(), n, Grid::blocks(70000)) == want);
}

#[test]
fn builtins_match_cpu() {
    let dev = gpu_device();
    let cpu = Device::cpu();
    for blocks in [Dim3::new(1, 1, 1), Dim3::new(3, 2, 2), Dim3::new(5, 1, 3), Dim3::new(70000, 1, 1)] {
        let expected = expected_ids(blocks);
        let mut g = Buffer::<u32>::zeroed(dev, expected.len()).unwrap();
        ids(dev, blocks, &mut g).unwrap();
        let mut c = Buffer::<u32>::zeroed(&cpu, expected.len()).unwrap();
        ids(&cpu, blocks, &mut c).unwrap();
        assert!(g.read().unwrap() == expected, "GPU builtins wrong for blocks = {blocks}");
        assert!(c.read().unwrap() == expected, "CPU builtins wrong for blocks = {blocks}");
    }
}

#[test]
fn second_launch_compiles_nothing() {
    let dev = gpu_device();
    let a = Buffer::from_slice(dev, &[1.0f32; 8]).unwrap();
    let mut out = Buffer::<f32>::zeroed(dev, 8).unwrap();
    scale_add(dev, 8, &a, &mut out, 1.0).unwrap();
    let compiled = gpu(dev).compiled_kernels();
    for _ in 0..5 {
        scale_add(dev, 8, &a, &mut out, 1.0).unwrap();
    }
    assert_eq!(gpu(dev).compiled_kernels(), compiled);
    assert_eq!(out.read().unwrap(), [6.0; 8]);
}

/// Launches on the same buffers reuse one bind group and uniform buffer
/// (`bind_cache.rs`), and still see each launch's own scalars; dropping a
/// buffer drops the bind groups that hold it.
#[test]
fn launches_reuse_bind_groups_until_a_buffer_is_dropped() {
    let dev = Device::gpu().unwrap();
    let a = Buffer::from_slice(&dev, &[1.0f32; 8]).unwrap();
    let mut out = Buffer::<f32>::zeroed(&dev, 8).unwrap();
    for scale in 1..=4 {
        scale_add(&dev, 8, &a, &mut out, scale as f32).unwrap();
    }
    assert_eq!(out.read().unwrap(), [10.0; 8]);
    assert_eq!(gpu(&dev).cached_bind_groups(), 1);
    let mut other = Buffer::<f32>::zeroed(&dev, 8).unwrap();
    scale_add(&dev, 8, &a, &mut other, 0.5).unwrap();
    assert_eq!(other.read().unwrap(), [0.5; 8]);
    assert_eq!(gpu(&dev).cached_bind_groups(), 2);
    drop(other);
    assert_eq!(gpu(&dev).cached_bind_groups(), 1);
    // Checked launches bind a fresh report buffer each: not cached.
    scale_add(&dev.checked(), 8, &a, &mut out, 1.0).unwrap();
    assert_eq!(out.read().unwrap(), [11.0; 8]);
    assert_eq!(gpu(&dev).cached_bind_groups(), 1);
    drop(a);
    assert_eq!(gpu(&dev).cached_bind_groups(), 0);
}

/// A borrowed view (`Buffer::view_as`, `view_prefix_as`, `_mut`) launches on the
/// same memory, and its drop leaves the buffer's bind groups cached (a
/// loop that views the same buffers reuses them); a prefix longer than
/// the memory is an error naming the method.
#[test]
fn views_launch_on_the_same_memory_and_keep_bind_groups() {
    let dev = Device::gpu().unwrap();
    let a = Buffer::from_slice(&dev, &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0]).unwrap();
    let mut out = Buffer::<f32>::zeroed(&dev, 8).unwrap();
    for _ in 0..3 {
        let first = a.view_prefix_as::<f32>(8).unwrap();
        assert_eq!(first.len(), 8);
        scale_add(&dev, 8, &first, &mut out, 1.0).unwrap();
    }
    assert_eq!(out.read().unwrap(), [3.0, 6.0, 9.0, 12.0, 15.0, 18.0, 21.0, 24.0]);
    assert_eq!(gpu(&dev).cached_bind_groups(), 1);
    let mut whole = Buffer::<f32>::zeroed(&dev, 10).unwrap();
    {
        let bits = a.view_as::<u32>().unwrap();
        let mut w = whole.view_as_mut::<u32>().unwrap();
        w.copy_from(&bits).unwrap();
    }
    assert_eq!(whole.read().unwrap(), a.read().unwrap());
    assert_eq!(gpu(&dev).cached_bind_groups(), 1);
    let e = a.view_prefix_as::<onekernel_runtime::glam::Vec4>(3).err().expect("12 floats past 10");
    assert!(e.to_string().contains("Buffer::view_prefix_as"), "{e}");
    assert_eq!(a.view_prefix_as::<onekernel_runtime::glam::Vec4>(2).unwrap().len(), 2);
    // A writable prefix: the first 8 of 10 floats as two `Vec4`s, the last
    // two untouched.
    let mut ten = Buffer::from_slice(&dev, &[-1.0f32; 10]).unwrap();
    {
        let mut w = ten.view_prefix_as_mut::<onekernel_runtime::glam::Vec4>(2).unwrap();
        assert_eq!(w.len(), 2);
        w.copy_from(&a.view_prefix_as::<onekernel_runtime::glam::Vec4>(2).unwrap()).unwrap();
    }
    assert_eq!(ten.read().unwrap(), [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, -1.0, -1.0]);
    let e = ten.view_prefix_as_mut::<onekernel_runtime::glam::Vec4>(3).err().expect("12 floats past 10");
    assert!(e.to_string().contains("Buffer::view_prefix_as_mut"), "{e}");
}

#[test]
fn empty_grid_is_a_no_op() {
    let dev = gpu_device();
    let a = Buffer::from_slice(dev, &[1.0f32]).unwrap();
    let mut out = Buffer::from_slice(dev, &[2.0f32]).unwrap();
    scale_add(dev, 0, &a, &mut out, 1.0).unwrap();
    scale_add(dev, Grid::blocks((4, 0, 1)), &a, &mut out, 1.0).unwrap();
    assert_eq!(out.read().unwrap(), [2.0]);
}

/// `out += 0.25 * a` over 1000 elements, prepared by hand: the inputs, the
/// input and output buffers, and the prepared dispatch.
fn prepared_scale_add(dev: &Device) -> (Vec<f32>, Vec<f32>, [Buffer<f32>; 2], PreparedDispatch) {
    let g = gpu(dev);
    let (a, out) = inputs(1000);
    let ab = Buffer::from_slice(dev, &a).unwrap();
    let mut ob = Buffer::from_slice(dev, &out).unwrap();
    let prepared = {
        let args = [gpu_arg(&ab, &SCALE_ADD, 0, g).unwrap(), gpu_arg_mut(&mut ob, &SCALE_ADD, 1, g).unwrap()];
        g.prepare(&SCALE_ADD, Grid::threads(1000), &args, &[0.25f32.into()]).unwrap()
    };
    (a, out, [ab, ob], prepared)
}

#[test]
fn prepared_dispatches_in_one_pass() {
    let dev = gpu_device();
    let (a, out, [_ab, ob], prepared) = prepared_scale_add(dev);
    assert_eq!(prepared.parts.len(), 1);
    assert_eq!(prepared.parts[0].workgroups, [4, 1, 1]);
    let (device, queue) = dev.wgpu().unwrap();
    let mut encoder = device.create_command_encoder(&Default::default());
    {
        let mut pass = encoder.begin_compute_pass(&Default::default());
        for _ in 0..2 {
            prepared.record(&mut pass);
        }
    }
    queue.submit([encoder.finish()]);
    dev.synchronize().unwrap();
    assert!(ob.read().unwrap() == expected_scale_add(&a, &out, 0.5, 1000));
}

#[test]
fn time_measures_each_launch() {
    // A device of its own: the timing scope counts every launch on the
    // device, and the other tests launch on the shared one in parallel.
    let dev = &Device::gpu().unwrap();
    let (a, out) = inputs(1000);
    let ab = Buffer::from_slice(dev, &a).unwrap();
    let mut ob = Buffer::from_slice(dev, &out).unwrap();
    // 300 launches: more than one query set of timestamps (256 passes each).
    let (result, timing) = dev
        .time(|| {
            for _ in 0..300 {
                scale_add(dev, 1000, &ab, &mut ob, 0.25)?;
            }
            // An empty grid does no work and is not counted.
            scale_add(dev, 0, &ab, &mut ob, 0.25)
        })
        .unwrap();
    result.unwrap();
    let has_timestamps = dev.wgpu().unwrap().0.features().contains(wgpu::Features::TIMESTAMP_QUERY);
    let clock = if has_timestamps { Clock::GpuTimestamps } else { Clock::Wall };
    assert_eq!(timing.clock, clock);
    assert_eq!(timing.launches(), 300, "{timing}");
    assert!(timing.per_launch.iter().all(|t| *t < std::time::Duration::from_secs(1)), "{timing:?}");
    assert!(timing.total > std::time::Duration::ZERO, "{timing}");
    assert_eq!(timing.total, timing.per_launch.iter().sum());
    assert!(timing.median().unwrap() <= timing.per_launch.iter().max().copied().unwrap());
    eprintln!("{timing}, elapsed {:?}", timing.elapsed);
    assert!(ob.read().unwrap() == expected_scale_add(&a, &out, 75.0, 1000));
    // The device times again afterwards, and refuses to nest.
    let (inner, _) = dev.time(|| dev.time(|| ())).unwrap();
    assert!(matches!(inner, Err(DeviceError::TimingInProgress { .. })), "{inner:?}");
    let (_, empty) = dev.time(|| ()).unwrap();
    assert_eq!(empty.launches(), 0);
}

#[test]
fn hand_recorded_passes_are_timed_like_launches() {
    // Its own device, as `time_measures_each_launch`.
    let dev = &Device::gpu().unwrap();
    let (device, _) = dev.wgpu().unwrap();
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("hand"),
        source: wgpu::ShaderSource::Wgsl(
            "@group(0) @binding(0) var<storage, read_write> out: array<u32>;
             @compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3<u32>) {
                 if g.x < arrayLength(&out) { out[g.x] = out[g.x] + 1u; }
             }"
            .into(),
        ),
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some("hand"),
        layout: None,
        module: &module,
        entry_point: Some("main"),
        compilation_options: Default::default(),
        cache: None,
    });
    let out = Buffer::<u32>::zeroed(dev, 100).unwrap();
    let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: None,
        layout: &pipeline.get_bind_group_layout(0),
        entries: &[wgpu::BindGroupEntry { binding: 0, resource: out.wgpu_buffer().unwrap().as_entire_binding() }],
    });
    let (result, timing) = dev
        .time(|| {
            for _ in 0..3 {
                dev.run_compute_pass("hand", |pass| {
                    pass.set_pipeline(&pipeline);
                    pass.set_bind_group(0, &bind_group, &[]);
                    pass.dispatch_workgroups(2, 1, 1);
                })?;
            }
            Ok::<_, DeviceError>(())
        })
        .unwrap();
    result.unwrap();
    assert_eq!(timing.launches(), 3);
    assert_eq!(out.read().unwrap(), [3; 100]);
    // A pass wgpu rejects is an error, not a panic, and is not counted.
    let (result, timing) = dev.time(|| dev.run_compute_pass("bad", |pass| pass.dispatch_workgroups(1, 1, 1))).unwrap();
    assert!(matches!(result, Err(DeviceError::Gpu { .. })), "{result:?}");
    assert_eq!(timing.launches(), 0);
    dev.synchronize().unwrap();
}

/// Launches `coverage` on `groups` workgroups over buffers `extra` longer
/// than the grid; returns (count, offsets).
fn coverage_on(dev: &Device, groups: usize, extra: usize) -> (Vec<u32>, Vec<u32>) {
    let g = gpu(dev);
    let mut count = Buffer::<u32>::zeroed(dev, groups + extra).unwrap();
    let mut offsets = Buffer::<u32>::from_slice(dev, &vec![u32::MAX; groups + extra]).unwrap();
    {
        let args =
            [gpu_arg_mut(&mut count, &COVERAGE, 0, g).unwrap(), gpu_arg_mut(&mut offsets, &COVERAGE, 1, g).unwrap()];
        g.dispatch(&COVERAGE, Grid::blocks(groups), &args, &[]).unwrap();
    }
    (count.read().unwrap(), offsets.read().unwrap())
}

#[test]
fn folded_grid_exact_multiple_runs_every_group_once() {
    let dev = gpu_device();
    let max = gpu(dev).limits().max_compute_workgroups_per_dimension as usize;
    let groups = max * 2;
    let (count, offsets) = coverage_on(dev, groups, 1000);
    let wrong = count.iter().enumerate().filter(|&(i, &c)| c != u32::from(i < groups)).count();
    assert_eq!(wrong, 0, "{wrong} elements of count wrong (want 1 on 0..{groups}, 0 after)");
    // One dispatch, block_offset 0 everywhere.
    assert!(offsets[..groups].iter().all(|&o| o == 0));
    assert!(offsets[groups..].iter().all(|&o| o == u32::MAX));
}

/// The smallest prime above `n`: a group count with no exact 2-D
/// factorisation, so that the runtime folds it as rows plus a tail.
fn prime_above(n: usize) -> usize {
    (n + 1..).find(|&p| (2..).take_while(|d| d * d <= p).all(|d| p % d != 0)).expect("primes never end")
}

#[test]
fn folded_grid_with_tail_runs_every_group_once() {
    let dev = gpu_device();
    let max = gpu(dev).limits().max_compute_workgroups_per_dimension as usize;
    let groups = prime_above(max * 2);
    let (count, offsets) = coverage_on(dev, groups, 1000);
    let wrong = count.iter().enumerate().filter(|&(i, &c)| c != u32::from(i < groups)).count();
    assert_eq!(wrong, 0, "{wrong} elements of count wrong (want 1 on 0..{groups}, 0 after)");
    // The main dispatch's uniform block carries block_offset 0, the tail's 2 * max.
    assert!(offsets[..2 * max].iter().all(|&o| o == 0));
    assert!(offsets[2 * max..groups].iter().all(|&o| o as usize == 2 * max));
    assert!(offsets[groups..].iter().all(|&o| o == u32::MAX));
}

#[test]
fn prepared_folded_grid_has_one_part_per_dispatch() {
    let dev = gpu_device();
    let g = gpu(dev);
    let max = g.limits().max_compute_workgroups_per_dimension;
    let cases = [
        (1000usize, vec![[1000, 1, 1]]),
        (max as usize * 2, vec![[2, max, 1]]),
        (
            prime_above(max as usize * 2),
            vec![[max, 2, 1], [(prime_above(max as usize * 2) - 2 * max as usize) as u32, 1, 1]],
        ),
        (0, vec![]),
    ];
    for (groups, want) in cases {
        let len = groups.max(1);
        let mut count = Buffer::<u32>::zeroed(dev, len).unwrap();
        let mut offsets = Buffer::<u32>::zeroed(dev, len).unwrap();
        let prepared = {
            let args = [
                gpu_arg_mut(&mut count, &COVERAGE, 0, g).unwrap(),
                gpu_arg_mut(&mut offsets, &COVERAGE, 1, g).unwrap(),
            ];
            g.prepare(&COVERAGE, Grid::blocks(groups), &args, &[]).unwrap()
        };
        let got: Vec<[u32; 3]> = prepared.parts.iter().map(|p| p.workgroups).collect();
        assert_eq!(got, want, "groups = {groups}");
        // Three launches recorded in one pass: every group counted 3 times.
        let (device, queue) = dev.wgpu().unwrap();
        let mut encoder = device.create_command_encoder(&Default::default());
        {
            let mut pass = encoder.begin_compute_pass(&Default::default());
            for _ in 0..3 {
                prepared.record(&mut pass);
            }
        }
        queue.submit([encoder.finish()]);
        dev.synchronize().unwrap();
        let count = count.read().unwrap();
        assert!(count[..groups].iter().all(|&c| c == 3), "groups = {groups}");
        assert!(count[groups..].iter().all(|&c| c == 0), "groups = {groups}");
    }
}

#[test]
fn write_then_read() {
    let dev = gpu_device();
    let mut b = Buffer::<i32>::zeroed(dev, 5).unwrap();
    assert_eq!(b.read().unwrap(), [0; 5]);
    b.write(&[1, -2, 3, -4, 5]).unwrap();
    assert_eq!(b.read().unwrap(), [1, -2, 3, -4, 5]);
    assert!(matches!(b.write(&[1]), Err(BufferError::LengthMismatch { expected: 5, got: 1, .. })));
    let empty = Buffer::<u32>::from_slice(dev, &[]).unwrap();
    assert!(empty.is_empty());
    assert_eq!(empty.read().unwrap(), []);
}

#[test]
fn too_large_buffer_is_an_error() {
    let dev = gpu_device();
    let max = gpu(dev).limits().max_buffer_size;
    let len = (max / 4 + 1) as usize;
    let err = Buffer::<f32>::zeroed(dev, len).unwrap_err();
    assert!(matches!(err, BufferError::TooLarge { .. }), "{err}");
    assert!(err.to_string().contains("exceeds the max buffer size"), "{err}");
}

#[test]
fn empty_buffers_are_launched_with_len_zero() {
    let dev = gpu_device();
    for ((blocks, a, out, b), want) in lens_cases() {
        assert_eq!(lens_on(dev, blocks, a, out, b), want, "blocks {blocks}, lengths {a}, {out}, {b}");
    }
    let a = Buffer::<f32>::from_slice(dev, &[]).unwrap();
    let mut out = Buffer::<f32>::zeroed(dev, 0).unwrap();
    scale_add(dev, 0, &a, &mut out, 1.0).unwrap();
    scale_add(dev, 4, &a, &mut out, 1.0).unwrap();
    let mut out4 = Buffer::from_slice(dev, &[1.0f32; 4]).unwrap();
    scale_add(dev, 4, &a, &mut out4, 1.0).unwrap();
    assert_eq!(out4.read().unwrap(), [1.0; 4]);
    dev.synchronize().unwrap();
}

#[test]
fn buffers_from_another_device_are_rejected() {
    let dev = gpu_device();
    let cpu = Device::cpu();
    let a = Buffer::from_slice(dev, &[1.0f32]).unwrap();
    let mut out = Buffer::from_slice(&cpu, &[1.0f32]).unwrap();
    let err = scale_add(dev, 1, &a, &mut out, 1.0).unwrap_err();
    let want =
        format!(
        "kernel `scale_add`, argument `out`: buffer belongs to device #{} ({}), but the launch is on device #{} ({})",
        cpu.id(), cpu.name(), dev.id(), dev.name()
    );
    assert_eq!(err.to_string(), want);
    // And a GPU buffer passed to a CPU launch.
    let a_cpu = Buffer::from_slice(&cpu, &[1.0f32]).unwrap();
    let mut out_gpu = Buffer::from_slice(dev, &[1.0f32]).unwrap();
    let err = scale_add(&cpu, 1, &a_cpu, &mut out_gpu, 1.0).unwrap_err();
    assert!(matches!(err, LaunchError::WrongDevice { arg: "out", .. }), "{err}");
}

#[test]
fn multi_dimensional_grid_over_the_limit_is_rejected() {
    let dev = gpu_device();
    let max = gpu(dev).limits().max_compute_workgroups_per_dimension;
    let a = Buffer::from_slice(dev, &[1.0f32]).unwrap();
    let mut out = Buffer::from_slice(dev, &[1.0f32]).unwrap();
    let n = max as usize + 1;
    let err = scale_add(dev, Grid::blocks((n, n)), &a, &mut out, 1.0).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("kernel `scale_add`: grid of {n} x {n} x 1 workgroups exceeds the device limit of {max} per dimension; only 1-D grids are folded")
    );
}

/// A kernel with no parameters, for the limit and shader checks.
const fn no_params(name: &'static str, modules: &'static [Module], workgroup_size: [u32; 3]) -> KernelInfo {
    KernelInfo {
        name: Cow::Borrowed(name),
        entry_point: Cow::Borrowed("main"),
        modules: Cow::Borrowed(modules),
        explain: Cow::Borrowed(""),
        workgroup_size,
        params: Cow::Borrowed(&[]),
        uniform_binding: 0,
        uniform_size: 32,
        max_workgroup_invocations: 1 << 16,
        cpu: CpuPlan::Independent,
        workgroup_memory_words: 0,
        features: onekernel_abi::Features::NONE,
        ..KernelInfo::EMPTY
    }
}

/// A workgroup larger than any device allows.
static HUGE_WORKGROUP: KernelInfo = no_params("huge_workgroup", &[], [1 << 16, 1, 1]);

#[test]
fn workgroup_over_the_limit_is_rejected() {
    let dev = gpu_device();
    let max = gpu(dev).limits().max_compute_invocations_per_workgroup;
    let err = gpu(dev).dispatch(&HUGE_WORKGROUP, Grid::threads(1), &[], &[]).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("kernel `huge_workgroup`: workgroup of 65536 invocations exceeds the device limit of {max}")
    );
}

static BROKEN: KernelInfo =
    no_params("broken", &[Module { key: ModuleKey::PLAIN, wgsl: Cow::Borrowed(BROKEN_WGSL), spirv: None }], [1, 1, 1]);
const BROKEN_WGSL: &str = "@compute @workgroup_size(1) fn main() { let x: u32 = 1.5; }";

#[test]
fn invalid_shader_is_an_error_not_a_panic() {
    let dev = gpu_device();
    let err = gpu(dev).dispatch(&BROKEN, Grid::threads(1), &[], &[]).unwrap_err();
    assert!(matches!(err, LaunchError::Compile { kernel: "broken", .. }), "{err}");
    assert!(err.to_string().starts_with("kernel `broken`: the GPU rejected the shader: "), "{err}");
    dev.synchronize().unwrap();
}

#[test]
fn device_new_picks_the_gpu() {
    let _ = gpu_device();
    assert!(Device::new().is_gpu());
}

#[test]
fn buffer_over_the_storage_binding_limit_is_rejected() {
    let dev = gpu_device();
    let max = gpu(dev).limits().max_storage_buffer_binding_size;
    let len = (max / 4 + 1) as usize;
    if (len as u64) * 4 > gpu(dev).limits().max_buffer_size {
        panic!("this adapter cannot hold a buffer larger than its storage binding limit; the test needs one that can");
    }
    let a = Buffer::<f32>::zeroed(dev, len).unwrap();
    let mut out = Buffer::<f32>::zeroed(dev, 4).unwrap();
    let err = scale_add(dev, 4, &a, &mut out, 1.0).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "kernel `scale_add`, argument `a`: {len} elements exceed the device's max storage binding of {max} bytes"
        )
    );
}

#[test]
fn buffer_ranges_and_copies_on_the_gpu() {
    let dev = gpu_device();
    let mut a = Buffer::from_slice(dev, &[0u32, 1, 2, 3, 4, 5]).unwrap();
    a.write_range(4, &[40, 50]).unwrap();
    assert_eq!(a.read_range(3..).unwrap(), [3, 40, 50]);
    assert_eq!(a.read_range(1..2).unwrap(), [1]);
    assert_eq!(a.read_range(2..2).unwrap(), []);
    let mut out = [0u32; 6];
    a.read_into(&mut out).unwrap();
    assert_eq!(out, [0, 1, 2, 3, 40, 50]);
    let mut b = Buffer::<u32>::zeroed(dev, 6).unwrap();
    b.copy_from(&a).unwrap();
    b.copy_range_from(0, &a, 4..6).unwrap();
    assert_eq!(b.read().unwrap(), [40, 50, 2, 3, 40, 50]);
    // A launch between writes and copies sees them in order.
    let src = Buffer::from_slice(dev, &[1.0f32; 8]).unwrap();
    let mut dst = Buffer::<f32>::zeroed(dev, 8).unwrap();
    scale_add(dev, 8, &src, &mut dst, 2.0).unwrap();
    dst.write_range(0, &[10.0]).unwrap();
    let mut copy = Buffer::<f32>::zeroed(dev, 8).unwrap();
    copy.copy_from(&dst).unwrap();
    assert_eq!(copy.read().unwrap(), [10.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0]);
    // Different devices.
    let cpu_buf = Buffer::from_slice(&Device::cpu(), &[0u32; 6]).unwrap();
    assert!(matches!(b.copy_from(&cpu_buf), Err(BufferError::WrongDevice { .. })));
    assert!(matches!(a.read_range(5..7), Err(BufferError::OutOfRange { .. })));
}

#[test]
fn reads_reuse_staging_buffers() {
    let dev = Device::gpu().unwrap(); // its own device: other tests read concurrently
    let DeviceBackend::Gpu(g) = backend(&dev) else { unreachable!() };
    let buf = Buffer::from_slice(&dev, &(0..1000u32).collect::<Vec<_>>()).unwrap();
    let mut out = vec![0u32; 1000];
    buf.read_into(&mut out).unwrap();
    let created = g.staging_buffers_created();
    for _ in 0..5 {
        buf.read_into(&mut out).unwrap();
        assert_eq!(buf.read_range(10..20).unwrap(), (10..20).collect::<Vec<u32>>());
        pollster::block_on(buf.read_async()).unwrap();
    }
    assert_eq!(g.staging_buffers_created(), created, "reads of the same size class allocated staging buffers");
    assert_eq!(out, (0..1000).collect::<Vec<u32>>());
}

#[test]
fn read_async_is_woken_by_the_device() {
    let dev = gpu_device();
    let a = Buffer::from_slice(dev, &[1.0f32; 4096]).unwrap();
    let mut out = Buffer::<f32>::zeroed(dev, 4096).unwrap();
    scale_add(dev, 4096, &a, &mut out, 3.0).unwrap();
    // pollster parks the thread until the waker is called: only the
    // device's poller thread can call it.
    let got = pollster::block_on(out.read_async()).unwrap();
    assert!(got.iter().all(|&x| x == 3.0));
    // Several reads in flight at once, polled by hand in turn.
    let bufs: Vec<Buffer<u32>> = (0..4).map(|i| Buffer::from_slice(dev, &[i; 100]).unwrap()).collect();
    let results = pollster::block_on(async {
        let mut v = Vec::new();
        let futures: Vec<_> = bufs.iter().map(|b| b.read_range_async(50..)).collect();
        for f in futures {
            v.push(f.await.unwrap());
        }
        v
    });
    for (i, r) in results.iter().enumerate() {
        assert_eq!(r, &vec![i as u32; 50]);
    }
}

#[test]
fn time_without_timestamps_waits_for_each_launch() {
    let dev = Device::gpu().unwrap(); // its own device: the switch is per device
    let DeviceBackend::Gpu(g) = backend(&dev) else { unreachable!() };
    g.time_on_wall_clock(true);
    let a = Buffer::from_slice(&dev, &[1.0f32; 256]).unwrap();
    let mut out = Buffer::<f32>::zeroed(&dev, 256).unwrap();
    let (result, timing) = dev.time(|| (0..3).try_for_each(|_| scale_add(&dev, 256, &a, &mut out, 1.0))).unwrap();
    result.unwrap();
    assert_eq!(timing.clock, Clock::Wall);
    assert_eq!(timing.launches(), 3);
    assert!(timing.total <= timing.elapsed, "{timing:?}");
    assert_eq!(out.read().unwrap(), [3.0; 256]);
    // The profile falls back the same way, each launch under its name.
    let (result, profile) = dev.profile(|| (0..2).try_for_each(|_| scale_add(&dev, 256, &a, &mut out, 1.0))).unwrap();
    result.unwrap();
    assert_eq!(profile.clock, Clock::Wall);
    assert_eq!(profile.kernels.len(), 1);
    assert_eq!((profile.kernels[0].name.as_str(), profile.kernels[0].launches), ("scale_add", 2));
    assert!(profile.total <= profile.elapsed && profile.total > std::time::Duration::ZERO, "{profile:?}");
    assert!(profile.to_string().contains("wall clock"), "{profile}");
}

#[test]
fn one_dimensional_grid_beyond_folding_is_rejected() {
    let dev = gpu_device();
    let max = dev.wgpu().unwrap().0.limits().max_compute_workgroups_per_dimension as usize;
    let a = Buffer::from_slice(dev, &[1.0f32]).unwrap();
    let mut out = Buffer::from_slice(dev, &[1.0f32]).unwrap();
    let groups = max * (max + 1);
    let err = scale_add(dev, Grid::blocks(groups), &a, &mut out, 1.0).unwrap_err();
    assert!(matches!(err, LaunchError::FoldedGridTooLarge { kernel: "scale_add", .. }), "{err}");
    assert_eq!(
        err.to_string(),
        format!("kernel `scale_add`: grid of {groups} workgroups exceeds the device limit even when folded into 2-D (at most {max} x {max})")
    );
    assert_eq!(out.read().unwrap(), [1.0]);
}

#[test]
fn scalar_of_the_wrong_type_is_rejected() {
    let dev = gpu_device();
    let a = Buffer::from_slice(dev, &[1.0f32]).unwrap();
    let mut out = Buffer::from_slice(dev, &[1.0f32]).unwrap();
    let g = gpu(dev);
    let args = [gpu_arg(&a, &SCALE_ADD, 0, g).unwrap(), gpu_arg_mut(&mut out, &SCALE_ADD, 1, g).unwrap()];
    let err = g.dispatch(&SCALE_ADD, Grid::threads(1), &args, &[2u32.into()]).unwrap_err();
    assert_eq!(err.to_string(), "kernel `scale_add`, argument `s`: a scalar of u32 passed for a parameter of f32");
    // And a buffer passed for the wrong kind of parameter.
    let err = gpu_arg(&out, &SCALE_ADD, 1, g).unwrap_err();
    assert_eq!(
        err.to_string(),
        "kernel `scale_add`, argument `out`: passed as a `&[T]` buffer but the parameter is a `&mut [T]` buffer"
    );
}
