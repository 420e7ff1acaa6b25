use onekernel::prelude::*;

#[kernel(workgroup_size = 64)]
fn vector_add(a: &[f32], b: &[f32], out: &mut [f32]) {
    let i = global_id().x;
    if i < out.len() {
        out[i] = a[i] + b[i];
    }
}

fn main() {
    let device = Device::cpu();
    let a = Buffer::from_slice(&device, &[1i32, 2, 3, 4]).unwrap();
    let b = Buffer::from_slice(&device, &[1.0f32, 2.0, 3.0, 4.0]).unwrap();
    let mut out = Buffer::<f32>::zeroed(&device, 4).unwrap();
    vector_add::launch(&device, 4, &a, &b, &mut out).unwrap();
}
