//! Autotuning: pick the fastest of several ways to run a kernel, on this
//! device, for this problem, once.
//!
//! A [`Tuner`] is made for one kernel (its name and the WGSL of the kernels
//! its candidates launch, hashed) on one [`Device`]. [`Tuner::choose`] takes
//! a [`Key`] describing the problem (sizes bucketed, element types), the
//! candidates (launch shapes, kernel variants: anything with a
//! [`Candidate`] name) and a closure that runs one candidate and returns
//! its output. On a cache miss it runs each candidate once (a warm-up,
//! which also builds its pipeline) and checks its output against the first
//! candidate that ran (or with a check of yours); once all have run, it
//! runs the first again until its time has stopped falling for 0.3 s, at
//! least [`WARM_UP`] (a GPU's clocks drop while the host compiles), then
//! times each
//! [`Tuner::samples`] times with [`Device::time`] (GPU timestamps where the
//! device has them, else the wall clock), in rounds of one launch of every
//! candidate (a clock that drifts weighs on all alike), and keeps the
//! median. [`Tuner::choose_launched`] takes the launch and the read-back
//! apart, so that only launches are repeated and timed (a large read-back
//! between timed launches idles the GPU, which may lower its clocks).
//! Candidates
//! whose closure returns `Err` (a launch the device refuses: too much
//! shared memory, a workgroup too large) or whose output disagrees are
//! dropped. The fastest of the rest wins, and is remembered: in memory, and
//! in a cache file that later runs of the program read, so that they tune
//! nothing.
//!
//! ```
//! use onekernel_runtime::tune::{Key, Mode, Tuner};
//! use onekernel_runtime::Device;
//!
//! let device = Device::cpu();
//! // In a program: `Tuner::new(&device, "sgemm", &[&sgemm::KERNEL, &sgemm_vec4::KERNEL])`.
//! let tuner = Tuner::new(&device, "sum", &[]).without_cache_file();
//! let data: Vec<u64> = (0..10_000).collect();
//! let key = Key::new().size("n", data.len());
//! let choice = tuner.choose(&key, &["iterator", "loop"], |&how| -> Result<u64, String> {
//!     // Launch the candidate here; these two run on the host.
//!     Ok(match how {
//!         "iterator" => data.iter().sum(),
//!         _ => {
//!             let mut s = 0;
//!             for x in &data {
//!                 s += x;
//!             }
//!             s
//!         }
//!     })
//! })?;
//! println!("{} is faster", choice.name());
//! // The second time, the answer comes from the cache without running anything.
//! let again = tuner.choose(&key, &["iterator", "loop"], |_| -> Result<u64, String> { unreachable!() })?;
//! assert_eq!(again.index, choice.index);
//! # Ok::<(), onekernel_runtime::tune::TuneError>(())
//! ```
//!
//! # The cache
//!
//! A result is keyed by the kernel's name and a hash of its WGSL, the
//! device (the adapter's name and backend, the driver and its version; on
//! the CPU executor its name, with the thread count, and the runtime's
//! version), the problem [`Key`] and the candidates' names. It lives in
//! `tune.toml` in the platform's cache directory (`~/.cache/onekernel` on
//! Linux, `~/Library/Caches/onekernel` on macOS, `%LOCALAPPDATA%\onekernel`
//! on Windows), or in the directory `ONEKERNEL_CACHE_DIR` names
//! ([`cache_file`], [`Tuner::cache_dir`]). The file is versioned TOML
//! ([`FORMAT_VERSION`]); writers lock it, merge what is there and rename a
//! new file over it, so processes tuning at once lose nothing and readers
//! never see half a file. A file that is not a cache (garbage, truncated,
//! another program's TOML, another format version) is ignored with one
//! warning on stderr and replaced by the next result.
//!
//! A program can ship results: [`Tuner::with_shipped_cache`] takes the
//! bytes of a cache file (`include_bytes!`), consulted after the user's
//! own cache.
//!
//! # Modes
//!
//! [`Mode`]: `ONEKERNEL_TUNE=off` (always the first candidate, nothing
//! read or run), `cached` (results from the caches, never tuning: a miss
//! is the first candidate) or `full` (the default: tune on a miss), or
//! [`Tuner::mode`].
//!
//! Tuning prints its progress on stderr when stderr is a terminal (the
//! kernel, the key, candidate *i* of *n*), and nothing otherwise. Warnings
//! (an unreadable cache) are always printed, and kept ([`Tuner::warnings`]).

