use onekernel::prelude::*;

#[kernel(workgroup_size = 64)]
fn k(a: &[f32]) -> f32 {
    a[0]
}

fn main() {}
