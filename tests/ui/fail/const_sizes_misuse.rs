use onekernel::prelude::*;

// A length set at the launch is one name (Rust's const generics allow no
// expression of one either); an array of it other than zeros needs its
// length when the kernel is compiled.
#[kernel(workgroup_size = 64)]
fn expression<const N: usize>(out: &mut [f32]) {
    let tile = shared::<[f32; N * 2]>();
    out[global_id().x] = tile[0];
}

#[kernel(workgroup_size = 64)]
fn filled<const TM: usize>(out: &mut [f32]) {
    let acc = [1.0f32; TM];
    out[global_id().x] = acc[0];
}

// A workgroup size is a number, a const parameter or a constant.
#[kernel(workgroup_size = (block, 2))]
fn lowercase(out: &mut [f32]) {
    out[global_id().x] = 1.0;
}

fn main() {}
