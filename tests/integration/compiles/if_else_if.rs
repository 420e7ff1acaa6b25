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

#[test]
fn compiles_and_runs() {
    println!("{}", classify::WGSL.len());
}