mod cache;
mod key;

pub use cache::{FILE_NAME, FORMAT_VERSION};
pub use key::{bucket, Key};

use crate::device::{Device, DeviceBackend};
use crate::error::DeviceError;
use crate::timing::Timing;
use cache::{Entries, Entry, EntryId};
use onekernel_abi::KernelInfo;
use std::borrow::Cow;
use std::fmt;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

/// The environment variable that sets the default [`Mode`]: `off`,
/// `cached` or `full`.
pub const TUNE_ENV: &str = "ONEKERNEL_TUNE";

/// The environment variable naming the directory of the cache file
/// (instead of the platform's cache directory).
pub const CACHE_DIR_ENV: &str = "ONEKERNEL_CACHE_DIR";

/// What [`Tuner::choose`] does on a cache miss, and whether it looks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Mode {
    /// Always the first candidate: nothing is read, run or timed.
    Off,
    /// Results from the caches; a miss is the first candidate, untimed.
    Cached,
    /// Results from the caches; a miss is tuned, and the result written to
    /// the cache file.
    #[default]
    Full,
}

impl Mode {
    /// The mode `ONEKERNEL_TUNE` names (`off`, `cached`, `full`; also
    /// `0`/`1`), [`Mode::Full`] when it is unset. Another value is
    /// `Full` with a warning on stderr.
    pub fn from_env() -> Mode {
        match std::env::var(TUNE_ENV) {
            Err(_) => Mode::Full,
            Ok(v) => v.parse().unwrap_or_else(|e: String| {
                warn(&e);
                Mode::Full
            }),
        }
    }
}

impl std::str::FromStr for Mode {
    type Err = String;

    fn from_str(s: &str) -> Result<Mode, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "off" | "0" | "false" | "no" => Ok(Mode::Off),
            "cached" | "cache" => Ok(Mode::Cached),
            "full" | "on" | "1" | "true" | "yes" | "" => Ok(Mode::Full),
            _ => Err(format!("{TUNE_ENV}={s:?} is not one of off, cached, full; tuning in full")),
        }
    }
}

/// A tuning candidate: anything with a name. The name identifies it in
/// the cache, so it must be stable across runs and unique among the
/// candidates of one [`Tuner::choose`].
///
/// Implemented for names (`&str`, `String`) and for `(name, value)` pairs,
/// whose value is what the run closure uses (a launch shape, a function
/// pointer to one instantiation of a kernel).
pub trait Candidate {
    /// The candidate's name.
    fn name(&self) -> Cow<'_, str>;
}

impl Candidate for &str {
    fn name(&self) -> Cow<'_, str> {
        Cow::Borrowed(self)
    }
}

impl Candidate for String {
    fn name(&self) -> Cow<'_, str> {
        Cow::Borrowed(self)
    }
}

impl<T> Candidate for (&str, T) {
    fn name(&self) -> Cow<'_, str> {
        Cow::Borrowed(self.0)
    }
}

impl<T> Candidate for (String, T) {
    fn name(&self) -> Cow<'_, str> {
        Cow::Borrowed(&self.0)
    }
}

/// Where a [`Choice`] came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// Tuned by this call: every candidate was run and timed.
    Tuned,
    /// Found in the cache (this tuner's memory or the cache file).
    Cached,
    /// Found in the cache the program ships ([`Tuner::with_shipped_cache`]).
    Shipped,
    /// The first candidate, untuned: [`Mode::Off`], a miss in
    /// [`Mode::Cached`], or the only candidate.
    Default,
}

/// The outcome of one candidate in a tuning run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// The candidate's name.
    pub name: String,
    /// Its median time, or why it was dropped.
    pub result: Result<Duration, String>,
}

