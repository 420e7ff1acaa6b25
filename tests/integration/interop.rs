//! Living inside a wgpu program (docs/interop.md): a device adopted from a
//! hand-made `wgpu::Device` (its features and limits, one handle per wgpu
//! device), buffers adopted from `wgpu::Buffer`s (usages, sizes), launches
//! recorded into the program's encoder and compute pass in its order,
//! every device listed and buffers moved between two at once (lavapipe and
//! the CPU executor), ndarray layouts, and casts. Every kernel is also run
//! on the CPU executor and compared.

use onekernel::abi::Features;
use onekernel::prelude::*;
use onekernel::{BufferError, DeviceError};

/// `out[i] += a[i] * s`
#[kernel(workgroup_size = 64)]
fn axpy_in_place(a: &[f32], out: &mut [f32], s: f32) {
    let i = global_id().x;
    if i < out.len() {
        out[i] += a[i] * s;
    }
}

/// Writes each buffer's length into its elements: the kernel's `len()`.
#[kernel(workgroup_size = 64)]
fn lengths(out: &mut [u32]) {
    let i = global_id().x;
    if i < out.len() {
        out[i] = out.len() as u32 + 1000 * i as u32;
    }
}

/// Needs `f16`.
#[kernel(workgroup_size = 64)]
fn halve(a: &mut [f16]) {
    let i = global_id().x;
    if i < a.len() {
        a[i] = a[i] * f16::from_f32(0.5);
    }
}

/// Three storage buffers.
#[kernel(workgroup_size = 64)]
fn add3(a: &[f32], b: &[f32], out: &mut [f32]) {
    let i = global_id().x;
    if i < out.len() {
        out[i] = a[i] + b[i];
    }
}

/// 16 KiB of shared memory (the WebGPU default, more than a small device's).
#[kernel(workgroup_size = 64)]
fn big_tile(out: &mut [f32]) {
    let tile = shared::<[f32; 4096]>();
    let t = thread_id().x;
    tile[t] = t as f32;
    workgroup_barrier();
    let i = global_id().x;
    if i < out.len() {
        out[i] = tile[63 - t];
    }
}

/// No guard: indexes past the end of a short buffer.
#[kernel(workgroup_size = 64)]
fn unguarded(out: &mut [u32]) {
    let i = global_id().x;
    out[i] = i as u32;
}

/// The program's own wgpu device, made as a renderer makes it:
/// `features` and `limits` are what it asks for (no optional feature and
/// wgpu's default limits unless a test says otherwise).
fn hand_made(features: wgpu::Features, limits: wgpu::Limits) -> (wgpu::Adapter, wgpu::Device, wgpu::Queue) {
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
    let adapter = pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions::default()))
        .expect("a GPU adapter (CI uses Mesa's lavapipe; see .ci/run)");
    let desc = wgpu::DeviceDescriptor { required_features: features, required_limits: limits, ..Default::default() };
    let (device, queue) = pollster::block_on(adapter.request_device(&desc)).expect("a device");
    (adapter, device, queue)
}

fn adopted() -> (Device, wgpu::Device, wgpu::Queue) {
    let (adapter, device, queue) = hand_made(wgpu::Features::empty(), wgpu::Limits::default());
    (Device::from_wgpu(&adapter, &device, &queue).unwrap(), device, queue)
}

/// `axpy_in_place` on `device`, for comparing devices.
fn axpy_on(device: &Device, a: &[f32], out: &[f32], s: f32) -> Vec<f32> {
    let a = Buffer::from_slice(device, a).unwrap();
    let mut o = Buffer::from_slice(device, out).unwrap();
    axpy_in_place::launch(device, out.len(), &a, &mut o, s).unwrap();
    o.read().unwrap()
}

#[test]
fn an_adopted_device_runs_kernels_like_the_cpu_executor() {
    let (gpu, _, _) = adopted();
    assert!(gpu.is_gpu());
    let a: Vec<f32> = (0..100).map(|i| i as f32 * 0.5).collect();
    let out: Vec<f32> = (0..100).map(|i| 1.0 - i as f32).collect();
    assert_eq!(axpy_on(&gpu, &a, &out, 3.0), axpy_on(&Device::cpu(), &a, &out, 3.0));
    // Created without optional features: kernels see none.
    assert_eq!(gpu.features(), Features::NONE);
}

