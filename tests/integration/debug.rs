//! `println!`, `assert!` and `panic!` inside kernels, on the CPU executor
//! and the GPU: the same lines (compared as sets), the same
//! `LaunchError::KernelPanic` with Rust's panic message.

use onekernel::debug::{set_print_handler, PrintedLine};
use onekernel::glam::{UVec2, Vec2, Vec3A};
use onekernel::prelude::*;
use onekernel::{BufferError, DeviceError, LaunchError};
use std::sync::{Arc, Mutex, OnceLock};

/// Every line kernels print in this test binary.
fn lines() -> &'static Mutex<Vec<PrintedLine>> {
    static LINES: OnceLock<&'static Mutex<Vec<PrintedLine>>> = OnceLock::new();
    LINES.get_or_init(|| {
        let lines: &'static Mutex<Vec<PrintedLine>> = Box::leak(Box::new(Mutex::new(Vec::new())));
        set_print_handler(Some(Arc::new(move |l: &PrintedLine| lines.lock().unwrap().push(l.clone()))));
        lines
    })
}

/// Takes the lines `kernel` printed so far (as `[kernel (x, y, z)] text`),
/// sorted.
fn take(kernel: &str) -> Vec<String> {
    let mut all = lines().lock().unwrap();
    let (mine, rest): (Vec<PrintedLine>, Vec<PrintedLine>) = all.drain(..).partition(|l| l.kernel == kernel);
    *all = rest;
    let mut v: Vec<String> = mine.iter().map(|l| format!("{l}{}", if l.stderr { " (stderr)" } else { "" })).collect();
    v.sort();
    v
}

fn gpu() -> Device {
    Device::gpu().expect("the test needs a GPU adapter (source .ci/env.sh for lavapipe)")
}

#[kernel(workgroup_size = 32)]
fn print_values(a: &[f32], out: &mut [f32]) {
    let i = global_id().x;
    if i < a.len() {
        let x = a[i];
        let n = i as u32;
        println!("x = {x:.3} n = {n:>4} hex {:#06x} e {:e} v {:?}", n, x, Vec2::new(x, 1.0));
        print!("part {} ", n * 2);
        println!("{} {:+} {:?} {named:*^7}", i, -(n as i32), global_id(), named = n + 1);
        eprintln!(
            "{:?} {:?} {} {:x?}",
            x < 2.0,
            Vec3A::new(x, 0.5, -0.0),
            -(n as i64) * 3_000_000_000,
            UVec2::new(n, 255)
        );
        out[i] = x;
    }
}

#[test]
fn prints_the_same_lines_on_both_devices() {
    lines();
    let data: Vec<f32> = (0..40).map(|i| i as f32 * 0.37 - 3.0).collect();
    for device in [Device::cpu(), gpu()] {
        let a = Buffer::from_slice(&device, &data).unwrap();
        let mut out = Buffer::<f32>::zeroed(&device, data.len()).unwrap();
        print_values::launch(&device, data.len(), &a, &mut out).unwrap();
        assert_eq!(out.read().unwrap(), data);
    }
    let all = take("print_values");
    assert_eq!(all.len(), 2 * 3 * data.len(), "{all:#?}");
    // Each line twice: once from each device.
    for pair in all.chunks(2) {
        assert_eq!(pair[0], pair[1]);
    }
    let x = data[5];
    let expected =
        format!("[print_values (5, 0, 0)] x = {x:.3} n = {:>4} hex {:#06x} e {:e} v {:?}", 5, 5, x, Vec2::new(x, 1.0));
    assert!(all.contains(&expected), "{expected}\n{all:#?}");
    let expected = format!("[print_values (5, 0, 0)] part 10 5 -5 {:?} {:*^7}", onekernel::Dim3::new(5, 0, 0), 6);
    assert!(all.contains(&expected), "{expected}\n{all:#?}");
}

