//! Every kernel's SPIR-V (both the plain and the folded module) passes
//! `spirv-val`, and its WGSL re-parses and validates in naga.

use crate::kernels;

#[path = "../support/shader_checks.rs"]
pub(crate) mod shader_checks;
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
    rejected_constants,
    own_elements,
    own_elements_vec4,
    neighbour_sum,
    own_with_thread_id,
    own_below
);

/// Every instantiation of the generic kernels.
#[test]
fn every_generic_instantiation_passes_spirv_val() {
    macro_rules! each {
        ($k:ident: $($t:ident),*) => {$(
            let name = concat!(stringify!($k), "::", stringify!($t));
            spirv_val(name, kernels::$k::$t::SPIRV);
            reparse(name, kernels::$k::$t::WGSL);
            spirv_val(name, kernels::$k::$t::SPIRV_FOLDED);
        )*};
    }
    each!(generic_num: for_f32, for_i32, for_u32, for_f16, for_f64, for_i64, for_u64);
    each!(generic_float: for_f32, for_f64);
    each!(generic_int: for_i32, for_u32, for_i64, for_u64);
    each!(generic_reverse: for_f32, for_i32, for_u32, for_f16, for_f64, for_i64, for_u64);
}
