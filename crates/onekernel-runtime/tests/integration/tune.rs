//! The autotuner (`onekernel_runtime::tune`): choosing among launch shapes
//! and kernel variants of hand-built kernels on the CPU executor and the
//! GPU, dropping candidates that fail or disagree, and the cache file:
//! a second run tunes nothing, corrupt files are ignored with a warning,
//! processes tuning at once lose nothing.
//!
//! Some tests run this test binary again as a child process (the test
//! `tune::child`, which does nothing unless `CHILD_ENV` is set).

use crate::common;
use common::*;
use onekernel_runtime::__private::*;
use onekernel_runtime::tune::{Key, Mode, Source, TuneError, Tuner, CACHE_DIR_ENV, FILE_NAME, TUNE_ENV};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

/// Set in a child process: what it does (see [`child`]).
const CHILD_ENV: &str = "ONEKERNEL_TUNE_TEST_CHILD";

/// The problem size of the scale_add tuning runs.
const N: usize = 3000;

/// The candidates: two correct ones (a plain launch of `scale_add`, and
/// its variant with the launch block in a storage buffer), one that
/// launches half the threads (wrong output) and one that passes a buffer
/// of another device (cannot launch).
const CANDIDATES: [&str; 4] = ["plain", "storage_params", "half_grid", "other_device"];

/// Tunes scale_add over [`CANDIDATES`] with the cache in `dir`, as a
/// program would on each run; returns the choice's source, the winner and
/// how often each candidate ran.
fn tune_scale_add(dev: &Device, dir: &Path) -> (Source, String, BTreeMap<String, usize>) {
    let (a, out) = inputs(N);
    let want = expected_scale_add(&a, &out, 0.5, N);
    let ab = Buffer::from_slice(dev, &a).unwrap();
    let mut ob = Buffer::from_slice(dev, &out).unwrap();
    // A buffer of another device (every `Device::cpu()` is a new one).
    let mut other = Buffer::from_slice(&Device::cpu(), &out).unwrap();
    let runs = RefCell::new(BTreeMap::<String, usize>::new());

    let tuner = Tuner::new(dev, "scale_add", &[&SCALE_ADD, &SCALE_ADD_STORAGE_PARAMS]).mode(Mode::Full).cache_dir(dir);
    let key = Key::new().size("n", N).element::<f32>("T");
    let choice = tuner
        .choose(&key, &CANDIDATES, |&name| -> Result<Vec<f32>, LaunchError> {
            *runs.borrow_mut().entry(name.to_owned()).or_default() += 1;
            // The kernel accumulates: start from the same output each time.
            ob.write(&out).unwrap();
            match name {
                "plain" => scale_add(dev, Grid::threads(N), &ab, &mut ob, 0.5)?,
                "storage_params" => {
                    scale_add_with(&SCALE_ADD_STORAGE_PARAMS, dev, Grid::threads(N), &ab, &mut ob, 0.5)?
                }
                "half_grid" => scale_add(dev, Grid::threads(N / 2), &ab, &mut ob, 0.5)?,
                _ => scale_add(dev, Grid::threads(N), &ab, &mut other, 0.5)?,
            }
            Ok(ob.read().unwrap())
        })
        .unwrap();
    assert!(tuner.warnings().is_empty(), "{:?}", tuner.warnings());
    // Whatever won computes the right thing.
    ob.write(&out).unwrap();
    match choice.index {
        0 => scale_add(dev, Grid::threads(N), &ab, &mut ob, 0.5).unwrap(),
        1 => scale_add_with(&SCALE_ADD_STORAGE_PARAMS, dev, Grid::threads(N), &ab, &mut ob, 0.5).unwrap(),
        i => panic!("candidate {i} ({}) should have been dropped", CANDIDATES[i]),
    }
    assert_eq!(ob.read().unwrap(), want);
    // The outcomes say why the others were dropped (cached or not).
    let outcome = |i: usize| choice.outcomes[i].result.clone();
    assert!(outcome(0).is_ok() && outcome(1).is_ok(), "{:?}", choice.outcomes);
    assert!(outcome(2).unwrap_err().contains("differs from that of `plain`"), "{:?}", choice.outcomes);
    assert!(outcome(3).unwrap_err().contains("device"), "{:?}", choice.outcomes);
    (choice.source, choice.name().into_owned(), runs.into_inner())
}

