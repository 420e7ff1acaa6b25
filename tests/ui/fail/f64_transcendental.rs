use onekernel::prelude::*;

// Vulkan's 64-bit floats have no transcendental functions: the error says
// to compute in f32.
#[kernel(workgroup_size = 64)]
fn k(a: &[f64], out: &mut [f64]) {
    let i = global_id().x;
    out[i] = a[i].sin();
}

fn main() {}
