//! **Particles**: one step of a particle system, with glam vectors.
//!
//!     cargo run --example particles            # check on every device
//!     cargo run --example particles -- --wgsl  # print the kernel's WGSL
//!
//! Each particle has a position and a velocity, both `Vec4` (glam's
//! four-lane `f32` vector; `w` is unused here and stays 1 for positions, 0
//! for velocities). One thread per particle applies gravity and a drag
//! that grows with speed, moves the particle, and bounces it off the floor
//! at `y = 0`. The struct lives in a `#[onekernel::kernels]` module so the
//! kernel can see it; on the GPU it is a WGSL struct of two `vec4<f32>`,
//! byte for byte the Rust one.

mod common;

#[onekernel::kernels]
mod sim {
    use onekernel::prelude::*;

    /// One particle. `Vec4` is 16-byte aligned in Rust and in WGSL, so the
    /// struct has the same 32 bytes on both sides (glam's 12-byte `Vec3`
    /// would not: the compiler asks for `Vec3A` or `Vec4`).
    #[derive(Clone, Copy, Debug, PartialEq)]
    pub struct Particle {
        pub pos: Vec4,
        pub vel: Vec4,
    }

    /// Moves every particle by one time step `dt`.
    #[kernel(workgroup_size = 64)]
    pub fn step(ps: &mut [Particle], gravity: Vec4, drag: f32, dt: f32) {
        let i = global_id().x;
        if i >= ps.len() {
            return;
        }
        let mut p = ps[i];
        // Drag against the motion, proportional to the speed squared.
        let speed = p.vel.length();
        p.vel += (gravity - p.vel * (drag * speed)) * dt;
        p.pos += p.vel * dt;
        // Bounce off the floor, losing a fifth of the vertical speed.
        if p.pos.y < 0.0 {
            p.pos.y = -p.pos.y;
            p.vel.y = -p.vel.y * 0.8;
        }
        ps[i] = p;
    }
}

use onekernel::prelude::*;
use sim::Particle;

/// The same step in plain Rust, with the same glam calls.
fn reference(ps: &mut [Particle], gravity: Vec4, drag: f32, dt: f32) {
    for p in ps {
        let speed = p.vel.length();
        p.vel += (gravity - p.vel * (drag * speed)) * dt;
        p.pos += p.vel * dt;
        if p.pos.y < 0.0 {
            p.pos.y = -p.pos.y;
            p.vel.y = -p.vel.y * 0.8;
        }
    }
}

/// Particles on a spiral, moving outwards and up.
fn particles(n: usize) -> Vec<Particle> {
    (0..n)
        .map(|i| {
            let a = i as f32 * 0.1;
            Particle {
                pos: Vec4::new(a.cos() * (1.0 + a), 0.5 + (i % 7) as f32, a.sin() * (1.0 + a), 1.0),
                vel: Vec4::new(-a.sin(), 2.0 - (i % 5) as f32, a.cos(), 0.0),
            }
        })
        .collect()
}

/// Runs `steps` steps on `device`.
fn run(device: &Device, start: &[Particle], steps: usize) -> Result<Vec<Particle>, Box<dyn std::error::Error>> {
    let mut ps = Buffer::from_slice(device, start)?;
    for _ in 0..steps {
        sim::step::launch(device, start.len(), &mut ps, GRAVITY, DRAG, DT)?;
    }
    Ok(ps.read()?)
}

const GRAVITY: Vec4 = Vec4::new(0.0, -9.81, 0.0, 0.0);
const DRAG: f32 = 0.05;
const DT: f32 = 1.0 / 60.0;

/// Positions and velocities agree within `tolerance` (the GPU's `length`
/// may round differently from glam's).
fn check(what: &str, got: &[Particle], want: &[Particle], tolerance: f64) {
    let lanes = |ps: &[Particle]| -> Vec<f32> {
        ps.iter().flat_map(|p| [p.pos.to_array(), p.vel.to_array()]).flatten().collect()
    };
    common::check(what, &lanes(got), &lanes(want), tolerance);
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    if common::wants_wgsl() {
        println!("{}", sim::step::WGSL);
        return Ok(());
    }
    let (n, steps) = (10_000, 120);
    let start = particles(n);
    let mut want = start.clone();
    for _ in 0..steps {
        reference(&mut want, GRAVITY, DRAG, DT);
    }
    for device in common::devices(false) {
        let got = run(&device, &start, steps)?;
        check(&device.name(), &got, &want, 1e-3);
        let highest = got.iter().map(|p| p.pos.y).fold(f32::MIN, f32::max);
        println!("{}: {n} particles, {steps} steps; the highest is at y = {highest:.3}", device.name());
    }
    Ok(())
}

#[test]
fn cpu_and_gpu_agree_with_plain_rust() {
    for device in common::devices(true) {
        for n in [1, 63, 64, 65, 1000] {
            let start = particles(n);
            let mut want = start.clone();
            reference(&mut want, GRAVITY, DRAG, DT);
            let got = run(&device, &start, 1).unwrap();
            if !device.is_gpu() {
                // The CPU runs the kernel's body with glam: the same bits.
                assert_eq!(got, want, "{} n={n}", device.name());
            }
            check(&format!("{} n={n}", device.name()), &got, &want, 1e-5);
        }
    }
}
