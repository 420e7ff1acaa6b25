//! The CPU executor's race detector (`Device::cpu_race_checked()`,
//! `ONEKERNEL_RACECHECK=1`), after CUDA's `compute-sanitizer --tool
//! racecheck`.
//!
//! A race-checked launch runs its workgroups one after the other on the
//! calling thread, and the executor tells this module which invocation runs
//! (`enter`) and when a workgroup's barrier lets its invocations pass
//! (`next_phase`). Every access of a kernel body to a shared-memory element
//! or to an element of a `&mut [T]` output goes through the runtime
//! (`Shared::load`/`store`, `SharedSliceMut::load`/`store`), which calls
//! `access` with the user's line (`#[track_caller]`). Per element this
//! module keeps the last writer and the last readers of other invocations,
//! with the *phase* (the span between two barriers of a workgroup) of each
//! access, and reports the first of:
//!
//! * two invocations writing one element in one phase (in one workgroup
//!   for shared memory; for an output, in one phase of one workgroup or in
//!   two different workgroups, which nothing orders);
//! * an invocation reading an element another one wrote, or writing one
//!   another one read, under the same conditions: the value read depends on
//!   the order the GPU happens to run them in;
//! * a read of a shared-memory element no invocation of the workgroup has
//!   written (WGSL zeroes shared memory, but a kernel that relies on it
//!   almost always forgot a store).
//!
//! Atomics (`AtomicU32` shared arrays and buffers) never race and are not
//! recorded; neither are reads of `&[T]` inputs, which nothing writes.
//! The report is a [`DataRace`], returned by the launch as
//! [`LaunchError::DataRace`](crate::LaunchError::DataRace).

use crate::grid::Dim3;
use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt;
use std::panic::Location;

/// One access of a reported race: who made it, where in the source, and
/// whether it wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RaceAccess {
    /// The invocation's `global_id()`.
    pub invocation: Dim3,
    /// Its `block_id()` (workgroup).
    pub workgroup: Dim3,
    /// Its `thread_id()` (its place in the workgroup).
    pub thread: Dim3,
    /// Whether the access was a write.
    pub write: bool,
    /// `file:line:column` of the access in the kernel's source.
    pub location: String,
}

/// What kind of race a [`DataRace`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RaceKind {
    /// Two invocations wrote the element with nothing ordering the writes:
    /// which value stays depends on scheduling.
    WriteWrite,
    /// One invocation read the element another wrote (or wrote it after
    /// another read it) with no barrier between: the value read depends on
    /// scheduling.
    ReadWrite,
    /// An invocation read a shared-memory element that no invocation of its
    /// workgroup had written.
    UninitializedRead,
}

/// A data race the race detector found: the memory, the element and the
/// two accesses (one for an uninitialised read).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DataRace {
    /// The kind of race.
    pub kind: RaceKind,
    /// The element as the kernel names it: `tile[3][4]`, `out[17]`.
    pub element: String,
    /// Whether the element is in workgroup shared memory (else it is in an
    /// output buffer).
    pub shared: bool,
    /// The access that completed the race (the later one on the CPU).
    pub access: RaceAccess,
    /// The earlier, conflicting access of another invocation (`None` for
    /// [`RaceKind::UninitializedRead`]).
    pub other: Option<RaceAccess>,
}

impl fmt::Display for RaceAccess {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Dim3 { x, y, z } = self.invocation;
        let (w, t) = (self.workgroup, self.thread);
        write!(
            f,
            "invocation ({x}, {y}, {z}) (workgroup ({}, {}, {}), thread ({}, {}, {})) {} it at {}",
            w.x,
            w.y,
            w.z,
            t.x,
            t.y,
            t.z,
            if self.write { "writes" } else { "reads" },
            self.location
        )
    }
}

impl fmt::Display for DataRace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let memory = if self.shared { "shared-memory element" } else { "output element" };
        match (&self.kind, &self.other) {
            (RaceKind::UninitializedRead, _) | (_, None) => write!(
                f,
                "{memory} `{}` is read before any invocation of the workgroup wrote it: {}",
                self.element, self.access
            ),
            (kind, Some(other)) => {
                let what = match kind {
                    RaceKind::WriteWrite => "written by two invocations",
                    _ => "read and written by two invocations",
                };
                let between = if self.access.workgroup == other.workgroup {
                    "with no barrier between them"
                } else {
                    "in different workgroups, which nothing orders"
                };
                write!(f, "{memory} `{}` {what} {between}: {}; {}", self.element, other, self.access)
            }
        }
    }
}

/// One recorded access: the invocation (its linear index in the launch,
/// workgroup-major, so that a launch of millions of elements stays small),
/// the phase and the source line.
#[derive(Clone, Copy)]
struct Seen {
    who: u32,
    phase: u64,
    at: &'static Location<'static>,
}

/// The launch's shape, to number invocations and name them again.
#[derive(Clone, Copy)]
struct Shape {
    grid_dim: Dim3,
    block_dim: Dim3,
}

