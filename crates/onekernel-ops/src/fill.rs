//! `fill`: every element of a buffer set to one value.

use crate::prelude::*;
use crate::OpError;

/// The kernel [`fill`] launches: one element per thread.
#[kernel(workgroup_size = 256)]
pub fn fill_kernel<T: Num>(out: &mut [T], value: T) {
    let i = global_id().x as usize;
    if i < out.len() {
        out[i] = value;
    }
}

/// Sets every element of `out` to `value`.
///
/// ```
/// use onekernel::prelude::*;
/// let device = Device::cpu();
/// let mut out = Buffer::<u32>::zeroed(&device, 5)?;
/// onekernel::ops::fill(&device, &mut out, 7)?;
/// assert_eq!(out.read()?, [7; 5]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// The launch's error, as an [`OpError`] like the other ops'.
pub fn fill<T: fill_kernel::Instance>(device: &Device, out: &mut Buffer<T>, value: T) -> Result<(), OpError> {
    let n = out.len();
    Ok(fill_kernel::launch::<T>(device, Grid::threads(n), out, value)?)
}
