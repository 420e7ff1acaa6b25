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

    shaders!(block_sum, histogram, transpose, atomic_ops);
}
