//! The ops' tuner: a choice is made once, kept in the cache, and read
//! back by a tuner that only reads the cache.

use super::*;
use onekernel::ops::reduce::{self, ReduceOp, ReduceScratch};
use onekernel::ops::tuning::{self, Mode, Source};

#[test]
fn a_tuned_plan_is_cached_and_read_back() {
    // A device of its own (the shared one runs the default plans).
    let d = Device::gpu().expect("a GPU adapter (lavapipe in CI)");
    // A cache of its own: the first call tunes, and the user's cache is
    // neither read nor written.
    let dir = tempfile::tempdir().unwrap();
    tuning::set_cache_dir(&d, dir.path());
    tuning::set_mode(&d, Mode::Full);
    let n = 50_001;
    let x: Vec<f32> = (0..n).map(|i| (hash(i, 80) % 5) as f32).collect();
    let want: f32 = x.iter().sum();
    let b = Buffer::from_slice(&d, &x).unwrap();
    let mut out = Buffer::<f32>::zeroed(&d, 1).unwrap();
    let mut scratch = ReduceScratch::for_len(&d, n).unwrap();
    reduce::reduce_into(&d, &b, ReduceOp::Sum, &mut out, &mut scratch).unwrap();
    assert_eq!(out.read().unwrap()[0], want);
    let first = tuning::picks(&d);
    let pick = first.iter().find(|p| p.op == "ops::reduce").expect("a pick of ops::reduce");
    assert_eq!(pick.source, Source::Tuned, "{pick:?}");
    assert!(dir.path().join("tune.toml").is_file(), "the choice is written to the cache directory");
    let names: Vec<String> = reduce::candidates::<f32>(&d, ReduceOp::Sum, n).iter().map(|p| p.name()).collect();
    assert!(names.contains(&pick.plan), "{pick:?} not among {names:?}");
    assert_eq!(pick.outcomes.len(), names.len(), "{pick:?}");
    // One entry per candidate, in order: its name, then its time in µs
    // or why it was dropped.
    let times = pick.candidate_times();
    let entries: Vec<&str> = times.split(", ").collect();
    assert_eq!(entries.len(), names.len(), "{times}");
    for ((entry, name), o) in entries.iter().zip(&names).zip(&pick.outcomes) {
        let rest = entry.strip_prefix(&format!("{name} ")).unwrap_or_else(|| panic!("{entry} names {name}"));
        match &o.result {
            Ok(_) => assert!(rest.parse::<f64>().is_ok_and(|t| t > 0.0), "{entry}: a time in µs"),
            Err(why) => assert_eq!(rest, format!("dropped ({why})")),
        }
    }
    // A tuner that only reads the cache finds the same plan there.
    tuning::set_mode(&d, Mode::Cached);
    assert!(tuning::picks(&d).is_empty());
    reduce::reduce_into(&d, &b, ReduceOp::Sum, &mut out, &mut scratch).unwrap();
    assert_eq!(out.read().unwrap()[0], want);
    let again = tuning::picks(&d);
    let p2 = again.iter().find(|p| p.op == "ops::reduce").expect("a pick");
    assert_eq!((p2.source, &p2.plan), (Source::Cached, &pick.plan));
    // Inside `Device::time` nothing is tuned: a miss runs the default plan.
    tuning::set_mode(&d, Mode::Full);
    let other = Buffer::from_slice(&d, &x[..3001]).unwrap();
    let (r, _) = d.time(|| reduce::reduce_into(&d, &other, ReduceOp::Sum, &mut out, &mut scratch)).unwrap();
    r.unwrap();
    assert_eq!(out.read().unwrap()[0], x[..3001].iter().sum::<f32>());
}

#[test]
fn the_cpu_executor_has_one_plan_and_tunes_nothing() {
    for d in [serial(), cpu()] {
        tuning::set_mode(d, Mode::Full);
        assert_eq!(reduce::candidates::<f32>(d, ReduceOp::Sum, 1 << 20).len(), 1);
        assert_eq!(onekernel::ops::scan::candidates::<u32>(d, ReduceOp::Sum, 1 << 20, 0).len(), 1);
        let x = Buffer::from_slice(d, &[1.0f32; 3000]).unwrap();
        assert_eq!(reduce::sum(d, &x).unwrap(), 3000.0);
        assert!(tuning::picks(d).is_empty(), "{:?}", tuning::picks(d));
    }
}

#[test]
fn the_histogram_tunes_on_counts_of_its_own() {
    // `histogram_add` adds to the caller's counts: the tuning's runs count
    // into a scratch histogram, so the caller's get the values once.
    let d = Device::gpu().expect("a GPU adapter (lavapipe in CI)");
    let dir = tempfile::tempdir().unwrap();
    tuning::set_cache_dir(&d, dir.path());
    tuning::set_mode(&d, Mode::Full);
    let (n, bins) = (70_001, 6000);
    let values: Vec<u32> = (0..n).map(|i| hash(i, 81) % 6500).collect();
    let b = Buffer::from_slice(&d, &values).unwrap();
    let mut counts = Buffer::from_slice(&d, &vec![7u32; bins]).unwrap();
    onekernel::ops::histogram::histogram_add(&d, &b, &mut counts).unwrap();
    let mut want = vec![7u32; bins];
    for &v in &values {
        if (v as usize) < bins {
            want[v as usize] += 1;
        }
    }
    assert!(counts.read().unwrap() == want, "the caller's counts got the values once");
    let picks = tuning::picks(&d);
    let pick = picks.iter().find(|p| p.op == "ops::histogram").expect("a pick of ops::histogram");
    assert_eq!((pick.source, pick.outcomes.len()), (Source::Tuned, 2), "{pick:?}");
    assert!(pick.outcomes.iter().all(|o| o.result.is_ok()), "{}", pick.candidate_times());
}
