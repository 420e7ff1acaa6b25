use onekernel::prelude::*;

#[kernel(workgroup_size = 64)]
fn k(a: &[f32], out: &mut [f32]) {
    let i = global_id().x;
    let pair = [a[i], 2.0];
    println!("{:?}", pair);
    out[i] = a[i];
}

fn main() {}
