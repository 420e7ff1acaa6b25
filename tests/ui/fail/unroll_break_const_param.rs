use onekernel::prelude::*;

// The bound is a const parameter: the loop is unrolled by each
// specialisation, and a `break` of its own is refused as for a constant
// bound.
#[kernel(workgroup_size = 64)]
fn k<const N: usize>(a: &[f32], out: &mut [f32]) {
    let i = global_id().x;
    let mut s = 0.0;
    #[unroll]
    for j in 0..N {
        if a[j] < 0.0 {
            break;
        }
        s += a[j];
    }
    out[i] = s;
}

fn main() {}