impl Shape {
    fn block_size(self) -> u32 {
        (self.block_dim.x * self.block_dim.y * self.block_dim.z) as u32
    }
    fn number(self, group: Dim3, thread: Dim3) -> u32 {
        let (g, b) = (self.grid_dim, self.block_dim);
        let group = (group.z * g.y + group.y) * g.x + group.x;
        let thread = (thread.z * b.y + thread.y) * b.x + thread.x;
        (group as u32) * self.block_size() + thread as u32
    }
    /// (global id, workgroup, thread) of invocation `who`.
    fn name(self, who: u32) -> (Dim3, Dim3, Dim3) {
        let (g, b) = (self.grid_dim, self.block_dim);
        let (group, thread) = ((who / self.block_size()) as usize, (who % self.block_size()) as usize);
        let group = Dim3::new(group % g.x, (group / g.x) % g.y, group / (g.x * g.y));
        let thread = Dim3::new(thread % b.x, (thread / b.x) % b.y, thread / (b.x * b.y));
        let global = Dim3::new(group.x * b.x + thread.x, group.y * b.y + thread.y, group.z * b.z + thread.z);
        (global, group, thread)
    }
}

/// Element addresses hashed by one multiplication: the detector hashes
/// every access, and SipHash would dominate its cost.
#[derive(Default)]
struct AddressHasher(u64);

impl std::hash::Hasher for AddressHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0 ^ u64::from(*b)).wrapping_mul(0x100_0000_01B3);
        }
    }
    fn write_usize(&mut self, n: usize) {
        self.0 = (n as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(29);
    }
}

type Elements = HashMap<usize, Element, std::hash::BuildHasherDefault<AddressHasher>>;

/// What is known of one element.
#[derive(Default)]
struct Element {
    writer: Option<Seen>,
    /// The last read, and the last read by another invocation than that
    /// one: enough to find a reader other than any later writer.
    readers: [Option<Seen>; 2],
}

/// The race-checked launch running on this thread.
struct Launch {
    shape: Shape,
    who: Option<u32>,
    /// Incremented at every barrier release; phases of different
    /// workgroups never compare equal because workgroups run one by one.
    phase: u64,
    /// Output elements by address, for the whole launch.
    outputs: Elements,
    /// Shared-memory elements by address, for the running workgroup.
    shared: Elements,
    first: Option<DataRace>,
}

thread_local! {
    static LAUNCH: RefCell<Option<Launch>> = const { RefCell::new(None) };
}

/// Starts recording a race-checked launch of `grid_dim` workgroups of
/// `block_dim` on this thread.
pub(crate) fn begin(grid_dim: Dim3, block_dim: Dim3) {
    LAUNCH.with(|l| {
        *l.borrow_mut() = Some(Launch {
            shape: Shape { grid_dim, block_dim },
            who: None,
            phase: 0,
            outputs: Elements::default(),
            shared: Elements::default(),
            first: None,
        })
    });
}

/// Stops recording; the first race found, if any.
pub(crate) fn end() -> Option<DataRace> {
    LAUNCH.with(|l| l.borrow_mut().take().and_then(|l| l.first))
}

/// Ends the recording even if the launch unwinds.
pub(crate) struct Recording(());

impl Recording {
    /// Starts recording (see [`begin`]).
    pub(crate) fn start(grid_dim: Dim3, block_dim: Dim3) -> Recording {
        begin(grid_dim, block_dim);
        Recording(())
    }
}

impl Drop for Recording {
    fn drop(&mut self) {
        end();
    }
}

/// The executor is about to run (or resume) this invocation.
pub(crate) fn enter(global: Dim3, group: Dim3, thread: Dim3) {
    LAUNCH.with(|l| {
        if let Some(l) = l.borrow_mut().as_mut() {
            debug_assert_eq!(l.shape.name(l.shape.number(group, thread)).0, global);
            l.who = Some(l.shape.number(group, thread));
        }
    });
}

/// A workgroup starts: its shared memory is fresh.
pub(crate) fn new_workgroup() {
    LAUNCH.with(|l| {
        if let Some(l) = l.borrow_mut().as_mut() {
            l.shared.clear();
            l.phase += 1;
        }
    });
}

/// A barrier released the running workgroup.
pub(crate) fn next_phase() {
    LAUNCH.with(|l| {
        if let Some(l) = l.borrow_mut().as_mut() {
            l.phase += 1;
        }
    });
}

/// Whether a race was found in the running launch (the executor stops
/// early: the rest would only add noise).
pub(crate) fn found() -> bool {
    LAUNCH.with(|l| l.borrow().as_ref().is_some_and(|l| l.first.is_some()))
}

/// Where an access goes.
#[derive(Clone, Copy)]
pub(crate) enum Memory {
    /// Workgroup shared memory.
    Shared,
    /// An element of a `&mut [T]` output.
    Output,
}

