//! Workgroup cooperation on both paths: shared memory, barriers, atomics.

mod kernels;
mod phase_kernels;
mod race_kernels;
mod tiles;

use onekernel::prelude::*;
use std::sync::OnceLock;

fn gpu() -> &'static Device {
    static GPU: OnceLock<Device> = OnceLock::new();
    GPU.get_or_init(|| Device::gpu().unwrap_or_else(|e| panic!("GPU tests need a GPU adapter (see .ci/run): {e}")))
}

fn on_both<R>(f: impl Fn(&Device) -> R) -> (R, R) {
    (f(&Device::cpu()), f(gpu()))
}

#[test]
fn block_sums() {
    for n in [1usize, 255, 256, 1000, 256 * 300 + 7] {
        let input: Vec<f32> = (0..n).map(|i| (i % 17) as f32).collect();
        let blocks = n.div_ceil(256);
        let want: Vec<f32> = input.chunks(256).map(|c| c.iter().sum()).collect();
        let (c, g) = on_both(|d| {
            let a = Buffer::from_slice(d, &input).unwrap();
            let mut sums = Buffer::zeroed(d, blocks).unwrap();
            kernels::block_sum::launch(d, n, &a, &mut sums).unwrap();
            sums.read().unwrap()
        });
        assert_eq!(c, want, "cpu n={n}");
        assert_eq!(g, want, "gpu n={n}");
    }
}

/// A kernel that declares more shared memory than WebGPU's 16 KiB runs on
/// the CPU and on a GPU that has it; a GPU with less refuses the launch
/// with an error naming the kernel and both sizes.
#[test]
fn declared_shared_memory_is_checked_against_the_device() {
    let n = 1000;
    let want: Vec<u32> = (0..n).map(|i| (20479 - (i % 256) * 80 + i / 256) as u32).collect();
    let run = |d: &Device| {
        let mut out = Buffer::zeroed(d, n).unwrap();
        kernels::big_shared::launch(d, n, &mut out).map(|()| out.read().unwrap())
    };
    assert_eq!(run(&Device::cpu()).unwrap(), want);
    let limit = gpu().wgpu().map(|(d, _)| d.limits().max_compute_workgroup_storage_size).unwrap();
    match run(gpu()) {
        Ok(got) => {
            assert!(limit >= 81920, "launched with {limit} bytes of workgroup memory");
            assert_eq!(got, want);
        }
        Err(e @ onekernel::LaunchError::SharedMemoryTooLarge { bytes: 81920, .. }) => {
            assert!(limit < 81920, "refused though the device has {limit} bytes");
            assert!(e.to_string().contains("kernel `big_shared`"), "{e}");
        }
        Err(e) => panic!("{e}"),
    }
}

#[test]
fn histogram_with_atomics() {
    let n = 100_000;
    let values: Vec<u32> = (0..n).map(|i| ((i * 2654435761u64 as usize) >> 7) as u32).collect();
    let mut want = vec![0u32; 64];
    for v in &values {
        want[(v % 64) as usize] += 1;
    }
    let (c, g) = on_both(|d| {
        let v = Buffer::from_slice(d, &values).unwrap();
        let mut counts = Buffer::zeroed(d, 64).unwrap();
        kernels::histogram::launch(d, n, &v, &mut counts).unwrap();
        counts.read().unwrap()
    });
    assert_eq!(c, want);
    assert_eq!(g, want);
}

#[test]
fn transpose_2d() {
    for (w, h) in [(16usize, 16usize), (37, 21), (1, 50)] {
        let input: Vec<f32> = (0..w * h).map(|i| i as f32).collect();
        let mut want = vec![0.0; w * h];
        for y in 0..h {
            for x in 0..w {
                want[x * h + y] = input[y * w + x];
            }
        }
        let (c, g) = on_both(|d| {
            let a = Buffer::from_slice(d, &input).unwrap();
            let mut out = Buffer::zeroed(d, w * h).unwrap();
            kernels::transpose::launch(d, Grid::threads([w, h]), &a, &mut out, w as u32, h as u32).unwrap();
            out.read().unwrap()
        });
        assert_eq!(c, want, "cpu {w}x{h}");
        assert_eq!(g, want, "gpu {w}x{h}");
    }
}

