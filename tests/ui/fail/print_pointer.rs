use onekernel::prelude::*;

#[kernel(workgroup_size = 64)]
fn k(a: &[f32], out: &mut [f32]) {
    let i = global_id().x;
    println!("{:p}", a[i]);
    out[i] = a[i];
}

fn main() {}