/// Records an access by the running invocation to the element at `address`,
/// named by `element` (called only if a race is reported).
pub(crate) fn access(
    memory: Memory,
    address: usize,
    write: bool,
    at: &'static Location<'static>,
    element: impl FnOnce() -> String,
) {
    LAUNCH.with(|l| {
        let mut l = l.borrow_mut();
        let Some(l) = l.as_mut() else { return };
        let (Some(who), None) = (l.who, &l.first) else { return };
        let (phase, shape) = (l.phase, l.shape);
        let block = shape.block_size();
        let now = Seen { who, phase, at };
        let shared = matches!(memory, Memory::Shared);
        let map = if shared { &mut l.shared } else { &mut l.outputs };
        let e = map.entry(address).or_default();
        // Another invocation's access conflicts unless a barrier of the
        // same workgroup separates the two (a shared element is only ever
        // seen by one workgroup).
        let conflicts = |s: &Seen| s.who != who && (s.who / block != who / block || s.phase == phase);
        let race = if write {
            if let Some(w) = e.writer.filter(conflicts) {
                Some((RaceKind::WriteWrite, Some(w)))
            } else {
                e.readers.iter().flatten().find(|r| conflicts(r)).map(|r| (RaceKind::ReadWrite, Some(*r)))
            }
        } else {
            match e.writer {
                Some(w) if conflicts(&w) => Some((RaceKind::ReadWrite, Some(w))),
                None if shared => Some((RaceKind::UninitializedRead, None)),
                _ => None,
            }
        };
        if write {
            e.writer = Some(now);
        } else {
            // Keep the newest read and the newest read by someone else.
            match e.readers[0] {
                Some(r) if r.who != who => e.readers = [Some(now), Some(r)],
                _ => e.readers[0] = Some(now),
            }
        }
        if let Some((kind, other)) = race {
            l.first = Some(DataRace {
                kind,
                element: element(),
                shared,
                access: describe(shape, now, write),
                other: other.map(|o| describe(shape, o, kind == RaceKind::WriteWrite || !write)),
            });
        }
    });
}

fn describe(shape: Shape, s: Seen, write: bool) -> RaceAccess {
    let (invocation, workgroup, thread) = shape.name(s.who);
    RaceAccess {
        invocation,
        workgroup,
        thread,
        write,
        location: format!("{}:{}:{}", s.at.file(), s.at.line(), s.at.column()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at() -> &'static Location<'static> {
        Location::caller()
    }

    #[test]
    fn write_write_in_one_phase_is_a_race_across_a_barrier_is_not() {
        let _r = Recording::start(Dim3::new(2, 1, 1), Dim3::new(4, 1, 1));
        new_workgroup();
        let g = Dim3::new(0, 0, 0);
        enter(Dim3::new(0, 0, 0), g, Dim3::new(0, 0, 0));
        access(Memory::Shared, 8, true, at(), || "t[2]".into());
        enter(Dim3::new(1, 0, 0), g, Dim3::new(1, 0, 0));
        next_phase();
        access(Memory::Shared, 8, true, at(), || "t[2]".into());
        assert!(!found());
        access(Memory::Shared, 8, false, at(), || "t[2]".into());
        enter(Dim3::new(0, 0, 0), g, Dim3::new(0, 0, 0));
        access(Memory::Shared, 8, true, at(), || "t[2]".into());
        let race = end().expect("a race");
        assert_eq!(race.kind, RaceKind::WriteWrite);
        assert_eq!(race.other.as_ref().map(|o| o.invocation), Some(Dim3::new(1, 0, 0)));
        assert!(race.to_string().contains("`t[2]` written by two invocations with no barrier"), "{race}");
    }

    #[test]
    fn uninitialised_shared_read_and_cross_workgroup_output() {
        let _r = Recording::start(Dim3::new(2, 1, 1), Dim3::new(4, 1, 1));
        new_workgroup();
        enter(Dim3::new(3, 0, 0), Dim3::new(0, 0, 0), Dim3::new(3, 0, 0));
        access(Memory::Shared, 0, false, at(), || "t[0]".into());
        assert_eq!(end().map(|r| r.kind), Some(RaceKind::UninitializedRead));

        begin(Dim3::new(2, 1, 1), Dim3::new(4, 1, 1));
        new_workgroup();
        enter(Dim3::new(0, 0, 0), Dim3::new(0, 0, 0), Dim3::new(0, 0, 0));
        access(Memory::Output, 64, false, at(), || "out[1]".into());
        next_phase();
        new_workgroup();
        enter(Dim3::new(4, 0, 0), Dim3::new(1, 0, 0), Dim3::new(0, 0, 0));
        access(Memory::Output, 64, true, at(), || "out[1]".into());
        let race = end().expect("a race");
        assert_eq!(race.kind, RaceKind::ReadWrite);
        assert!(race.to_string().contains("in different workgroups"), "{race}");
    }
}
