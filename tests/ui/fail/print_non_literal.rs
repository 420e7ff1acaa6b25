use onekernel::prelude::*;

const MESSAGE: &str = "{}";

#[kernel(workgroup_size = 64)]
fn k(a: &[f32], out: &mut [f32]) {
    let i = global_id().x;
    println!(MESSAGE, a[i]);
    out[i] = a[i];
}

fn main() {}
