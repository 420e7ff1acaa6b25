use onekernel::prelude::*;

#[kernel(workgroup_size = 64)]
fn k(a: &[f32], out: &mut [f32], n: u32) {
    let i = global_id().x;
    let mut s = 0.0;
    #[unroll]
    for j in 0..n {
        s += a[j as usize];
    }
    out[i] = s;
}

fn main() {}
