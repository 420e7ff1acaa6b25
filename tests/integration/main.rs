//! The facade's integration tests, in one test binary: every test binary
//! links wgpu, so one link instead of seven keeps CI's build short (wgpu
//! keeps its own tests in one binary for the same reason). The language and
//! cooperation suites are their own binaries (`tests/language`,
//! `tests/cooperation`).
//!
//! Run one module with a filter: `cargo test --test integration checked::`.
//! The trybuild compile-fail suite is a package of its own (`tests/ui`).

mod checked;
mod compiles;
mod debug;
mod doc_snippets;
mod empty_buffers;
mod f16_lengths;
mod profile;
// `onekernel::inspect` exists with the default feature `inspect`.
#[cfg(feature = "inspect")]
mod inspect;
mod interop;
#[path = "../support/shader_checks.rs"]
mod shader_checks;
mod smoke_macro;
mod struct_layouts;
mod structs;
