//! Workgroup cooperation on the CPU: shared memory and barriers.
//!
//! A kernel that uses `workgroup_barrier()` or shared memory runs on the
//! cooperative executor (`cooperative.rs`): the invocations of one workgroup
//! are futures polled in turn on one thread, and a barrier is an `.await`
//! that completes only once every invocation of the workgroup has reached
//! it. The [`Workgroup`] is what they share: its memory (zeroed, as WGSL
//! zeroes `var<workgroup>`) and the barrier's state.

use super::subgroup::{SubgroupBallot, SubgroupCall, SubgroupCollective, SubgroupValue, Subgroups};
use crate::buffer::Element;
use crate::grid::Invocation;
use std::future::Future;
use std::marker::PhantomData;
use std::panic::Location;
use std::pin::Pin;
use std::sync::atomic::{AtomicI32, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::task::{Context, Poll};

/// No barrier call site recorded yet.
const NO_SITE: u64 = u64::MAX;

/// What the invocations of one workgroup share on the CPU.
///
/// A workgroup runs on one thread, so nothing here synchronises threads;
/// the fields are atomics only so that a [`WorkgroupPool`] can be shared
/// by the executor's threads (each uses its own `Workgroup`).
pub struct Workgroup {
    /// Shared memory, as 32-bit words; the compiler assigns each
    /// `shared::<[T; N]>()` declaration its word offset.
    memory: Box<[AtomicU32]>,
    /// Incremented each time the barrier releases its waiters.
    generation: AtomicU64,
    /// Invocations waiting at the barrier.
    waiting: AtomicUsize,
    /// The call site they wait at (`NO_SITE` when none).
    site: AtomicU64,
    /// Set (to `a << 32 | b`) when invocations wait at two different sites.
    diverged: AtomicU64,
    /// Where in the kernel's source the waiting invocations called the
    /// barrier, and (after a divergence) where the first one that called
    /// another did: for the divergence error (no lock is ever contended:
    /// a workgroup runs on one thread).
    sites_at: Mutex<(Option<&'static Location<'static>>, Option<&'static Location<'static>>)>,
    /// Whether accesses to shared memory are recorded by the race detector
    /// (a race-checked launch).
    race_check: bool,
    /// The subgroups' meetings (`subgroup.rs`).
    pub(crate) subgroups: Subgroups,
}

impl Workgroup {
    /// A workgroup of `invocations` invocations with `words` words of
    /// zeroed shared memory, its accesses recorded if `race_check`.
    pub(crate) fn new(words: usize, invocations: usize, race_check: bool) -> Workgroup {
        Workgroup {
            race_check,
            memory: (0..words).map(|_| AtomicU32::new(0)).collect(),
            generation: AtomicU64::new(0),
            waiting: AtomicUsize::new(0),
            site: AtomicU64::new(NO_SITE),
            diverged: AtomicU64::new(NO_SITE),
            sites_at: Mutex::new((None, None)),
            subgroups: Subgroups::new(invocations),
        }
    }

    fn sites_at(&self) -> MutexGuard<'_, (Option<&'static Location<'static>>, Option<&'static Location<'static>>)> {
        // Updates are single assignments: a poisoned lock is consistent.
        self.sites_at.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Where the invocations waiting now called the barrier.
    pub(crate) fn waiting_at(&self) -> Option<&'static Location<'static>> {
        self.sites_at().0
    }

    /// Zeroes the memory (WGSL zero-initialises `var<workgroup>`) and the
    /// barrier for the next workgroup.
    pub(crate) fn reset(&self) {
        self.clear_memory();
        self.waiting.store(0, Ordering::Relaxed);
        self.site.store(NO_SITE, Ordering::Relaxed);
        self.diverged.store(NO_SITE, Ordering::Relaxed);
        self.subgroups.reset();
        *self.sites_at() = (None, None);
    }

    /// Zeroes the memory (only: the phase executor uses no barrier or
    /// subgroup state) through exclusive access, which compiles to a
    /// memset.
    pub(crate) fn zero_memory(&mut self) {
        for w in self.memory.iter_mut() {
            *w.get_mut() = 0;
        }
    }

    fn clear_memory(&self) {
        for w in self.memory.iter() {
            w.store(0, Ordering::Relaxed);
        }
    }

    /// A subgroup collective (`subgroup_add(v)`, a shuffle, ...) of
    /// `invocation`: completes when every invocation of its subgroup has
    /// reached a collective, with this invocation's result. `operand` is
    /// the lane, mask or distance of a broadcast or shuffle (0 otherwise);
    /// `site` identifies the call site, so that invocations of a subgroup
    /// at different collectives are caught.
    pub fn subgroup<T: SubgroupValue>(
        &self,
        invocation: &Invocation,
        site: u32,
        op: SubgroupCollective,
        value: T,
        operand: u32,
    ) -> SubgroupCall<'_, T> {
        SubgroupCall::new(&self.subgroups, invocation, site, op, T::KIND, value.to_bits(), operand)
    }

    /// `subgroup_ballot(predicate)`: bit `i` of the result is lane `i`'s
    /// predicate (all in `x`: the CPU's subgroups have 32 lanes).
    pub fn subgroup_ballot(&self, invocation: &Invocation, site: u32, predicate: bool) -> SubgroupBallot<'_> {
        let kind = <bool as SubgroupValue>::KIND;
        let call = SubgroupCall::new(
            &self.subgroups,
            invocation,
            site,
            SubgroupCollective::Ballot,
            kind,
            predicate.to_bits(),
            0,
        );
        SubgroupBallot::new(call)
    }

    /// The shared array `name` declared at word `offset`, viewed as `T`
    /// (an array type such as `[f32; 256]`, `[[u32; 16]; 16]` or
    /// `[AtomicU32; 64]`). The name is for the race detector's reports.
    #[track_caller]
    pub fn shared<T: SharedArray>(&self, offset: usize, name: &'static str) -> Shared<'_, T> {
        let words = &self.memory[offset..offset + T::WORDS];
        Shared { words, race_check: self.race_check.then_some(name), _type: PhantomData }
    }

    /// `workgroup_barrier()`: completes when every invocation of the
    /// workgroup has reached a barrier. `site` identifies the call site, so
    /// that invocations waiting at different barriers are caught; the
    /// caller's location (the user's line: generated code calls this under
    /// the barrier's span) is what the divergence error shows.
    #[track_caller]
    pub fn barrier(&self, site: u32) -> Barrier<'_> {
        Barrier { workgroup: self, site, at: Location::caller(), generation: None }
    }

    /// Whether the launch is race-checked.
    pub(crate) fn race_check(&self) -> bool {
        self.race_check
    }

    /// Invocations waiting at the barrier now.
    pub(crate) fn waiting(&self) -> usize {
        self.waiting.load(Ordering::Relaxed)
    }

    /// Lets every waiting invocation pass. Returns the two call sites if
    /// invocations were waiting at different barriers.
    pub(crate) fn release(&self) -> Result<(), BarrierDivergence> {
        let d = self.diverged.load(Ordering::Relaxed);
        if d != NO_SITE {
            let (first_at, other_at) = *self.sites_at();
            return Err(BarrierDivergence { first: (d >> 32) as u32, other: d as u32, first_at, other_at });
        }
        *self.sites_at() = (None, None);
        self.waiting.store(0, Ordering::Relaxed);
        self.site.store(NO_SITE, Ordering::Relaxed);
        self.generation.fetch_add(1, Ordering::Relaxed);
        if self.race_check {
            super::racecheck::next_phase();
        }
        Ok(())
    }
}

