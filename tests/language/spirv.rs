//! Every kernel's SPIR-V (both the plain and the folded module) passes
//! `spirv-val`, and its WGSL re-parses and validates in naga: every row of
//! `cases.rs`, every instantiation of the generic ones.

use crate::cases::language_cases;
use crate::kernels;

#[path = "../support/shader_checks.rs"]
mod shader_checks;
use shader_checks::{reparse, spirv_val};

macro_rules! spirv_tests {
    (
        plain { $($run:ident: $($k:ident $(($folded:ident))?),+;)* }
        generic { $($grun:ident: $g:ident<$($inst:ident),+>;)* }
    ) => {
        #[test]
        fn every_kernel_spirv_passes_spirv_val_and_wgsl_reparses() {
            $($(
                spirv_val(stringify!($k), kernels::$k::SPIRV);
                reparse(stringify!($k), kernels::$k::WGSL);
                spirv_val(concat!(stringify!($k), "_folded"), kernels::$k::SPIRV_FOLDED);
                reparse(concat!(stringify!($k), "_folded"), kernels::$k::WGSL_FOLDED);
            )+)*
        }

        /// Every instantiation of the generic kernels.
        #[test]
        fn every_generic_instantiation_passes_spirv_val() {
            $($(
                let name = concat!(stringify!($g), "::", stringify!($inst));
                spirv_val(name, kernels::$g::$inst::SPIRV);
                reparse(name, kernels::$g::$inst::WGSL);
                spirv_val(name, kernels::$g::$inst::SPIRV_FOLDED);
            )+)*
        }
    };
}

language_cases!(spirv_tests);
