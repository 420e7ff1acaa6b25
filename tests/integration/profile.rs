//! `Device::profile`: every launch of a run, grouped by kernel name, on
//! the CPU executor (wall clock) and on the GPU (lavapipe has timestamp
//! queries, so its profile is on the GPU's clock).

use onekernel::prelude::*;
use onekernel::timing::{Clock, Profile};

#[kernel(workgroup_size = 64)]
fn profile_scale(x: &mut [f32], by: f32) {
    let i = global_id().x;
    if i < x.len() {
        x[i] *= by;
    }
}

#[kernel(workgroup_size = 64)]
fn profile_shift(x: &mut [f32], by: f32) {
    let i = global_id().x;
    if i < x.len() {
        x[i] += by;
    }
}

/// Three launches of one kernel and two of the other (and an empty grid,
/// which does nothing and is not counted), then the profile's rows.
fn profile_on(device: &Device) -> Profile {
    let mut x = Buffer::from_slice(device, &vec![1.0f32; 4096]).unwrap();
    let (launched, profile) = device
        .profile(|| -> Result<(), LaunchError> {
            for _ in 0..3 {
                profile_scale::launch(device, 4096, &mut x, 2.0)?;
            }
            profile_shift::launch(device, 4096, &mut x, 1.0)?;
            profile_shift::launch(device, 4096, &mut x, 1.0)?;
            profile_shift::launch(device, 0, &mut x, 1.0)
        })
        .unwrap();
    launched.unwrap();
    // The launches ran: 1 · 2³ + 1 + 1.
    assert_eq!(x.read().unwrap()[4095], 10.0);

    let names: Vec<&str> = profile.launches.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["profile_scale", "profile_scale", "profile_scale", "profile_shift", "profile_shift"]);
    assert_eq!(profile.kernels.len(), 2);
    let scale = profile.kernel("profile_scale").expect("a row for profile_scale");
    let shift = profile.kernel("profile_shift").expect("a row for profile_shift");
    assert_eq!((scale.launches, shift.launches), (3, 2));
    let sum = |name: &str| profile.launches.iter().filter(|(n, _)| n == name).map(|(_, t)| *t).sum();
    assert_eq!(scale.total, sum("profile_scale"));
    assert_eq!(shift.total, sum("profile_shift"));
    assert_eq!(profile.total, scale.total + shift.total);
    assert_eq!(scale.mean(), scale.total / 3);
    // Largest total first.
    assert!(profile.kernels[0].total >= profile.kernels[1].total);
    if profile.total > std::time::Duration::ZERO {
        assert!((profile.share(scale) + profile.share(shift) - 1.0).abs() < 1e-9);
    }
    // The table: a header, a row per kernel, the total.
    let table = profile.to_string();
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines.len(), 4, "{table}");
    assert!(lines[0].starts_with("kernel") && lines[0].contains("share"), "{table}");
    assert!(lines.iter().any(|l| l.starts_with("profile_scale ") && l.contains(" 3 ")), "{table}");
    assert!(lines.iter().any(|l| l.starts_with("profile_shift ") && l.contains(" 2 ")), "{table}");
    assert!(lines[3].starts_with("total") && lines[3].contains(&profile.clock.to_string()), "{table}");
    // `time` sees the same launches.
    assert_eq!(profile.timing().launches(), 5);
    println!("{}:\n{table}", device.name());
    profile
}

#[test]
fn profile_groups_launches_by_kernel_on_the_cpu() {
    let profile = profile_on(&Device::cpu());
    assert_eq!(profile.clock, Clock::Wall);
}

#[test]
fn profile_groups_launches_by_kernel_on_the_gpu() {
    let device = Device::gpu().expect("a GPU (lavapipe in CI)");
    let profile = profile_on(&device);
    let (wgpu_device, _) = device.wgpu().expect("a GPU device");
    let timestamps = wgpu_device.features().contains(onekernel::wgpu::Features::TIMESTAMP_QUERY);
    assert_eq!(profile.clock, if timestamps { Clock::GpuTimestamps } else { Clock::Wall });
}

#[test]
fn an_empty_profile_prints_a_total() {
    let ((), profile) = Device::cpu().profile(|| ()).unwrap();
    assert!(profile.kernels.is_empty() && profile.total.is_zero());
    assert!(profile.to_string().lines().last().unwrap().starts_with("total"));
}