#[test]
fn one_wgpu_device_is_one_device() {
    let (adapter, device, queue) = hand_made(wgpu::Features::empty(), wgpu::Limits::default());
    let first = Device::from_wgpu(&adapter, &device, &queue).unwrap();
    let second = Device::from_wgpu(&adapter, &device.clone(), &queue.clone()).unwrap();
    assert_eq!(first.id(), second.id());
    // A buffer of one is an argument of a launch on the other.
    let a = Buffer::from_slice(&first, &[1.0f32, 2.0]).unwrap();
    let mut out = Buffer::from_slice(&second, &[10.0f32, 20.0]).unwrap();
    axpy_in_place::launch(&second, 2, &a, &mut out, 2.0).unwrap();
    assert_eq!(out.read().unwrap(), [12.0, 24.0]);
    // The device `Device::gpu` opened, adopted through `Device::wgpu` and
    // its adapter from `Device::available`, is that device too.
    let opened = Device::gpu().unwrap();
    let (d, q) = opened.wgpu().unwrap();
    let info = d.adapter_info();
    let same_adapter = Device::available()
        .into_iter()
        .find_map(|a| a.adapter().filter(|a| a.get_info() == info).cloned())
        .expect("Device::available lists the adapter Device::gpu picked");
    assert_eq!(Device::from_wgpu(&same_adapter, d, q).unwrap().id(), opened.id());
    // Another wgpu device, even on the same adapter, is another device.
    let (_, other, other_queue) = hand_made(wgpu::Features::empty(), wgpu::Limits::default());
    let third = Device::from_wgpu(&adapter, &other, &other_queue).unwrap();
    assert_ne!(third.id(), first.id());
    let err = axpy_in_place::launch(&third, 2, &a, &mut out, 2.0).unwrap_err();
    assert!(matches!(err, LaunchError::WrongDevice { arg: "a", .. }), "{err}");
    // The wrong adapter for a device is refused.
    let wrong = Device::available().into_iter().find_map(|a| a.adapter().filter(|a| a.get_info() != info).cloned());
    if let Some(wrong) = wrong {
        assert!(matches!(Device::from_wgpu(&wrong, d, q), Err(DeviceError::Unsuitable { .. })));
    }
}

#[test]
fn what_an_adopted_device_lacks_is_an_error_naming_it() {
    let (gpu, _, _) = adopted();
    // A feature (the adapter may have it: the device was created without).
    let mut h = Buffer::from_slice(&gpu, &[f16::from_f32(1.0)]).unwrap();
    match halve::launch(&gpu, 1, &mut h).unwrap_err() {
        LaunchError::MissingFeature { kernel: "halve", missing, .. } => assert!(missing.contains(Features::F16)),
        e => panic!("{e}"),
    }
    // Limits the device was created with, smaller than the kernel needs.
    let small = wgpu::Limits {
        max_storage_buffers_per_shader_stage: 2,
        max_compute_workgroup_storage_size: 4096,
        ..wgpu::Limits::downlevel_defaults()
    };
    let (adapter, device, queue) = hand_made(wgpu::Features::empty(), small);
    let gpu = Device::from_wgpu(&adapter, &device, &queue).unwrap();
    let a = Buffer::from_slice(&gpu, &[1.0f32; 4]).unwrap();
    let mut out = Buffer::<f32>::zeroed(&gpu, 4).unwrap();
    let err = add3::launch(&gpu, 4, &a, &a, &mut out).unwrap_err();
    assert!(
        matches!(
            err,
            LaunchError::LimitExceeded {
                kernel: "add3",
                limit: "max_storage_buffers_per_shader_stage",
                needed: 3,
                max: 2,
                ..
            }
        ),
        "{err}"
    );
    assert!(err.to_string().contains("max_storage_buffers_per_shader_stage"), "{err}");
    // Two buffers fit; a checked launch binds one more (its report).
    axpy_in_place::launch(&gpu, 4, &a, &mut out, 1.0).unwrap();
    let err = axpy_in_place::launch(&gpu.checked(), 4, &a, &mut out, 1.0).unwrap_err();
    assert!(matches!(err, LaunchError::LimitExceeded { needed: 3, .. }), "{err}");
    let err = big_tile::launch(&gpu, 64, &mut out).unwrap_err();
    assert!(matches!(err, LaunchError::SharedMemoryTooLarge { kernel: "big_tile", max: 4096, .. }), "{err}");
    // Nothing reached wgpu's error handler.
    gpu.synchronize().unwrap();
    // A device that cannot run compute shaders is refused when adopted.
    let (adapter, device, queue) = hand_made(wgpu::Features::empty(), wgpu::Limits::downlevel_webgl2_defaults());
    let err = Device::from_wgpu(&adapter, &device, &queue).unwrap_err();
    assert!(matches!(err, DeviceError::Unsuitable { .. }), "{err}");
    assert!(err.to_string().contains("= 0"), "{err}");
}