#[test]
fn atomic_methods() {
    let n = 100;
    let (c, g) = on_both(|d| {
        let mut cells = Buffer::from_slice(d, &[0i32, 0, i32::MIN, i32::MAX, 0, -1, 0, 0, 0, 0, 5]).unwrap();
        let mut olds = Buffer::zeroed(d, n).unwrap();
        kernels::atomic_ops::launch(d, n, &mut cells, &mut olds).unwrap();
        (cells.read().unwrap(), olds.read().unwrap())
    });
    let (cells, olds) = (&c.0, &c.1);
    let sum_k: i32 = (0..n as i32).map(|i| i % 4).sum();
    assert_eq!(cells[0], sum_k);
    assert_eq!(cells[1], -(n as i32));
    assert_eq!(cells[2], n as i32 - 1);
    assert_eq!(cells[3], -(n as i32 - 1));
    assert_eq!(cells[6], (0..n as i32).fold(0, |a, b| a ^ b));
    assert_eq!(cells[7] - 1, cells[8], "the compare_exchange winner stored its index");
    assert!(olds.iter().all(|&o| o & 0b11 == 0b11 && o >> 3 == 5));
    // Order-independent results agree with the GPU.
    for k in [0, 1, 2, 3, 4, 5, 6] {
        assert_eq!(c.0[k], g.0[k], "cell {k}");
    }
    assert_eq!(g.0[7] - 1, g.0[8]);
}

#[path = "../support/shader_checks.rs"]
mod shader_checks;

/// Readable WGSL for every cooperation kernel, SPIR-V that passes
/// `spirv-val`, and WGSL that re-parses.
mod shaders {
    use super::{kernels, shader_checks};

    macro_rules! shaders {
        ($($k:ident),* $(,)?) => {$(
            #[test]
            fn $k() {
                insta::assert_snapshot!(stringify!($k), kernels::$k::WGSL);
                shader_checks::every_module(stringify!($k), &kernels::$k::KERNEL);
            }
        )*};
    }

    shaders!(
        block_sum,
        histogram,
        transpose,
        atomic_ops,
        subgroup_block_sum,
        subgroup_butterfly,
        subgroup_lanes,
        uniform_rounds,
        lane_ids
    );
}

/// The subgroup sizes a device may use: 32 on the CPU executor, the GPU's
/// reported range otherwise.
fn subgroup_range(d: &Device) -> (u32, u32) {
    d.subgroup_sizes().unwrap_or((32, 32))
}

#[test]
fn subgroup_block_sums() {
    for n in [1usize, 47, 48, 1000, 48 * 300 + 7] {
        let input: Vec<i32> = (0..n).map(|i| (i % 23) as i32 - 11).collect();
        let want: Vec<i32> = input.chunks(48).map(|c| c.iter().sum()).collect();
        let (c, g) = on_both(|d| {
            let a = Buffer::from_slice(d, &input).unwrap();
            let mut sums = Buffer::<i32>::zeroed(d, want.len()).unwrap();
            kernels::subgroup_block_sum::launch(d, n, &a, &mut sums).unwrap();
            sums.read().unwrap()
        });
        assert_eq!(c, want, "cpu n={n}");
        assert_eq!(g, want, "gpu n={n}");
    }
}

#[test]
fn subgroup_butterfly_agrees_with_subgroup_add() {
    let n = 64 * 20 + 5;
    let input: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(2654435761) >> 3).collect();
    let want_max: Vec<u32> = input.chunks(64).map(|c| *c.iter().max().unwrap()).collect();
    let (c, g) = on_both(|d| {
        let a = Buffer::from_slice(d, &input).unwrap();
        let mut agree = Buffer::zeroed(d, n).unwrap();
        let mut max = Buffer::zeroed(d, want_max.len()).unwrap();
        kernels::subgroup_butterfly::launch(d, n, &a, &mut agree, &mut max).unwrap();
        (agree.read().unwrap(), max.read().unwrap())
    });
    for (name, (agree, max)) in [("cpu", c), ("gpu", g)] {
        assert!(agree.iter().all(|&a| a == 3), "{name}: {:?}", &agree[..8]);
        assert_eq!(max, want_max, "{name}");
    }
}

