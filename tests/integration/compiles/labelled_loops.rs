use onekernel::prelude::*;

#[kernel(workgroup_size = 64)]
fn labelled(a: &[u32], out: &mut [u32]) {
    let i = global_id().x;
    let mut count = 0u32;
    'outer: for y in 0..8u32 {
        'inner: for x in 0..8u32 {
            if x == y {
                continue 'outer;
            }
            if x + y > a[i] {
                break 'outer;
            }
            if x > 6 {
                break 'inner;
            }
            count += 1;
        }
    }
    let mut n = 0u32;
    'search: loop {
        n += 1;
        let mut m = 0u32;
        while m < 4 {
            m += 1;
            if n * m > a[i] + 10 {
                break 'search;
            }
            if m == 2 && n % 2 == 0 {
                continue 'search;
            }
        }
    }
    out[i] = count * 100 + n;
}

/// `labelled` for one element, in plain Rust without labels: flags say
/// which loop a `break` or `continue` leaves.
fn labelled_reference(a: u32) -> u32 {
    let mut count = 0u32;
    let mut done = false;
    for y in 0..8u32 {
        for x in 0..8u32 {
            if x == y {
                break; // continue 'outer
            }
            if x + y > a {
                done = true; // break 'outer
                break;
            }
            if x > 6 {
                break; // break 'inner
            }
            count += 1;
        }
        if done {
            break;
        }
    }
    let mut n = 0u32;
    let mut found = false;
    while !found {
        n += 1;
        for m in 1..=4u32 {
            if n * m > a + 10 {
                found = true; // break 'search
                break;
            }
            if m == 2 && n % 2 == 0 {
                break; // continue 'search
            }
        }
    }
    count * 100 + n
}

#[test]
fn compiles_and_runs() {
    // One thread per element, in whole workgroups (the kernel has no guard).
    let a: Vec<u32> = (0..128).map(|i| i * 5 % 19).collect();
    let want: Vec<u32> = a.iter().map(|&v| labelled_reference(v)).collect();
    for device in super::devices() {
        let ab = Buffer::from_slice(&device, &a).unwrap();
        let mut out = Buffer::<u32>::zeroed(&device, a.len()).unwrap();
        labelled::launch(&device, a.len(), &ab, &mut out).unwrap();
        assert_eq!(out.read().unwrap(), want, "{}", device.name());
    }
}
