//! Wall-clock helpers the benchmarks share.
#![allow(dead_code)]

use std::time::Instant;

/// The fastest of `runs` runs of `f`, in seconds.
pub fn best_of(runs: usize, mut f: impl FnMut()) -> f64 {
    (0..runs)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .fold(f64::MAX, f64::min)
}

/// The median of `v` (sorted in place).
pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}
