//! [`SharedSliceMut`]: a `&mut [T]` kernel parameter shared by all
//! invocations on the CPU.

use crate::buffer::Element;
use std::marker::PhantomData;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU16, AtomicU32, AtomicU8, Ordering};

#[cfg(target_has_atomic = "64")]
use std::sync::atomic::AtomicU64;

/// A `&mut [T]` kernel parameter on the CPU: shared by all invocations,
/// which may race. Every access is made of relaxed atomic accesses to the
/// element's *words*, so racing invocations never cause undefined
/// behaviour (Rust data races are UB; atomics are not).
///
/// A word is as wide as `T`'s alignment, up to 8 bytes: one word for `f32`,
/// `u32`, `f16` and (on 64-bit targets) `f64`, `u64`; two 8-byte words for
/// a `Vec4` (16-byte aligned), four 4-byte words for an `IVec4`, one word
/// per field for a struct of 4-byte fields. A race on a one-word element
/// gives a GPU-like outcome: one of the racing stores wins. A race on a
/// wider element is decided word by word, so the element may end up
/// *torn*, with words from different stores, as on a GPU, which stores
/// vectors and structs lane by lane too. All accesses to one buffer use
/// the same word size (mixed-size racing atomics would be UB).
pub struct SharedSliceMut<'a, T: Element> {
    ptr: NonNull<T>,
    len: usize,
    /// The parameter's name when the launch is race-checked: every access
    /// is then recorded (`racecheck.rs`).
    race_check: Option<&'static str>,
    _borrow: PhantomData<&'a mut [T]>,
}

// SAFETY: the view only reads and writes through atomic accesses (see
// `load_words`/`store_words`), so sharing it between threads races only
// atomics; `T: Element` is `Send + Sync` plain old data.
unsafe impl<T: Element> Send for SharedSliceMut<'_, T> {}
// SAFETY: as for `Send`.
unsafe impl<T: Element> Sync for SharedSliceMut<'_, T> {}

/// The width of the atomic words a `T` is accessed as: its alignment,
/// capped at the widest atomic the target has. `T`'s size is a multiple of
/// its alignment, so of this too, and every element starts on a word.
const fn word_size<T>() -> usize {
    let align = align_of::<T>();
    if align >= 8 && cfg!(target_has_atomic = "64") {
        8
    } else if align >= 4 {
        4
    } else if align >= 2 {
        2
    } else {
        1
    }
}

/// Reads the element at `p` word by word with relaxed atomic loads.
///
/// # Safety
/// `p` must point to a live `T` inside memory that, for as long as any
/// access of this kind may run, is only accessed atomically with words of
/// [`word_size::<T>()`](word_size) (or not concurrently at all).
#[inline(always)]
unsafe fn load_words<T: Element>(p: *const T) -> T {
    let mut value = T::zeroed();
    let out = bytemuck::bytes_of_mut(&mut value);
    let base = p.cast::<u8>().cast_mut();
    macro_rules! words {
        ($atomic:ty, $n:expr) => {
            for (k, chunk) in out.chunks_exact_mut($n).enumerate() {
                // SAFETY: word `k` of the element: in bounds, aligned to
                // its width (`T`'s alignment is at least `$n`), and only
                // accessed atomically (the caller's contract).
                let word = unsafe { <$atomic>::from_ptr(base.add(k * $n).cast()) };
                chunk.copy_from_slice(&word.load(Ordering::Relaxed).to_ne_bytes());
            }
        };
    }
    match word_size::<T>() {
        #[cfg(target_has_atomic = "64")]
        8 => words!(AtomicU64, 8),
        4 => words!(AtomicU32, 4),
        2 => words!(AtomicU16, 2),
        _ => words!(AtomicU8, 1),
    }
    value
}

/// Writes `value` to the element at `p` word by word with relaxed atomic
/// stores.
///
/// # Safety
/// As for [`load_words`].
#[inline(always)]
unsafe fn store_words<T: Element>(p: *mut T, value: T) {
    let bytes = bytemuck::bytes_of(&value);
    let base = p.cast::<u8>();
    macro_rules! words {
        ($atomic:ty, $int:ty, $n:expr) => {
            for (k, chunk) in bytes.chunks_exact($n).enumerate() {
                // SAFETY: as in `load_words`.
                let word = unsafe { <$atomic>::from_ptr(base.add(k * $n).cast()) };
                let mut w = [0u8; $n];
                w.copy_from_slice(chunk);
                word.store(<$int>::from_ne_bytes(w), Ordering::Relaxed);
            }
        };
    }
    match word_size::<T>() {
        #[cfg(target_has_atomic = "64")]
        8 => words!(AtomicU64, u64, 8),
        4 => words!(AtomicU32, u32, 4),
        2 => words!(AtomicU16, u16, 2),
        _ => words!(AtomicU8, u8, 1),
    }
}

