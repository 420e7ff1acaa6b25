use onekernel::prelude::*;

#[kernel(workgroup_size = 64)]
fn wide(out: &mut [f32]) {
    let tile = shared::<[f64; 64]>();
    workgroup_barrier();
    out[global_id().x] = 0.0;
}

fn main() {}
