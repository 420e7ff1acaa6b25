use onekernel::prelude::*;

#[derive(Clone, Copy)]
pub struct Pair {
    pub a: f32,
    pub b: f32,
}

#[kernel(workgroup_size = 64)]
fn k(pairs: &[Pair], out: &mut [f32]) {
    let i = global_id().x;
    if i < out.len() {
        out[i] = pairs[i].a + pairs[i].b;
    }
}

fn main() {}