#[test]
fn timing_an_adopted_device_without_timestamps_uses_the_wall_clock() {
    let (gpu, _, _) = adopted();
    let a = Buffer::from_slice(&gpu, &[1.0f32; 64]).unwrap();
    let mut out = Buffer::<f32>::zeroed(&gpu, 64).unwrap();
    let (r, timing) = gpu.time(|| axpy_in_place::launch(&gpu, 64, &a, &mut out, 1.0)).unwrap();
    r.unwrap();
    assert_eq!(timing.clock, onekernel::timing::Clock::Wall);
    assert_eq!(timing.launches(), 1);
}

/// A wgpu buffer of `len` u32s made by the program with `usage`.
fn wgpu_buffer(device: &wgpu::Device, bytes: u64, usage: wgpu::BufferUsages) -> wgpu::Buffer {
    device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("program's"),
        size: bytes,
        usage,
        mapped_at_creation: false,
    })
}

#[test]
fn adopted_buffers_check_their_usages_at_each_operation() {
    use wgpu::BufferUsages as U;
    let (gpu, device, _) = adopted();
    // A vertex buffer a kernel writes: no COPY_SRC, so no reads.
    let raw = wgpu_buffer(&device, 64, U::VERTEX | U::STORAGE | U::COPY_DST);
    let mut buf = Buffer::<u32>::from_wgpu(&gpu, &raw, 16).unwrap();
    buf.write(&[7; 16]).unwrap();
    lengths::launch(&gpu, 16, &mut buf).unwrap();
    let err = buf.read().unwrap_err();
    assert_eq!(err, BufferError::MissingUsage { operation: "Buffer::read", usage: "COPY_SRC" });
    assert!(err.to_string().contains("wgpu::BufferUsages::COPY_SRC"), "{err}");
    // Copying it out needs COPY_SRC as well; copying in, COPY_DST.
    let mut other = Buffer::<u32>::zeroed(&gpu, 16).unwrap();
    assert!(matches!(other.copy_from(&buf), Err(BufferError::MissingUsage { usage: "COPY_SRC", .. })));
    buf.copy_from(&other).unwrap();
    // A buffer without STORAGE is no kernel argument; without COPY_DST not written.
    let raw = wgpu_buffer(&device, 64, U::COPY_SRC);
    let mut buf = Buffer::<u32>::from_wgpu(&gpu, &raw, 16).unwrap();
    let err = lengths::launch(&gpu, 16, &mut buf).unwrap_err();
    assert!(
        matches!(&err, LaunchError::InvalidArgument { arg: "out", problem, .. } if problem.contains("STORAGE")),
        "{err}"
    );
    assert!(matches!(buf.write(&[1; 16]), Err(BufferError::MissingUsage { usage: "COPY_DST", .. })));
    assert_eq!(buf.read().unwrap(), [0; 16]);
    // Sizes: the buffer must hold `len` elements in whole words.
    let raw = wgpu_buffer(&device, 64, U::STORAGE | U::COPY_SRC | U::COPY_DST);
    assert!(matches!(Buffer::<u32>::from_wgpu(&gpu, &raw, 17), Err(BufferError::Layout { .. })));
    assert!(Buffer::<Vec4>::from_wgpu(&gpu, &raw, 4).is_ok());
    assert!(Buffer::<f16>::from_wgpu(&gpu, &raw, 32).is_ok());
    // The CPU executor adopts nothing.
    let err = Buffer::<u32>::from_wgpu(&Device::cpu(), &raw, 4).unwrap_err();
    assert!(matches!(err, BufferError::Device(DeviceError::NotAGpu { .. })), "{err}");
}