#[kernel(workgroup_size = 64)]
fn check_eq(a: &[u32], out: &mut [u32]) {
    let i = global_id().x;
    if i < a.len() {
        assert_eq!(a[i], i as u32, "element {} is wrong", i);
        out[i] = a[i] + 1;
    }
}

#[kernel(workgroup_size = 64)]
fn check_plain(a: &[u32], out: &mut [u32]) {
    let i = global_id().x;
    if i < a.len() {
        assert!(a[i] < 100);
        assert_ne!(a[i], 50);
        if a[i] == 70 {
            panic!("seventy at {}", i);
        }
        if a[i] == 80 {
            unreachable!();
        }
        debug_assert!(a[i] != 90, "ninety");
        out[i] = a[i];
    }
}

/// A launch of a kernel over `u32` buffers.
type Launch = fn(&Device, &Buffer<u32>, &mut Buffer<u32>) -> Result<(), LaunchError>;

fn panic_of(e: &LaunchError) -> (u32, String, [usize; 3]) {
    match e {
        LaunchError::KernelPanic { line, message, invocation, .. } => {
            (*line, message.clone(), [invocation.x, invocation.y, invocation.z])
        }
        other => panic!("not a kernel panic: {other}"),
    }
}

/// The panic of a launch on `device`: on the CPU the launch's result, on
/// the GPU the next read's.
fn launch_panic(device: &Device, kernel: Launch, data: &[u32]) -> LaunchError {
    let a = Buffer::from_slice(device, data).unwrap();
    let mut out = Buffer::<u32>::zeroed(device, data.len()).unwrap();
    match kernel(device, &a, &mut out) {
        Err(e) => e,
        Ok(()) => match out.read() {
            Err(BufferError::Launch(e)) => *e,
            other => panic!("expected a panic, got {other:?}"),
        },
    }
}

#[test]
fn a_failed_assert_is_the_same_kernel_panic_on_both_devices() {
    let eq = |d: &Device, a: &Buffer<u32>, o: &mut Buffer<u32>| check_eq::launch(d, a.len(), a, o);
    let plain = |d: &Device, a: &Buffer<u32>, o: &mut Buffer<u32>| check_plain::launch(d, a.len(), a, o);
    // One wrong element in a large grid.
    let mut data: Vec<u32> = (0..5000).collect();
    data[4321] = 7;
    let cases: Vec<(&str, Vec<u32>, String)> = vec![
        ("eq", data.clone(), "assertion `left == right` failed: element 4321 is wrong\n  left: 7\n right: 4321".into()),
        ("plain", vec![1, 2, 300], "assertion failed: a[i] < 100".into()),
        ("plain", vec![1, 50, 3], "assertion `left != right` failed\n  left: 50\n right: 50".into()),
        ("plain", vec![1, 2, 70], "seventy at 2".into()),
        ("plain", vec![80, 2, 3], "internal error: entered unreachable code".into()),
        ("plain", vec![1, 90, 3], "ninety".into()),
    ];
    for (kernel, data, expected) in cases {
        let mut results = Vec::new();
        for device in [Device::cpu(), Device::cpu_serial(), gpu()] {
            let f = if kernel == "eq" { eq } else { plain };
            let e = launch_panic(&device, f, &data);
            let (_, message, _) = panic_of(&e);
            assert_eq!(message, expected, "on {device:?}: {e}");
            assert!(e.to_string().contains("panicked at tests/integration/debug.rs:"), "{e}");
            results.push(panic_of(&e));
        }
        assert!(results.windows(2).all(|w| w[0] == w[1]), "{results:?}");
    }
}

#[kernel(workgroup_size = 64)]
fn print_loop(out: &mut [u32], times: u32) {
    let i = global_id().x;
    if i < out.len() {
        for k in 0..times {
            println!("{k}");
        }
        out[i] = i as u32;
    }
}

