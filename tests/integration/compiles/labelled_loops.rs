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
        let mut m = 0u32;
        while m < 4 {
            m += 1;
            if n * m > 10 {
                break 'search;
            }
            if m == 2 {
                continue 'search;
            }
        }
        n += 1;
    }
    out[i] = count + n;
}

#[test]
fn compiles_and_runs() {
    println!("{}", labelled::WGSL.len());
}
