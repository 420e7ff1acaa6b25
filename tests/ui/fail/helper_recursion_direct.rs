use onekernel::prelude::*;

#[helper]
fn factorial(n: u32) -> u32 {
    if n == 0 { 1 } else { n * factorial(n - 1) }
}

#[kernel(workgroup_size = 64)]
fn k(a: &[u32], out: &mut [u32]) {
    let i = global_id().x;
    out[i] = factorial(a[i]);
}

fn main() {}
