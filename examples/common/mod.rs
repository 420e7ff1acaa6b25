//! What every learning-path example shares: the devices it runs on, the
//! `--wgsl` flag, and the comparison against plain Rust.
#![allow(dead_code)]

use onekernel::prelude::*;

/// `--wgsl` on the command line: print the kernel's WGSL.
pub fn wants_wgsl() -> bool {
    std::env::args().any(|a| a == "--wgsl")
}

/// The devices an example runs on: the CPU executor, and the GPU when one
/// exists (`Device::gpu()`; in tests a missing GPU is a failure).
pub fn devices(require_gpu: bool) -> Vec<Device> {
    let mut v = vec![Device::cpu()];
    match Device::gpu() {
        Ok(g) => v.push(g),
        Err(e) if require_gpu => panic!("this test needs a GPU adapter (CI uses Mesa's lavapipe; see .ci/run): {e}"),
        Err(e) => eprintln!("no GPU ({e}); running on the CPU executor only"),
    }
    v
}

/// Checks `got` against `want`, element by element; floats within a
/// relative `tolerance`. A wrong element panics with what to run next.
pub fn check<T: Copy + PartialEq + std::fmt::Debug + Into<f64>>(what: &str, got: &[T], want: &[T], tolerance: f64) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let (gf, wf): (f64, f64) = ((*g).into(), (*w).into());
        assert!(
            g == w || (gf - wf).abs() <= tolerance * wf.abs().max(1.0),
            "{what}[{i}]: got {g:?}, want {w:?}\n{}",
            wrong_result_hint()
        );
    }
}

/// What a wrong result says to try: the bugs that give wrong numbers
/// rather than an error are data races and (on the GPU) out-of-bounds
/// accesses, and each has a checker one environment variable away.
pub fn wrong_result_hint() -> String {
    // The crate of an example is named after it.
    let example = env!("CARGO_CRATE_NAME");
    format!(
        "a wrong result that differs between devices or between runs is often a data race: two threads \
         writing one element (`out[0] += a[i]`), or a missing `workgroup_barrier()`. Run again with \
         `ONEKERNEL_RACECHECK=1 cargo test --example {example}`: the CPU executor then returns \
         LaunchError::DataRace naming the element, the two threads and their lines \
         (`ONEKERNEL_CHECKED=1` checks every index on the GPU)."
    )
}

/// The median of `v` (sorted in place).
pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Median wall-clock seconds of `reps` runs of `f`, after one warm-up run.
pub fn wall(reps: usize, mut f: impl FnMut()) -> f64 {
    f();
    median(
        (0..reps)
            .map(|_| {
                let t = std::time::Instant::now();
                f();
                t.elapsed().as_secs_f64()
            })
            .collect(),
    )
}
