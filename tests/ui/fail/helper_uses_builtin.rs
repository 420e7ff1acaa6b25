use onekernel::prelude::*;

#[helper]
fn index() -> u32 {
    global_id().x as u32
}

#[kernel(workgroup_size = 64)]
fn k(out: &mut [u32]) {
    let i = global_id().x;
    out[i] = index();
}

fn main() {}
