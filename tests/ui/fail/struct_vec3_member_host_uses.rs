// A struct kernels cannot use (a `Vec3` member): one error, at the member;
// the host code using it (buffers of it, a launch) adds none.
#[onekernel::kernels]
mod m {
    use onekernel::prelude::*;

    #[derive(Debug, PartialEq)]
    pub struct Particle {
        pub pos: Vec3,
        pub mass: f32,
    }

    #[kernel(workgroup_size = 64)]
    pub fn k(ps: &mut [Particle]) {
        let i = global_id().x;
        if i < ps.len() {
            let mut p: Particle = ps[i];
            p.mass = 1.0;
            ps[i] = p;
        }
    }

    #[kernel(workgroup_size = 64)]
    pub fn first(ps: &[Particle], out: &mut [f32]) {
        out[0] = ps[0].mass;
    }
}

use m::Particle;
use onekernel::prelude::*;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let device = Device::cpu();
    let p = Particle { pos: Vec3::ZERO, mass: 2.0 };
    let mut ps = Buffer::from_slice(&device, &[p, p])?;
    let mut more = Buffer::<Particle>::zeroed(&device, 4)?;
    let mut out = Buffer::<f32>::zeroed(&device, 1)?;
    m::k::launch(&device, 2, &mut ps)?;
    m::k::launch(&device, 4, &mut more)?;
    m::first::launch(&device, 1, &ps, &mut out)?;
    println!("{}", ps.read()?[0].mass);
    Ok(())
}
