//! vector_add through the DSL against hand-written baselines, in one run:
//!
//! * GPU: the `#[kernel]` version against the same kernel written by hand in
//!   WGSL and dispatched with raw wgpu (`Device::run_compute_pass`), on the
//!   same buffers. Kernel time from the GPU's timestamps (`Device::time`,
//!   which has the GPU write one at the start and one at the end of each
//!   launch): the two alternate seven times, each a batch of launches whose
//!   mean is taken, and each reports the median of its seven means.
//! * CPU: the CPU executor against hand-written rayon loops (wall clock,
//!   best of several runs): the idiomatic zipped-slices loop, which LLVM
//!   vectorises, and the same loop indexed the way a kernel is written.
//!
//! * Both: the `#[kernel]` adding `Vec4` elements (glam; WGSL `vec4<f32>`),
//!   a quarter as many invocations over the same bytes.
//!
//! `cargo bench --bench vector_add` (add `-- --cpu` or `-- --gpu` for one
//! half; `KERNEL_BENCH_MAX_LOG4=10` caps the size at 4^10 = 1 Mi).
//! Prints a Markdown table.

mod common;
use common::{best_of, median};

use onekernel::prelude::*;
use onekernel::timing::Clock;
use onekernel::wgpu;
use rayon::prelude::*;

#[kernel(workgroup_size = 256)]
fn vector_add(a: &[f32], b: &[f32], out: &mut [f32]) {
    let i = global_id().x;
    if i < out.len() {
        out[i] = a[i] + b[i];
    }
}

/// The same sum with four lanes per invocation.
#[kernel(workgroup_size = 256)]
fn vector_add_vec4(a: &[Vec4], b: &[Vec4], out: &mut [Vec4]) {
    let i = global_id().x;
    if i < out.len() {
        out[i] = a[i] + b[i];
    }
}

/// The baseline: what a person would write by hand, folding long grids into
/// 2-D rows.
const HAND_WGSL: &str = r#"
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * 256u;
    if i < arrayLength(&out) {
        out[i] = a[i] + b[i];
    }
}
"#;

fn sizes() -> Vec<usize> {
    let max_log4: u32 = std::env::var("KERNEL_BENCH_MAX_LOG4").ok().and_then(|v| v.parse().ok()).unwrap_or(13);
    (5..=max_log4).map(|k| 4usize.pow(k)).collect()
}

fn label(n: usize) -> String {
    if n >= 1 << 20 {
        format!("{} Mi", n >> 20)
    } else {
        format!("{} Ki", n >> 10)
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let want_cpu = !args.iter().any(|a| a == "--gpu");
    let want_gpu = !args.iter().any(|a| a == "--cpu");
    if want_gpu {
        gpu_bench();
    }
    if want_cpu {
        cpu_bench();
    }
}

fn gpu_bench() {
    let device = Device::gpu().expect("the GPU benchmark needs an adapter");
    let (wdev, _) = device.wgpu().expect("gpu");
    assert!(wdev.features().contains(wgpu::Features::TIMESTAMP_QUERY), "timestamp queries are needed to time kernels");
    let hand_module = wdev.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("hand"),
        source: wgpu::ShaderSource::Wgsl(HAND_WGSL.into()),
    });
    let hand = wdev.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some("hand"),
        layout: None,
        module: &hand_module,
        entry_point: Some("main"),
        compilation_options: Default::default(),
        cache: None,
    });
    println!("GPU: {}\n", device.name());
    println!("| n | DSL (GB/s) | hand-written WGSL (GB/s) | DSL / hand | DSL, `Vec4` elements (GB/s) |");
    println!("|---|---|---|---|---|");
    for n in sizes() {
        let a: Vec<f32> = (0..n).map(|i| i as f32).collect();
        let a_buf = Buffer::from_slice(&device, &a).unwrap();
        let b_buf = Buffer::from_slice(&device, &a).unwrap();
        let mut out = Buffer::<f32>::zeroed(&device, n).unwrap();
        let a4: Vec<Vec4> = a.chunks(4).map(Vec4::from_slice).collect();
        let (a4_buf, b4_buf) = (Buffer::from_slice(&device, &a4).unwrap(), Buffer::from_slice(&device, &a4).unwrap());
        let mut out4 = Buffer::<Vec4>::zeroed(&device, n / 4).unwrap();
        let hand_bg = wdev.create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &hand.get_bind_group_layout(0),
            entries: &[
                wgpu::BindGroupEntry { binding: 0, resource: a_buf.wgpu_buffer().unwrap().as_entire_binding() },
                wgpu::BindGroupEntry { binding: 1, resource: b_buf.wgpu_buffer().unwrap().as_entire_binding() },
                wgpu::BindGroupEntry { binding: 2, resource: out.wgpu_buffer().unwrap().as_entire_binding() },
            ],
        });
        // The hand-written kernel folds a long grid into rows of nearly
        // equal length (the least padding a simple 2-D fold gives; its
        // `i < arrayLength` check skips the few padding threads).
        let groups = n.div_ceil(256) as u32;
        let rows = groups.div_ceil(65535);
        let hand_groups = [groups.div_ceil(rows), rows, 1];
        let hand_launch = || {
            device
                .run_compute_pass("hand", |pass| {
                    pass.set_pipeline(&hand);
                    pass.set_bind_group(0, &hand_bg, &[]);
                    pass.dispatch_workgroups(hand_groups[0], hand_groups[1], hand_groups[2]);
                })
                .unwrap()
        };
        // Mean kernel time of `reps` launches of `launch`, from the GPU's
        // timestamps.
        let mean_of = |reps: usize, launch: &mut dyn FnMut()| {
            let ((), timing) = device.time(|| (0..reps).for_each(|_| launch())).unwrap();
            assert_eq!(timing.clock, Clock::GpuTimestamps);
            timing.mean().unwrap().as_secs_f64()
        };
        let reps = ((1u64 << 28) / n as u64).clamp(10, 200) as usize;
        let mut dsl_launch = || vector_add::launch(&device, n, &a_buf, &b_buf, &mut out).unwrap();
        let mut hand_launch = hand_launch;
        let mut vec4_launch = || vector_add_vec4::launch(&device, n / 4, &a4_buf, &b4_buf, &mut out4).unwrap();
        // Warm up all three, then alternate seven times and take each
        // median, so that clock and cache state hit them alike.
        mean_of(2, &mut dsl_launch);
        mean_of(2, &mut hand_launch);
        mean_of(2, &mut vec4_launch);
        let (mut dsl_runs, mut hand_runs, mut vec4_runs) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..7 {
            dsl_runs.push(mean_of(reps, &mut dsl_launch));
            hand_runs.push(mean_of(reps, &mut hand_launch));
            vec4_runs.push(mean_of(reps, &mut vec4_launch));
        }
        let (t_dsl, t_hand, t_vec4) = (median(dsl_runs), median(hand_runs), median(vec4_runs));
        let bytes = 12.0 * n as f64;
        println!(
            "| {} | {:.1} | {:.1} | {:.3} | {:.1} |",
            label(n),
            bytes / t_dsl * 1e-9,
            bytes / t_hand * 1e-9,
            t_hand / t_dsl,
            bytes / t_vec4 * 1e-9
        );
        let got = out.read().unwrap();
        assert!(got.iter().enumerate().all(|(i, v)| *v == 2.0 * i as f32), "wrong result at n = {n}");
        let got4: Vec<f32> = out4.read().unwrap().iter().flat_map(|v| v.to_array()).collect();
        assert_eq!(got4, got, "the Vec4 kernel disagrees at n = {n}");
    }
    println!();
}

