use onekernel::prelude::*;

// Independent problems in one kernel are all reported in one build.
#[kernel(workgroup_size = 64)]
fn k(a: &[f32], out: &mut [f32]) {
    let i = global_id().x;
    println!("thread {}", i);
    let scratch: Vec<f32> = Vec::new();
    let double = |x: f32| x * 2.0;
    out[i] = a[i];
}

fn main() {}
