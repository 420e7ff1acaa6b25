//! The ops' tuner: which plan of [`crate::reduce`], [`crate::scan`],
//! [`crate::transpose`], [`crate::histogram`] and [`crate::norm`] runs,
//! and which tile [`crate::matmul`]'s tiled kernel takes, chosen per
//! device, op, element type and size.
//!
//! Each of these ops has a few candidate plans (how many segments the input
//! is cut into, scalar or `Vec4` loads, how many elements a thread scans,
//! how a transpose moves its tile, how many values a histogram's thread
//! counts, how many threads share a row of a softmax, a matrix product's
//! tile). The fastest plan depends on the device and the size, so the first
//! call for a new (device, op, element type, size bucket) on a GPU times
//! every candidate with the runtime's autotuner
//! ([`onekernel_runtime::tune`]): each candidate runs once and its result
//! is compared with the first candidate's (exactly for integers and moved
//! bits, within rounding for float sums and row statistics, whose order
//! differs between plans), then it is timed 5 times, and the fastest is
//! kept, in memory and in the tuning cache file (`tune.toml`, see
//! [`onekernel_runtime::tune`]), so later runs of the program tune nothing.
//! The key is bucketed by size (the next power of two).
//!
//! A call inside [`Device::time`] cannot tune (timings do not nest): it runs
//! the default plan (the first candidate) until a call outside tunes; call
//! an op once before timing it. On the CPU executor there is one plan per
//! op, so nothing is tuned there.
//!
//! [`set_mode`] sets the mode of these tuners on one device
//! ([`Mode::Off`]: always the default plan, nothing timed; [`Mode::Cached`]:
//! cached results only; [`Mode::Full`]: tune on a miss), instead of
//! `ONEKERNEL_TUNE`'s ([`Mode::from_env`]), [`set_cache_dir`] where the
//! results are kept. [`picks`] lists what was
//! chosen, with every candidate's time.
//!
//! ```
//! use onekernel::prelude::*;
//! use onekernel::ops::{reduce, tuning};
//!
//! let device = Device::cpu_serial();
//! tuning::set_mode(&device, tuning::Mode::Off);
//! let x = Buffer::from_slice(&device, &[1.0f32, 2.0, 3.0])?;
//! assert_eq!(reduce::sum(&device, &x)?, 6.0);
//! assert_eq!(tuning::mode(&device), tuning::Mode::Off);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use crate::prelude::*;
pub use onekernel_runtime::tune::Purpose;
use onekernel_runtime::tune::{Candidate, Key, Tuner};
pub use onekernel_runtime::tune::{Mode, Outcome, Source};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

/// What a tuner chose for one problem: the latest choice per (op, key).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pick {
    /// The op (`ops::reduce`, `ops::scan`, `ops::transpose`, `ops::histogram`,
    /// `ops::norm`, `ops::matmul`).
    pub op: &'static str,
    /// The problem key (element type, size bucket, ...).
    pub key: String,
    /// The chosen plan's name.
    pub plan: String,
    /// Tuned now, cached, or the default.
    pub source: Source,
    /// Every candidate's median time or why it was dropped (empty for a
    /// default).
    pub outcomes: Vec<Outcome>,
}

impl Pick {
    /// Every candidate's median in µs (one decimal) or why it was
    /// dropped, in the candidates' order: `scalar2048 11.0, vec4_512 12.3`.
    pub fn candidate_times(&self) -> String {
        let times: Vec<String> = self
            .outcomes
            .iter()
            .map(|o| match &o.result {
                Ok(t) => format!("{} {:.1}", o.name, t.as_secs_f64() * 1e6),
                Err(why) => format!("{} dropped ({why})", o.name),
            })
            .collect();
        times.join(", ")
    }
}

