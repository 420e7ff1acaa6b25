// A struct whose GPU layout has a gap: one error, at the member after the
// gap; the host code using it (buffers of it, a launch) adds none.
#[onekernel::kernels]
mod m {
    use onekernel::prelude::*;

    pub struct Body {
        pub mass: f32,
        pub vel: Vec4,
    }

    #[kernel(workgroup_size = 64)]
    pub fn k(bodies: &mut [Body]) {
        let i = global_id().x;
        if i < bodies.len() {
            let mut b = bodies[i];
            b.mass = 1.0;
            bodies[i] = b;
        }
    }
}

use m::Body;
use onekernel::prelude::*;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let device = Device::cpu();
    let b = Body { mass: 1.0, vel: Vec4::ZERO };
    let mut bodies = Buffer::from_slice(&device, &[b, b])?;
    let mut more = Buffer::<Body>::zeroed(&device, 4)?;
    m::k::launch(&device, 2, &mut bodies)?;
    m::k::launch(&device, 4, &mut more)?;
    println!("{}", bodies.read()?[0].mass);
    Ok(())
}
