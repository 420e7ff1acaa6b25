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
    // One block each (the kernels have no guard), on both devices: every
    // element gets its 1.
    for device in super::devices() {
        let mut out = Buffer::<u32>::zeroed(&device, 256).unwrap();
        one_d::launch(&device, 256, &mut out).unwrap();
        assert_eq!(out.read().unwrap(), [1; 256], "one_d on {}", device.name());
        let mut out = Buffer::<u32>::zeroed(&device, 16).unwrap();
        two_d::launch(&device, Grid::blocks([1, 1]), &mut out).unwrap();
        assert_eq!(out.read().unwrap(), [1; 16], "two_d on {}", device.name());
        let mut out = Buffer::<u32>::zeroed(&device, 4).unwrap();
        three_d::launch(&device, Grid::blocks([1, 1, 1]), &mut out).unwrap();
        assert_eq!(out.read().unwrap(), [1; 4], "three_d on {}", device.name());
        let mut out = Buffer::<u32>::zeroed(&device, 1024).unwrap();
        large::launch(&device, 1024, &mut out).unwrap();
        assert_eq!(out.read().unwrap(), [1; 1024], "large on {}", device.name());
    }
}
