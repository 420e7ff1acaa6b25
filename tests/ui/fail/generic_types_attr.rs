use onekernel::prelude::*;

// `types = [..]` lists types of the kernel's bound; a launch for a type
// not listed is rustc's error (`Instance` is not implemented for it).
#[kernel(workgroup_size = 64, types = [f32, f16])]
fn k<T: Float>(a: &[T], out: &mut [T]) {
    let i = global_id().x;
    if i < out.len() {
        out[i] = a[i].sqrt();
    }
}

#[kernel(workgroup_size = 64, types = [f32])]
fn plain(a: &[f32], out: &mut [f32]) {
    let i = global_id().x;
    if i < out.len() {
        out[i] = a[i];
    }
}

#[kernel(workgroup_size = 64, types = [u32])]
fn narrowed<T: Int>(a: &[T], out: &mut [T]) {
    let i = global_id().x;
    if i < out.len() {
        out[i] = a[i] >> 1u32;
    }
}

fn main() {
    let device = Device::cpu();
    let a = Buffer::from_slice(&device, &[8i32]).unwrap();
    let mut out = Buffer::<i32>::zeroed(&device, 1).unwrap();
    narrowed::launch(&device, 1, &a, &mut out).unwrap();
}