/// One [`Workgroup`] per executor thread, made by the generated launch code
/// and lent to the executor for one launch.
pub struct WorkgroupPool {
    workgroups: Vec<Workgroup>,
}

impl WorkgroupPool {
    /// Enough workgroups (of `invocations` invocations each) for every
    /// rayon thread and the caller.
    pub(crate) fn new(words: usize, invocations: usize, race_check: bool) -> WorkgroupPool {
        let workgroups =
            (0..=rayon::current_num_threads()).map(|_| Workgroup::new(words, invocations, race_check)).collect();
        WorkgroupPool { workgroups }
    }

    /// The calling thread's workgroup.
    pub(crate) fn current(&self) -> &Workgroup {
        let i = rayon::current_thread_index().unwrap_or(self.workgroups.len() - 1);
        &self.workgroups[i.min(self.workgroups.len() - 1)]
    }
}

/// Invocations of one workgroup waiting at two different barriers.
pub(crate) struct BarrierDivergence {
    /// The site the first waiting invocation reached, and where it is.
    pub first: u32,
    pub first_at: Option<&'static Location<'static>>,
    /// The first different site reached, and where it is.
    pub other: u32,
    pub other_at: Option<&'static Location<'static>>,
}

impl std::fmt::Display for BarrierDivergence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let at = |l: Option<&Location<'_>>, site| match l {
            Some(l) => format!("the barrier at {}:{}:{}", l.file(), l.line(), l.column()),
            None => format!("barrier #{site}"),
        };
        write!(f, "{} and {}", at(self.first_at, self.first), at(self.other_at, self.other))
    }
}

