//! sort, row normalisations, random numbers and matmul of `onekernel::ops`
//! on the CPU executor and the GPU (lavapipe in CI) against plain Rust.

mod ops2 {
    pub mod common;
    mod matmul;
    mod norm;
    mod random;
    mod sort;
}
