//! Structs and constants of a `#[onekernel::kernels]` module, seen by its
//! kernels: struct buffers and struct scalars, field reads and writes,
//! struct literals, helpers taking and returning structs, module constants
//! sizing arrays and shared memory. Each kernel runs on the CPU executor
//! and the GPU and is compared with plain Rust.

use onekernel::prelude::*;

use crate::shader_checks;

#[onekernel::kernels]
mod physics {
    use onekernel::prelude::*; // the kernels name `global_id` & co.

    /// Threads per block.
    pub const BLOCK: u32 = 64;
    /// Time step.
    pub const DT: f32 = 0.5;
    /// The tile a block reduces.
    pub const TILE: usize = 64;
    const HALF: usize = TILE / 2;

    /// A particle: position and velocity, and its mass.
    #[derive(Debug, PartialEq)]
    pub struct Particle {
        pub pos: [f32; 2],
        pub vel: [f32; 2],
        pub mass: f32,
        pub id: u32,
    }

    /// Forces applied to every particle.
    #[derive(Debug)]
    pub struct Field {
        pub gravity: f32,
        pub drag: f32,
    }

    #[helper]
    fn accelerate(p: Particle, f: Field) -> Particle {
        let mut q = p;
        q.vel[1] -= f.gravity * DT;
        q.vel[0] *= 1.0 - f.drag;
        q
    }

    #[kernel(workgroup_size = 64)]
    pub fn step(ps: &mut [Particle], f: Field) {
        let i = global_id().x;
        if i < ps.len() {
            let p = accelerate(ps[i], f);
            let pos = [p.pos[0] + p.vel[0] * DT, p.pos[1] + p.vel[1] * DT];
            ps[i] = Particle { vel: p.vel, pos, id: p.id + 1, mass: p.mass };
        }
    }

    /// The mass-weighted mean height of each block of particles.
    #[kernel(workgroup_size = 64)]
    pub fn block_heights(ps: &[Particle], out: &mut [f32]) {
        let tile = shared::<[[f32; 2]; TILE]>();
        let t = thread_id().x;
        let i = global_id().x;
        if i < ps.len() {
            let p = ps[i];
            tile[t][0] = p.pos[1] * p.mass;
            tile[t][1] = p.mass;
        } else {
            tile[t][0] = 0.0;
            tile[t][1] = 0.0;
        }
        workgroup_barrier();
        let mut stride = HALF;
        while stride > 0 {
            if t < stride {
                tile[t][0] += tile[t + stride][0];
                tile[t][1] += tile[t + stride][1];
            }
            workgroup_barrier();
            stride /= 2;
        }
        if t == 0 {
            out[block_id().x] = tile[0][0] / tile[0][1];
        }
        let _ = BLOCK;
    }
}

use physics::{Field, Particle};

fn particles(n: usize) -> Vec<Particle> {
    (0..n)
        .map(|i| Particle {
            pos: [i as f32, (i % 7) as f32],
            vel: [1.0 - (i % 3) as f32, 2.0],
            mass: 1.0 + (i % 5) as f32,
            id: i as u32,
        })
        .collect()
}

/// What `step` computes, in plain Rust.
fn step_reference(ps: &[Particle], f: &Field) -> Vec<Particle> {
    ps.iter()
        .map(|p| {
            let vel = [p.vel[0] * (1.0 - f.drag), p.vel[1] - f.gravity * physics::DT];
            Particle {
                pos: [p.pos[0] + vel[0] * physics::DT, p.pos[1] + vel[1] * physics::DT],
                vel,
                mass: p.mass,
                id: p.id + 1,
            }
        })
        .collect()
}

fn devices() -> Vec<Device> {
    let gpu = Device::gpu().expect("the test needs a GPU adapter (source .ci/env.sh for lavapipe)");
    vec![Device::cpu(), gpu]
}

#[test]
fn struct_buffers_scalars_and_helpers() {
    for n in [1, 63, 64, 65, 1000] {
        let input = particles(n);
        let f = Field { gravity: 9.75, drag: 0.125 };
        let expected = step_reference(&input, &f);
        for device in devices() {
            let mut ps = Buffer::from_slice(&device, &input).unwrap();
            physics::step::launch(&device, n, &mut ps, Field { gravity: 9.75, drag: 0.125 }).unwrap();
            assert_eq!(ps.read().unwrap(), expected, "{} n={n}", device.name());
        }
    }
}

#[test]
fn module_constants_size_shared_memory() {
    let n = 200;
    let input = particles(n);
    let blocks = n.div_ceil(64);
    let expected: Vec<f32> = input
        .chunks(64)
        .map(|c| c.iter().map(|p| p.pos[1] * p.mass).sum::<f32>() / c.iter().map(|p| p.mass).sum::<f32>())
        .collect();
    for device in devices() {
        let ps = Buffer::from_slice(&device, &input).unwrap();
        let mut out = Buffer::<f32>::zeroed(&device, blocks).unwrap();
        physics::block_heights::launch(&device, Grid::blocks(blocks), &ps, &mut out).unwrap();
        let got = out.read().unwrap();
        for (g, e) in got.iter().zip(&expected) {
            assert!((g - e).abs() <= 1e-5 * e.abs(), "{}: {got:?} vs {expected:?}", device.name());
        }
    }
}

