use onekernel::prelude::*;

#[kernel(workgroup_size = 64)]
fn k(a: &[f32], out: &mut [f32]) {
    let i = global_id().x;
    let mut j = 0;
    let mut sum = 0.0f32;
    while let Some(v) = a.get(j) {
        sum += *v;
        j += 1;
    }
    out[i] = sum;
}

fn main() {}
