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
    snapshot!(
        vector_add,
        int_ops,
        uint_ops,
        float_ops,
        casts,
        float_math,
        int_math,
        control_flow,
        builtins_2d,
        folded_ids,
        helpers_and_scalars,
        literals,
        local_arrays,
        unrolled,
        split_arrays,
        tuples_and_match,
        more_methods,
        ranges,
        float_vectors,
        int_vectors,
        vectors_in_memory,
        wide_ints,
        wide_floats,
        f16_vectors,
        wide_shared,
        rejected_constants
    );
}

/// Each instantiation of a generic kernel is a kernel of its own.
mod wgsl_generic {
    use super::*;

    #[test]
    fn generic_num() {
        insta::assert_snapshot!("generic_num_f32", kernels::generic_num::for_f32::WGSL);
        insta::assert_snapshot!("generic_num_i32", kernels::generic_num::for_i32::WGSL);
        insta::assert_snapshot!("generic_num_u32", kernels::generic_num::for_u32::WGSL);
        insta::assert_snapshot!("generic_num_f16", kernels::generic_num::for_f16::WGSL);
        insta::assert_snapshot!("generic_num_f64", kernels::generic_num::for_f64::WGSL);
        insta::assert_snapshot!("generic_num_i64", kernels::generic_num::for_i64::WGSL);
        insta::assert_snapshot!("generic_num_u64", kernels::generic_num::for_u64::WGSL);
    }
}

/// The folded variants (1-D grids of more than 65535 workgroups) of the
/// kernels whose prologue differs most.
mod wgsl_folded {
    use super::*;

    fn folded(k: &'static onekernel::KernelInfo) -> &'static str {
        &k.module(onekernel::ModuleKey::FOLDED).expect("every kernel has a folded module").wgsl
    }

    #[test]
    fn vector_add() {
        insta::assert_snapshot!("vector_add_folded", folded(&kernels::vector_add::KERNEL));
    }

    #[test]
    fn builtins_2d() {
        insta::assert_snapshot!("builtins_2d_folded", folded(&kernels::builtins_2d::KERNEL));
    }
}
