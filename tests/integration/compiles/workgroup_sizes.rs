//! The workgroup sizes docs/supported-rust.md shows.
use onekernel::prelude::*;

#[kernel(workgroup_size = 256)]
fn one_d(out: &mut [u32]) {
    out[global_id().x] = 1;
}

#[kernel(workgroup_size = (16, 16))]
fn two_d(out: &mut [u32]) {
    out[global_id().y] = 1;
}

#[kernel(workgroup_size = (8, 8, 4))]
fn three_d(out: &mut [u32]) {
    out[global_id().z] = 1;
}

#[kernel(workgroup_size = 1024, max_workgroup_invocations = 1024)]
fn large(out: &mut [u32]) {
    out[global_id().x] = 1;
}

#[test]
fn compiles_and_runs() {
    assert_eq!(one_d::WORKGROUP_SIZE, [256, 1, 1]);
    assert_eq!(two_d::WORKGROUP_SIZE, [16, 16, 1]);
    assert_eq!(three_d::WORKGROUP_SIZE, [8, 8, 4]);
    assert_eq!(large::KERNEL.max_workgroup_invocations, 1024);
}