/// More lines than the print buffer holds: the rest are counted, and the
/// kernel's results are whole.
#[test]
fn a_full_print_buffer_drops_lines_and_says_how_many() {
    lines();
    let device = gpu();
    let mut out = Buffer::<u32>::zeroed(&device, 1024).unwrap();
    print_loop::launch(&device, 1024, &mut out, 80).unwrap();
    assert_eq!(out.read().unwrap(), (0..1024).collect::<Vec<u32>>());
    let all = take("print_loop");
    let room = onekernel::abi::debug::print_buffer::DEFAULT_WORDS as usize / 5;
    let dropped = all.iter().find(|l| l.contains("dropped")).expect("a line says how many were dropped");
    let printed = all.len() - 1;
    assert_eq!(printed, room, "{dropped}");
    assert!(dropped.contains(&format!("... {} printed lines dropped", 1024 * 80 - room)), "{dropped}");
}

#[kernel(workgroup_size = 64)]
fn print_sized(out: &mut [u32], times: u32) {
    let i = global_id().x;
    if i < out.len() {
        for k in 0..times {
            println!("{k}");
        }
        out[i] = i as u32;
    }
}

/// A smaller print buffer holds fewer lines, and the count of the dropped
/// ones is still right; a larger one holds them all.
#[test]
fn the_print_buffer_size_can_be_set() {
    lines();
    let device = gpu();
    assert_eq!(device.print_buffer_size(), onekernel::abi::debug::print_buffer::DEFAULT_WORDS as usize * 4);
    // 100 records of 5 words (the record's header and one `u32`), and a
    // part of a record that no record fits in.
    device.set_print_buffer_size(100 * 5 * 4 + 7);
    assert_eq!(device.print_buffer_size(), 100 * 5 * 4 + 4);
    // Every handle of the device shares it.
    assert_eq!(device.checked().print_buffer_size(), device.print_buffer_size());
    let mut out = Buffer::<u32>::zeroed(&device, 64).unwrap();
    print_sized::launch(&device, 64, &mut out, 3).unwrap();
    assert_eq!(out.read().unwrap(), (0..64).collect::<Vec<u32>>());
    let all = take("print_sized");
    let dropped = all.iter().find(|l| l.contains("dropped")).expect("a line says how many were dropped");
    assert_eq!(all.len() - 1, 100, "{dropped}");
    assert!(dropped.contains(&format!("... {} printed lines dropped", 64 * 3 - 100)), "{dropped}");
    // Room for none: every line is dropped and counted.
    device.set_print_buffer_size(0);
    print_sized::launch(&device, 64, &mut out, 2).unwrap();
    device.synchronize().unwrap();
    let all = take("print_sized");
    assert_eq!(all.len(), 1, "{all:#?}");
    assert!(all[0].contains("... 128 printed lines dropped"), "{all:#?}");
    // 8 MiB: all of 1024 x 80 lines.
    device.set_print_buffer_size(8 << 20);
    let mut out = Buffer::<u32>::zeroed(&device, 1024).unwrap();
    print_sized::launch(&device, 1024, &mut out, 80).unwrap();
    device.synchronize().unwrap();
    let all = take("print_sized");
    assert_eq!(all.len(), 1024 * 80);
    assert!(!all.iter().any(|l| l.contains("dropped")));
}

#[kernel(workgroup_size = 32)]
fn recorded_prints(a: &[u32], out: &mut [u32]) {
    let i = global_id().x;
    if i < a.len() {
        println!("a[{i}] = {}", a[i]);
        assert!(a[i] != 13, "thirteen at {}", i);
        out[i] = a[i] * 2;
    }
}

/// Records a launch of `recorded_prints` into an encoder of `device` and
/// returns what `Recorded::check` says before and after the submit.
fn record_and_check(device: &Device, data: &[u32]) -> (LaunchError, Result<(), LaunchError>) {
    let (wgpu_device, queue) = device.wgpu().unwrap();
    let a = Buffer::from_slice(device, data).unwrap();
    let mut out = Buffer::<u32>::zeroed(device, data.len()).unwrap();
    let mut encoder = wgpu_device.create_command_encoder(&Default::default());
    let (launched, recorded) =
        device.record(&mut encoder, || recorded_prints::launch(device, data.len(), &a, &mut out)).unwrap();
    launched.unwrap();
    let before = recorded.check().unwrap_err();
    queue.submit([encoder.finish()]);
    let after = recorded.check();
    // Read once: a second check prints nothing more.
    assert!(recorded.check().is_ok());
    (before, after)
}