impl<'a, T: Element> SharedSliceMut<'a, T> {
    /// Views an exclusively borrowed slice as shared atomic words.
    pub fn new(slice: &'a mut [T]) -> SharedSliceMut<'a, T> {
        let len = slice.len();
        // The `&'a mut` borrow guarantees no other access to the memory for
        // `'a` except through this view, and every access through the view
        // is atomic.
        SharedSliceMut { ptr: NonNull::from(slice).cast::<T>(), len, race_check: None, _borrow: PhantomData }
    }

    /// The same view with every access recorded by the race detector under
    /// the parameter's name `name`.
    pub(crate) fn race_checked(self, name: &'static str) -> SharedSliceMut<'a, T> {
        SharedSliceMut { race_check: Some(name), ..self }
    }

    /// Records an access for the race detector.
    #[cold]
    #[inline(never)]
    fn record(&self, name: &'static str, index: usize, write: bool, at: &'static std::panic::Location<'static>) {
        let address = self.ptr.as_ptr() as usize + index * size_of::<T>();
        super::racecheck::access(super::racecheck::Memory::Output, address, write, at, || format!("{name}[{index}]"));
    }

    /// The first element, for [`OwnedChunk`](super::OwnedChunk) windows.
    /// Writing through it is allowed: the pointer comes from the exclusive
    /// borrow, and only accesses the view never makes concurrently (the
    /// windows) may use it.
    pub(crate) fn as_mut_ptr(&self) -> *mut T {
        self.ptr.as_ptr()
    }

    /// Number of elements.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Reads element `index`; panics out of bounds like Rust indexing.
    #[track_caller]
    #[inline]
    pub fn load(&self, index: usize) -> T {
        if index >= self.len {
            out_of_bounds(index, self.len);
        }
        if let Some(name) = self.race_check {
            self.record(name, index, false, std::panic::Location::caller());
        }
        // SAFETY: `index` is in bounds, and the memory is only accessed
        // atomically, with `T`'s word size, while the view lives (`new`).
        unsafe { load_words(self.ptr.as_ptr().add(index)) }
    }

    /// Writes element `index`; panics out of bounds like Rust indexing.
    #[track_caller]
    #[inline]
    pub fn store(&self, index: usize, value: T) {
        if index >= self.len {
            out_of_bounds(index, self.len);
        }
        if let Some(name) = self.race_check {
            self.record(name, index, true, std::panic::Location::caller());
        }
        // SAFETY: as in `load`.
        unsafe { store_words(self.ptr.as_ptr().add(index), value) }
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
    fn wide_and_narrow_elements() {
        let mut h = vec![half::f16::from_f32(1.5); 3];
        let mut d = vec![0.25f64; 2];
        let mut v = vec![glam::Vec4::ONE; 2];
        let mut u = vec![glam::UVec2::new(1, 2); 2];
        {
            let (h, d, v, u) = (
                SharedSliceMut::new(&mut h),
                SharedSliceMut::new(&mut d),
                SharedSliceMut::new(&mut v),
                SharedSliceMut::new(&mut u),
            );
            h.store(2, h.load(0) + half::f16::ONE);
            d.store(1, d.load(0) * 2.0);
            v.store(0, v.load(1) * glam::Vec4::new(1.0, 2.0, 3.0, 4.0));
            let x = u.load(0);
            u.store(1, glam::UVec2::new(x.y, x.x));
            assert!(std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| v.load(2))).is_err());
        }
        assert_eq!(h[2], half::f16::from_f32(2.5));
        assert_eq!(d, [0.25, 0.5]);
        assert_eq!(v[0], glam::Vec4::new(1.0, 2.0, 3.0, 4.0));
        assert_eq!(u[1], glam::UVec2::new(2, 1));
        assert_eq!(word_size::<half::f16>(), 2);
        assert_eq!(word_size::<u32>(), 4);
        assert_eq!(word_size::<glam::IVec4>(), 4);
        #[cfg(all(target_has_atomic = "64", target_pointer_width = "64"))]
        assert_eq!((word_size::<f64>(), word_size::<glam::Vec4>()), (8, 8));
    }

    #[test]
    fn racing_wide_stores_are_atomic_per_word() {
        // Two threads storing different vectors to one element: each word
        // holds one of the stored words, never a mixture within a word.
        let mut v = vec![glam::UVec4::ZERO; 1];
        let s = SharedSliceMut::new(&mut v);
        std::thread::scope(|scope| {
            for t in 1..=2u32 {
                let s = &s;
                scope.spawn(move || {
                    for _ in 0..1000 {
                        s.store(0, glam::UVec4::splat(t * 0x0101_0101));
                    }
                });
            }
        });
        for lane in s.load(0).to_array() {
            assert!(lane == 0x0101_0101 || lane == 0x0202_0202, "{lane:#x}");
        }
    }

    #[test]
    fn is_send_and_sync() {
        fn check<T: Send + Sync>() {}
        check::<SharedSliceMut<'static, i32>>();
    }
}
