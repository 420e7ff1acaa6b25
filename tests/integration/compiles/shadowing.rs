use onekernel::prelude::*;

#[kernel(workgroup_size = 64)]
fn shadowing(a: &[f32], out: &mut [f32]) {
    let i = global_id().x;
    let x = a[i];
    let x = x * 2.0;
    let x = {
        let x = x + 1.0;
        x * x
    };
    let i = i as u32;
    let i = i as usize;
    for x in 0..3u32 {
        let x = x as f32;
        out[i] += x;
    }
    if i < out.len() {
        out[i] = x;
    }
}

#[test]
fn compiles_and_runs() {
    // One thread per element, in whole workgroups (the first writes have
    // no guard). The last write wins: `out[i] = (2 a[i] + 1)²`, exact for
    // these halves.
    let a: Vec<f32> = (0..128).map(|i| (i as f32 - 40.0) * 0.5).collect();
    let want: Vec<f32> = a.iter().map(|v| (v * 2.0 + 1.0) * (v * 2.0 + 1.0)).collect();
    for device in super::devices() {
        let ab = Buffer::from_slice(&device, &a).unwrap();
        let mut out = Buffer::<f32>::zeroed(&device, a.len()).unwrap();
        shadowing::launch(&device, a.len(), &ab, &mut out).unwrap();
        assert_eq!(out.read().unwrap(), want, "{}", device.name());
    }
}