/// A printing kernel recorded into the program's encoder prints its lines
/// and reports its panic through `Recorded::check` after the submit, as
/// the CPU executor does at the launch.
#[test]
fn recorded_launches_print_and_panic_through_recorded_check() {
    lines();
    let gpu = gpu();
    let data: Vec<u32> = (0..40).map(|i| i * 3).collect();
    // The CPU's lines.
    let cpu_device = Device::cpu();
    let a = Buffer::from_slice(&cpu_device, &data).unwrap();
    let mut out = Buffer::<u32>::zeroed(&cpu_device, data.len()).unwrap();
    recorded_prints::launch(&cpu_device, data.len(), &a, &mut out).unwrap();
    let cpu = take("recorded_prints");
    assert_eq!(cpu.len(), data.len());

    let (before, after) = record_and_check(&gpu, &data);
    assert!(matches!(before, LaunchError::Recording { kernel: "recorded_prints", .. }), "{before}");
    after.unwrap();
    assert_eq!(take("recorded_prints"), cpu);

    // A failed assert: the same panic as on the CPU.
    let mut bad = data.clone();
    bad[7] = 13;
    let a = Buffer::from_slice(&cpu_device, &bad).unwrap();
    let cpu_panic = recorded_prints::launch(&cpu_device, bad.len(), &a, &mut out).unwrap_err();
    let cpu_lines = take("recorded_prints");
    let (_, after) = record_and_check(&gpu, &bad);
    let gpu_panic = after.unwrap_err();
    assert_eq!(panic_of(&gpu_panic), panic_of(&cpu_panic), "{gpu_panic}");
    assert_eq!(panic_of(&gpu_panic).1, "thirteen at 7");
    // Every invocation printed before its assert: the CPU stops at the
    // panic, the GPU's other invocations go on (docs/semantics.md).
    let gpu_lines = take("recorded_prints");
    assert_eq!(gpu_lines.len(), bad.len());
    assert!(cpu_lines.iter().all(|l| gpu_lines.contains(l)), "{cpu_lines:#?}");

    // Into an open compute pass: the lines after the submit.
    let (wgpu_device, queue) = gpu.wgpu().unwrap();
    let a = Buffer::from_slice(&gpu, &data).unwrap();
    let mut out = Buffer::<u32>::zeroed(&gpu, data.len()).unwrap();
    let mut encoder = wgpu_device.create_command_encoder(&Default::default());
    let recorded = {
        let mut pass = encoder.begin_compute_pass(&Default::default());
        let (launched, recorded) =
            gpu.record_pass(&mut pass, || recorded_prints::launch(&gpu, data.len(), &a, &mut out)).unwrap();
        launched.unwrap();
        recorded
    };
    queue.submit([encoder.finish()]);
    recorded.check().unwrap();
    assert_eq!(take("recorded_prints"), cpu);
    assert_eq!(out.read().unwrap(), data.iter().map(|x| x * 2).collect::<Vec<u32>>());
}

/// Halves an even number; prints and asserts in a helper.
#[helper]
fn checked_half(x: u32, i: usize) -> u32 {
    println!("half of {x} at {}", i);
    assert!(x % 2 == 0, "odd {} at {}", x, i);
    x / 2
}

/// A helper calling a printing, panicking helper.
#[helper]
fn halve_twice(x: u32, i: usize) -> u32 {
    let h = checked_half(x, i);
    assert_eq!(h * 2, x);
    eprint!("twice ");
    checked_half(h * 2, i)
}

