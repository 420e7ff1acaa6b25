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
    println!("{}", shadowing::WGSL.len());
}
