use onekernel::prelude::*;

#[kernel(workgroup_size = 64)]
fn classify(a: &[f32], out: &mut [i32]) {
    let i = global_id().x;
    let x = a[i];
    let sign = if x < 0.0 {
        -1
    } else if x > 0.0 {
        1
    } else {
        0
    };
    let band = if x < 1.0 {
        0i32
    } else if x < 10.0 {
        1
    } else if x < 100.0 {
        2
    } else {
        3
    };
    let mut extra = 0;
    if sign == 0 {
        extra = 10;
    } else if band == 3 {
        extra = 20;
    }
    out[i] = sign * 100 + band + extra;
}

/// `classify` for one number, in plain Rust with `match`es instead of
/// `else if` chains.
fn classify_reference(x: f32) -> i32 {
    let sign = match x.partial_cmp(&0.0) {
        Some(std::cmp::Ordering::Less) => -1,
        Some(std::cmp::Ordering::Greater) => 1,
        _ => 0,
    };
    let band = match x {
        x if x < 1.0 => 0,
        x if x < 10.0 => 1,
        x if x < 100.0 => 2,
        _ => 3,
    };
    let extra = match (sign, band) {
        (0, _) => 10,
        (_, 3) => 20,
        _ => 0,
    };
    sign * 100 + band + extra
}

#[test]
fn compiles_and_runs() {
    // Every branch, at and around each bound; one thread per element, in
    // whole workgroups (the kernel has no guard).
    let edges = [-1000.0f32, -5.0, -0.0, 0.0, 0.5, 1.0, 9.99, 10.0, 99.0, 100.0, 1e6];
    let a: Vec<f32> = (0..64).map(|i| edges[i % edges.len()] * if i < 33 { 1.0 } else { 1.5 }).collect();
    let want: Vec<i32> = a.iter().map(|&x| classify_reference(x)).collect();
    for device in super::devices() {
        let ab = Buffer::from_slice(&device, &a).unwrap();
        let mut out = Buffer::<i32>::zeroed(&device, a.len()).unwrap();
        classify::launch(&device, a.len(), &ab, &mut out).unwrap();
        assert_eq!(out.read().unwrap(), want, "{}", device.name());
    }
}
