#[onekernel::kernels]
mod m {
    use onekernel::prelude::*;

    pub struct Flagged {
        pub value: f32,
        pub set: bool,
    }

    #[kernel(workgroup_size = 64)]
    pub fn k(items: &[Flagged], out: &mut [f32]) {
        let i = global_id().x;
        if i < out.len() {
            out[i] = items[i].value;
        }
    }
}

fn main() {}