#[kernel(workgroup_size = 32)]
fn halve_with_helpers(a: &[u32], out: &mut [u32]) {
    let i = global_id().x;
    if i < a.len() {
        let h = halve_twice(a[i], i);
        println!("out {h}");
        out[i] = h;
    }
}

/// `println!` and `assert!` in helpers: the same lines and the same
/// `KernelPanic` (at the helper's line) on the CPU executors and the GPU;
/// after a helper's panic its callers do not go on; from host code the
/// helper is plain Rust.
#[test]
fn helpers_print_and_panic_like_kernels() {
    lines();
    let data: Vec<u32> = (0..70).map(|i| i * 2).collect();
    for device in [Device::cpu(), gpu()] {
        let a = Buffer::from_slice(&device, &data).unwrap();
        let mut out = Buffer::<u32>::zeroed(&device, data.len()).unwrap();
        halve_with_helpers::launch(&device, data.len(), &a, &mut out).unwrap();
        assert_eq!(out.read().unwrap(), (0..70).collect::<Vec<u32>>());
    }
    let all = take("halve_with_helpers");
    // Four lines an invocation (three on stdout, `twice ` ends with the
    // stdout lines' invocation), each from both devices.
    assert_eq!(all.len(), 2 * 4 * data.len(), "{all:#?}");
    for pair in all.chunks(2) {
        assert_eq!(pair[0], pair[1]);
    }
    assert!(all.contains(&"[halve_with_helpers (7, 0, 0)] half of 14 at 7".to_string()), "{all:#?}");
    assert!(all.contains(&"[halve_with_helpers (7, 0, 0)] out 7".to_string()), "{all:#?}");
    assert!(all.contains(&"[halve_with_helpers (7, 0, 0)] twice  (stderr)".to_string()), "{all:#?}");

    // One odd number: the inner helper's assert.
    let mut bad = data.clone();
    bad[41] = 13;
    let f = |d: &Device, a: &Buffer<u32>, o: &mut Buffer<u32>| halve_with_helpers::launch(d, a.len(), a, o);
    let assert_line = line!() - 52;
    let mut results = Vec::new();
    for device in [Device::cpu(), Device::cpu_serial(), gpu()] {
        let e = launch_panic(&device, f, &bad);
        let LaunchError::KernelPanic { file, panics, .. } = &e else { panic!("{e}") };
        assert_eq!((file.as_str(), *panics), (file!(), 1), "on {device:?}: {e}");
        assert_eq!(panic_of(&e), (assert_line, "odd 13 at 41".to_string(), [41, 0, 0]), "on {device:?}: {e}");
        results.push(e.to_string());
    }
    assert!(results.windows(2).all(|w| w[0] == w[1]), "{results:#?}");
    // The panicking invocation printed its first line only: its callers
    // returned (on the GPU the others ran to their end).
    let lines = take("halve_with_helpers");
    let of_41: Vec<&String> = lines.iter().filter(|l| l.contains("(41, 0, 0)")).collect();
    assert!(of_41.iter().all(|l| l.ends_with("half of 13 at 41")), "{of_41:#?}");
    assert!(!of_41.is_empty());

    // The helper's sites follow the kernel's, with the helper's file.
    let sites = &halve_with_helpers::KERNEL.debug_sites;
    assert_eq!(sites.len(), 1 + 2 + 2);
    assert!(sites[1..].iter().all(|s| s.file == file!()), "{sites:#?}");
    // From host code, a helper is plain Rust.
    assert_eq!(checked_half(8, 0), 4);
    assert!(std::panic::catch_unwind(|| checked_half(7, 0)).is_err());
}

