//! The fast path for the common "each invocation writes its own element"
//! kernel: `out[i] = ...` with `i = global_id().x` on a 1-D grid.
//!
//! The compiler proves the pattern (`KernelInfo::cpu` is `OwnElement`); the
//! executor then gives each chunk of invocations an [`OwnedChunk`] of every
//! output: a window of the elements that chunk's invocations own, read and
//! written with plain (vectorisable) loads and stores instead of atomics.
//!
//! Soundness does not rest on the compiler's proof: an `OwnedChunk`
//! checks every index against its own window and panics outside it, so two
//! chunks can never touch the same element. A wrong proof would cost a
//! panic (the launch's `Err`), never undefined behaviour.

use super::shared::{out_of_bounds, SharedSliceMut};
use crate::buffer::Element;
use std::marker::PhantomData;
use std::ops::Range;

/// What a kernel body sees for a `&mut [T]` parameter on the CPU: either
/// the shared atomic view or a chunk's owned window.
pub trait OutputSlice<T: Element> {
    /// Number of elements of the whole buffer (what `out.len()` gives).
    fn len(&self) -> usize;
    /// Whether the buffer is empty.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Reads element `index`; panics out of bounds like Rust indexing.
    fn load(&self, index: usize) -> T;
    /// Writes element `index`; panics out of bounds like Rust indexing.
    fn store(&self, index: usize, value: T);
}

impl<T: Element> OutputSlice<T> for SharedSliceMut<'_, T> {
    #[inline]
    fn len(&self) -> usize {
        SharedSliceMut::len(self)
    }
    #[inline]
    #[track_caller]
    fn load(&self, index: usize) -> T {
        SharedSliceMut::load(self, index)
    }
    #[inline]
    #[track_caller]
    fn store(&self, index: usize, value: T) {
        SharedSliceMut::store(self, index, value)
    }
}

/// The elements `window` of an output, owned by one chunk of invocations
/// on one thread. Not `Send` or `Sync`: it never leaves that thread.
pub struct OwnedChunk<'a, T: Element> {
    ptr: *mut T,
    len: usize,
    window: Range<usize>,
    _borrow: PhantomData<&'a SharedSliceMut<'a, T>>,
}

impl<'a, T: Element> SharedSliceMut<'a, T> {
    /// A plain-access window of `window` (clipped to the buffer).
    ///
    /// # Safety
    /// The chunk must not outlive `self` (the caller picks `'c`), and while
    /// it lives no other code may access the elements in `window` (through
    /// this view or another chunk). The executor guarantees it by handing
    /// disjoint windows to its chunks, running each chunk on one thread and
    /// dropping its windows when the chunk ends (see [`Outputs`]).
    unsafe fn owned_chunk<'c>(&self, window: Range<usize>) -> OwnedChunk<'c, T> {
        let len = self.len();
        let window = window.start.min(len)..window.end.min(len);
        OwnedChunk { ptr: self.as_mut_ptr(), len, window, _borrow: PhantomData }
    }
}

/// Proof of being the executor: only this crate can make one, so only the
/// executor can call [`Outputs::windows`].
#[derive(Debug)]
pub struct WindowToken(());

impl WindowToken {
    pub(crate) fn new() -> WindowToken {
        WindowToken(())
    }
}

mod sealed {
    /// Restricts [`super::Outputs`] to tuples of `SharedSliceMut`.
    pub trait Sealed {}
}

/// The `&mut [T]` outputs of an [`OwnElement`](onekernel_abi::CpuPlan::OwnElement)
/// launch, as a tuple of [`SharedSliceMut`] views (arity 0 to 12), moved
/// into [`CpuDevice::execute_partitioned`](super::CpuDevice::execute_partitioned)
/// so that nothing else can touch them while the launch runs.
///
/// The executor alone turns them into per-chunk [`OwnedChunk`] windows:
/// [`Outputs::windows`] needs a [`WindowToken`], which only this crate can
/// make, and the trait is sealed. Generated code therefore contains no
/// `unsafe`.
pub trait Outputs: Sync + sealed::Sealed {
    /// The tuple of windows a chunk sees: one [`OwnedChunk`] per output.
    /// (No `Self: 'c` bound: the chunk body is higher-ranked over `'c`,
    /// which such a bound would turn into `Self: 'static`.)
    type Windows<'c>;

    /// Each output's window of the elements `x_range`.
    ///
    /// # Safety
    /// The windows must not outlive `self` (the caller picks `'c`), and
    /// while they live no other code may access the elements in `x_range`
    /// of these outputs: the executor hands each chunk (run on one thread)
    /// a range disjoint from every other chunk's, and drops the windows
    /// when the chunk ends.
    #[doc(hidden)]
    unsafe fn windows<'c>(&self, x_range: Range<usize>, token: WindowToken) -> Self::Windows<'c>;
}

macro_rules! outputs_for_tuples {
    ($(($($t:ident $v:ident),*)),* $(,)?) => {$(
        impl<'a, $($t: Element),*> sealed::Sealed for ($(SharedSliceMut<'a, $t>,)*) {}

        impl<'a, $($t: Element),*> Outputs for ($(SharedSliceMut<'a, $t>,)*) {
            type Windows<'c> = ($(OwnedChunk<'c, $t>,)*);

            #[allow(unused_variables, clippy::unused_unit)]
            unsafe fn windows<'c>(&self, x_range: Range<usize>, token: WindowToken) -> Self::Windows<'c> {
                let ($($v,)*) = self;
                // SAFETY: forwarded: the caller (the executor, holding the
                // token) keeps the windows within the life of `self` and
                // guarantees that nothing else accesses `x_range` of any
                // of these outputs while they live; each output is a
                // distinct `&mut` borrow, so the windows of one tuple never
                // overlap either.
                ($(unsafe { $v.owned_chunk(x_range.clone()) },)*)
            }
        }
    )*};
}