/// The first run tunes (each good candidate: one warm-up and five timed
/// runs, the first also the GPU's warm-up; each bad one: once); the
/// second, in a new process, runs nothing.
fn second_run_tunes_nothing(dev: &Device, child_device: &str) {
    let dir = tempfile::tempdir().unwrap();
    let (source, winner, mut runs) = tune_scale_add(dev, dir.path());
    assert_eq!(source, Source::Tuned);
    // The first good candidate also runs again for `WARM_UP` before any
    // is timed.
    let plain = runs.remove("plain").unwrap_or(0);
    assert!(plain > 6, "plain ran {plain} times");
    let expected: BTreeMap<String, usize> =
        [("storage_params", 6), ("half_grid", 1), ("other_device", 1)].map(|(n, c)| (n.to_owned(), c)).into();
    assert_eq!(runs, expected);
    assert!(dir.path().join(FILE_NAME).is_file());

    // A second run of the program (a new process) tunes nothing.
    let status = child_process(&format!("second_run:{child_device}:{winner}"), dir.path()).status().unwrap();
    assert!(status.success(), "the second run failed: {status}");
    // Nor does a new tuner in this process.
    let (source, again, runs) = tune_scale_add(dev, dir.path());
    assert_eq!((source, again.as_str(), runs.len()), (Source::Cached, winner.as_str(), 0));
}

#[test]
fn second_run_tunes_nothing_on_the_cpu() {
    second_run_tunes_nothing(&Device::cpu(), "cpu");
}

#[test]
fn second_run_tunes_nothing_on_the_gpu() {
    let dev = Device::gpu().expect("the GPU tests need an adapter (try `source .ci/env.sh` for lavapipe)");
    second_run_tunes_nothing(&dev, "gpu");
}

