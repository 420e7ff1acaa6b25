//! Kernels that must compile, and run where their test says so
//! (`compiles_and_runs`: on the CPU executor and the GPU, compared with
//! plain Rust; `compiles`: checks of what the macro generated, nothing
//! launched): each file is a module with its own imports, as a user's file
//! would be, and one test.
//! They were trybuild pass cases; as modules of this binary they cost no
//! separate dependency build (trybuild builds every dependency again, in
//! full, as soon as one case must pass; with compile-fail cases only it
//! just checks them). `forbid_unsafe_code` forbids `unsafe` in its module,
//! which covers everything the macro expands there.

mod forbid_unsafe_code;
mod generic_kernels;
mod grid_shapes;
mod helpers_call_helpers;
mod helpers_shade;
mod if_else_if;
mod labelled_loops;
mod macro_rules_fragments;
mod prelude_only;
mod shadowing;
mod step_by;
mod wgsl_keyword_names;
mod wide_types;
mod workgroup_sizes;

use onekernel::Device;
use std::sync::OnceLock;

/// The CPU executor and the GPU (lavapipe in CI), one of each for the
/// module; without a GPU adapter the tests that run fail.
fn devices() -> [Device; 2] {
    static GPU: OnceLock<Device> = OnceLock::new();
    let gpu = GPU.get_or_init(|| match Device::gpu() {
        Ok(d) => d,
        Err(e) => panic!("this test needs a GPU adapter (CI uses Mesa's lavapipe; source .ci/env.sh): {e}"),
    });
    [Device::cpu(), gpu.clone()]
}
