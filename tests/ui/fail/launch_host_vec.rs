use onekernel::prelude::*;

#[kernel(workgroup_size = 64)]
fn double(a: &[f32], out: &mut [f32]) {
    let i = global_id().x;
    if i < out.len() {
        out[i] = 2.0 * a[i];
    }
}

fn main() {
    let device = Device::cpu();
    let host = vec![1.0f32, 2.0, 3.0];
    let mut out = Buffer::zeroed(&device, 3).unwrap();
    // Host data must be uploaded first.
    double::launch(&device, 3, &host, &mut out).unwrap();
}