#[test]
fn subgroup_lanes_broadcast_shuffle_ballot() {
    let n = 64 * 3 + 10;
    for d in [Device::cpu(), gpu().clone()] {
        let z = || Buffer::<u32>::zeroed(&d, n).unwrap();
        let (mut lanes, mut sizes, mut first, mut next, mut down) = (z(), z(), z(), z(), z());
        let mut ballots = Buffer::<UVec4>::zeroed(&d, n).unwrap();
        let mut evens = Buffer::<UVec4>::zeroed(&d, n).unwrap();
        kernels::subgroup_lanes::launch(
            &d,
            n,
            &mut lanes,
            &mut sizes,
            &mut first,
            &mut next,
            &mut down,
            &mut ballots,
            &mut evens,
        )
        .unwrap();
        let [lanes, sizes, first, next, down] = [lanes, sizes, first, next, down].map(|b| b.read().unwrap());
        let [ballots, evens] = [ballots, evens].map(|b| b.read().unwrap());
        let size = sizes[0];
        let (lo, hi) = subgroup_range(&d);
        assert!(size.is_power_of_two() && (lo..=hi).contains(&size), "{}: size {size} in {lo}..={hi}", d.name());
        assert!(sizes.iter().all(|&s| s == size));
        eprintln!("{}: subgroup size {size}", d.name());
        // The 128-bit mask of the lanes of a subgroup of `s` for which
        // `holds(lane)`, as WGSL's `vec4<u32>`: lane `l` is bit `l % 32`
        // of word `l / 32`.
        let mask = |s: usize, holds: &dyn Fn(usize) -> bool| {
            let mut words = [0u32; 4];
            for l in (0..s).filter(|&l| holds(l)) {
                words[l / 32] |= 1 << (l % 32);
            }
            UVec4::from_array(words)
        };
        for i in 0..n {
            let (t, lane) = (i % 64, lanes[i] as usize);
            let s = size as usize;
            // Subgroups are consecutive threads of the block.
            assert_eq!(lane, t % s, "{}: lane of {i}", d.name());
            let base = i - lane;
            // Lanes past the end of the launch still take part: the
            // block is whole.
            assert_eq!(first[i] as usize, base, "broadcast at {i}");
            assert_eq!(next[i] as usize, base + (lane + 1) % s, "shuffle at {i}");
            if lane + 1 < s {
                assert_eq!(down[i] as usize, i + 1, "shuffle_down at {i}");
            }
            assert_eq!(ballots[i], mask(s, &|l| (base + l) % 3 == 0), "{}: ballot at {i}", d.name());
            assert_eq!(evens[i], mask(s, &|l| l % 2 == 0), "{}: even lanes' ballot at {i}", d.name());
        }
        // The CPU's subgroups have 32 lanes: the whole mask is in `x`.
        if d.is_cpu() {
            assert_eq!(evens[0], UVec4::new(0x5555_5555, 0, 0, 0));
        }
    }
}

#[test]
fn uniform_load_bounds_a_loop_with_barriers() {
    let counts = [0u32, 1, 5, 3];
    let n = 32 * counts.len();
    let want: Vec<u32> = (0..n)
        .map(|i| {
            let r = counts[i / 32];
            let sum: u32 = (0..r).sum();
            if i % 32 == 0 {
                sum + r
            } else {
                sum
            }
        })
        .collect();
    let (c, g) = on_both(|d| {
        let k = Buffer::from_slice(d, &counts).unwrap();
        let mut out = Buffer::<u32>::zeroed(d, n).unwrap();
        kernels::uniform_rounds::launch(d, n, &k, &mut out).unwrap();
        out.read().unwrap()
    });
    assert_eq!(c, want);
    assert_eq!(g, want);
}