#[test]
fn an_adopted_buffer_is_its_length_to_kernels_and_the_program_keeps_it() {
    use wgpu::BufferUsages as U;
    let (gpu, device, queue) = adopted();
    let raw = wgpu_buffer(&device, 64, U::STORAGE | U::COPY_SRC | U::COPY_DST);
    {
        // The first 10 of 16 words: the kernel's `len()` is 10.
        let mut head = Buffer::<u32>::from_wgpu(&gpu, &raw, 10).unwrap();
        lengths::launch(&gpu, 16, &mut head).unwrap();
        let want: Vec<u32> = (0..10).map(|i| 10 + 1000 * i).collect();
        assert_eq!(head.read().unwrap(), want);
    }
    // Dropped: the program's buffer lives on, and the words past 10 were not touched.
    let whole = Buffer::<u32>::from_wgpu(&gpu, &raw, 16).unwrap();
    assert_eq!(&whole.read().unwrap()[10..], [0; 6]);
    // The program writes it with its own queue; the kernel's view sees it.
    queue.write_buffer(&raw, 0, bytemuck::cast_slice(&[5u32; 16]));
    assert_eq!(whole.read().unwrap(), [5; 16]);
    assert_eq!(whole.wgpu_buffer(), Some(&raw));
}

/// Records `k` into the program's encoder between the program's own
/// commands: a clear before, a copy after.
#[test]
fn recorded_launches_run_in_the_programs_submission_in_its_order() {
    let (gpu, device, queue) = adopted();
    let a = Buffer::from_slice(&gpu, &[1.0f32; 100]).unwrap();
    let mut out = Buffer::from_slice(&gpu, &[5.0f32; 100]).unwrap();
    let mut seen = Buffer::<f32>::zeroed(&gpu, 100).unwrap();
    let mut encoder = device.create_command_encoder(&Default::default());
    encoder.clear_buffer(out.wgpu_buffer().unwrap(), 0, None); // the program's: out = 0
    let (launched, recorded) = gpu
        .record(&mut encoder, || -> Result<(), LaunchError> {
            // The same kernel and buffers twice: each launch keeps its scalar.
            axpy_in_place::launch(&gpu, 100, &a, &mut out, 2.0)?;
            axpy_in_place::launch(&gpu, 100, &a, &mut out, 10.0)?;
            Ok(())
        })
        .unwrap();
    launched.unwrap();
    assert_eq!((recorded.launches(), recorded.checked_launches()), (2, 0));
    // The program's copy, after the launches.
    encoder.copy_buffer_to_buffer(out.wgpu_buffer().unwrap(), 0, seen.wgpu_buffer().unwrap(), 0, 400);
    // Nothing ran yet.
    assert_eq!(out.read().unwrap(), [5.0; 100]);
    queue.submit([encoder.finish()]);
    recorded.check().unwrap();
    assert_eq!(out.read().unwrap(), [12.0; 100]);
    let _ = &mut seen;
    assert_eq!(seen.read().unwrap(), [12.0; 100]);
    // The same on the CPU executor, launched as usual.
    assert_eq!(
        axpy_on(&Device::cpu(), &[1.0; 100], &[0.0; 100], 2.0).iter().map(|x| x + 10.0).collect::<Vec<_>>(),
        [12.0; 100]
    );
    // Launches outside the scope are submitted as usual again.
    axpy_in_place::launch(&gpu, 100, &a, &mut out, 1.0).unwrap();
    assert_eq!(out.read().unwrap(), [13.0; 100]);
}

