#[onekernel::kernels]
mod m {
    use onekernel::prelude::*;

    pub struct P {
        pub a: f32,
        pub b: f32,
    }

    #[kernel(workgroup_size = 64)]
    pub fn k(ps: &mut [P]) {
        let i = global_id().x;
        if i < ps.len() {
            ps[i] = P { a: 1.0, ..ps[i] };
        }
    }
}

fn main() {}
