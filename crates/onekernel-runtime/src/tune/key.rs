//! [`Key`]: what a tuning result is for — the problem's sizes (bucketed),
//! its element types, and anything else the best candidate depends on.

use crate::buffer::Element;
use std::fmt;

/// The problem a tuning result is for: named parts, in the order they are
/// added, shown as `m<=256, k<=64, T=f32`.
///
/// Sizes are bucketed ([`Key::size`], to the next power of two), so a
/// program that multiplies 1000 × 1000 and 1024 × 1024 matrices tunes once;
/// anything that changes which candidates are *valid* (a size being a
/// multiple of a tile, say) must be an exact part ([`Key::value`]), or the
/// candidates passed for it must differ (the candidate names are part of
/// the cache entry too).
///
/// ```
/// use onekernel_runtime::tune::Key;
///
/// let key = Key::new().size("m", 1000).size("n", 1024).element::<f32>("T").value("vec4", false);
/// assert_eq!(key.to_string(), "m<=1024, n<=1024, T=f32, vec4=false");
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Key {
    parts: Vec<(String, String)>,
}

impl Key {
    /// An empty key (a problem with nothing to distinguish).
    pub fn new() -> Key {
        Key::default()
    }

    /// A size, bucketed to the next power of two ([`bucket`]): `n = 1000`
    /// is `name<=1024`.
    pub fn size(mut self, name: &str, n: usize) -> Key {
        self.parts.push((name.to_owned(), format!("<={}", bucket(n))));
        self
    }

    /// An exact value: `name=value`.
    pub fn value(mut self, name: &str, value: impl fmt::Display) -> Key {
        self.parts.push((name.to_owned(), format!("={value}")));
        self
    }

    /// An element type, by its Rust name: `name=f32`, `name=Vec4`.
    pub fn element<T: Element>(self, name: &str) -> Key {
        self.value(name, T::TYPE.rust_name())
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, (name, value)) in self.parts.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{name}{value}")?;
        }
        Ok(())
    }
}

/// The bucket of a size: the next power of two (`0` stays `0`, `1000` is
/// `1024`, `1024` is `1024`; sizes past the largest power of two are
/// `usize::MAX`).
///
/// ```
/// # use onekernel_runtime::tune::bucket;
/// assert_eq!([bucket(0), bucket(1), bucket(3), bucket(1000), bucket(1024)], [0, 1, 4, 1024, 1024]);
/// ```
pub fn bucket(n: usize) -> usize {
    if n == 0 {
        0
    } else {
        n.checked_next_power_of_two().unwrap_or(usize::MAX)
    }
}
