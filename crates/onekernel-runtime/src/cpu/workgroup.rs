//! Workgroup cooperation on the CPU: shared memory and barriers.
//!
//! A kernel that uses `workgroup_barrier()` or shared memory runs on the
//! cooperative executor (`cooperative.rs`): the invocations of one workgroup
//! are futures polled in turn on one thread, and a barrier is an `.await`
//! that completes only once every invocation of the workgroup has reached
//! it. The [`Workgroup`] is what they share: its memory (zeroed, as WGSL
//! zeroes `var<workgroup>`) and the barrier's state.

use crate::buffer::Element;
use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::atomic::{AtomicI32, AtomicU32, AtomicU64, AtomicUsize, Ordering};
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
}

impl Workgroup {
    /// A workgroup with `words` words of zeroed shared memory.
    pub(crate) fn new(words: usize) -> Workgroup {
        Workgroup {
            memory: (0..words).map(|_| AtomicU32::new(0)).collect(),
            generation: AtomicU64::new(0),
            waiting: AtomicUsize::new(0),
            site: AtomicU64::new(NO_SITE),
            diverged: AtomicU64::new(NO_SITE),
        }
    }

    /// Zeroes the memory (WGSL zero-initialises `var<workgroup>`) and the
    /// barrier for the next workgroup.
    pub(crate) fn reset(&self) {
        for w in self.memory.iter() {
            w.store(0, Ordering::Relaxed);
        }
        self.waiting.store(0, Ordering::Relaxed);
        self.site.store(NO_SITE, Ordering::Relaxed);
        self.diverged.store(NO_SITE, Ordering::Relaxed);
    }

    /// The shared array declared at word `offset`, viewed as `T` (an array
    /// type such as `[f32; 256]`, `[[u32; 16]; 16]` or `[AtomicU32; 64]`).
    #[track_caller]
    pub fn shared<T: SharedArray>(&self, offset: usize) -> Shared<'_, T> {
        let words = &self.memory[offset..offset + T::WORDS];
        Shared { words, _type: PhantomData }
    }

    /// `workgroup_barrier()`: completes when every invocation of the
    /// workgroup has reached a barrier. `site` identifies the call site, so
    /// that invocations waiting at different barriers are caught.
    pub fn barrier(&self, site: u32) -> Barrier<'_> {
        Barrier { workgroup: self, site, generation: None }
    }

    /// Invocations waiting at the barrier now.
    pub(crate) fn waiting(&self) -> usize {
        self.waiting.load(Ordering::Relaxed)
    }

    /// Lets every waiting invocation pass. Returns the two call sites if
    /// invocations were waiting at different barriers.
    pub(crate) fn release(&self) -> Result<(), (u32, u32)> {
        let d = self.diverged.load(Ordering::Relaxed);
        if d != NO_SITE {
            return Err(((d >> 32) as u32, d as u32));
        }
        self.waiting.store(0, Ordering::Relaxed);
        self.site.store(NO_SITE, Ordering::Relaxed);
        self.generation.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }
}

/// One [`Workgroup`] per executor thread, made by the generated launch code
/// and lent to the executor for one launch.
pub struct WorkgroupPool {
    workgroups: Vec<Workgroup>,
}

impl WorkgroupPool {
    /// Enough workgroups for every rayon thread and the caller.
    pub(crate) fn new(words: usize) -> WorkgroupPool {
        WorkgroupPool { workgroups: (0..=rayon::current_num_threads()).map(|_| Workgroup::new(words)).collect() }
    }

    /// The calling thread's workgroup.
    pub(crate) fn current(&self) -> &Workgroup {
        let i = rayon::current_thread_index().unwrap_or(self.workgroups.len() - 1);
        &self.workgroups[i.min(self.workgroups.len() - 1)]
    }
}

/// The future of one invocation's barrier call.
pub struct Barrier<'a> {
    workgroup: &'a Workgroup,
    site: u32,
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
                    NO_SITE => wg.site.store(site, Ordering::Relaxed),
                    s if s != site => wg.diverged.store(s << 32 | site, Ordering::Relaxed),
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
    /// Size in 32-bit words.
    const WORDS: usize;
}

impl<T: Element, const N: usize> SharedArray for [T; N] {
    const WORDS: usize = N;
}
impl<T: Element, const R: usize, const C: usize> SharedArray for [[T; C]; R] {
    const WORDS: usize = R * C;
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
/// not for synchronisation.
pub struct Shared<'a, T> {
    words: &'a [AtomicU32],
    _type: PhantomData<T>,
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
        bytemuck::cast(word(self.words, i, N).load(Ordering::Relaxed))
    }
    /// `tile[i] = v`; panics out of bounds like Rust indexing.
    #[track_caller]
    #[inline]
    pub fn store(&self, i: usize, v: T) {
        word(self.words, i, N).store(bytemuck::cast(v), Ordering::Relaxed)
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
        bytemuck::cast(word2(self.words, r, c, R, C).load(Ordering::Relaxed))
    }
    /// `tile[r][c] = v`; panics out of bounds like Rust indexing.
    #[track_caller]
    #[inline]
    pub fn store2(&self, r: usize, c: usize, v: T) {
        word2(self.words, r, c, R, C).store(bytemuck::cast(v), Ordering::Relaxed)
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

#[track_caller]
#[inline]
fn word2(words: &[AtomicU32], r: usize, c: usize, rows: usize, cols: usize) -> &AtomicU32 {
    if r >= rows {
        out_of_bounds(r, rows);
    }
    if c >= cols {
        out_of_bounds(c, cols);
    }
    &words[r * cols + c]
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
        let wg = Workgroup::new(16 + 4);
        let a = wg.shared::<[f32; 16]>(0);
        a.store(3, 2.5);
        assert_eq!(a.load(3), 2.5);
        let m = wg.shared::<[[u32; 2]; 2]>(16);
        m.store2(1, 1, 7);
        assert_eq!(m.load2(1, 1), 7);
        assert!(std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| m.load2(0, 2))).is_err());
        let c = wg.shared::<[AtomicI32; 4]>(16);
        c.at(0).fetch_sub(1, Ordering::Relaxed);
        assert_eq!(c.at(0).load(Ordering::Relaxed), -1);
    }
}
