//! The WGSL of every test kernel (every row of `cases.rs`), snapshotted
//! with insta: a change in the generated code shows up as a diff to read.
//! Rust names must survive.

use crate::cases::language_cases;
use crate::kernels;

fn folded(k: &'static onekernel::abi::KernelInfo) -> &'static str {
    &k.module(onekernel::abi::ModuleKey::FOLDED).expect("every kernel has a folded module").wgsl
}

macro_rules! snapshot_tests {
    (
        plain { $($run:ident: $($k:ident $(($folded:ident))?),+;)* }
        generic { $($grun:ident: $g:ident<$($inst:ident),+>;)* }
    ) => {
        mod wgsl {
            use super::*;
            $($(
                #[test]
                fn $k() {
                    insta::assert_snapshot!(stringify!($k), kernels::$k::WGSL);
                }
            )+)*
        }

        /// The folded variants (1-D grids of more than 65535 workgroups) of
        /// the kernels marked `(folded)`: those whose prologue differs most.
        mod wgsl_folded {
            use super::*;
            $($($(
                #[test]
                fn $k() {
                    let _ = stringify!($folded);
                    insta::assert_snapshot!(concat!(stringify!($k), "_folded"), folded(&kernels::$k::KERNEL));
                }
            )?)+)*
        }

        /// Each instantiation of a generic kernel is a kernel of its own.
        mod wgsl_generic {
            use super::*;
            $(
                #[test]
                fn $g() {
                    $(
                        let name = format!("{}_{}", stringify!($g), stringify!($inst).trim_start_matches("for_"));
                        insta::assert_snapshot!(name.as_str(), kernels::$g::$inst::WGSL);
                    )+
                }
            )*
        }
    };
}

language_cases!(snapshot_tests);