#[test]
fn recorded_checked_launches_report_through_recorded_check() {
    let (gpu, device, queue) = adopted();
    let checked = gpu.checked();
    let mut out = Buffer::<u32>::zeroed(&gpu, 10).unwrap();
    let mut encoder = device.create_command_encoder(&Default::default());
    let (launched, recorded) = gpu.record(&mut encoder, || unguarded::launch(&checked, 64, &mut out)).unwrap();
    launched.unwrap(); // its check is read later
    assert_eq!(recorded.checked_launches(), 1);
    // Before the submission: not written yet, and said so.
    let err = recorded.check().unwrap_err();
    assert!(matches!(err, LaunchError::Recording { kernel: "unguarded", .. }), "{err}");
    queue.submit([encoder.finish()]);
    let err = recorded.check().unwrap_err();
    assert!(matches!(err, LaunchError::OutOfBounds { kernel: "unguarded", what: "out", len: 10, .. }), "{err}");
    // As a launch of its own says.
    let err = unguarded::launch(&checked, 64, &mut out).unwrap_err();
    assert!(matches!(err, LaunchError::OutOfBounds { kernel: "unguarded", len: 10, .. }), "{err}");
}

#[test]
fn launches_record_into_an_open_compute_pass() {
    let (gpu, device, queue) = adopted();
    let a = Buffer::from_slice(&gpu, &[2.0f32; 70]).unwrap();
    let mut out = Buffer::<f32>::zeroed(&gpu, 70).unwrap();
    let mut encoder = device.create_command_encoder(&Default::default());
    {
        let mut pass = encoder.begin_compute_pass(&Default::default());
        let (launched, recorded) = gpu
            .record_pass(&mut pass, || -> Result<(), LaunchError> {
                axpy_in_place::launch(&gpu, 70, &a, &mut out, 1.0)?;
                axpy_in_place::launch(&gpu, 70, &a, &mut out, 0.5)?;
                Ok(())
            })
            .unwrap();
        launched.unwrap();
        assert_eq!(recorded.launches(), 2);
        // A checked launch cannot go into a pass.
        let mut words = Buffer::<u32>::zeroed(&gpu, 10).unwrap();
        let (launched, _) = gpu.record_pass(&mut pass, || unguarded::launch(&gpu.checked(), 64, &mut words)).unwrap();
        assert!(matches!(launched, Err(LaunchError::Recording { kernel: "unguarded", .. })));
    }
    queue.submit([encoder.finish()]);
    assert_eq!(out.read().unwrap(), [3.0; 70]);
}

/// `out[at] = v` (one thread).
#[kernel(workgroup_size = 64)]
fn put(out: &mut [u32], at: u32, v: u32) {
    if global_id().x == 0 {
        out[at as usize] = v;
    }
}

/// Hundreds of recorded launches (more than one uniform arena's slots,
/// two kernels with blocks of different sizes, into a pass and into an
/// encoder, two recordings submitted in the other order): each reads its
/// own scalars, none another's.
#[test]
fn many_recorded_launches_each_see_their_own_scalars() {
    let (gpu, device, queue) = adopted();
    const N: usize = 700;
    let mut out = Buffer::<u32>::zeroed(&gpu, 2 * N).unwrap();
    let a = Buffer::from_slice(&gpu, &[1.0f32; 10]).unwrap();
    let mut sums = Buffer::<f32>::zeroed(&gpu, 10).unwrap();
    let mut first = device.create_command_encoder(&Default::default());
    let recorded = {
        let mut pass = first.begin_compute_pass(&Default::default());
        let (launched, recorded) = gpu
            .record_pass(&mut pass, || -> Result<(), LaunchError> {
                for i in 0..N as u32 {
                    put::launch(&gpu, 1, &mut out, i, 3 * i + 1)?;
                    if i % 100 == 0 {
                        axpy_in_place::launch(&gpu, 10, &a, &mut sums, (i / 100 + 1) as f32)?;
                    }
                }
                Ok(())
            })
            .unwrap();
        launched.unwrap();
        recorded
    };
    assert_eq!(recorded.launches(), N + N.div_ceil(100));
    let mut second = device.create_command_encoder(&Default::default());
    let (launched, again) = gpu
        .record(&mut second, || -> Result<(), LaunchError> {
            for i in 0..N as u32 {
                put::launch(&gpu, 1, &mut out, N as u32 + i, 5 * i + 2)?;
            }
            Ok(())
        })
        .unwrap();
    launched.unwrap();
    // The second recording's blocks were written before the first is
    // submitted: each still has its own.
    queue.submit([second.finish()]);
    queue.submit([first.finish()]);
    recorded.check().unwrap();
    again.check().unwrap();
    let got = out.read().unwrap();
    let want: Vec<u32> = (0..N as u32).map(|i| 3 * i + 1).chain((0..N as u32).map(|i| 5 * i + 2)).collect();
    assert_eq!(got, want);
    // 1 + 2 + ... + 7 = 28.
    assert_eq!(sums.read().unwrap(), [28.0; 10]);
    // The same kernel on the CPU executor.
    let cpu = Device::cpu();
    let mut on_cpu = Buffer::<u32>::zeroed(&cpu, 4).unwrap();
    for i in 0..4u32 {
        put::launch(&cpu, 1, &mut on_cpu, i, 3 * i + 1).unwrap();
    }
    assert_eq!(on_cpu.read().unwrap(), want[..4]);
}