#[test]
fn struct_layout_is_the_gpu_layout() {
    assert_eq!(std::mem::size_of::<Particle>(), 24);
    assert_eq!(
        <Particle as onekernel::Element>::TYPE,
        onekernel::abi::DataType::Struct { name: "Particle".into(), size: 24, align: 4 }
    );
    insta::assert_snapshot!("step_wgsl", physics::step::WGSL);
    shader_checks::every_module("step", &physics::step::KERNEL);
    shader_checks::every_module("block_heights", &physics::block_heights::KERNEL);
}

/// `f16` vectors as struct fields and helper parameters and results.
#[onekernel::kernels]
mod halves {
    use onekernel::prelude::*;

    /// A sample: a `vec4<f16>` at byte 0, a `vec2<f16>` at 8, a `u32` at 12.
    #[derive(Debug, PartialEq)]
    pub struct Sample {
        pub pos: F16Vec4,
        pub weight: F16Vec2,
        pub id: u32,
    }

    /// Moves `pos` towards `to` by `t`, lane by lane.
    #[helper]
    pub fn towards(pos: F16Vec4, to: F16Vec4, t: f16) -> F16Vec4 {
        pos + (to - pos) * t
    }

    #[kernel(workgroup_size = 64)]
    pub fn settle(samples: &mut [Sample], to: F16Vec4) {
        let i = global_id().x;
        if i < samples.len() {
            let mut s = samples[i];
            s.pos = towards(s.pos, to, s.weight.x);
            s.weight.y = s.weight.y + s.pos.dot(F16Vec4::ONE);
            s.pos[i % 4] = -s.pos[i % 4];
            samples[i] = Sample { pos: s.pos, weight: s.weight, id: s.id * 2 };
        }
    }
}

#[test]
fn f16_vector_fields_and_helpers() {
    use halves::Sample;
    use onekernel::{F16Vec2, F16Vec4};
    assert_eq!((std::mem::size_of::<Sample>(), std::mem::align_of::<Sample>()), (16, 8));
    assert_eq!(halves::settle::KERNEL.features, onekernel::abi::Features::F16);
    let h = |v: f32| f16::from_f32(v);
    let to = F16Vec4::new(h(1.0), h(-2.0), h(0.5), h(8.0));
    let input: Vec<Sample> = (0..100)
        .map(|i| Sample {
            pos: F16Vec4::new(h(i as f32 / 8.0), h(1.0), h(-(i as f32) / 4.0), h(0.25)),
            weight: F16Vec2::new(h((i % 4) as f32 / 4.0), h(i as f32)),
            id: i,
        })
        .collect();
    // Plain Rust on the same types; every value has few significant bits,
    // so the GPU's rounding (or fusing) gives the same halves.
    let want: Vec<Sample> = input
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let mut pos = s.pos + (to - s.pos) * s.weight.x;
            let weight = F16Vec2::new(s.weight.x, s.weight.y + pos.dot(F16Vec4::ONE));
            pos[i % 4] = -pos[i % 4];
            Sample { pos, weight, id: s.id * 2 }
        })
        .collect();
    for device in devices() {
        let mut samples = Buffer::from_slice(&device, &input).unwrap();
        halves::settle::launch(&device, input.len(), &mut samples, to).unwrap();
        assert_eq!(samples.read().unwrap(), want, "{}", device.name());
    }
    insta::assert_snapshot!("settle_wgsl", halves::settle::WGSL);
    shader_checks::spirv_val("settle", halves::settle::SPIRV);
}

/// A struct with padding members (the layout check's help names them
/// `_pad..`): the host builds it with `new`, which takes the other fields
/// and zeroes the padding, or `Default` (all zeros).
#[onekernel::kernels]
mod padded {
    use onekernel::prelude::*;

    /// `vel` is 16-byte aligned on the GPU: 12 bytes of padding after `mass`.
    #[derive(Debug, PartialEq)]
    pub struct Body {
        pub mass: f32,
        _pad1_0: u32,
        _pad1_1: u32,
        _pad1_2: u32,
        pub vel: Vec4,
        pub hits: u32,
        _pad3: [u32; 3],
    }

    #[kernel(workgroup_size = 64)]
    pub fn push(bodies: &mut [Body], dv: f32) {
        let i = global_id().x;
        if i < bodies.len() {
            let mut b = bodies[i];
            b.vel.x += dv / b.mass;
            b.hits += 1;
            bodies[i] = b;
        }
    }
}

#[test]
fn constructor_and_default_fill_padding_members() {
    use padded::Body;
    let zero = Body::default();
    assert_eq!((zero.mass, zero.vel, zero.hits), (0.0, Vec4::ZERO, 0));
    assert!(bytemuck::bytes_of(&zero).iter().all(|&b| b == 0));
    let input: Vec<Body> =
        (0..100).map(|i| Body::new(1.0 + (i % 4) as f32, Vec4::new(i as f32, 1.0, 2.0, 3.0), i as u32)).collect();
    // The padding members are zero: the bytes past `mass` and past `hits`.
    for b in &input {
        let bytes = bytemuck::bytes_of(b);
        assert!(bytes[4..16].iter().chain(&bytes[36..48]).all(|&x| x == 0));
    }
    let expected: Vec<Body> =
        input.iter().map(|b| Body::new(b.mass, b.vel + Vec4::new(3.0 / b.mass, 0.0, 0.0, 0.0), b.hits + 1)).collect();
    for device in devices() {
        let mut bodies = Buffer::from_slice(&device, &input).unwrap();
        padded::push::launch(&device, input.len(), &mut bodies, 3.0).unwrap();
        assert_eq!(bodies.read().unwrap(), expected, "{}", device.name());
    }
}