/// The future of one invocation's barrier call.
pub struct Barrier<'a> {
    workgroup: &'a Workgroup,
    site: u32,
    /// The barrier call in the kernel's source.
    at: &'static Location<'static>,
    generation: Option<u64>,
}

impl Future for Barrier<'_> {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
        let wg = self.workgroup;
        match self.generation {
            // Arriving: wait for the release.
            None => {
                self.generation = Some(wg.generation.load(Ordering::Relaxed));
                wg.waiting.fetch_add(1, Ordering::Relaxed);
                let site = u64::from(self.site);
                match wg.site.load(Ordering::Relaxed) {
                    NO_SITE => {
                        wg.site.store(site, Ordering::Relaxed);
                        wg.sites_at().0 = Some(self.at);
                    }
                    s if s != site && wg.diverged.load(Ordering::Relaxed) == NO_SITE => {
                        wg.diverged.store(s << 32 | site, Ordering::Relaxed);
                        wg.sites_at().1 = Some(self.at);
                    }
                    _ => {}
                }
                Poll::Pending
            }
            Some(g) if wg.generation.load(Ordering::Relaxed) > g => Poll::Ready(()),
            Some(_) => Poll::Pending,
        }
    }
}

/// Array types that can live in shared memory.
pub trait SharedArray {
    /// Size in 32-bit words: the array's bytes, rounded up to a word (an
    /// array of `N` elements of `T` takes `N * size_of::<T>()` bytes,
    /// packed, so `[f16; 5]` takes 3 words and `[Vec4; 2]` 8).
    const WORDS: usize;
}

impl<T: Element, const N: usize> SharedArray for [T; N] {
    const WORDS: usize = (N * size_of::<T>()).div_ceil(4);
}
impl<T: Element, const R: usize, const C: usize> SharedArray for [[T; C]; R] {
    const WORDS: usize = (R * C * size_of::<T>()).div_ceil(4);
}
impl<const N: usize> SharedArray for [AtomicU32; N] {
    const WORDS: usize = N;
}
impl<const N: usize> SharedArray for [AtomicI32; N] {
    const WORDS: usize = N;
}

/// A view of one shared array. Element accesses are relaxed atomics on the
/// 32-bit words (ordinary loads and stores on the CPU): the invocations of
/// a workgroup all run on one thread, so this is for soundness in depth,
/// not for synchronisation. Element `i` is the bytes
/// `i * size_of::<T>()..` of the array's words, so elements smaller than a
/// word (`f16`) share one, and a store of such an element reads the word,
/// replaces its bytes and writes it back (exact: nothing else runs on the
/// workgroup's thread in between).
pub struct Shared<'a, T> {
    words: &'a [AtomicU32],
    /// The array's name when the launch is race-checked.
    race_check: Option<&'static str>,
    _type: PhantomData<T>,
}

impl<T> Shared<'_, T> {
    /// Records an access to the element of `size` bytes at `element` (its
    /// index in the flattened array) for the race detector; `describe`
    /// writes its indices.
    #[cold]
    #[inline(never)]
    fn record(
        &self,
        name: &'static str,
        element: usize,
        size: usize,
        write: bool,
        at: &'static std::panic::Location<'static>,
        describe: impl FnOnce() -> String,
    ) {
        let address = self.words.as_ptr() as usize + element * size;
        super::racecheck::access(super::racecheck::Memory::Shared, address, write, at, || {
            format!("{name}{}", describe())
        });
    }
}

