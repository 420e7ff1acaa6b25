//! Typed ids: an [`Arena`] owns values of one type and hands out
//! [`Handle`]s to them, the way naga's IR does, so that an expression id
//! can never be used where a local id is meant.

use std::fmt;
use std::marker::PhantomData;
use std::ops::{Index, IndexMut};

/// The id of a `T` in an [`Arena<T>`].
pub struct Handle<T> {
    index: u32,
    marker: PhantomData<fn() -> T>,
}

impl<T> Handle<T> {
    fn new(index: usize) -> Self {
        Handle { index: u32::try_from(index).expect("fewer than 2^32 items"), marker: PhantomData }
    }

    /// The position in the arena, for side tables indexed like it.
    pub fn index(self) -> usize {
        self.index as usize
    }
}

// Written out: derives would require `T: Clone` etc.
impl<T> Clone for Handle<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Handle<T> {}
impl<T> PartialEq for Handle<T> {
    fn eq(&self, other: &Self) -> bool {
        self.index == other.index
    }
}
impl<T> Eq for Handle<T> {}
impl<T> PartialOrd for Handle<T> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl<T> Ord for Handle<T> {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.index.cmp(&other.index)
    }
}
impl<T> std::hash::Hash for Handle<T> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.index.hash(state)
    }
}
impl<T> fmt::Debug for Handle<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = std::any::type_name::<T>().rsplit("::").next().unwrap_or("?");
        write!(f, "{name}#{}", self.index)
    }
}

/// Values of one type, each named by a [`Handle`].
#[derive(Clone)]
pub struct Arena<T> {
    items: Vec<T>,
}

impl<T> Default for Arena<T> {
    fn default() -> Self {
        Arena { items: Vec::new() }
    }
}

impl<T: fmt::Debug> fmt::Debug for Arena<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl<T> Arena<T> {
    /// Adds `value`; its handle.
    pub fn append(&mut self, value: T) -> Handle<T> {
        self.items.push(value);
        Handle::new(self.items.len() - 1)
    }

    /// Number of values.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Every value with its handle, in order of appending.
    pub fn iter(&self) -> impl Iterator<Item = (Handle<T>, &T)> {
        self.items.iter().enumerate().map(|(i, v)| (Handle::new(i), v))
    }

    /// Every handle, in order of appending.
    pub fn handles(&self) -> impl Iterator<Item = Handle<T>> + use<T> {
        (0..self.items.len()).map(Handle::new)
    }

    /// The handle of the first value for which `pred` holds.
    pub fn position(&self, pred: impl FnMut(&T) -> bool) -> Option<Handle<T>> {
        self.items.iter().position(pred).map(Handle::new)
    }
}

impl<T> Index<Handle<T>> for Arena<T> {
    type Output = T;
    fn index(&self, h: Handle<T>) -> &T {
        &self.items[h.index()]
    }
}

impl<T> IndexMut<Handle<T>> for Arena<T> {
    fn index_mut(&mut self, h: Handle<T>) -> &mut T {
        &mut self.items[h.index()]
    }
}

/// A side table: one `V` per value of an [`Arena<T>`] (types per
/// expression, slots per local), indexed by the arena's handles.
#[derive(Clone, Debug)]
pub struct HandleMap<T, V> {
    values: Vec<V>,
    marker: PhantomData<fn() -> T>,
}

impl<T, V: Clone> HandleMap<T, V> {
    /// `len` copies of `value`.
    pub fn filled(len: usize, value: V) -> Self {
        HandleMap { values: vec![value; len], marker: PhantomData }
    }
}

impl<T, V> HandleMap<T, V> {
    /// Wraps values already in handle order.
    pub fn from_vec(values: Vec<V>) -> Self {
        HandleMap { values, marker: PhantomData }
    }
}

impl<T, V> Index<Handle<T>> for HandleMap<T, V> {
    type Output = V;
    fn index(&self, h: Handle<T>) -> &V {
        &self.values[h.index()]
    }
}

impl<T, V> IndexMut<Handle<T>> for HandleMap<T, V> {
    fn index_mut(&mut self, h: Handle<T>) -> &mut V {
        &mut self.values[h.index()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_index_their_arena() {
        let mut a: Arena<&str> = Arena::default();
        let x = a.append("x");
        let y = a.append("y");
        assert_eq!((a[x], a[y]), ("x", "y"));
        assert!(x < y);
        assert_eq!(a.position(|v| *v == "y"), Some(y));
        let mut m: HandleMap<&str, u32> = HandleMap::filled(a.len(), 0);
        m[y] = 7;
        assert_eq!((m[x], m[y]), (0, 7));
        assert_eq!(format!("{x:?}"), "&str#0");
    }
}