#[test]
fn recording_is_for_gpus_and_does_not_nest() {
    let cpu = Device::cpu();
    let (gpu, device, _) = adopted();
    let mut encoder = device.create_command_encoder(&Default::default());
    assert!(matches!(cpu.record(&mut encoder, || ()), Err(DeviceError::NotAGpu { .. })));
    let mut inner = device.create_command_encoder(&Default::default());
    let (nested, _) = gpu.record(&mut encoder, || gpu.record(&mut inner, || ()).map(|_| ())).unwrap();
    assert!(matches!(nested, Err(DeviceError::RecordingInProgress { .. })));
    // The scope closed: recording works again.
    assert!(gpu.record(&mut encoder, || ()).is_ok());
}

#[test]
fn every_device_is_listed_and_buffers_move_between_two() {
    let all = Device::available();
    assert!(all.last().is_some_and(|d| d.is_cpu() && d.backend.is_none()));
    let gpus: Vec<_> = all.iter().filter(|d| !d.is_cpu()).collect();
    assert!(!gpus.is_empty(), "no GPU adapter listed: {all:?}");
    for d in &all {
        assert!(!d.name.is_empty());
        assert!(d.to_string().starts_with(&d.name), "{d}");
    }
    // Two devices at once: a GPU and the CPU executor.
    let gpu = gpus[0].open().unwrap();
    let cpu = all.last().unwrap().open().unwrap();
    assert!(gpu.is_gpu() && cpu.is_cpu());
    assert_eq!(gpu.features(), gpus[0].features);
    let data: Vec<f32> = (0..300).map(|i| i as f32).collect();
    let on_cpu = Buffer::from_slice(&cpu, &data).unwrap();
    let mut on_gpu = on_cpu.to_device(&gpu).unwrap();
    assert_eq!(on_gpu.device().id(), gpu.id());
    axpy_in_place::launch(&gpu, 300, &Buffer::from_slice(&gpu, &data).unwrap(), &mut on_gpu, 1.0).unwrap();
    let back = on_gpu.to_device(&cpu).unwrap();
    assert_eq!(back.read().unwrap(), data.iter().map(|x| 2.0 * x).collect::<Vec<_>>());
    // On the same device: a copy in its memory.
    let copy = on_gpu.to_device(&gpu).unwrap();
    assert_eq!(copy.read().unwrap(), on_gpu.read().unwrap());
    // Two GPU devices (two `wgpu::Device`s): through the host.
    let second = gpus[0].open().unwrap();
    assert_ne!(second.id(), gpu.id());
    assert_eq!(on_gpu.to_device(&second).unwrap().read().unwrap(), back.read().unwrap());
}

fn devices() -> Vec<Device> {
    vec![Device::cpu(), Device::gpu().expect("a GPU adapter (CI uses Mesa's lavapipe; see .ci/run)")]
}