/// This test binary, run as a child process that does `what` with its
/// cache in `dir`.
fn child_process(what: &str, dir: &Path) -> Command {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args(["tune::child", "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, what)
        .env(CACHE_DIR_ENV, dir)
        .env_remove(TUNE_ENV)
        .stdout(std::process::Stdio::null());
    cmd
}

/// What a child process does (nothing in a normal test run).
#[test]
fn child() {
    let Ok(what) = std::env::var(CHILD_ENV) else { return };
    let dir = std::env::var_os(CACHE_DIR_ENV).expect("the parent sets the cache directory");
    let parts: Vec<&str> = what.split(':').collect();
    match parts[..] {
        ["second_run", device, winner] => {
            let dev = if device == "gpu" { Device::gpu().unwrap() } else { Device::cpu() };
            let (source, got, runs) = tune_scale_add(&dev, Path::new(&dir));
            assert_eq!((source, got.as_str()), (Source::Cached, winner));
            assert!(runs.is_empty(), "the second run ran candidates: {runs:?}");
        }
        ["keys", first, count] => {
            // The default cache file: `ONEKERNEL_CACHE_DIR` names it.
            let tuner = host_tuner(Tuner::new(&Device::cpu(), "host", &[]));
            assert_eq!(tuner.cache_file(), Some(Path::new(&dir).join(FILE_NAME).as_path()));
            tune_keys(&tuner, first.parse().unwrap(), count.parse().unwrap());
        }
        _ => panic!("unknown child task {what:?}"),
    }
}

/// Candidates that run on the host: quick, for the cache's tests.
fn host_tuner(t: Tuner) -> Tuner {
    t.mode(Mode::Full).samples(1)
}

/// Tunes keys `first..first + count` with host candidates; asserts each
/// was tuned.
fn tune_keys(tuner: &Tuner, first: usize, count: usize) {
    for k in first..first + count {
        let choice =
            tuner.choose(&Key::new().value("k", k), &["a", "b"], |_| -> Result<usize, String> { Ok(k) }).unwrap();
        assert_eq!(choice.source, Source::Tuned, "key {k}");
    }
}

/// Asserts that the cache in `dir` holds keys `0..count` (read by a tuner
/// that never tunes) and nothing unreadable.
fn assert_cached(dir: &Path, count: usize) {
    let tuner = Tuner::new(&Device::cpu(), "host", &[]).mode(Mode::Cached).cache_dir(dir);
    for k in 0..count {
        let choice = tuner
            .choose(&Key::new().value("k", k), &["a", "b"], |_| -> Result<usize, String> { panic!("ran") })
            .unwrap();
        assert_eq!(choice.source, Source::Cached, "key {k} was lost");
    }
    assert!(tuner.warnings().is_empty(), "{:?}", tuner.warnings());
}

#[test]
fn processes_tuning_at_once_lose_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut children: Vec<_> =
        (0..3).map(|i| child_process(&format!("keys:{}:25", i * 25), dir.path()).spawn().unwrap()).collect();
    for c in &mut children {
        let status = c.wait().unwrap();
        assert!(status.success(), "a child failed: {status}");
    }
    assert_cached(dir.path(), 75);
    // No temporary file is left behind: only the cache and its lock.
    let mut names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    names.sort();
    assert_eq!(names, ["tune.toml", "tune.toml.lock"]);
}

#[test]
fn threads_tuning_at_once_lose_nothing() {
    let dir = tempfile::tempdir().unwrap();
    std::thread::scope(|s| {
        for i in 0..3 {
            let dir = dir.path();
            // A tuner each (as separate parts of a program would have).
            s.spawn(move || tune_keys(&host_tuner(Tuner::new(&Device::cpu(), "host", &[])).cache_dir(dir), i * 20, 20));
        }
    });
    assert_cached(dir.path(), 60);
}

#[test]
fn corrupt_cache_files_are_ignored_with_a_warning() {
    // A valid file, to truncate.
    let good = tempfile::tempdir().unwrap();
    tune_keys(&host_tuner(Tuner::new(&Device::cpu(), "host", &[])).cache_dir(good.path()), 0, 3);
    let valid = std::fs::read(good.path().join(FILE_NAME)).unwrap();
    // Cut inside the last string of the file (a write cut short).
    let cut = valid.windows(3).rposition(|w| w == b"= \"").unwrap() + 4;

    let cases: [(&str, &[u8], &str); 7] = [
        ("binary garbage", b"\x00\xff\xfe not text at all", "not UTF-8"),
        ("text garbage", b"}}} [[[ not = = toml", "not valid TOML"),
        ("truncated", &valid[..cut], "not valid TOML"),
        ("foreign TOML", b"[package]\nname = \"x\"\nversion = \"1.0.0\"\n", "not a onekernel tuning cache"),
        ("empty", b"", "not a onekernel tuning cache"),
        ("another version", b"format = \"onekernel-tune\"\nversion = 7\n", "format version 7"),
        ("malformed entries", b"format = \"onekernel-tune\"\nversion = 1\nentries = 3\n", "malformed"),
    ];
    for (what, bytes, why) in cases {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(FILE_NAME);
        std::fs::write(&file, bytes).unwrap();
        let tuner = host_tuner(Tuner::new(&Device::cpu(), "host", &[])).cache_dir(dir.path());
        // Read, warned about once, and replaced by the new result.
        tune_keys(&tuner, 0, 2);
        let warnings = tuner.warnings();
        assert_eq!(warnings.len(), 1, "{what}: {warnings:?}");
        assert!(warnings[0].contains(why) && warnings[0].contains(&*file.to_string_lossy()), "{what}: {warnings:?}");
        assert_cached(dir.path(), 2);
    }
}

#[test]
fn an_unwritable_cache_is_a_warning() {
    // The cache "directory" is a file: nothing can be written there.
    let dir = tempfile::tempdir().unwrap();
    let blocker = dir.path().join("not-a-dir");
    std::fs::write(&blocker, b"").unwrap();
    let tuner = host_tuner(Tuner::new(&Device::cpu(), "host", &[])).cache_dir(&blocker);
    tune_keys(&tuner, 0, 1);
    assert!(tuner.warnings().iter().any(|w| w.contains("cannot")), "{:?}", tuner.warnings());
    // The result is still remembered in memory.
    let again = tuner.choose(&Key::new().value("k", 0), &["a", "b"], |_| -> Result<usize, String> { panic!("ran") });
    assert_eq!(again.unwrap().source, Source::Cached);
}

#[test]
fn modes() {
    assert_eq!(
        ["off", "cached", "full", "FULL", ""].map(|m| m.parse::<Mode>().unwrap()),
        [Mode::Off, Mode::Cached, Mode::Full, Mode::Full, Mode::Full]
    );
    assert!("sometimes".parse::<Mode>().unwrap_err().contains("off, cached, full"));

    let dir = tempfile::tempdir().unwrap();
    let key = Key::new().size("n", 100);
    let never = |_: &&str| -> Result<u32, String> { panic!("ran a candidate") };
    let tuner = |mode| Tuner::new(&Device::cpu(), "host", &[]).mode(mode).samples(1).cache_dir(dir.path());
    // Off: the first candidate, nothing run.
    let c = tuner(Mode::Off).choose(&key, &["a", "b"], never).unwrap();
    assert_eq!((c.index, c.source), (0, Source::Default));
    // A single candidate: nothing to choose, nothing run.
    let c = tuner(Mode::Full).choose(&key, &["only"], never).unwrap();
    assert_eq!((c.index, c.source), (0, Source::Default));
    // Cached, on a miss: the first candidate, nothing run, nothing written.
    let c = tuner(Mode::Cached).choose(&key, &["a", "b"], never).unwrap();
    assert_eq!((c.index, c.source), (0, Source::Default));
    assert!(!dir.path().join(FILE_NAME).exists());
    // Full: tuned. `b` is made the slower one, so `a` wins.
    let c = tuner(Mode::Full)
        .choose(&key, &["b", "a"], |&n| -> Result<u32, String> {
            if n == "b" {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            Ok(1)
        })
        .unwrap();
    assert_eq!((c.name().as_ref(), c.source), ("a", Source::Tuned));
    assert!(c.time().unwrap() < std::time::Duration::from_millis(20), "{:?}", c.outcomes);
    // Cached, now a hit.
    let c = tuner(Mode::Cached).choose(&key, &["b", "a"], never).unwrap();
    assert_eq!((c.index, c.source), (1, Source::Cached));
    // Other candidates (or another kernel) are another entry: a miss.
    let c = tuner(Mode::Cached).choose(&key, &["b", "a", "c"], never).unwrap();
    assert_eq!(c.source, Source::Default);
    let c = Tuner::new(&Device::cpu(), "host", &[&SCALE_ADD])
        .mode(Mode::Cached)
        .cache_dir(dir.path())
        .choose(&key, &["b", "a"], never)
        .unwrap();
    assert_eq!(c.source, Source::Default);
    // And so is another bucket; the same bucket is a hit.
    let c = tuner(Mode::Cached).choose(&Key::new().size("n", 200), &["b", "a"], never).unwrap();
    assert_eq!(c.source, Source::Default);
    let c = tuner(Mode::Cached).choose(&Key::new().size("n", 127), &["b", "a"], never).unwrap();
    assert_eq!(c.source, Source::Cached);
}

#[test]
fn shipped_cache() {
    let built = tempfile::tempdir().unwrap();
    tune_keys(&host_tuner(Tuner::new(&Device::cpu(), "host", &[])).cache_dir(built.path()), 0, 2);
    let shipped = std::fs::read(built.path().join(FILE_NAME)).unwrap();

    let user = tempfile::tempdir().unwrap();
    let tuner = Tuner::new(&Device::cpu(), "host", &[]).mode(Mode::Full).cache_dir(user.path());
    let tuner = tuner.with_shipped_cache(&shipped);
    let c = tuner.choose(&Key::new().value("k", 1), &["a", "b"], |_| -> Result<usize, String> { panic!("ran") });
    assert_eq!(c.unwrap().source, Source::Shipped);

    // A bad shipped cache: a warning, and tuning as without one.
    let tuner = host_tuner(Tuner::new(&Device::cpu(), "host", &[])).cache_dir(user.path());
    let tuner = tuner.with_shipped_cache(b"{\"format\": \"onekernel-tune\", \"vers");
    tune_keys(&tuner, 0, 1);
    assert!(tuner.warnings()[0].contains("shipped"), "{:?}", tuner.warnings());
}

#[test]
fn user_check_and_errors() {
    let tuner = Tuner::new(&Device::cpu(), "host", &[]).mode(Mode::Full).samples(1).without_cache_file();
    let key = Key::new();
    // Outputs that differ in the last place agree under a tolerance.
    let outputs = [("exact", 1.0f32), ("close", 1.0 + f32::EPSILON), ("far", 1.5)];
    let c = tuner
        .choose_checked(&key, &outputs, |&(_, v)| -> Result<f32, String> { Ok(v) }, |a, b| (a - b).abs() < 1e-6)
        .unwrap();
    assert_eq!(c.outcomes.iter().filter(|o| o.result.is_ok()).count(), 2, "{:?}", c.outcomes);
    assert!(c.outcomes[2].result.as_ref().unwrap_err().contains("differs from that of `exact`"));

    // The first candidate failing: the next one is the reference.
    let c = tuner
        .choose(&Key::new().value("case", 2), &["fails", "ok"], |&n| if n == "fails" { Err("no") } else { Ok(3) })
        .unwrap();
    assert_eq!(c.name(), "ok");

    let err = tuner.choose(&key, &["x", "y"], |&n| -> Result<u8, String> { Err(format!("{n} cannot launch")) });
    let err = err.unwrap_err();
    assert!(matches!(err, TuneError::AllDropped { .. }));
    assert_eq!(
        err.to_string(),
        "tuning `host` (): every candidate was dropped; `x`: x cannot launch; `y`: y cannot launch"
    );
    let none: [&str; 0] = [];
    assert!(matches!(tuner.choose(&key, &none, |_| Ok::<u8, String>(0)), Err(TuneError::NoCandidates { .. })));
    let err = tuner.choose(&key, &["x", "x"], |_| Ok::<u8, String>(0)).unwrap_err();
    assert_eq!(err.to_string(), "tuning `host`: two candidates are named `x`");
}

/// `choose_launched` reads each candidate's output once, for the check,
/// and only launches it for the warm-up and the timed runs (a read-back
/// between timed launches idles the GPU); a candidate that returns no
/// output for the check is dropped, one whose output disagrees too.
#[test]
fn choose_launched_reads_back_once_a_candidate() {
    let gpu = Device::gpu().expect("the GPU tests need an adapter (try `source .ci/env.sh` for lavapipe)");
    for dev in [Device::cpu(), gpu] {
        let (a, out) = inputs(N);
        let want = expected_scale_add(&a, &out, 0.5, N);
        let ab = Buffer::from_slice(&dev, &a).unwrap();
        let mut ob = Buffer::from_slice(&dev, &out).unwrap();
        let checks = RefCell::new(BTreeMap::<&str, usize>::new());
        let launches = RefCell::new(BTreeMap::<&str, usize>::new());
        let tuner = Tuner::new(&dev, "scale_add", &[&SCALE_ADD]).mode(Mode::Full).without_cache_file().samples(3);
        let names = ["full", "no_output", "half_grid"];
        let choice = tuner
            .choose_launched(
                &Key::new().size("n", N),
                &names,
                |&name, purpose| -> Result<Option<Vec<f32>>, LaunchError> {
                    *launches.borrow_mut().entry(name).or_default() += 1;
                    ob.write(&out).unwrap();
                    let grid = if name == "half_grid" { N / 2 } else { N };
                    scale_add(&dev, Grid::threads(grid), &ab, &mut ob, 0.5)?;
                    if name == "no_output" {
                        return Ok(None);
                    }
                    purpose.output(|| {
                        *checks.borrow_mut().entry(name).or_default() += 1;
                        Ok(ob.read().unwrap())
                    })
                },
                |a, b| a == b,
            )
            .unwrap();
        assert_eq!(choice.name(), "full");
        let outcome = |i: usize| choice.outcomes[i].result.clone();
        assert!(outcome(1).unwrap_err().contains("no output"), "{:?}", choice.outcomes);
        assert!(outcome(2).unwrap_err().contains("differs from that of `full`"), "{:?}", choice.outcomes);
        // One read-back each for the check; the winner also ran the
        // warm-up (at least four launches) and three timed launches.
        assert_eq!(checks.borrow().get("full"), Some(&1));
        assert_eq!(checks.borrow().get("half_grid"), Some(&1));
        assert!(launches.borrow()["full"] >= 1 + 4 + 3, "{:?}", launches.borrow());
        assert_eq!(launches.borrow()["no_output"], 1, "{:?}", launches.borrow());
        // And the winner computes the right thing.
        ob.write(&out).unwrap();
        scale_add(&dev, Grid::threads(N), &ab, &mut ob, 0.5).unwrap();
        assert_eq!(ob.read().unwrap(), want);
    }
}