impl<T: Element, const N: usize> Shared<'_, [T; N]> {
    /// Number of elements.
    pub fn len(&self) -> usize {
        N
    }
    /// Always false (`N > 0` is checked at compile time).
    pub fn is_empty(&self) -> bool {
        N == 0
    }
    /// `tile[i]`; panics out of bounds like Rust indexing.
    #[track_caller]
    #[inline]
    pub fn load(&self, i: usize) -> T {
        check(i, N);
        if let Some(name) = self.race_check {
            self.record(name, i, size_of::<T>(), false, std::panic::Location::caller(), || format!("[{i}]"));
        }
        load_element(self.words, i)
    }
    /// `tile[i] = v`; panics out of bounds like Rust indexing.
    #[track_caller]
    #[inline]
    pub fn store(&self, i: usize, v: T) {
        check(i, N);
        if let Some(name) = self.race_check {
            self.record(name, i, size_of::<T>(), true, std::panic::Location::caller(), || format!("[{i}]"));
        }
        store_element(self.words, i, v)
    }
}

impl<T: Element, const R: usize, const C: usize> Shared<'_, [[T; C]; R]> {
    /// Number of rows.
    pub fn len(&self) -> usize {
        R
    }
    /// `tile[r][c]`; panics out of bounds like Rust indexing.
    #[track_caller]
    #[inline]
    pub fn load2(&self, r: usize, c: usize) -> T {
        check(r, R);
        check(c, C);
        if let Some(name) = self.race_check {
            let at = std::panic::Location::caller();
            self.record(name, r * C + c, size_of::<T>(), false, at, || format!("[{r}][{c}]"));
        }
        load_element(self.words, r * C + c)
    }
    /// `tile[r][c] = v`; panics out of bounds like Rust indexing.
    #[track_caller]
    #[inline]
    pub fn store2(&self, r: usize, c: usize, v: T) {
        check(r, R);
        check(c, C);
        if let Some(name) = self.race_check {
            let at = std::panic::Location::caller();
            self.record(name, r * C + c, size_of::<T>(), true, at, || format!("[{r}][{c}]"));
        }
        store_element(self.words, r * C + c, v)
    }
}

impl<const N: usize> Shared<'_, [AtomicU32; N]> {
    /// Number of elements.
    pub fn len(&self) -> usize {
        N
    }
    /// `counts[i]`: the atomic, for `fetch_add` and friends.
    #[track_caller]
    #[inline]
    pub fn at(&self, i: usize) -> &AtomicU32 {
        word(self.words, i, N)
    }
}

impl<const N: usize> Shared<'_, [AtomicI32; N]> {
    /// Number of elements.
    pub fn len(&self) -> usize {
        N
    }
    /// `counts[i]`: the atomic, for `fetch_add` and friends.
    #[track_caller]
    #[inline]
    pub fn at(&self, i: usize) -> &AtomicI32 {
        as_i32(word(self.words, i, N))
    }
}

#[track_caller]
#[inline]
fn word(words: &[AtomicU32], i: usize, n: usize) -> &AtomicU32 {
    if i >= n {
        out_of_bounds(i, n);
    }
    &words[i]
}

/// Panics like Rust indexing unless `i < n`.
#[track_caller]
#[inline(always)]
fn check(i: usize, n: usize) {
    if i >= n {
        out_of_bounds(i, n);
    }
}

/// Element `i` (in bounds) of a packed array of `T` in `words`.
#[inline(always)]
fn load_element<T: Element>(words: &[AtomicU32], i: usize) -> T {
    let size = size_of::<T>();
    let mut value = T::zeroed();
    let out = bytemuck::bytes_of_mut(&mut value);
    if size.is_multiple_of(4) {
        // Whole words: the common case (f32, u32, vectors, most structs).
        let first = i * (size / 4);
        for (chunk, w) in out.chunks_exact_mut(4).zip(&words[first..first + size / 4]) {
            chunk.copy_from_slice(&w.load(Ordering::Relaxed).to_ne_bytes());
        }
    } else {
        for (k, byte) in out.iter_mut().enumerate() {
            let at = i * size + k;
            *byte = words[at / 4].load(Ordering::Relaxed).to_ne_bytes()[at % 4];
        }
    }
    value
}