#[test]
fn subgroup_kernels_need_the_feature() {
    use onekernel::{abi::Features, LaunchError};
    assert!(kernels::subgroup_block_sum::KERNEL.features.contains(Features::SUBGROUP));
    assert!(!kernels::uniform_rounds::KERNEL.features.contains(Features::SUBGROUP));
    let d = Device::gpu_without(Features::SUBGROUP).unwrap();
    assert_eq!(d.subgroup_sizes(), None);
    let a = Buffer::from_slice(&d, &[1i32; 48]).unwrap();
    let mut sums = Buffer::<i32>::zeroed(&d, 1).unwrap();
    let err = kernels::subgroup_block_sum::launch(&d, 48, &a, &mut sums).unwrap_err();
    assert!(
        matches!(err, LaunchError::MissingFeature { kernel: "subgroup_block_sum", missing: Features::SUBGROUP, .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("kernel `subgroup_block_sum` needs the device feature SUBGROUP"), "{err}");
    // Kernels without subgroups still run there.
    let k = Buffer::from_slice(&d, &[2u32]).unwrap();
    let mut out = Buffer::<u32>::zeroed(&d, 32).unwrap();
    kernels::uniform_rounds::launch(&d, 32, &k, &mut out).unwrap();
    assert_eq!(out.read().unwrap()[1], 1);
}

#[test]
fn lane_ids_without_collectives() {
    use onekernel::abi::Features;
    // Not a collective: the fast path, not the cooperative executor.
    assert_eq!(format!("{:?}", kernels::lane_ids::KERNEL.cpu), "OwnElement { chunk_loop: false }");
    assert!(kernels::lane_ids::KERNEL.features.contains(Features::SUBGROUP));
    let n = 64 * 2 + 3;
    for d in [Device::cpu(), gpu().clone()] {
        let mut out = Buffer::<u32>::zeroed(&d, n).unwrap();
        kernels::lane_ids::launch(&d, n, &mut out).unwrap();
        let out = out.read().unwrap();
        let size = out[0] / 1000;
        let (lo, hi) = subgroup_range(&d);
        assert!((lo..=hi).contains(&size), "{}: size {size}", d.name());
        for (i, v) in out.iter().enumerate() {
            assert_eq!(*v, (i % 64) as u32 % size + 1000 * size, "{}: {i}", d.name());
        }
    }
}

/// The race detector (`Device::cpu_race_checked`): kernels that race on
/// purpose are reported with the element, both invocations and the user's
/// lines; correct kernels pass and compute what the plain executor does.
mod races {
    use super::{kernels, race_kernels};
    use onekernel::prelude::*;
    use onekernel::{LaunchError, RaceKind};

    /// The line of the first line of `race_kernels.rs` containing `needle`
    /// (after the line containing `after`), as `kernels.rs:LINE:`.
    fn line_of(after: &str, needle: &str) -> String {
        let src = include_str!("race_kernels.rs");
        let start = src.lines().position(|l| l.contains(after)).expect("anchor");
        let line = src.lines().skip(start).position(|l| l.contains(needle)).expect("needle") + start + 1;
        format!("race_kernels.rs:{line}:")
    }

    fn race(err: LaunchError) -> Box<onekernel::DataRace> {
        match err {
            LaunchError::DataRace { race, .. } => race,
            other => panic!("expected a data race, got {other}"),
        }
    }

    fn matrices(n: usize) -> (Vec<f32>, Vec<f32>) {
        ((0..n * n).map(|i| (i % 7) as f32).collect(), (0..n * n).map(|i| (i % 5) as f32 - 2.0).collect())
    }

    #[test]
    fn tiled_matmul_without_its_second_barrier_races() {
        let d = Device::cpu_race_checked();
        let n = 32;
        let (a, b) = matrices(n);
        let (a, b) = (Buffer::from_slice(&d, &a).unwrap(), Buffer::from_slice(&d, &b).unwrap());
        let mut c = Buffer::zeroed(&d, n * n).unwrap();
        let err = race_kernels::matmul_missing_barrier::launch(&d, Grid::threads([n, n]), &a, &b, &mut c, n as u32)
            .unwrap_err();
        let msg = err.to_string();
        assert_eq!(err.kernel(), "matmul_missing_barrier");
        let race = race(err);
        // A fast invocation's store of the next step's tile element
        // overwrites one a slower invocation still reads.
        assert_eq!(race.kind, RaceKind::ReadWrite, "{msg}");
        assert!(race.shared && race.element.starts_with("a_tile["), "{msg}");
        let other = race.other.as_ref().unwrap();
        assert_ne!(race.access.invocation, other.invocation);
        assert_eq!(race.access.workgroup, other.workgroup);
        let store = line_of("fn matmul_missing_barrier", "a_tile[ty][tx] =");
        let load = line_of("fn matmul_missing_barrier", "acc += a_tile");
        let lines = [&race.access.location, &other.location];
        assert!(lines.iter().any(|l| l.contains(&store)) && lines.iter().any(|l| l.contains(&load)), "{msg}");
        assert!(msg.starts_with("kernel `matmul_missing_barrier`: data race: shared-memory element `a_tile["), "{msg}");
        assert!(msg.contains("with no barrier between them"), "{msg}");
    }

    #[test]
    fn tiled_matmul_with_both_barriers_is_race_free_and_exact() {
        let n = 40;
        let (a, b) = matrices(n);
        let run = |d: &Device| {
            let (a, b) = (Buffer::from_slice(d, &a).unwrap(), Buffer::from_slice(d, &b).unwrap());
            let mut c = Buffer::zeroed(d, n * n).unwrap();
            race_kernels::matmul_tiled::launch(d, Grid::threads([n, n]), &a, &b, &mut c, n as u32).unwrap();
            c.read().unwrap()
        };
        let mut want = vec![0.0f32; n * n];
        for i in 0..n {
            for j in 0..n {
                want[i * n + j] = (0..n).map(|k| a[i * n + k] * b[k * n + j]).sum();
            }
        }
        assert_eq!(run(&Device::cpu_race_checked()), want);
        assert_eq!(run(&Device::cpu()), want);
    }

    #[test]
    fn reduction_without_its_loop_barrier_races() {
        let d = Device::cpu_race_checked();
        let input: Vec<f32> = (0..128).map(|i| i as f32).collect();
        let a = Buffer::from_slice(&d, &input).unwrap();
        let mut sums = Buffer::zeroed(&d, 2).unwrap();
        let err = race_kernels::reduction_missing_barrier::launch(&d, 128, &a, &mut sums).unwrap_err();
        let msg = err.to_string();
        let race = race(err);
        assert_eq!((race.kind, race.shared), (RaceKind::ReadWrite, true), "{msg}");
        // Thread t reads partial[t + stride], which thread t + stride wrote
        // in the same phase (the same line: `partial[t] += partial[t + stride]`).
        let line = line_of("fn reduction_missing_barrier", "partial[t] += partial[t + stride]");
        assert!(race.access.location.contains(&line), "{msg}");
        assert!(race.other.as_ref().unwrap().location.contains(&line), "{msg}");
        assert!(race.element.starts_with("partial["), "{msg}");
    }

    #[test]
    fn two_invocations_writing_one_output_element_race() {
        let d = Device::cpu_race_checked();
        let mut out = Buffer::<u32>::zeroed(&d, 1).unwrap();
        let err = race_kernels::all_write_one::launch(&d, 128, &mut out).unwrap_err();
        let msg = err.to_string();
        let race = race(err);
        assert_eq!((race.kind, race.shared, race.element.as_str()), (RaceKind::WriteWrite, false, "out[0]"), "{msg}");
        let other = race.other.as_ref().unwrap();
        assert_eq!((other.invocation.x, race.access.invocation.x), (0, 1), "{msg}");
        assert!(other.write && race.access.write);
        assert!(race.access.location.contains(&line_of("fn all_write_one", "out[0] =")), "{msg}");
        // The plain executor runs it without complaint (the GPU would too).
        let plain = Device::cpu();
        let mut out = Buffer::<u32>::zeroed(&plain, 1).unwrap();
        race_kernels::all_write_one::launch(&plain, 128, &mut out).unwrap();
    }

    #[test]
    fn reading_shared_memory_nobody_wrote_is_reported() {
        let d = Device::cpu_race_checked();
        let mut out = Buffer::<f32>::zeroed(&d, 64).unwrap();
        let err = race_kernels::reads_unwritten_shared::launch(&d, 64, &mut out).unwrap_err();
        let msg = err.to_string();
        let race = race(err);
        assert_eq!((race.kind, race.element.as_str()), (RaceKind::UninitializedRead, "tile[63]"), "{msg}");
        assert_eq!(race.access.thread.x, 0);
        assert!(race.other.is_none());
        assert!(race.access.location.contains(&line_of("fn reads_unwritten_shared", "tile[63 - t]")), "{msg}");
        assert!(msg.contains("is read before any invocation of the workgroup wrote it"), "{msg}");
    }

    /// No false positives: the correct cooperation kernels pass the detector
    /// and give the plain executor's results.
    #[test]
    fn correct_kernels_pass() {
        let (c, p) = (Device::cpu_race_checked(), Device::cpu());
        let input: Vec<f32> = (0..1000).map(|i| (i % 17) as f32).collect();
        let sums = |d: &Device| {
            let a = Buffer::from_slice(d, &input).unwrap();
            let mut s = Buffer::zeroed(d, 4).unwrap();
            kernels::block_sum::launch(d, 1000, &a, &mut s).unwrap();
            s.read().unwrap()
        };
        assert_eq!(sums(&c), sums(&p));
        let values: Vec<u32> = (0..3000).map(|i| i * 7 % 200).collect();
        let hist = |d: &Device| {
            let v = Buffer::from_slice(d, &values).unwrap();
            let mut counts = Buffer::<u32>::zeroed(d, 64).unwrap();
            kernels::histogram::launch(d, values.len(), &v, &mut counts).unwrap();
            counts.read().unwrap()
        };
        assert_eq!(hist(&c), hist(&p));
        let (w, h) = (37usize, 21usize);
        let img: Vec<f32> = (0..w * h).map(|i| i as f32).collect();
        let transpose = |d: &Device| {
            let a = Buffer::from_slice(d, &img).unwrap();
            let mut out = Buffer::zeroed(d, w * h).unwrap();
            kernels::transpose::launch(d, Grid::threads([w, h]), &a, &mut out, w as u32, h as u32).unwrap();
            out.read().unwrap()
        };
        assert_eq!(transpose(&c), transpose(&p));
        let atomics = |d: &Device| {
            let mut cells = Buffer::from_slice(d, &[0i32; 11]).unwrap();
            let mut olds = Buffer::zeroed(d, 100).unwrap();
            kernels::atomic_ops::launch(d, 100, &mut cells, &mut olds).unwrap();
            cells.read().unwrap()[..7].to_vec()
        };
        assert_eq!(atomics(&c), atomics(&p));
    }
}

/// The kernels with barriers run on the CPU phase executor (they have a
/// phase state), on the futures executor when race-checked, on the serial
/// executor and on the GPU: all agree with plain Rust.
mod phases {
    use super::*;

    fn on_all<R: PartialEq + std::fmt::Debug>(want: &R, what: &str, f: impl Fn(&Device) -> R) {
        for d in [Device::cpu(), Device::cpu_race_checked(), Device::cpu_serial(), gpu().clone()] {
            assert_eq!(&f(&d), want, "{what} on {}", d.name());
        }
    }

    #[test]
    fn barrier_kernels_have_a_phase_body() {
        // One array per local kept across barriers: none for the tree
        // reduction (`t` is `thread_id().x` again where it is used,
        // `stride` one value per workgroup); for the tiled matmul, `tx` and
        // `ty` (bound by a tuple `let`), `row` and `col` (computed from
        // them) and `acc`; `v` (an `if`'s value) for `count_then_read`.
        let () = kernels::block_sum::cpu_phase_state();
        let (tx, _, _, _, acc): (Box<[usize; 256]>, _, _, _, Box<[f32; 256]>) =
            race_kernels::matmul_tiled::cpu_phase_state();
        assert_eq!((tx.len(), acc.len()), (256, 256));
        let (v,): (Box<[u32; 64]>,) = phase_kernels::count_then_read::cpu_phase_state();
        assert_eq!(v.len(), 64);
        // Early returns split too (`v` crosses the second barrier).
        let (v,): (Box<[u32; 32]>,) = phase_kernels::early_exits::cpu_phase_state();
        assert_eq!(v.len(), 32);
    }

    #[test]
    fn a_local_carried_across_iterations_with_barriers() {
        for (n, rounds) in [(64usize, 0u32), (64, 1), (200, 3), (1000, 5)] {
            let input: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(2654435761) >> 20).collect();
            let mut want = vec![0u32; n];
            for (block, chunk) in input.chunks(64).enumerate() {
                let mut v: Vec<u32> = (0..64).map(|t| chunk.get(t).copied().unwrap_or(0)).collect();
                for r in 0..rounds {
                    v = (0..64).map(|t| v[(t + 1) % 64].wrapping_mul(3).wrapping_add(r)).collect();
                }
                for (t, o) in want[block * 64..(block * 64 + chunk.len())].iter_mut().enumerate() {
                    *o = t as u32 * 3 + v[t];
                }
            }
            on_all(&want, &format!("rotate_rounds n={n} rounds={rounds}"), |d| {
                let a = Buffer::from_slice(d, &input).unwrap();
                let mut out = Buffer::zeroed(d, n).unwrap();
                phase_kernels::rotate_rounds::launch(d, n, &a, &mut out, rounds).unwrap();
                out.read().unwrap()
            });
        }
    }

    /// `nested_phases` in plain Rust, one workgroup of 32 at a time.
    fn nested_reference(len: usize, n: u32, mode: u32) -> Vec<u32> {
        let mut out = Vec::with_capacity(len);
        for _ in 0..len.div_ceil(32) {
            let mut acc: Vec<u32> = (0..32).collect();
            let limit = if mode > 1 { n } else { n + 1 };
            for a in 0..limit {
                for b in 0..2 {
                    let tile: Vec<u32> = acc.iter().map(|x| x + a + b).collect();
                    for (t, x) in acc.iter_mut().enumerate() {
                        *x += tile[(t + 31) % 32];
                    }
                }
            }
            if mode % 2 == 0 {
                let tile = acc.clone();
                for (t, x) in acc.iter_mut().enumerate() {
                    *x ^= tile[31 - t];
                }
            } else {
                acc.iter_mut().for_each(|x| *x = x.wrapping_mul(7));
            }
            out.extend(acc);
        }
        out.truncate(len);
        out
    }

    #[test]
    fn nested_loops_uniform_branches_and_a_late_return() {
        for (len, n, mode) in [(32usize, 0u32, 0u32), (40, 1, 1), (100, 3, 2), (96, 2, 3)] {
            let want = nested_reference(len, n, mode);
            on_all(&want, &format!("nested_phases len={len} n={n} mode={mode}"), |d| {
                let mut out = Buffer::zeroed(d, len).unwrap();
                // More threads than outputs: the last invocations return
                // after the last barrier.
                phase_kernels::nested_phases::launch(d, len + 30, &mut out, n, mode).unwrap();
                out.read().unwrap()
            });
        }
    }

    #[test]
    fn uniform_early_returns() {
        for (groups, blocks, stop) in [(3usize, 3u32, 1u32), (4, 2, 3), (5, 0, 2)] {
            let n = groups * 32;
            let mut want = vec![0u32; n];
            for (i, w) in want.iter_mut().enumerate().take(blocks as usize * 32) {
                let next = ((i % 32 + 1) % 32) as u32;
                *w = (0..stop).map(|r| r + next).sum();
            }
            on_all(&want, &format!("early_exits blocks={blocks} stop={stop}"), |d| {
                let mut out = Buffer::zeroed(d, n).unwrap();
                phase_kernels::early_exits::launch(d, n, &mut out, blocks, stop).unwrap();
                out.read().unwrap()
            });
        }
    }

    #[test]
    fn shared_atomics_counted_then_read() {
        let n = 1000;
        let values: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(2654435761) >> 13).collect();
        let mut want = vec![0u32; n];
        for (block, chunk) in values.chunks(64).enumerate() {
            // Invocations past the end count as class 0.
            let class = |t: usize| chunk.get(t).map_or(0, |v| v % 4);
            for t in 0..chunk.len() {
                want[block * 64 + t] = (0..64).filter(|u| class(*u) == class(t)).count() as u32;
            }
        }
        on_all(&want, "count_then_read", |d| {
            let v = Buffer::from_slice(d, &values).unwrap();
            let mut counts = Buffer::zeroed(d, n).unwrap();
            phase_kernels::count_then_read::launch(d, n, &v, &mut counts).unwrap();
            counts.read().unwrap()
        });
    }
}

