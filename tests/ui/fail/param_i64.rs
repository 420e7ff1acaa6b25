use onekernel::prelude::*;

#[kernel(workgroup_size = 64)]
fn k(offset: i64, out: &mut [i32]) {
    out[0] = 1;
}

fn main() {}
