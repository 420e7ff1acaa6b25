//! [`SharedSliceMut`]: a `&mut [T]` kernel parameter shared by all
//! invocations on the CPU.

use crate::buffer::Element;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicU32, Ordering};

/// A `&mut [T]` kernel parameter on the CPU: shared by all invocations,
/// which may race. Every element access is a relaxed atomic on the 32-bit
/// word, so racing invocations never cause undefined behaviour (Rust data
/// races are UB; atomics are not). A race still gives a GPU-like outcome:
/// one of the racing stores wins.
pub struct SharedSliceMut<'a, T: Element> {
    words: &'a [AtomicU32],
    _elements: PhantomData<&'a mut [T]>,
}

impl<'a, T: Element> SharedSliceMut<'a, T> {
    /// Views an exclusively borrowed slice as shared atomic words.
    pub fn new(slice: &'a mut [T]) -> SharedSliceMut<'a, T> {
        const { assert!(size_of::<T>() == 4 && align_of::<T>() >= align_of::<AtomicU32>()) };
        let len = slice.len();
        let ptr = slice.as_mut_ptr().cast::<AtomicU32>();
        // SAFETY: `T` is a 4-byte, 4-aligned plain-old-data type (checked
        // above; `Element` is sealed to f32/i32/u32), and `AtomicU32` has the
        // same size and alignment as `u32`, so the memory is a valid
        // `[AtomicU32; len]`. The `&'a mut` borrow guarantees no other access
        // to it for `'a` except through this view, and every access through
        // the view is atomic.
        let words = unsafe { std::slice::from_raw_parts(ptr, len) };
        SharedSliceMut { words, _elements: PhantomData }
    }

    /// The first element, for [`OwnedChunk`](super::OwnedChunk) windows.
    pub(crate) fn as_mut_ptr(&self) -> *mut T {
        // Writing through this pointer is allowed: the words are atomics
        // (interior mutability), derived from an exclusive borrow.
        self.words.as_ptr().cast::<T>().cast_mut()
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.words.len()
    }

    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }

    /// Reads element `index`; panics out of bounds like Rust indexing.
    #[track_caller]
    #[inline]
    pub fn load(&self, index: usize) -> T {
        match self.words.get(index) {
            Some(w) => bytemuck::cast(w.load(Ordering::Relaxed)),
            None => out_of_bounds(index, self.words.len()),
        }
    }

    /// Writes element `index`; panics out of bounds like Rust indexing.
    #[track_caller]
    #[inline]
    pub fn store(&self, index: usize, value: T) {
        match self.words.get(index) {
            Some(w) => w.store(bytemuck::cast(value), Ordering::Relaxed),
            None => out_of_bounds(index, self.words.len()),
        }
    }
}

impl<T: Element + std::fmt::Debug> std::fmt::Debug for SharedSliceMut<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries((0..self.len()).map(|i| self.load(i))).finish()
    }
}

/// The panic of Rust's slice indexing, reported at the kernel's call site.
#[cold]
#[inline(never)]
#[track_caller]
pub(crate) fn out_of_bounds(index: usize, len: usize) -> ! {
    panic!("index out of bounds: the len is {len} but the index is {index}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn load_store_and_bounds() {
        let mut v = vec![1.0f32, 2.0, 3.0];
        {
            let s = SharedSliceMut::new(&mut v);
            s.store(1, s.load(0) + s.load(2));
            assert_eq!(s.len(), 3);
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| s.load(3)));
            assert!(r.is_err());
        }
        assert_eq!(v, [1.0, 4.0, 3.0]);
    }

    #[test]
    fn is_send_and_sync() {
        fn check<T: Send + Sync>() {}
        check::<SharedSliceMut<'static, i32>>();
    }
}