/// The serial executor (`Device::cpu_serial`): each CPU plan (independent,
/// own-element, cooperative in phases and as futures, with atomics) runs
/// there as on the parallel executor, and in one fixed order.
mod serial {
    use super::*;

    fn plan(info: &onekernel::abi::KernelInfo) -> String {
        format!("{:?}", info.cpu)
    }

    #[test]
    fn every_plan_agrees_with_the_reference() {
        let d = Device::cpu_serial();
        assert!(d.is_cpu() && !d.is_race_checked());
        assert_eq!(d.name(), "CPU executor (serial, 1 thread)");

        // Cooperative, split into phases.
        assert_eq!(plan(&kernels::block_sum::KERNEL), "Cooperative { phased: true }");
        let n = 256 * 5 + 7;
        let input: Vec<f32> = (0..n).map(|i| (i % 17) as f32).collect();
        let want: Vec<f32> = input.chunks(256).map(|c| c.iter().sum()).collect();
        let a = Buffer::from_slice(&d, &input).unwrap();
        let mut sums = Buffer::zeroed(&d, want.len()).unwrap();
        kernels::block_sum::launch(&d, n, &a, &mut sums).unwrap();
        assert_eq!(sums.read().unwrap(), want);

        // Cooperative, as futures (subgroup collectives).
        assert_eq!(plan(&kernels::subgroup_block_sum::KERNEL), "Cooperative { phased: false }");
        let n = 48 * 7 + 5;
        let input: Vec<i32> = (0..n).map(|i| (i % 23) as i32 - 11).collect();
        let want: Vec<i32> = input.chunks(48).map(|c| c.iter().sum()).collect();
        let a = Buffer::from_slice(&d, &input).unwrap();
        let mut sums = Buffer::<i32>::zeroed(&d, want.len()).unwrap();
        kernels::subgroup_block_sum::launch(&d, n, &a, &mut sums).unwrap();
        assert_eq!(sums.read().unwrap(), want);

        // Shared and storage atomics.
        let n = 10_000;
        let values: Vec<u32> = (0..n).map(|i| ((i * 2654435761u64 as usize) >> 7) as u32).collect();
        let mut want = vec![0u32; 64];
        for v in &values {
            want[(v % 64) as usize] += 1;
        }
        let v = Buffer::from_slice(&d, &values).unwrap();
        let mut counts = Buffer::zeroed(&d, 64).unwrap();
        kernels::histogram::launch(&d, n, &v, &mut counts).unwrap();
        assert_eq!(counts.read().unwrap(), want);

        // Own-element, on a 1-D grid (the parallel executor would partition
        // it).
        assert_eq!(plan(&kernels::lane_ids::KERNEL), "OwnElement { chunk_loop: false }");
        let n = 64 * 2 + 3;
        let mut out = Buffer::<u32>::zeroed(&d, n).unwrap();
        kernels::lane_ids::launch(&d, n, &mut out).unwrap();
        let want: Vec<u32> = (0..n).map(|i| (i % 64) as u32 % 32 + 1000 * 32).collect();
        assert_eq!(out.read().unwrap(), want);
    }

    /// Every invocation writes `out[0]`: on the serial executor the last
    /// one in order always wins (a race anywhere else).
    #[test]
    fn invocations_run_in_order() {
        assert_eq!(plan(&race_kernels::all_write_one::KERNEL), "Independent");
        let d = Device::cpu_serial();
        for n in [1usize, 64, 100_000] {
            let mut out = Buffer::<u32>::zeroed(&d, 1).unwrap();
            race_kernels::all_write_one::launch(&d, n, &mut out).unwrap();
            // The grid is rounded up to whole workgroups of 64.
            assert_eq!(out.read().unwrap(), [(n.div_ceil(64) * 64 - 1) as u32], "n={n}");
        }
    }

    /// A panic in a kernel is the launch's error, as on every executor.
    #[test]
    fn a_panic_is_an_error() {
        let d = Device::cpu_serial();
        let a = Buffer::from_slice(&d, &[1.0f32; 300]).unwrap();
        // Too few sums for the blocks: an out-of-bounds store.
        let mut sums = Buffer::<f32>::zeroed(&d, 1).unwrap();
        let err = kernels::block_sum::launch(&d, 300, &a, &mut sums).unwrap_err();
        assert!(err.to_string().contains("block_sum"), "{err}");
    }
}
