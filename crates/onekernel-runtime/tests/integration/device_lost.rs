//! A GPU device lost in the middle of a program (here: destroyed through
//! `wgpu::Device::destroy`, as a driver reset would lose it): every
//! operation fails with an `Err` that says so, naming the kernel for
//! launches, never a panic or a hang. The devices it destroys are its own:
//! the other tests of this binary keep theirs.

use crate::common;
use common::*;
use onekernel_runtime::__private::*;
use onekernel_runtime::{BufferError, DeviceError};
use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

fn gpu() -> Device {
    Device::gpu().expect("the GPU tests need a GPU adapter (try `source .ci/env.sh` for lavapipe)")
}

fn is_lost(e: &DeviceError) -> bool {
    matches!(e, DeviceError::Lost { reason, .. } if reason.starts_with("destroyed"))
}

#[test]
fn every_operation_on_a_lost_device_is_an_error() {
    let dev = gpu();
    let a = Buffer::from_slice(&dev, &[1.0f32; 1000]).unwrap();
    let mut out = Buffer::<f32>::zeroed(&dev, 1000).unwrap();
    scale_add(&dev, 1000, &a, &mut out, 2.0).unwrap();
    assert_eq!(out.read().unwrap()[999], 2.0);
    dev.wgpu().unwrap().0.destroy();

    let err = scale_add(&dev, 1000, &a, &mut out, 2.0).unwrap_err();
    assert!(matches!(&err, LaunchError::DeviceLost { kernel: "scale_add", error } if is_lost(error)), "{err:?}");
    assert!(err.to_string().starts_with("kernel `scale_add`: GPU device #"), "{err}");
    assert!(err.to_string().ends_with("was lost (destroyed)"), "{err}");
    let buffer_lost = |r: Result<_, BufferError>| matches!(r, Err(BufferError::Device(e)) if is_lost(&e));
    assert!(buffer_lost(out.read().map(drop)));
    assert!(buffer_lost(pollster::block_on(out.read_async()).map(drop)));
    assert!(buffer_lost(out.write(&[0.0; 1000])));
    assert!(buffer_lost(Buffer::<f32>::zeroed(&dev, 10).map(drop)));
    assert!(buffer_lost(Buffer::<f32>::from_slice(&dev, &[1.0]).map(drop)));
    assert!(buffer_lost(out.copy_range_from(0, &a, 0..10)));
    assert!(dev.time(|| ()).is_err_and(|e| is_lost(&e)));
    assert!(dev.synchronize().is_err_and(|e| is_lost(&e)));
    assert!(dev.run_compute_pass("x", |_| {}).is_err_and(|e| is_lost(&e)));
    // Empty grids and empty buffers need no device: still fine.
    scale_add(&dev, 0, &a, &mut out, 2.0).unwrap();
    assert_eq!(Buffer::<f32>::zeroed(&dev, 0).unwrap().read().unwrap(), []);
}

#[test]
fn a_device_lost_while_work_is_in_flight() {
    let dev = gpu();
    let n = 1 << 20;
    let a = Buffer::from_slice(&dev, &vec![1.0f32; n]).unwrap();
    let mut out = Buffer::<f32>::zeroed(&dev, n).unwrap();
    // Inside a timing scope, with an async read already submitted.
    let (result, timing) = dev
        .time(|| {
            scale_add(&dev, n, &a, &mut out, 2.0).unwrap();
            let mut read = pin!(out.read_async());
            let pending = read.as_mut().poll(&mut Context::from_waker(Waker::noop()));
            dev.wgpu().unwrap().0.destroy();
            match pending {
                Poll::Ready(r) => r.map(drop),
                Poll::Pending => pollster::block_on(read).map(drop),
            }
        })
        .map(|(r, t)| (r, Some(t)))
        .unwrap_or_else(|e| {
            assert!(is_lost(&e), "{e:?}");
            (Ok(()), None)
        });
    // The read either finished before the loss or reports it.
    if let Err(e) = result {
        assert!(matches!(&e, BufferError::Device(d) if is_lost(d)), "{e:?}");
    }
    // `time` itself reports the loss, since the timestamps are gone.
    assert!(timing.is_none(), "{timing:?}");
    assert!(scale_add(&dev, n, &a, &mut out, 2.0).is_err());
}