/// wgpu's OpenGL backend, headless: Mesa's llvmpipe through EGL (its
/// surfaceless platform; Debian's `libegl1`, `libegl-mesa0` and
/// `libgl1-mesa-dri`, which `.ci/run` installs), adopted as a device. The
/// GL backend is chosen here, not through `WGPU_BACKEND` (which the other
/// tests of this process read as `vulkan`).
fn gl() -> Device {
    let desc = wgpu::InstanceDescriptor {
        backends: wgpu::Backends::GL,
        ..wgpu::InstanceDescriptor::new_without_display_handle_from_env()
    };
    let instance = wgpu::Instance::new(desc);
    let adapter = pollster::block_on(instance.request_adapter(&Default::default())).expect(
        "an OpenGL adapter: Mesa's llvmpipe through EGL (apt-get install libegl1 libegl-mesa0 libgl1-mesa-dri, as .ci/run does)",
    );
    assert_eq!(adapter.get_info().backend, wgpu::Backend::Gl);
    let desc = wgpu::DeviceDescriptor {
        required_features: adapter.features(),
        required_limits: adapter.limits(),
        ..Default::default()
    };
    let (device, queue) = pollster::block_on(adapter.request_device(&desc)).expect("a GL device");
    Device::from_wgpu(&adapter, &device, &queue).expect("the GL device adopted")
}

#[kernel(workgroup_size = 32)]
fn gl_prints(a: &[f32], out: &mut [f32]) {
    let i = global_id().x;
    if i < a.len() {
        let x = a[i];
        let n = i as u32;
        println!("x = {x:.3} e {:e} hex {:#06x} v {:?} {:?} {}", x, n, Vec2::new(x, 1.0), global_id(), x < 0.0);
        print!("{:>+9.2}|{n:<4}|", x * 2.0);
        let h = checked_half(n * 2, i);
        eprintln!("{:?}", Vec3A::new(x, 0.5, -0.0));
        assert!(x < 100.0, "too big {x} at {i}");
        assert_eq!(h, n);
        out[i] = x;
    }
}

/// The GL backend prints the same lines as the CPU executor (prints in the
/// kernel and in a helper) and reports a failed assert as the same
/// `KernelPanic`, at the next wait as on Vulkan.
#[test]
fn the_gl_backend_prints_and_panics_like_the_cpu_executor() {
    lines();
    let gl = gl();
    let data: Vec<f32> = (0..50).map(|i| i as f32 * 0.37 - 3.0).collect();
    let mut per_device = Vec::new();
    for device in [Device::cpu(), gl.clone()] {
        let a = Buffer::from_slice(&device, &data).unwrap();
        let mut out = Buffer::<f32>::zeroed(&device, data.len()).unwrap();
        gl_prints::launch(&device, data.len(), &a, &mut out).unwrap();
        assert_eq!(out.read().unwrap(), data);
        per_device.push(take("gl_prints"));
    }
    // Three lines an invocation (the `print!` continues the helper's line).
    assert_eq!(per_device[0].len(), 3 * data.len(), "{:#?}", per_device[0]);
    assert_eq!(per_device[0], per_device[1]);
    let x = data[5];
    let expected = format!(
        "[gl_prints (5, 0, 0)] x = {x:.3} e {:e} hex {:#06x} v {:?} {:?} {}",
        x,
        5,
        Vec2::new(x, 1.0),
        onekernel::Dim3::new(5, 0, 0),
        x < 0.0
    );
    assert!(per_device[1].contains(&expected), "{expected}\n{:#?}", per_device[1]);

    let mut bad = data.clone();
    bad[33] = 150.0;
    let mut panics = Vec::new();
    for device in [Device::cpu(), gl] {
        let a = Buffer::from_slice(&device, &bad).unwrap();
        let mut out = Buffer::<f32>::zeroed(&device, bad.len()).unwrap();
        let e = match gl_prints::launch(&device, bad.len(), &a, &mut out) {
            Err(e) => e,
            Ok(()) => match out.read() {
                Err(BufferError::Launch(e)) => *e,
                other => panic!("expected a panic, got {other:?}"),
            },
        };
        assert_eq!(panic_of(&e).1, "too big 150 at 33", "{e}");
        panics.push(panic_of(&e));
    }
    take("gl_prints");
    assert_eq!(panics[0], panics[1]);
}

