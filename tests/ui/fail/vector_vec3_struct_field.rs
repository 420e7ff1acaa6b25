#[onekernel::kernels]
mod m {
    use onekernel::prelude::*;

    pub struct Particle {
        pub pos: Vec3,
        pub mass: f32,
    }

    #[kernel(workgroup_size = 64)]
    pub fn k(ps: &mut [Particle]) {
        let i = global_id().x;
        if i < ps.len() {
            let mut p = ps[i];
            p.mass = 1.0;
            ps[i] = p;
        }
    }
}

fn main() {}
