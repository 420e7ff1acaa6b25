use onekernel::prelude::*;

const SCALE: f32 = 2.0;

// The error names the constant; the call site and the shared array add none.
#[kernel(workgroup_size = 64)]
fn scale(a: &[f32], out: &mut [f32]) {
    let tile = shared::<[f32; 64]>();
    let t = thread_id().x;
    tile[t] = a[global_id().x] * SCALE;
    workgroup_barrier();
    out[global_id().x] = tile[63 - t] * SCALE;
}

fn main() {
    let device = Device::cpu();
    let a = Buffer::from_slice(&device, &[1.0f32; 64]).unwrap();
    let mut out = Buffer::<f32>::zeroed(&device, 64).unwrap();
    scale::launch(&device, 64, &a, &mut out).unwrap();
}