#[test]
fn ndarray_layouts_upload_in_standard_order_and_read_back_in_shape() {
    use ndarray::{s, Array2, Array3, Axis};
    for device in devices() {
        let m = Array2::from_shape_fn((4, 6), |(r, c)| (r * 10 + c) as f32);
        // Standard layout, a transposed view, a column, a strided slice.
        let buf = Buffer::from_array(&device, &m).unwrap();
        assert_eq!(buf.read_array((4, 6)).unwrap(), m);
        let t = Buffer::from_array(&device, &m.t()).unwrap();
        assert_eq!(t.read_array((6, 4)).unwrap(), m.t());
        let col = Buffer::from_array(&device, &m.column(2)).unwrap();
        assert_eq!(col.read().unwrap(), [2.0, 12.0, 22.0, 32.0]);
        let strided = Buffer::from_array(&device, &m.slice(s![..;2, 1..;2])).unwrap();
        assert_eq!(strided.read_array((2, 3)).unwrap(), m.slice(s![..;2, 1..;2]));
        // A kernel over a 3-D array, read back in shape, as on the CPU.
        let cube = Array3::from_shape_fn((2, 3, 5), |(a, b, c)| (a * 100 + b * 10 + c) as f32);
        let mut out = Buffer::from_array(&device, &cube.map(|x| -x)).unwrap();
        axpy_in_place::launch(&device, 30, &Buffer::from_array(&device, &cube).unwrap(), &mut out, 2.0).unwrap();
        assert_eq!(out.read_array((2, 3, 5)).unwrap(), cube);
        let rows = out.read_array(ndarray::IxDyn(&[6, 5])).unwrap();
        assert_eq!(rows.shape(), [6, 5]);
        assert_eq!(rows.index_axis(Axis(0), 1).iter().copied().collect::<Vec<_>>(), cube.slice(s![0, 1, ..]).to_vec());
        // Shapes are checked.
        let err = out.read_array((4, 8)).unwrap_err();
        assert_eq!(err, BufferError::ShapeMismatch { operation: "Buffer::read_array", shape: vec![4, 8], len: 30 });
        let mut wrong = Array2::<f32>::zeros((5, 5));
        assert!(matches!(out.read_into_array(&mut wrong), Err(BufferError::ShapeMismatch { .. })));
        // Into an array's memory, any layout; writes of any layout.
        let mut back = Array2::<f32>::zeros((6, 4));
        buf.read_into_array(&mut back.view_mut().reversed_axes()).unwrap();
        assert_eq!(back.t(), m);
        let mut w = Buffer::<f32>::zeroed(&device, 24).unwrap();
        w.write_array(&m.t()).unwrap();
        assert_eq!(w.read().unwrap(), t.read().unwrap());
        assert!(matches!(w.write_array(&m.row(0)), Err(BufferError::LengthMismatch { .. })));
    }
}

/// The views snippet of docs/interop.md, line for line: a block of a
/// buffer read back in its shape and summed per row by the ops library.
#[test]
fn the_views_snippet_of_interop_md_runs() -> Result<(), Box<dyn std::error::Error>> {
    use ndarray::{s, Array2};
    use onekernel::ops::reduce::ReduceOp;
    for device in devices() {
        let m = Array2::from_shape_fn((5, 7), |(r, c)| (r * 10 + c) as i32);
        let buf = Buffer::from_array(&device, &m)?;
        let block = buf.view_2d(5, 7)?.slice_rows(1..4)?.slice_cols(2..6)?;
        assert_eq!(block.read_array((3, 4))?, m.slice(s![1..4, 2..6]));
        let sums = onekernel::ops::reduce::reduce_rows_view(&device, block, ReduceOp::Sum)?;
        let want: Vec<i32> = (1..4).map(|r| (2..6).map(|c| r * 10 + c).sum()).collect();
        assert_eq!(sums.read()?, want, "{}", device.name());
    }
    Ok(())
}

