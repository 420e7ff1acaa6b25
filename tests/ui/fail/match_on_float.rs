use onekernel::prelude::*;

// `match` works on integers; other values take `if`.
#[kernel(workgroup_size = 64)]
fn k(a: &[f32], out: &mut [f32]) {
    let i = global_id().x;
    out[i] = match a[i] as i32 {
        0 => 1.0,
        _ => 2.0,
    };
    let v = a[i];
    let w = match v {
        x => x * 2.0,
    };
    out[i] += w;
}

fn main() {}
