//! The runtime's integration tests, in one test binary (each test binary
//! links wgpu; one link instead of four keeps CI's build short): the CPU
//! executor, the GPU path, element types and features, lost devices, and the autotuner, on
//! hand-built kernels (no macro). The GPU tests fail, not skip, without an
//! adapter: run them with lavapipe (`source .ci/env.sh`).

mod common;
mod cpu;
mod device_lost;
mod gpu;
mod tune;
mod types;
