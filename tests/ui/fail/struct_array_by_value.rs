#[onekernel::kernels]
mod m {
    use onekernel::prelude::*;

    pub struct Weights {
        pub w: [f32; 4],
    }

    #[kernel(workgroup_size = 64)]
    pub fn k(weights: Weights, out: &mut [f32]) {
        let i = global_id().x;
        if i < out.len() {
            out[i] = weights.w[i % 4];
        }
    }
}

fn main() {}