/// What [`Tuner::choose`] picked.
#[derive(Debug)]
pub struct Choice<'c, C> {
    /// The winner's index in the candidates.
    pub index: usize,
    /// The winner.
    pub candidate: &'c C,
    /// Whether it was tuned now, cached or the default.
    pub source: Source,
    /// Every candidate's median time or why it was dropped, from the
    /// tuning run that chose (now or cached); empty for
    /// [`Source::Default`].
    pub outcomes: Vec<Outcome>,
}

impl<C: Candidate> Choice<'_, C> {
    /// The winner's name.
    pub fn name(&self) -> Cow<'_, str> {
        self.candidate.name()
    }

    /// The winner's median time, when known.
    pub fn time(&self) -> Option<Duration> {
        let name = self.candidate.name();
        self.outcomes.iter().find(|o| o.name == name).and_then(|o| o.result.clone().ok())
    }
}

/// Why [`Tuner::choose`] could not choose.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum TuneError {
    /// The candidate list was empty.
    NoCandidates {
        /// The tuner's kernel.
        kernel: String,
    },
    /// Every candidate failed (or none agreed with the first that ran).
    AllDropped {
        /// The tuner's kernel.
        kernel: String,
        /// The problem key.
        key: String,
        /// Each candidate and why it was dropped.
        dropped: Vec<(String, String)>,
    },
    /// Two candidates have the same name.
    DuplicateName {
        /// The tuner's kernel.
        kernel: String,
        /// The name given twice.
        name: String,
    },
    /// Timing failed ([`Device::time`]: already timing, or the GPU failed).
    Device {
        /// The tuner's kernel.
        kernel: String,
        /// The device's error.
        source: DeviceError,
    },
}

impl fmt::Display for TuneError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TuneError::NoCandidates { kernel } => write!(f, "tuning `{kernel}`: no candidates"),
            TuneError::AllDropped { kernel, key, dropped } => {
                write!(f, "tuning `{kernel}` ({key}): every candidate was dropped")?;
                for (name, why) in dropped {
                    write!(f, "; `{name}`: {why}")?;
                }
                Ok(())
            }
            TuneError::DuplicateName { kernel, name } => {
                write!(f, "tuning `{kernel}`: two candidates are named `{name}`")
            }
            TuneError::Device { kernel, source } => write!(f, "tuning `{kernel}`: {source}"),
        }
    }
}

impl std::error::Error for TuneError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            TuneError::Device { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// How long a tuning at least runs its first candidate again, after every
/// candidate has built its pipeline and before any is timed, so that a
/// GPU's clocks come back up after the host's compiles; it goes on until
/// the candidate's time has not fallen for 0.3 s, up to [`WARM_UP_MAX`].
pub const WARM_UP: Duration = Duration::from_millis(200);

/// The longest the warm-up runs (see [`WARM_UP`]), when the candidate's
/// time keeps falling.
pub const WARM_UP_MAX: Duration = Duration::from_secs(2);

/// The warm-up compares the candidate's best time in windows this long.
const WARM_UP_WINDOW: Duration = Duration::from_millis(100);

/// Why [`Tuner::choose_launched`] runs a candidate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Purpose {
    /// Once a candidate, first: launch it and return its output, read back.
    Check,
    /// The warm-up and the timed runs: launch it only (return `None`).
    Time,
}

impl Purpose {
    /// What a [`Tuner::choose_launched`] closure returns after launching:
    /// `read()` (the output read back) for [`Purpose::Check`], `None`
    /// without calling it for [`Purpose::Time`].
    ///
    /// # Errors
    /// `read`'s.
    pub fn output<O, E>(self, read: impl FnOnce() -> Result<O, E>) -> Result<Option<O>, E> {
        match self {
            Purpose::Check => read().map(Some),
            Purpose::Time => Ok(None),
        }
    }
}

/// Chooses among a kernel's candidates on one device, remembering the
/// winners (see the [module docs](self)).
///
/// `choose` takes `&self`: a tuner can live in a `static` (`OnceLock`) and
/// be shared by threads.
pub struct Tuner {
    device: Device,
    kernel: String,
    wgsl_hash: String,
    adapter: String,
    driver: String,
    mode: Mode,
    file: Option<PathBuf>,
    samples: usize,
    warmups: usize,
    shipped: Entries,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// The cache file's entries and this tuner's results; `None` until the
    /// file is first read.
    entries: Option<Entries>,
    warnings: Vec<String>,
}

