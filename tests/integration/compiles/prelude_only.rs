//! A kernel file needs nothing but the prelude: the atomics kernels take
//! (`AtomicU32`, `AtomicI32`, `Ordering`) and `LaunchError` come with
//! `use onekernel::prelude::*;` (this module imports nothing else).
use onekernel::prelude::*;

/// Counts the positive and the negative elements, with both atomic types.
#[kernel(workgroup_size = 64)]
fn count_signs(a: &[i32], positive: &[AtomicU32], net: &[AtomicI32]) {
    let i = global_id().x;
    if i < a.len() {
        if a[i] > 0 {
            positive[0].fetch_add(1, Ordering::Relaxed);
            net[0].fetch_add(1, Ordering::Relaxed);
        } else if a[i] < 0 {
            net[0].fetch_sub(1, Ordering::Relaxed);
        }
    }
}

/// The launch's error type, named through the prelude.
fn launch(
    device: &Device,
    a: &Buffer<i32>,
    positive: &mut Buffer<u32>,
    net: &mut Buffer<i32>,
) -> Result<(), LaunchError> {
    count_signs::launch(device, a.len(), a, positive, net)
}

fn run(device: &Device, a: &[i32]) -> Result<(u32, i32), Box<dyn std::error::Error>> {
    let a = Buffer::from_slice(device, a)?;
    let mut positive = Buffer::<u32>::zeroed(device, 1)?;
    let mut net = Buffer::<i32>::zeroed(device, 1)?;
    launch(device, &a, &mut positive, &mut net)?;
    Ok((positive.read()?[0], net.read()?[0]))
}

#[test]
fn prelude_names_atomics_and_launch_error() {
    let a: Vec<i32> = (0..200).map(|i| (i % 7) - 3).collect();
    let positive = a.iter().filter(|&&x| x > 0).count() as u32;
    let net = a.iter().map(|&x| x.signum()).sum::<i32>();
    let gpu = Device::gpu().expect("the test needs a GPU adapter (source .ci/env.sh for lavapipe)");
    for device in [Device::cpu(), gpu] {
        assert_eq!(run(&device, &a).expect("launch"), (positive, net), "{device:?}");
    }
}
