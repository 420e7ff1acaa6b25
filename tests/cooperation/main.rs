//! Workgroup cooperation on both paths: shared memory, barriers, atomics.

mod kernels;

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
                shader_checks::spirv_val(stringify!($k), kernels::$k::SPIRV);
                shader_checks::reparse(stringify!($k), kernels::$k::WGSL);
                shader_checks::spirv_val(concat!(stringify!($k), "_folded"), kernels::$k::SPIRV_FOLDED);
                shader_checks::reparse(concat!(stringify!($k), "_folded"), kernels::$k::WGSL_FOLDED);
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
        let (mut lanes, mut sizes, mut first, mut next, mut down, mut ballots) = (z(), z(), z(), z(), z(), z());
        kernels::subgroup_lanes::launch(&d, n, &mut lanes, &mut sizes, &mut first, &mut next, &mut down, &mut ballots)
            .unwrap();
        let [lanes, sizes, first, next, down, ballots] =
            [lanes, sizes, first, next, down, ballots].map(|b| b.read().unwrap());
        let size = sizes[0];
        let (lo, hi) = subgroup_range(&d);
        assert!(size.is_power_of_two() && (lo..=hi).contains(&size), "{}: size {size} in {lo}..={hi}", d.name());
        assert!(sizes.iter().all(|&s| s == size));
        eprintln!("{}: subgroup size {size}", d.name());
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
            let want: u32 = (0..s.min(32)).filter(|l| (base + l) % 3 == 0).map(|l| 1 << l).sum();
            assert_eq!(ballots[i], want, "{}: ballot at {i}", d.name());
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
    use onekernel::runtime::{Features, LaunchError};
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
    use onekernel::runtime::Features;
    // Not a collective: the fast path, not the cooperative executor.
    assert_eq!(format!("{:?}", kernels::lane_ids::KERNEL.cpu), "OwnElement");
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