impl Tuner {
    /// A tuner for the kernel `name` on `device`, whose candidates launch
    /// `kernels` (their WGSL is hashed into the key, so a changed kernel is
    /// tuned again; pass every kernel the candidates launch).
    ///
    /// The mode comes from `ONEKERNEL_TUNE` ([`Mode::from_env`]), the cache
    /// file from [`cache_file`].
    pub fn new(device: &Device, name: &str, kernels: &[&KernelInfo]) -> Tuner {
        let mut parts: Vec<&[u8]> = Vec::new();
        for k in kernels {
            // The unchecked modules (plain, folded): what a tuned launch runs.
            parts.push(k.name.as_bytes());
            parts.extend(k.modules.iter().filter(|m| !m.key.checked).map(|m| m.wgsl.as_bytes()));
        }
        let (adapter, driver) = device_identity(device);
        Tuner {
            device: device.clone(),
            kernel: name.to_owned(),
            wgsl_hash: cache::stable_hash(parts),
            adapter,
            driver,
            mode: Mode::from_env(),
            file: cache_file(),
            samples: 5,
            warmups: 1,
            shipped: Entries::new(),
            state: Mutex::new(State::default()),
        }
    }

    /// Adds `text` to the hashed kernel source: for candidates that are
    /// not [`KernelInfo`]s (hand-written WGSL, host code), or a version of
    /// your own to retune when something else changes.
    pub fn with_source(mut self, text: &str) -> Tuner {
        self.wgsl_hash = cache::stable_hash([self.wgsl_hash.as_bytes(), text.as_bytes()]);
        self
    }

    /// Sets the mode (instead of `ONEKERNEL_TUNE`'s).
    pub fn mode(mut self, mode: Mode) -> Tuner {
        self.mode = mode;
        self
    }

    /// Keeps the cache file in `dir` (as `tune.toml`) instead of the
    /// default directory.
    pub fn cache_dir(mut self, dir: impl AsRef<Path>) -> Tuner {
        self.file = Some(dir.as_ref().join(FILE_NAME));
        self.reset();
        self
    }

    /// Keeps results in memory only: no cache file is read or written.
    pub fn without_cache_file(mut self) -> Tuner {
        self.file = None;
        self.reset();
        self
    }

    /// Consults `bytes`, the contents of a cache file shipped with the
    /// program (`include_bytes!("tune.toml")`), after the user's cache. A
    /// file that is not a cache is ignored with a warning.
    pub fn with_shipped_cache(mut self, bytes: &[u8]) -> Tuner {
        match cache::parse(bytes) {
            Ok(entries) => self.shipped.extend(entries),
            Err(why) => {
                let w = format!("ignoring the shipped tuning cache of `{}`: {why}", self.kernel);
                warn(&w);
                self.state.get_mut().unwrap_or_else(|e| e.into_inner()).warnings.push(w);
            }
        }
        self
    }

    /// Timed launches per candidate (default 5; the median is kept; at
    /// least 1).
    pub fn samples(mut self, n: usize) -> Tuner {
        self.samples = n.max(1);
        self
    }

    /// Untimed runs per candidate before timing (default 1, at least 1: the
    /// first run's output is the one checked).
    pub fn warmups(mut self, n: usize) -> Tuner {
        self.warmups = n.max(1);
        self
    }

    /// The cache file this tuner reads and writes, if any.
    pub fn cache_file(&self) -> Option<&Path> {
        self.file.as_deref()
    }

    /// The tuner's mode.
    pub fn current_mode(&self) -> Mode {
        self.mode
    }

    /// The warnings this tuner printed (an unreadable cache, a failed
    /// write).
    pub fn warnings(&self) -> Vec<String> {
        self.lock().warnings.clone()
    }