outputs_for_tuples! {
    (),
    (T0 o0),
    (T0 o0, T1 o1),
    (T0 o0, T1 o1, T2 o2),
    (T0 o0, T1 o1, T2 o2, T3 o3),
    (T0 o0, T1 o1, T2 o2, T3 o3, T4 o4),
    (T0 o0, T1 o1, T2 o2, T3 o3, T4 o4, T5 o5),
    (T0 o0, T1 o1, T2 o2, T3 o3, T4 o4, T5 o5, T6 o6),
    (T0 o0, T1 o1, T2 o2, T3 o3, T4 o4, T5 o5, T6 o6, T7 o7),
    (T0 o0, T1 o1, T2 o2, T3 o3, T4 o4, T5 o5, T6 o6, T7 o7, T8 o8),
    (T0 o0, T1 o1, T2 o2, T3 o3, T4 o4, T5 o5, T6 o6, T7 o7, T8 o8, T9 o9),
    (T0 o0, T1 o1, T2 o2, T3 o3, T4 o4, T5 o5, T6 o6, T7 o7, T8 o8, T9 o9, T10 o10),
    (T0 o0, T1 o1, T2 o2, T3 o3, T4 o4, T5 o5, T6 o6, T7 o7, T8 o8, T9 o9, T10 o10, T11 o11),
}

impl<T: Element> OwnedChunk<'_, T> {
    #[inline(always)]
    #[track_caller]
    fn check(&self, index: usize) {
        if index >= self.len {
            out_of_bounds(index, self.len);
        }
        if !self.window.contains(&index) {
            outside_window(index, &self.window);
        }
    }
}

impl<T: Element> OwnedChunk<'_, T> {
    /// The window's elements as a plain slice (the window clipped to the
    /// buffer: `x_range` of the chunk when the buffer covers it), for the
    /// generated chunk-slice body, whose loop over it LLVM can vectorise.
    ///
    /// Safe: the chunk owns these elements exclusively while it lives
    /// (`owned_chunk`'s contract), and the `&mut self` borrow keeps
    /// `load`/`store` through this window from running while the slice
    /// does; the slice cannot outlive the chunk.
    #[inline]
    pub fn window_mut(&mut self) -> &mut [T] {
        // SAFETY: `window` lies inside the buffer (clipped in
        // `owned_chunk`), whose pointer comes from an exclusive borrow
        // that outlives the chunk; no other chunk's window overlaps it and
        // no other code accesses it while the chunk lives (the executor's
        // guarantee); `&mut self` makes this slice the only access through
        // this chunk for its life.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.add(self.window.start), self.window.len()) }
    }
}

impl<T: Element> OutputSlice<T> for OwnedChunk<'_, T> {
    #[inline]
    fn len(&self) -> usize {
        self.len
    }
    #[inline]
    #[track_caller]
    fn load(&self, index: usize) -> T {
        self.check(index);
        // SAFETY: `index` is inside this chunk's window (checked), which no
        // other code accesses while the chunk lives (`owned_chunk`'s
        // contract), and the chunk stays on one thread.
        unsafe { self.ptr.add(index).read() }
    }
    #[inline]
    #[track_caller]
    fn store(&self, index: usize, value: T) {
        self.check(index);
        // SAFETY: as in `load`.
        unsafe { self.ptr.add(index).write(value) }
    }
}

#[cold]
#[inline(never)]
#[track_caller]
fn outside_window(index: usize, window: &Range<usize>) -> ! {
    panic!(
        "internal error: an invocation touched element {index}, outside the elements {window:?} its chunk owns \
         (the compiler wrongly proved that each invocation writes only its own element; please report this kernel)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_check_their_range() {
        let mut v = vec![0u32; 10];
        let s = SharedSliceMut::new(&mut v);
        // SAFETY: the only chunk, on this thread.
        let c = unsafe { s.owned_chunk(2..5) };
        c.store(3, 7);
        assert_eq!(c.load(3), 7);
        assert_eq!(OutputSlice::len(&c), 10);
        assert!(std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| c.store(6, 1))).is_err());
        assert!(std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| c.load(10))).is_err());
        assert_eq!(s.load(3), 7);
    }

    #[test]
    fn window_mut_is_the_clipped_window() {
        let mut v = vec![0u32; 10];
        let s = SharedSliceMut::new(&mut v);
        // SAFETY: the only chunks, on this thread, disjoint.
        let (mut inner, mut clipped) = unsafe { (s.owned_chunk(2..5), s.owned_chunk(8..12)) };
        inner.window_mut().copy_from_slice(&[1, 2, 3]);
        assert_eq!(clipped.window_mut().len(), 2);
        clipped.window_mut()[1] = 9;
        assert_eq!((inner.load(3), clipped.load(9)), (2, 9));
        assert_eq!(v, [0, 0, 1, 2, 3, 0, 0, 0, 0, 9]);
    }
}