/// Writes element `i` (in bounds) of a packed array of `T` in `words`.
#[inline(always)]
fn store_element<T: Element>(words: &[AtomicU32], i: usize, value: T) {
    let size = size_of::<T>();
    let bytes = bytemuck::bytes_of(&value);
    if size.is_multiple_of(4) {
        let first = i * (size / 4);
        for (chunk, w) in bytes.chunks_exact(4).zip(&words[first..first + size / 4]) {
            w.store(u32::from_ne_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]), Ordering::Relaxed);
        }
    } else {
        // Bytes of a word shared with a neighbour: read, replace, write
        // back (the workgroup's invocations share one thread).
        let start = i * size;
        let first = start / 4;
        for (k, word) in words[first..(start + size).div_ceil(4)].iter().enumerate() {
            let mut w = word.load(Ordering::Relaxed).to_ne_bytes();
            for (b, slot) in w.iter_mut().enumerate() {
                let at = (first + k) * 4 + b;
                if (start..start + size).contains(&at) {
                    *slot = bytes[at - start];
                }
            }
            word.store(u32::from_ne_bytes(w), Ordering::Relaxed);
        }
    }
}

#[cold]
#[inline(never)]
#[track_caller]
fn out_of_bounds(index: usize, len: usize) -> ! {
    panic!("index out of bounds: the len is {len} but the index is {index}")
}

/// Views an `AtomicU32` as an `AtomicI32`.
pub(crate) fn as_i32(w: &AtomicU32) -> &AtomicI32 {
    // SAFETY: AtomicU32 and AtomicI32 have the same size, alignment and bit
    // validity (any 32 bits are a valid i32), and the returned reference
    // borrows `w`, so all access stays atomic and within its lifetime.
    unsafe { AtomicI32::from_ptr(w.as_ptr().cast::<i32>()) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_views_and_bounds() {
        let wg = Workgroup::new(16 + 4, 1, false);
        let a = wg.shared::<[f32; 16]>(0, "t");
        a.store(3, 2.5);
        assert_eq!(a.load(3), 2.5);
        let m = wg.shared::<[[u32; 2]; 2]>(16, "t");
        m.store2(1, 1, 7);
        assert_eq!(m.load2(1, 1), 7);
        assert!(std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| m.load2(0, 2))).is_err());
        let c = wg.shared::<[AtomicI32; 4]>(16, "t");
        c.at(0).fetch_sub(1, Ordering::Relaxed);
        assert_eq!(c.at(0).load(Ordering::Relaxed), -1);
    }

    #[test]
    fn shared_arrays_of_other_sizes() {
        use half::f16;
        assert_eq!(<[f16; 5] as SharedArray>::WORDS, 3);
        assert_eq!(<[glam::Vec4; 2] as SharedArray>::WORDS, 8);
        assert_eq!(<[[f64; 3]; 2] as SharedArray>::WORDS, 12);
        let wg = Workgroup::new(3 + 8 + 12, 1, false);
        let h = wg.shared::<[f16; 5]>(0, "t");
        for i in 0..5 {
            h.store(i, f16::from_f32(i as f32 + 0.5));
        }
        let got: Vec<f32> = (0..5).map(|i| h.load(i).to_f32()).collect();
        assert_eq!(got, [0.5, 1.5, 2.5, 3.5, 4.5]);
        assert!(std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| h.load(5))).is_err());
        let v = wg.shared::<[glam::Vec4; 2]>(3, "t");
        v.store(1, glam::Vec4::new(1.0, 2.0, 3.0, 4.0));
        assert_eq!((v.load(0), v.load(1)), (glam::Vec4::ZERO, glam::Vec4::new(1.0, 2.0, 3.0, 4.0)));
        let d = wg.shared::<[[f64; 3]; 2]>(11, "t");
        d.store2(1, 2, -0.125);
        assert_eq!((d.load2(1, 2), d.load2(0, 0)), (-0.125, 0.0));
        // The f16 array's neighbours were left alone.
        assert_eq!(h.load(4).to_f32(), 4.5);
    }
}