    /// [`Tuner::choose_checked`] with outputs compared by `==`.
    ///
    /// # Errors
    /// See [`Tuner::choose_checked`].
    pub fn choose<'c, C, O, E>(
        &self,
        key: &Key,
        candidates: &'c [C],
        run: impl FnMut(&C) -> Result<O, E>,
    ) -> Result<Choice<'c, C>, TuneError>
    where
        C: Candidate,
        O: PartialEq,
        E: fmt::Display,
    {
        self.choose_checked(key, candidates, run, |reference: &O, output: &O| reference == output)
    }

    /// Chooses the fastest of `candidates` for the problem `key`.
    ///
    /// A single candidate is returned as it is, [`Source::Default`], without
    /// calling `run`. On a cache hit, returns the cached winner without
    /// calling `run`. On
    /// a miss (in [`Mode::Full`]), for each candidate: `run(candidate)`
    /// [`Tuner::warmups`] times untimed, then [`Tuner::samples`] times
    /// inside [`Device::time`]; the candidate's time is the median of the
    /// launches' device time (or of the runs' wall time where `run`
    /// launched nothing). `run` launches the candidate and returns its
    /// output (read back, typically); the first warm-up's output of each
    /// candidate must satisfy `agrees(&reference, &output)`, the reference
    /// being the output of the first candidate that ran. A candidate whose
    /// `run` returns `Err` or that disagrees is dropped. The winner is
    /// stored in the cache.
    ///
    /// # Errors
    /// [`TuneError::NoCandidates`], [`TuneError::DuplicateName`],
    /// [`TuneError::AllDropped`] when no candidate ran and agreed,
    /// [`TuneError::Device`] when timing fails (a `choose` inside
    /// [`Device::time`] is one).
    pub fn choose_checked<'c, C, O, E>(
        &self,
        key: &Key,
        candidates: &'c [C],
        mut run: impl FnMut(&C) -> Result<O, E>,
        agrees: impl FnMut(&O, &O) -> bool,
    ) -> Result<Choice<'c, C>, TuneError>
    where
        C: Candidate,
        E: fmt::Display,
    {
        self.tune(key, candidates, |c: &C, _| run(c).map(Some), agrees)
    }

    /// As [`Tuner::choose_checked`], but only the check reads outputs back:
    /// `run(candidate, purpose)` launches the candidate and, for
    /// [`Purpose::Check`] (once a candidate), returns its output read back
    /// (`Some`); for [`Purpose::Time`] (the warm-up and the timed launches)
    /// it only launches and returns `None`. Use it where reading back takes
    /// long (a large buffer): between the timed launches of
    /// [`Tuner::choose_checked`] the GPU idles while the host reads, and
    /// may lower its clocks (on an H200, memory-bound candidates were
    /// timed at 345 MHz instead of 1980, 2-3x slow, 2026-12-04).
    ///
    /// # Errors
    /// See [`Tuner::choose_checked`]; a candidate that returns `None` for
    /// [`Purpose::Check`] is dropped.
    pub fn choose_launched<'c, C, O, E>(
        &self,
        key: &Key,
        candidates: &'c [C],
        run: impl FnMut(&C, Purpose) -> Result<Option<O>, E>,
        agrees: impl FnMut(&O, &O) -> bool,
    ) -> Result<Choice<'c, C>, TuneError>
    where
        C: Candidate,
        E: fmt::Display,
    {
        self.tune(key, candidates, run, agrees)
    }

    /// The tuning itself: `run(candidate, purpose)` launches the candidate
    /// and, for [`Purpose::Check`], returns its output (`Some`).
    fn tune<'c, C, O, E, R>(
        &self,
        key: &Key,
        candidates: &'c [C],
        mut run: R,
        mut agrees: impl FnMut(&O, &O) -> bool,
    ) -> Result<Choice<'c, C>, TuneError>
    where
        C: Candidate,
        E: fmt::Display,
        R: FnMut(&C, Purpose) -> Result<Option<O>, E>,
    {
        let names: Vec<String> = candidates.iter().map(|c| c.name().into_owned()).collect();
        if names.is_empty() {
            return Err(TuneError::NoCandidates { kernel: self.kernel.clone() });
        }
        if let Some((_, name)) = names.iter().enumerate().find(|(i, n)| names[..*i].contains(n)) {
            return Err(TuneError::DuplicateName { kernel: self.kernel.clone(), name: name.clone() });
        }
        let default = || Choice { index: 0, candidate: &candidates[0], source: Source::Default, outcomes: Vec::new() };
        if self.mode == Mode::Off || candidates.len() == 1 {
            return Ok(default());
        }
        let id = EntryId {
            kernel: self.kernel.clone(),
            wgsl_hash: self.wgsl_hash.clone(),
            adapter: self.adapter.clone(),
            driver: self.driver.clone(),
            key: key.to_string(),
            candidates: names.clone(),
        };
        if let Some((entry, source)) = self.lookup(&id)
            && let Some(index) = names.iter().position(|n| *n == entry.winner)
        {
            let outcomes = outcomes_of(&entry, &names);
            return Ok(Choice { index, candidate: &candidates[index], source, outcomes });
        }
        if self.mode == Mode::Cached {
            return Ok(default());
        }

        let progress = Progress::new(&self.kernel, key, &self.device);
        let mut reference: Option<(String, O)> = None;
        let mut times: Vec<Option<Duration>> = vec![None; candidates.len()];
        let mut dropped: Vec<(String, String)> = Vec::new();
        let mut clock = None;
        // First every candidate once: it builds its pipeline (on the GPU,
        // the specialisation and the driver's compile, seconds of host
        // work for a large unrolled kernel) and its output is checked.
        // Only then is anything timed: timed between compiles, a candidate
        // ran on a GPU whose clocks had dropped while it idled (on an
        // H200, 512³ SGEMM timed 5× slower right after the tuning's
        // compiles, and the tuner picked a scalar tile at 2048³).
        let mut ran = vec![false; candidates.len()];
        for (i, c) in candidates.iter().enumerate() {
            let name = &names[i];
            progress.show(i + 1, candidates.len(), name);
            match run(c, Purpose::Check) {
                Err(e) => dropped.push((name.clone(), e.to_string())),
                Ok(None) => dropped.push((name.clone(), "it returned no output to check".to_string())),
                Ok(Some(out)) => match &reference {
                    None => {
                        reference = Some((name.clone(), out));
                        ran[i] = true;
                    }
                    Some((first, want)) if !agrees(want, &out) => {
                        dropped.push((name.clone(), format!("its output differs from that of `{first}`")));
                    }
                    Some(_) => ran[i] = true,
                },
            }
        }
        if let Some(first) = ran.iter().position(|&r| r) {
            self.warm_up(|| (0..4).try_for_each(|_| run(&candidates[first], Purpose::Time).map(drop)))?;
        }
        for (i, c) in candidates.iter().enumerate() {
            for _ in 1..self.warmups {
                if !ran[i] {
                    break;
                }
                if let Err(e) = run(c, Purpose::Time) {
                    dropped.push((names[i].clone(), e.to_string()));
                    ran[i] = false;
                }
            }
        }
        // Timed in rounds, each round one launch of every candidate, so
        // that a clock that still drifts (a GPU ramping up or throttling)
        // weighs on every candidate alike instead of on whichever was timed
        // first or last.
        let mut samples: Vec<Vec<Duration>> = vec![Vec::with_capacity(self.samples); candidates.len()];
        for _ in 0..self.samples {
            for (i, c) in candidates.iter().enumerate() {
                if !ran[i] {
                    continue;
                }
                let (r, timing) = self
                    .device
                    .time(|| run(c, Purpose::Time))
                    .map_err(|source| TuneError::Device { kernel: self.kernel.clone(), source })?;
                if let Err(e) = r {
                    dropped.push((names[i].clone(), e.to_string()));
                    ran[i] = false;
                    continue;
                }
                samples[i].push(run_time(&timing));
                clock = Some(timing.clock);
            }
        }
        for (i, s) in samples.iter_mut().enumerate() {
            if ran[i] && !s.is_empty() {
                s.sort_unstable();
                times[i] = Some(s[s.len() / 2]);
            }
        }
        // The fastest; the earlier of equal times.
        let Some(index) = (0..candidates.len()).filter(|&i| times[i].is_some()).min_by_key(|&i| times[i]) else {
            progress.finish(None);
            return Err(TuneError::AllDropped { kernel: self.kernel.clone(), key: key.to_string(), dropped });
        };
        // TOML's integers are `i64`s: 292 years of nanoseconds.
        let median_ns = names
            .iter()
            .zip(&times)
            .filter_map(|(n, t)| {
                Some((n.clone(), u64::try_from((*t)?.as_nanos()).unwrap_or(u64::MAX).min(i64::MAX as u64)))
            })
            .collect();
        let mut entry =
            Entry::new(id, names[index].clone(), clock.map(|c| c.to_string()).unwrap_or_default(), median_ns);
        entry.dropped = dropped.into_iter().collect();
        progress.finish(Some((&names[index], times[index].unwrap_or_default())));
        let outcomes = outcomes_of(&entry, &names);
        self.remember(entry);
        Ok(Choice { index, candidate: &candidates[index], source: Source::Tuned, outcomes })
    }

    /// Brings the clocks back up before timing: `batch` (four launches of
    /// the first candidate that ran; a wait after every launch would leave
    /// the GPU idle for the round trip) again and again, for at least
    /// `WARM_UP` and until its time stops falling, at most `WARM_UP_MAX`:
    /// a GPU that idled at a low clock takes longer than `WARM_UP` to raise
    /// it (an H200 at 345 MHz still ran an 8192^2 transpose 2.5x slow after
    /// 0.2 s of it). The time is the best of each window of
    /// `WARM_UP_WINDOW`; it has stopped falling when three windows in a row
    /// came within 3% of the best so far (with one window compared to the
    /// last, the H200 still ran 25% slow after the warm-up: its clock
    /// climbs in steps). A CPU has no clock to wait for: `WARM_UP` there.
    /// A batch that fails ends the warm-up (the timed runs drop it).
    fn warm_up<E>(&self, mut batch: impl FnMut() -> Result<(), E>) -> Result<(), TuneError> {
        let started = std::time::Instant::now();
        let mut window_started = started;
        let mut window_best = Duration::MAX;
        let mut best_so_far = Duration::MAX;
        let mut flat_windows = 0;
        loop {
            let (r, timing) = self
                .device
                .time(&mut batch)
                .map_err(|source| TuneError::Device { kernel: self.kernel.clone(), source })?;
            if r.is_err() {
                return Ok(());
            }
            window_best = window_best.min(run_time(&timing));
            if window_started.elapsed() < WARM_UP_WINDOW {
                continue;
            }
            if best_so_far != Duration::MAX && window_best.as_secs_f64() >= 0.97 * best_so_far.as_secs_f64() {
                flat_windows += 1;
            } else {
                flat_windows = 0;
            }
            best_so_far = best_so_far.min(window_best);
            window_best = Duration::MAX;
            window_started = std::time::Instant::now();
            let settled = flat_windows >= 3 || !self.device.is_gpu();
            if (settled && started.elapsed() >= WARM_UP) || started.elapsed() >= WARM_UP_MAX {
                return Ok(());
            }
        }
    }

    /// The cached entry for `id`: this tuner's memory (with the cache file,
    /// read on first use), then the shipped cache.
    fn lookup(&self, id: &EntryId) -> Option<(Entry, Source)> {
        let mut state = self.lock();
        if state.entries.is_none() {
            let entries = match &self.file {
                Some(path) => {
                    let (entries, warning) = cache::load(path);
                    if let Some(w) = warning {
                        warn(&w);
                        state.warnings.push(w);
                    }
                    entries
                }
                None => Entries::new(),
            };
            state.entries = Some(entries);
        }
        if let Some(e) = state.entries.as_ref().and_then(|m| m.get(id)) {
            return Some((e.clone(), Source::Cached));
        }
        self.shipped.get(id).map(|e| (e.clone(), Source::Shipped))
    }

    /// Stores a new result in memory and in the cache file.
    fn remember(&self, entry: Entry) {
        let stored = self.file.as_deref().map(|path| cache::store(path, std::slice::from_ref(&entry)));
        let mut guard = self.lock();
        let state = &mut *guard;
        let entries = state.entries.get_or_insert_with(Entries::new);
        let warning = match stored {
            // The merged file: this result and every other process's.
            Some(Ok((merged, warning))) => {
                *entries = merged;
                // A corrupt file was reported when first read; one that
                // became corrupt since then is reported here.
                warning.filter(|w| !state.warnings.contains(w))
            }
            Some(Err(why)) => {
                entries.insert(entry.id(), entry);
                Some(why)
            }
            None => {
                entries.insert(entry.id(), entry);
                None
            }
        };
        if let Some(w) = warning {
            warn(&w);
            state.warnings.push(w);
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Forgets what was read from the cache file (it changed).
    fn reset(&mut self) {
        self.state.get_mut().unwrap_or_else(|e| e.into_inner()).entries = None;
    }
}

impl fmt::Debug for Tuner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tuner")
            .field("kernel", &self.kernel)
            .field("wgsl_hash", &self.wgsl_hash)
            .field("adapter", &self.adapter)
            .field("driver", &self.driver)
            .field("mode", &self.mode)
            .field("file", &self.file)
            .finish_non_exhaustive()
    }
}

