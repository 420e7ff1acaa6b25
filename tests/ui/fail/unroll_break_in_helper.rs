use onekernel::prelude::*;

// `#[unroll]` in a helper follows the kernels' rules: no `break`.
#[helper]
fn powers(x: f32) -> f32 {
    let mut s = 0.0;
    let mut p = 1.0;
    #[unroll]
    for _j in 0..8 {
        if p > 100.0 {
            break;
        }
        s += p;
        p *= x;
    }
    s
}

#[kernel(workgroup_size = 64)]
fn k(a: &[f32], out: &mut [f32]) {
    let i = global_id().x;
    out[i] = powers(a[i]);
}

fn main() {}
