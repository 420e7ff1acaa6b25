use onekernel::prelude::*;

#[helper]
fn even(n: u32) -> bool {
    if n == 0 { true } else { odd(n - 1) }
}

#[helper]
fn odd(n: u32) -> bool {
    if n == 0 { false } else { even(n - 1) }
}

#[kernel(workgroup_size = 64)]
fn k(a: &[u32], out: &mut [u32]) {
    let i = global_id().x;
    if even(a[i]) {
        out[i] = 1;
    }
}

fn main() {}
