//! Every kernel's SPIR-V (both the plain and the folded module) passes
//! `spirv-val`, and its WGSL re-parses and validates in naga.

use crate::kernels;

#[path = "../support/shader_checks.rs"]
mod shader_checks;
use shader_checks::{reparse, spirv_val};

macro_rules! check {
    ($($k:ident),* $(,)?) => {
        #[test]
        fn every_kernel_spirv_passes_spirv_val_and_wgsl_reparses() {
            $(
                spirv_val(stringify!($k), kernels::$k::SPIRV);
                reparse(stringify!($k), kernels::$k::WGSL);
                spirv_val(concat!(stringify!($k), "_folded"), kernels::$k::SPIRV_FOLDED);
                reparse(concat!(stringify!($k), "_folded"), kernels::$k::WGSL_FOLDED);
            )*
        }
    };
}

check!(
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
    tuples_and_match,
    more_methods,
    ranges,
    float_vectors,
    int_vectors,
    vectors_in_memory,
    wide_ints,
    wide_floats,
    wide_shared,
    rejected_constants
);
