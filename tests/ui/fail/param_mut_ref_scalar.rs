use onekernel::prelude::*;

#[kernel(workgroup_size = 64)]
fn k(a: &[f32], total: &mut f32) {
    *total = a[0];
}

fn main() {}
