// A buffer of another element type: the error says what the parameter
// expects and what was passed.
use onekernel::prelude::*;

#[kernel(workgroup_size = 64)]
fn scale(a: &mut [f32]) {
    let i = global_id().x;
    if i < a.len() {
        a[i] *= 2.0;
    }
}

fn main() {
    let device = Device::cpu();
    let mut ints = Buffer::from_slice(&device, &[1i32, 2, 3]).unwrap();
    scale::launch(&device, 3, &mut ints).unwrap();
}
