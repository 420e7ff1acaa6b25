use onekernel::prelude::*;

#[kernel(workgroup_size = 64)]
fn k(a: &[f32], out: &mut [f32], width: u32) {
    let i = global_id().x;
    let w = width as usize;
    println!("{:w$}", a[i]);
    out[i] = a[i];
}

fn main() {}
