//! The WGSL of every test kernel, snapshotted with insta: a change in the
//! generated code shows up as a diff to read. Rust names must survive.

use crate::kernels;

macro_rules! snapshot {
    ($($k:ident),* $(,)?) => {$(
        #[test]
        fn $k() {
            insta::assert_snapshot!(stringify!($k), kernels::$k::WGSL);
        }
    )*};
}

mod wgsl {
    use super::*;
    snapshot!(vector_add, int_ops, uint_ops, float_ops, casts, float_math, int_math, control_flow, builtins_2d, folded_ids, helpers_and_scalars, literals);
}