/// Views of a buffer (rows, columns, blocks) read back into an `Array2` of
/// their shape, written from arrays of any layout, with bounds and shapes
/// checked; on the CPU executor and the GPU.
#[test]
fn views_read_and_write_arrays_in_their_shape() {
    use ndarray::{s, Array2};
    use onekernel::Layout2d;
    for device in devices() {
        let m = Array2::from_shape_fn((5, 7), |(r, c)| (r * 10 + c) as i32);
        let mut buf = Buffer::from_array(&device, &m).unwrap();
        let v = buf.view_2d(5, 7).unwrap();
        let block = v.slice_rows(1..4).unwrap().slice_cols(2..6).unwrap();
        assert_eq!(block.shape(), (3, 4));
        assert_eq!(block.read_array((3, 4)).unwrap(), m.slice(s![1..4, 2..6]));
        assert_eq!(v.col(6).unwrap().read_array((5, 1)).unwrap(), m.slice(s![.., 6..7]));
        assert_eq!(v.row(4).unwrap().read().unwrap(), m.row(4).to_vec());
        // The shape asked for is the view's, or an error naming the method.
        let err = block.read_array((4, 3)).unwrap_err();
        assert!(matches!(err, BufferError::Layout { operation: "View2d::read_array", .. }), "{err}");
        // Bounds: past the last row or column, overlapping rows.
        assert!(matches!(v.slice_cols(3..8), Err(BufferError::Layout { operation: "View2d::slice_cols", .. })));
        assert!(matches!(buf.view_2d(6, 7), Err(BufferError::Layout { operation: "Buffer::view_2d", .. })));
        let overlap = Layout2d { offset: 0, rows: 2, cols: 7, row_stride: 3 };
        assert!(matches!(buf.view_strided(overlap), Err(BufferError::Layout { .. })));
        let tail = Layout2d { offset: 30, rows: 1, cols: 6, row_stride: 6 };
        assert!(matches!(buf.view_strided(tail), Err(BufferError::Layout { .. })));
        // A transposed array written into a block; the rest untouched.
        let patch = Array2::from_shape_fn((4, 3), |(r, c)| -((r * 3 + c) as i32)).reversed_axes();
        buf.view_2d_mut(5, 7).unwrap().slice_rows(1..4).unwrap().slice_cols(2..6).unwrap().write_array(&patch).unwrap();
        let mut want = m.clone();
        want.slice_mut(s![1..4, 2..6]).assign(&patch);
        assert_eq!(buf.read_array((5, 7)).unwrap(), want);
        let wrong = Array2::<i32>::zeros((4, 3));
        let mut block = buf.view_2d_mut(5, 7).unwrap().slice_rows(1..4).unwrap().slice_cols(2..6).unwrap();
        assert!(matches!(block.write_array(&wrong), Err(BufferError::Layout { .. })));
    }
}

#[test]
fn casts_reinterpret_without_copies_where_the_layout_allows() {
    for device in devices() {
        let v = Buffer::from_slice(&device, &[Vec4::new(1.0, 2.0, 3.0, 4.0), Vec4::splat(-1.0)]).unwrap();
        let raw = v.wgpu_buffer().cloned();
        let lanes = v.cast::<f32>().map_err(|(e, _)| e).unwrap();
        assert_eq!(lanes.len(), 8);
        // The same wgpu buffer on a GPU: no copy.
        assert_eq!(lanes.wgpu_buffer().cloned(), raw);
        assert_eq!(lanes.read().unwrap(), [1.0, 2.0, 3.0, 4.0, -1.0, -1.0, -1.0, -1.0]);
        let bits = lanes.cast::<u32>().map_err(|(e, _)| e).unwrap();
        assert_eq!(bits.read().unwrap()[1], 2.0f32.to_bits());
        let halves = bits.cast::<f16>().map_err(|(e, _)| e).unwrap();
        assert_eq!(halves.len(), 16);
        // Not a whole number of the target type: refused, with the buffer back.
        let three = Buffer::from_slice(&device, &[1u32, 2, 3]).unwrap();
        let (err, three) = three.cast::<Vec4>().map(|_| ()).unwrap_err();
        assert!(matches!(err, BufferError::Layout { operation: "Buffer::cast", .. }), "{err}");
        assert_eq!(three.read().unwrap(), [1, 2, 3]);
        // From any Pod slice: f16 bits as u16, bytes as u32.
        let bits: Vec<u16> = [0.5f32, -3.0].iter().map(|&x| f16::from_f32(x).to_bits()).collect();
        let h = Buffer::<f16>::from_pod_slice(&device, &bits).unwrap();
        assert_eq!(h.read_f32s().unwrap(), [0.5, -3.0]);
        let bytes = [1u8, 0, 0, 0, 2, 0, 0, 0, 3];
        let words = Buffer::<u32>::from_pod_slice(&device, &bytes[1..5]); // misaligned: copied
        assert_eq!(words.unwrap().read().unwrap(), [0x0200_0000]);
        assert!(matches!(Buffer::<u32>::from_pod_slice(&device, &bytes), Err(BufferError::Layout { .. })));
        let h = Buffer::<f16>::from_f32s(&device, &[1.0, 0.1]).unwrap();
        assert_eq!(h.read().unwrap(), [f16::from_f32(1.0), f16::from_f32(0.1)]);
    }
}
