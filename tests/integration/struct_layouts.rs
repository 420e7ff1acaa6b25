//! Struct layouts the host and the GPU must agree on byte for byte:
//! members after a `Vec3A` (WGSL's `vec3<f32>` is 12 bytes, glam's `Vec3A`
//! 16), vectors of every lane type, `f16`s, arrays and nested structs, in
//! many member orders, as buffer elements (read and written) and as
//! scalar (uniform) parameters. Every kernel writes each field of its
//! input, transformed so that a field read from the wrong bytes shows, to
//! its output; the CPU executor and the GPU are compared with plain Rust
//! field by field.

use onekernel::prelude::*;

#[onekernel::kernels]
mod vec3a {
    use onekernel::prelude::*;

    /// The padding the compiler asks for: `r` is at byte 16 on the host.
    #[derive(Debug, PartialEq)]
    pub struct Sphere {
        pub c: Vec3A,
        pub r: f32,
        pub _p0: u32,
        pub _p1: u32,
        pub _p2: u32,
    }

    /// A member after a `Vec3A` in the middle of the struct.
    #[derive(Debug, PartialEq)]
    pub struct Tagged {
        pub r: f32,
        pub _p0: u32,
        pub _p1: u32,
        pub _p2: u32,
        pub c: Vec3A,
        pub k: u32,
        pub _p3: u32,
        pub _p4: u32,
        pub _p5: u32,
    }

    #[kernel(workgroup_size = 64)]
    pub fn spheres(s: &mut [Sphere], t: &mut [Tagged], out: &mut [f32]) {
        let i = global_id().x;
        if i < s.len() {
            let a = s[i];
            let b = t[i];
            out[4 * i] = a.r;
            out[4 * i + 1] = a.c.z;
            out[4 * i + 2] = b.k as f32;
            out[4 * i + 3] = b.c.x;
            let mut a2 = a;
            a2.r = a.r * 2.0 + 1.0;
            a2.c = a.c + Vec3A::new(1.0, 2.0, 3.0);
            s[i] = a2;
            let mut b2 = b;
            b2.k = b.k + 7;
            b2.c.y = b.c.y - 1.0;
            t[i] = b2;
        }
    }

    #[kernel(workgroup_size = 64)]
    pub fn sphere_scalar(out: &mut [f32], s: Sphere, t: Tagged, after: f32) {
        let i = global_id().x;
        if i == 0 {
            out[0] = s.r;
            out[1] = s.c.z;
            out[2] = t.k as f32;
            out[3] = t.c.x;
            out[4] = t.r;
            out[5] = after;
        }
    }
}

fn devices() -> Vec<Device> {
    let gpu = Device::gpu().expect("the test needs a GPU adapter (source .ci/env.sh for lavapipe)");
    vec![Device::cpu(), gpu]
}

fn sphere(i: u32) -> vec3a::Sphere {
    let f = i as f32;
    vec3a::Sphere { c: Vec3A::new(f, f + 0.25, f + 0.5), r: 100.0 + f, _p0: 1000 + i, _p1: 2000 + i, _p2: 3000 + i }
}

fn tagged(i: u32) -> vec3a::Tagged {
    let f = i as f32;
    vec3a::Tagged {
        r: -f,
        _p0: 11,
        _p1: 12,
        _p2: 13,
        c: Vec3A::new(f + 0.125, f + 0.375, f + 0.625),
        k: 500 + i,
        _p3: 14,
        _p4: 15,
        _p5: 16,
    }
}

#[test]
fn members_after_a_vec3a_in_buffers() {
    let n = 70u32;
    let s: Vec<_> = (0..n).map(sphere).collect();
    let t: Vec<_> = (0..n).map(tagged).collect();
    let want_out: Vec<f32> = s.iter().zip(&t).flat_map(|(a, b)| [a.r, a.c.z, b.k as f32, b.c.x]).collect();
    let want_s: Vec<_> =
        s.iter().map(|a| vec3a::Sphere { r: a.r * 2.0 + 1.0, c: a.c + Vec3A::new(1.0, 2.0, 3.0), ..*a }).collect();
    let want_t: Vec<_> =
        t.iter().map(|b| vec3a::Tagged { k: b.k + 7, c: Vec3A::new(b.c.x, b.c.y - 1.0, b.c.z), ..*b }).collect();
    for device in devices() {
        let mut sb = Buffer::from_slice(&device, &s).unwrap();
        let mut tb = Buffer::from_slice(&device, &t).unwrap();
        let mut out = Buffer::<f32>::zeroed(&device, 4 * n as usize).unwrap();
        vec3a::spheres::launch(&device, n as usize, &mut sb, &mut tb, &mut out).unwrap();
        assert_eq!(out.read().unwrap(), want_out, "{}", device.name());
        assert_eq!(sb.read().unwrap(), want_s, "{}", device.name());
        assert_eq!(tb.read().unwrap(), want_t, "{}", device.name());
    }
}

#[test]
fn members_after_a_vec3a_in_scalars() {
    let (s, t) = (sphere(3), tagged(5));
    let want = vec![s.r, s.c.z, t.k as f32, t.c.x, t.r, 42.5];
    for device in devices() {
        let mut out = Buffer::<f32>::zeroed(&device, 6).unwrap();
        vec3a::sphere_scalar::launch(&device, 1, &mut out, s, t, 42.5).unwrap();
        assert_eq!(out.read().unwrap(), want, "{}", device.name());
    }
}

#[test]
fn vec3a_members_are_sized_in_the_wgsl() {
    // The member before a gap WGSL would not leave says its size.
    insta::assert_snapshot!("spheres_wgsl", vec3a::spheres::WGSL);
    insta::assert_snapshot!("sphere_scalar_wgsl", vec3a::sphere_scalar::WGSL);
}