#[derive(Default)]
struct Registry {
    /// The mode set by [`set_mode`], per device id.
    modes: HashMap<u64, Mode>,
    /// The cache directory set by [`set_cache_dir`], per device id.
    dirs: HashMap<u64, PathBuf>,
    /// One tuner per device id and op.
    tuners: HashMap<(u64, &'static str), Arc<Tuner>>,
    /// The latest pick per device id, op and key.
    picks: HashMap<(u64, &'static str, String), Pick>,
}

fn registry() -> MutexGuard<'static, Registry> {
    static REGISTRY: OnceLock<Mutex<Registry>> = OnceLock::new();
    REGISTRY.get_or_init(Default::default).lock().unwrap_or_else(|p| p.into_inner())
}

/// Sets the mode of the ops' tuners on `device` (instead of
/// `ONEKERNEL_TUNE`'s): [`Mode::Off`] runs every op's default plan,
/// [`Mode::Cached`] only plans found in the cache, [`Mode::Full`] tunes on
/// a miss.
pub fn set_mode(device: &Device, mode: Mode) {
    let mut r = registry();
    r.modes.insert(device.id(), mode);
    // Made again with the new mode at the next call.
    r.tuners.retain(|(id, _), _| *id != device.id());
    r.picks.retain(|(id, _, _), _| *id != device.id());
}

/// Keeps the ops' tuning results for `device` in `dir` (as `tune.toml`)
/// instead of the default cache directory (`ONEKERNEL_CACHE_DIR`, else the
/// platform's): a test or a program that ships its own cache points here.
pub fn set_cache_dir(device: &Device, dir: impl AsRef<Path>) {
    let mut r = registry();
    r.dirs.insert(device.id(), dir.as_ref().to_path_buf());
    // Made again with the new file at the next call.
    r.tuners.retain(|(id, _), _| *id != device.id());
    r.picks.retain(|(id, _, _), _| *id != device.id());
}

/// The mode of the ops' tuners on `device`: [`set_mode`]'s, else
/// `ONEKERNEL_TUNE`'s.
pub fn mode(device: &Device) -> Mode {
    registry().modes.get(&device.id()).copied().unwrap_or_else(Mode::from_env)
}

/// What the tuners chose on `device` so far (the latest choice per op and
/// key), sorted by op and key.
pub fn picks(device: &Device) -> Vec<Pick> {
    let r = registry();
    let mut v: Vec<Pick> =
        r.picks.iter().filter(|((id, _, _), _)| *id == device.id()).map(|(_, p)| p.clone()).collect();
    v.sort_by(|a, b| (a.op, &a.key).cmp(&(b.op, &b.key)));
    v
}

/// The tuner of `op` on `device`, made on first use; `source` (the op's
/// source file) is hashed into its cache key, so a changed kernel is tuned
/// again.
fn tuner(device: &Device, op: &'static str, source: &'static str) -> Arc<Tuner> {
    let mut r = registry();
    let mode = r.modes.get(&device.id()).copied().unwrap_or_else(Mode::from_env);
    let dir = r.dirs.get(&device.id()).cloned();
    Arc::clone(r.tuners.entry((device.id(), op)).or_insert_with(|| {
        let tuner = Tuner::new(device, op, &[]).with_source(source).mode(mode);
        Arc::new(match dir {
            Some(dir) => tuner.cache_dir(dir),
            None => tuner,
        })
    }))
}

/// The index of the candidate to run for `key`: tuned (or cached) on a
/// miss, the first candidate where the tuner cannot time (inside
/// [`Device::time`]) or every candidate failed. `run(candidate, purpose)`
/// launches a candidate and, for [`Purpose::Check`] (once a candidate),
/// returns its output read back: the timed launches ([`Purpose::Time`])
/// read nothing back, so that the GPU does not idle between them and lower
/// its clocks. `agrees` compares an output with the first candidate's.
pub(crate) fn choose<C: Candidate, O, E: std::fmt::Display>(
    device: &Device,
    op: &'static str,
    source: &'static str,
    key: &Key,
    candidates: &[C],
    run: impl FnMut(&C, Purpose) -> Result<Option<O>, E>,
    agrees: impl FnMut(&O, &O) -> bool,
) -> usize {
    if candidates.len() <= 1 {
        return 0;
    }
    let key_text = key.to_string();
    let memo = (device.id(), op, key_text.clone());
    if let Some(p) = registry().picks.get(&memo)
        && let Some(i) = candidates.iter().position(|c| c.name() == p.plan.as_str())
    {
        return i;
    }
    // Inside the caller's `Device::time` nothing can be timed: the default
    // plan, and no launch of the tuner's counted in the caller's timing.
    if device.time(|| ()).is_err() {
        return 0;
    }
    let tuner = tuner(device, op, source);
    let (index, pick) = match tuner.choose_launched(key, candidates, run, agrees) {
        Ok(c) => {
            (c.index, Pick { op, key: key_text, plan: c.name().into_owned(), source: c.source, outcomes: c.outcomes })
        }
        Err(_) => (
            0,
            Pick {
                op,
                key: key_text,
                plan: candidates[0].name().into_owned(),
                source: Source::Default,
                outcomes: Vec::new(),
            },
        ),
    };
    registry().picks.insert(memo, pick);
    index
}