/// A launch queued without a wait reports its panic at the next wait.
#[test]
fn a_queued_launch_panics_at_the_next_wait() {
    let device = gpu();
    let a = Buffer::from_slice(&device, &[0u32, 1, 9]).unwrap();
    let mut out = Buffer::<u32>::zeroed(&device, 3).unwrap();
    check_eq::launch(&device, 3, &a, &mut out).unwrap();
    match device.synchronize() {
        Err(DeviceError::Launch(e)) => assert_eq!(panic_of(&e).2, [2, 0, 0]),
        other => panic!("{other:?}"),
    }
    // Reported once.
    device.synchronize().unwrap();
    // A checked launch waits, and reports it itself.
    let e = check_eq::launch(&device.checked(), 3, &a, &mut out).unwrap_err();
    assert_eq!(panic_of(&e).1, "assertion `left == right` failed: element 2 is wrong\n  left: 9\n right: 2");
}

/// A kernel without prints has no print buffer: its WGSL names none.
#[test]
fn only_printing_kernels_bind_a_print_buffer() {
    assert!(print_values::WGSL.contains("debug_prints"));
    assert!(!print_values::KERNEL.debug_sites.is_empty());
}

#[onekernel::kernels]
mod shapes {
    use onekernel::prelude::*;

    /// A struct a kernel prints with `{:?}`.
    #[derive(Debug, PartialEq)]
    pub struct Hit {
        pub at: u32,
        pub value: f32,
    }

    #[kernel(workgroup_size = 64)]
    pub fn print_hits(hits: &[Hit], out: &mut [f32]) {
        let i = global_id().x;
        if i < hits.len() {
            let h = hits[i];
            println!("{h:?} {:#?} {:>5?}", h, h.value);
            out[i] = h.value;
        }
    }
}

#[test]
fn structs_print_with_their_derived_debug() {
    lines();
    let hits: Vec<shapes::Hit> = (0..10).map(|i| shapes::Hit { at: i, value: i as f32 / 4.0 }).collect();
    for device in [Device::cpu(), gpu()] {
        let h = Buffer::from_slice(&device, &hits).unwrap();
        let mut out = Buffer::<f32>::zeroed(&device, hits.len()).unwrap();
        shapes::print_hits::launch(&device, hits.len(), &h, &mut out).unwrap();
        out.read().unwrap();
    }
    let all = take("print_hits");
    let h = &hits[3];
    let text = format!("{h:?} {:#?} {:>5?}", h, h.value);
    let mut expected: Vec<String> = text.lines().map(|l| format!("[print_hits (3, 0, 0)] {l}")).collect();
    expected.extend(expected.clone());
    expected.sort();
    let mine: Vec<String> = all.iter().filter(|l| l.contains("(3, 0, 0)")).cloned().collect();
    assert_eq!(mine, expected);
}

#[kernel(workgroup_size = 64)]
fn print_i64(a: &[i64], b: &[u64], out: &mut [u32]) {
    let i = global_id().x;
    if i < a.len() {
        println!("{} {:x} {:?}", a[i], b[i], a[i] as f64 * 0.5);
        out[i] = 1;
    }
}

#[kernel(workgroup_size = 64)]
fn print_f16(a: &[f16], out: &mut [u32]) {
    let i = global_id().x;
    if i < a.len() {
        let v = F16Vec2::new(a[i], a[i] * a[i]);
        println!("{} {:?} {:.2}", a[i], v, a[i]);
        out[i] = 1;
    }
}

