//! The kernels everyone needs, ready to call: `onekernel::ops`.
//!
//! Every op is written in onekernel's own kernel language (`#[kernel]`), so
//! it runs on the GPU and on the CPU executor from the same source, and a
//! learner can read it. Each is a function over `&Device` and `&Buffer<T>`
//! that returns `Result` (an error names the op and the argument), with an
//! `_into` form that reuses the caller's output and scratch buffers.
//!
//! Users reach this crate as `onekernel::ops` (the facade's default
//! `ops` feature).

// Generated code names `::onekernel::__private` and `::onekernel::half`:
// inside this crate `onekernel` is this crate, whose hidden `__private`
// and `half` are the facade's (the facade re-exports this crate, so it
// cannot be a dependency).
extern crate self as onekernel;

#[doc(hidden)]
pub mod __private {
    pub use onekernel_macro::kernel_with_helpers;
    pub use onekernel_runtime::__private::*;
}
#[doc(hidden)]
pub use onekernel_runtime::half;

/// What the kernels of this crate import: the builtins, the facade's
/// macros and types, as `onekernel::prelude` has them.
#[allow(unused_imports)]
pub(crate) mod prelude {
    pub use core::sync::atomic::{AtomicI32, AtomicU32, Ordering};
    pub use onekernel_macro::{helper, kernel, kernels};
    pub use onekernel_runtime::builtins::*;
    pub use onekernel_runtime::glam::{UVec2, UVec4, Vec2, Vec4};
    pub use onekernel_runtime::half::f16;
    pub use onekernel_runtime::num::{Float, Int, Num};
    pub use onekernel_runtime::{Buffer, Device, Dim3, F16Vec4, Grid, LaunchError};
}

pub mod fill;
pub mod histogram;
pub mod reduce;
pub mod scan;
pub mod transpose;
pub mod tuning;
pub use fill::fill;

pub mod op_error;
pub use op_error::OpError;
pub mod attention;
pub mod matmul;
pub mod norm;
pub mod random;
pub mod sort;
pub use attention::attention;