/// The cache file tuners use by default: `tune.toml` in the directory
/// `ONEKERNEL_CACHE_DIR` names, else in `onekernel` in the platform's cache
/// directory (`dirs::cache_dir`); `None` when there is neither.
pub fn cache_file() -> Option<PathBuf> {
    match std::env::var_os(CACHE_DIR_ENV) {
        Some(dir) if !dir.is_empty() => Some(PathBuf::from(dir).join(FILE_NAME)),
        _ => dirs::cache_dir().map(|d| d.join("onekernel").join(FILE_NAME)),
    }
}

/// The device's part of a cache entry: (adapter, driver).
fn device_identity(device: &Device) -> (String, String) {
    let handle = if device.is_checked() {
        " (checked)"
    } else if device.is_unchecked() {
        " (unchecked)"
    } else {
        ""
    };
    match device.backend() {
        DeviceBackend::Gpu(g) => {
            let i = g.adapter_info();
            let adapter = format!("{} ({:?}, {:04x}:{:04x}){handle}", i.name, i.backend, i.vendor, i.device);
            let driver = format!("{} {}", i.driver, i.driver_info).trim().to_owned();
            (adapter, driver)
        }
        DeviceBackend::Cpu(_) => (device.name(), concat!("onekernel-runtime ", env!("CARGO_PKG_VERSION")).to_owned()),
    }
}