/// The wide types, where the device has them (each needs a feature).
#[test]
fn wide_types_print_as_rust_prints_them() {
    lines();
    let a: Vec<i64> = vec![-5_000_000_000, 7, i64::MIN];
    let b: Vec<u64> = vec![u64::MAX, 1 << 40, 3];
    let h: Vec<f16> = [0.5f32, -2.25, 65504.0].iter().map(|x| f16::from_f32(*x)).collect();
    let mut ran = Vec::new();
    for device in [Device::cpu(), gpu()] {
        let mut out = Buffer::<u32>::zeroed(&device, 3).unwrap();
        let (ba, bb) = (Buffer::from_slice(&device, &a).unwrap(), Buffer::from_slice(&device, &b).unwrap());
        match print_i64::launch(&device, 3, &ba, &bb, &mut out) {
            Err(LaunchError::MissingFeature { .. }) => continue,
            r => r.unwrap(),
        }
        out.read().unwrap();
        ran.push("i64");
        if let Ok(bh) = Buffer::from_slice(&device, &h) {
            match print_f16::launch(&device, 3, &bh, &mut out) {
                Err(LaunchError::MissingFeature { .. }) => continue,
                r => r.unwrap(),
            }
            out.read().unwrap();
            ran.push("f16");
        }
    }
    // The CPU executor has every type; the GPU those of its features.
    assert!(ran.contains(&"i64") && ran.contains(&"f16"), "{ran:?}");
    eprintln!("wide types printed on: {ran:?}");
    let wide = take("print_i64");
    for i in 0..3 {
        let line = format!("[print_i64 ({i}, 0, 0)] {} {:x} {:?}", a[i], b[i], a[i] as f64 * 0.5);
        assert_eq!(
            wide.iter().filter(|l| **l == line).count(),
            ran.iter().filter(|r| **r == "i64").count(),
            "{line}\n{wide:#?}"
        );
    }
    let halves = take("print_f16");
    for (i, x) in h.iter().enumerate() {
        let v = onekernel::F16Vec2::new(*x, *x * *x);
        let line = format!("[print_f16 ({i}, 0, 0)] {} {:?} {:.2}", x, v, x);
        assert_eq!(
            halves.iter().filter(|l| **l == line).count(),
            ran.iter().filter(|r| **r == "f16").count(),
            "{line}\n{halves:#?}"
        );
    }
}

#[kernel(workgroup_size = 64)]
fn panic_between_barriers(a: &[u32], out: &mut [u32]) {
    let tile = shared::<[u32; 64]>();
    let t = thread_id().x;
    let i = global_id().x;
    tile[t] = a[i];
    workgroup_barrier();
    assert!(tile[t] != 13, "thirteen at {}", i);
    workgroup_barrier();
    out[i] = tile[63 - t];
}

/// A panic in a kernel with barriers: the other invocations of the
/// workgroup go on past the barriers (see docs/semantics.md).
#[test]
fn a_panic_between_barriers_ends_the_launch_with_its_error() {
    let data: Vec<u32> = (0..256).map(|i| if i == 77 { 13 } else { i + 100 }).collect();
    for device in [Device::cpu(), gpu()] {
        let f = |d: &Device, a: &Buffer<u32>, o: &mut Buffer<u32>| panic_between_barriers::launch(d, a.len(), a, o);
        let e = launch_panic(&device, f, &data);
        assert_eq!(panic_of(&e).1, "thirteen at 77", "{e}");
        assert_eq!(panic_of(&e).2, [77, 0, 0]);
    }
}

/// The WGSL of a printing kernel, and every module of it valid
/// (`spirv-val`, naga's re-parse).
#[test]
fn printing_kernels_wgsl_and_spirv() {
    insta::assert_snapshot!("print_loop_wgsl", print_loop::WGSL);
    insta::assert_snapshot!("print_helpers_wgsl", halve_with_helpers::WGSL);
    for (name, k) in [
        ("print_values", &print_values::KERNEL),
        ("check_eq", &check_eq::KERNEL),
        ("check_plain", &check_plain::KERNEL),
        ("print_loop", &print_loop::KERNEL),
        ("print_i64", &print_i64::KERNEL),
        ("print_f16", &print_f16::KERNEL),
        ("print_hits", &shapes::print_hits::KERNEL),
        ("panic_between_barriers", &panic_between_barriers::KERNEL),
        ("halve_with_helpers", &halve_with_helpers::KERNEL),
    ] {
        crate::shader_checks::every_module(name, k);
    }
}
