//! Every kernel's modules (every row of `cases.rs`, every instantiation of
//! the generic ones): their WGSL re-parses and validates in naga, and
//! their SPIR-V (the plain module's) passes `spirv-val`.

use crate::cases::language_cases;
use crate::kernels;

#[path = "../support/shader_checks.rs"]
pub(crate) mod shader_checks;
use shader_checks::every_module;

macro_rules! spirv_tests {
    (
        plain { $($run:ident: $($k:ident $(($folded:ident))?),+;)* }
        generic { $($grun:ident: $g:ident<$($inst:ident),+>;)* }
    ) => {
        #[test]
        fn every_kernel_spirv_passes_spirv_val_and_wgsl_reparses() {
            $($(
                every_module(stringify!($k), &kernels::$k::KERNEL);
            )+)*
        }

        /// Every instantiation of the generic kernels.
        #[test]
        fn every_generic_instantiation_passes_spirv_val() {
            $($(
                every_module(concat!(stringify!($g), "::", stringify!($inst)), &kernels::$g::$inst::KERNEL);
            )+)*
        }
    };
}

language_cases!(spirv_tests);