/// The outcomes recorded in `entry`, in the candidates' order.
/// A run's time: its launches' device time, or its wall time where it
/// launched nothing.
fn run_time(timing: &Timing) -> Duration {
    if timing.launches() > 0 {
        timing.total
    } else {
        timing.elapsed
    }
}

fn outcomes_of(entry: &Entry, names: &[String]) -> Vec<Outcome> {
    names
        .iter()
        .map(|n| Outcome {
            name: n.clone(),
            result: match entry.median_ns.get(n) {
                Some(&ns) => Ok(Duration::from_nanos(ns)),
                None => Err(entry.dropped.get(n).cloned().unwrap_or_else(|| "dropped".to_owned())),
            },
        })
        .collect()
}

fn warn(message: &str) {
    eprintln!("onekernel: warning: {message}");
}

/// Progress on stderr, only when it is a terminal.
struct Progress {
    what: Option<String>,
}

impl Progress {
    fn new(kernel: &str, key: &Key, device: &Device) -> Progress {
        let what = std::io::stderr().is_terminal().then(|| format!("tuning `{kernel}` ({key}) on {}", device.name()));
        Progress { what }
    }

    fn show(&self, i: usize, n: usize, name: &str) {
        if let Some(what) = &self.what {
            let mut err = std::io::stderr().lock();
            // `\x1b[K` clears the rest of the line.
            let _ = write!(err, "\ronekernel: {what}: candidate {i} of {n} (`{name}`)\x1b[K");
            let _ = err.flush();
        }
    }

    fn finish(&self, winner: Option<(&str, Duration)>) {
        if let Some(what) = &self.what {
            let mut err = std::io::stderr().lock();
            let _ = match winner {
                Some((name, t)) => writeln!(err, "\ronekernel: {what}: `{name}` is fastest ({t:?})\x1b[K"),
                None => writeln!(err, "\ronekernel: {what}: every candidate failed\x1b[K"),
            };
        }
    }
}
