use onekernel::prelude::*;

#[kernel(workgroup_size = 64)]
fn k(a: &[IVec4], out: &mut [IVec4]) {
    let i = global_id().x;
    if i < a.len() {
        out[i] = a[i] & IVec4::splat(0xff);
    }
}

fn main() {}