fn cpu_bench() {
    let device = Device::cpu();
    println!("CPU: {}\n", device.name());
    println!("| n | CPU executor (GB/s) | rayon, zipped slices (GB/s) | executor / zipped | rayon, indexed `a[i] + b[i]` (GB/s) | executor / indexed | CPU executor, `Vec4` elements (GB/s) |");
    println!("|---|---|---|---|---|---|---|");
    for n in sizes() {
        let a: Vec<f32> = (0..n).map(|i| i as f32).collect();
        let a_buf = Buffer::from_slice(&device, &a).unwrap();
        let b_buf = Buffer::from_slice(&device, &a).unwrap();
        let mut out = Buffer::<f32>::zeroed(&device, n).unwrap();
        let runs = ((1usize << 26) / n).clamp(5, 200);
        // The fastest launch, on the wall clock (the CPU executor's clock).
        let ((), timing) = device
            .time(|| (0..runs).for_each(|_| vector_add::launch(&device, n, &a_buf, &b_buf, &mut out).unwrap()))
            .unwrap();
        let t_dsl = timing.min().unwrap().as_secs_f64();
        let a4: Vec<Vec4> = a.chunks(4).map(Vec4::from_slice).collect();
        let (a4_buf, b4_buf) = (Buffer::from_slice(&device, &a4).unwrap(), Buffer::from_slice(&device, &a4).unwrap());
        let mut out4 = Buffer::<Vec4>::zeroed(&device, n / 4).unwrap();
        let ((), timing) = device
            .time(|| {
                (0..runs).for_each(|_| vector_add_vec4::launch(&device, n / 4, &a4_buf, &b4_buf, &mut out4).unwrap())
            })
            .unwrap();
        let t_vec4 = timing.min().unwrap().as_secs_f64();
        let (b, mut plain) = (a.clone(), vec![0.0f32; n]);
        let t_rayon = best_of(runs, || {
            plain.par_chunks_mut(4096).zip(a.par_chunks(4096)).zip(b.par_chunks(4096)).for_each(|((o, x), y)| {
                for ((o, x), y) in o.iter_mut().zip(x).zip(y) {
                    *o = x + y;
                }
            })
        });
        // The same loop written the way the kernel is: indexing, with
        // Rust's bounds checks (which keep LLVM from vectorising it).
        let mut indexed = vec![0.0f32; n];
        let t_indexed = best_of(runs, || {
            indexed.par_chunks_mut(4096).enumerate().for_each(|(c, o)| {
                let base = c * 4096;
                for (j, o) in o.iter_mut().enumerate() {
                    let i = base + j;
                    if i < n {
                        *o = a[i] + b[i];
                    }
                }
            })
        });
        assert_eq!(out.read().unwrap(), plain, "CPU executor and rayon disagree at n = {n}");
        assert_eq!(indexed, plain);
        let got4: Vec<f32> = out4.read().unwrap().iter().flat_map(|v| v.to_array()).collect();
        assert_eq!(got4, plain, "the Vec4 kernel disagrees at n = {n}");
        let bytes = 12.0 * n as f64;
        let gbs = |t: f64| bytes / t * 1e-9;
        println!(
            "| {} | {:.1} | {:.1} | {:.3} | {:.1} | {:.3} | {:.1} |",
            label(n),
            gbs(t_dsl),
            gbs(t_rayon),
            t_rayon / t_dsl,
            gbs(t_indexed),
            t_indexed / t_dsl,
            gbs(t_vec4)
        );
    }
    println!();
}
