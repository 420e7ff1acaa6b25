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

/// Every vector type, `f16`s, arrays and nested structs, members after a
/// `Vec3A` of every alignment. The helpers change every field (padding
/// included) differently; host code calls them too, on rustc's layout, as
/// the reference.
#[onekernel::kernels]
mod mixed {
    use onekernel::prelude::*;

    /// 32-bit lanes of every kind; `k` (16) and `iv2` (80) follow a `Vec3A`.
    #[derive(Debug, PartialEq)]
    pub struct Mix {
        pub c: Vec3A,
        pub k: u32,
        pub _p0: u32,
        pub v2: Vec2,
        pub f: f32,
        pub i: i32,
        pub u2: UVec2,
        pub iv4: IVec4,
        pub c2: Vec3A,
        pub iv2: IVec2,
        pub g: f32,
        pub _p1: u32,
        pub v4: Vec4,
        pub u4: UVec4,
    }

    /// `f16`s around a `Vec3A`: `h2` at 32, where WGSL alone would put it
    /// at 28.
    #[derive(Debug, PartialEq)]
    pub struct Halves {
        pub h: f16,
        pub _h0: f16,
        pub hv2: F16Vec2,
        pub hv4: F16Vec4,
        pub c: Vec3A,
        pub h2: f16,
        pub _h1: f16,
        pub _p0: u32,
        pub u2: UVec2,
    }

    /// The struct of the issue, nested below.
    #[derive(Debug, PartialEq)]
    pub struct Ball {
        pub c: Vec3A,
        pub r: f32,
        pub _p0: u32,
        pub _p1: u32,
        pub _p2: u32,
    }

    /// Arrays of scalars, vectors and structs, and a nested struct.
    #[derive(Debug, PartialEq)]
    pub struct Scene {
        pub n: u32,
        pub _p0: [u32; 3],
        pub balls: [Ball; 2],
        pub ws: [f32; 3],
        pub m: u32,
        pub dirs: [Vec3A; 2],
        pub uv: [Vec2; 2],
        pub last: Ball,
        pub t: f32,
        pub _p1: [u32; 3],
    }

    /// A `Vec3A` last, after a scalar and its padding.
    #[derive(Debug, PartialEq)]
    pub struct Tail {
        pub f: f32,
        pub _p0: [u32; 3],
        pub c: Vec3A,
    }

    #[helper]
    pub fn mix_step(a: Mix) -> Mix {
        let mut o = a;
        o.c = a.c * 2.0;
        o.k = a.k + 1;
        o._p0 = a._p0 ^ 5;
        o.v2 = a.v2 + Vec2::new(1.0, -1.0);
        o.f = a.f - 3.0;
        o.i = a.i * -2;
        o.u2 = a.u2 + UVec2::new(7, 9);
        o.iv4 = a.iv4 - IVec4::new(1, 2, 3, 4);
        o.c2 = a.c2 + Vec3A::new(0.5, 0.25, 0.125);
        o.iv2 = a.iv2 + IVec2::new(3, -3);
        o.g = a.g * 0.5;
        o._p1 = a._p1 + 11;
        o.v4 = a.v4 + Vec4::new(1.0, 2.0, 3.0, 4.0);
        o.u4 = a.u4 + UVec4::new(1, 2, 3, 4);
        o
    }

    #[helper]
    pub fn halves_step(a: Halves) -> Halves {
        let mut o = a;
        o.h = a.h + a.hv2.x;
        o._h0 = a._h0 * a.h2;
        o.hv2 = a.hv2 + F16Vec2::new(a.h, a.h2);
        o.hv4 = a.hv4 * F16Vec4::new(a.h, a.h, a.h2, a.h2);
        o.c = a.c + Vec3A::new(1.0, 1.0, 1.0);
        o.h2 = a.h2 - a._h1;
        o._h1 = a._h1 + a._h1;
        o._p0 = a._p0 + 1;
        o.u2 = a.u2 * UVec2::new(2, 3);
        o
    }

    #[helper]
    pub fn ball_step(b: Ball, by: f32) -> Ball {
        Ball { c: b.c + Vec3A::new(by, -by, 0.5), r: b.r * by, _p0: b._p0 + 1, _p1: b._p1 + 2, _p2: b._p2 + 3 }
    }

    #[helper]
    pub fn scene_step(s: Scene) -> Scene {
        let mut o = s;
        o.n = s.n + s.m;
        o._p0[0] = s._p0[2];
        o._p0[1] = s._p0[0] + 1;
        o.balls[0] = ball_step(s.balls[1], 2.0);
        o.balls[1] = ball_step(s.balls[0], 3.0);
        o.ws[0] = s.ws[1] + s.ws[2];
        o.ws[2] = s.last.r;
        o.m = s.m * 2;
        o.dirs[0] = s.dirs[1];
        o.dirs[1] = s.dirs[0] + s.last.c;
        o.uv[1] = s.uv[0] + Vec2::new(s.t, s.t);
        o.last = ball_step(s.last, s.t);
        o.t = s.t + s.balls[1].r;
        o._p1[2] = s._p1[1] + 9;
        o
    }

    #[helper]
    pub fn tail_step(t: Tail) -> Tail {
        Tail { f: t.c.z, _p0: [t._p0[1], t._p0[2], t._p0[0]], c: t.c + Vec3A::new(t.f, t.f, t.f) }
    }

    #[kernel(workgroup_size = 64)]
    pub fn mixes(a: &[Mix], out: &mut [Mix]) {
        let i = global_id().x;
        if i < a.len() {
            out[i] = mix_step(a[i]);
        }
    }

    #[kernel(workgroup_size = 64)]
    pub fn halves(a: &[Halves], out: &mut [Halves]) {
        let i = global_id().x;
        if i < a.len() {
            out[i] = halves_step(a[i]);
        }
    }

    #[kernel(workgroup_size = 64)]
    pub fn scenes(a: &[Scene], out: &mut [Scene], tails: &mut [Tail]) {
        let i = global_id().x;
        if i < a.len() {
            out[i] = scene_step(a[i]);
            let t = tails[i];
            tails[i] = tail_step(t);
        }
    }

    /// Structs and a `Vec3A` as scalar (uniform) parameters, each followed
    /// by a smaller one.
    #[kernel(workgroup_size = 64)]
    pub fn uniforms(
        mixes: &mut [Mix],
        balls: &mut [Ball],
        floats: &mut [f32],
        m: Mix,
        c: Vec3A,
        after: f32,
        b: Ball,
        k: u32,
    ) {
        if global_id().x == 0 {
            mixes[0] = mix_step(m);
            balls[0] = ball_step(b, after);
            floats[0] = c.x;
            floats[1] = c.y;
            floats[2] = c.z;
            floats[3] = after;
            floats[4] = k as f32;
        }
    }

    /// `Vec3A`, `Vec2` and `F16Vec2` elements of shared memory (kernels
    /// keep structs out of it), written and read back reversed.
    #[kernel(workgroup_size = 64)]
    pub fn shared_vectors(c: &mut [Vec3A], v: &mut [Vec2], h: &mut [F16Vec2]) {
        let sc = shared::<[Vec3A; 64]>();
        let sv = shared::<[Vec2; 64]>();
        let sh = shared::<[F16Vec2; 64]>();
        let t = thread_id().x;
        let i = global_id().x;
        sc[t] = c[i];
        sv[t] = v[i];
        sh[t] = h[i];
        workgroup_barrier();
        c[i] = sc[63 - t] + Vec3A::new(1.0, 2.0, 3.0);
        v[i] = sv[63 - t];
        h[i] = sh[63 - t];
    }
}

fn mix(i: u32) -> mixed::Mix {
    let (f, s) = (i as f32, i as i32);
    mixed::Mix {
        c: Vec3A::new(f, f + 0.5, -f),
        k: 10 * i,
        _p0: 3 * i + 1,
        v2: Vec2::new(f * 0.25, 8.0 - f),
        f: f + 100.0,
        i: s - 40,
        u2: UVec2::new(i, i * i),
        iv4: IVec4::new(s, -s, 2 * s, 7),
        c2: Vec3A::new(1.0 + f, 2.0, 3.0 - f),
        iv2: IVec2::new(-s, s + 1),
        g: 64.0 - f,
        _p1: i ^ 0xabc,
        v4: Vec4::new(f, f * 2.0, f * 3.0, f * 4.0),
        u4: UVec4::new(i + 1, i + 2, i + 3, i + 4),
    }
}

fn halves(i: u32) -> mixed::Halves {
    let h = |v: f32| f16::from_f32(v);
    let f = (i % 16) as f32;
    mixed::Halves {
        h: h(f * 0.5),
        _h0: h(1.5),
        hv2: onekernel::F16Vec2::new(h(f), h(-f)),
        hv4: onekernel::F16Vec4::new(h(1.0), h(2.0), h(f), h(0.25)),
        c: Vec3A::new(f, f + 1.0, f + 2.0),
        h2: h(2.0 + f),
        _h1: h(-0.5),
        _p0: 77 + i,
        u2: UVec2::new(i, 5),
    }
}

fn ball(i: u32) -> mixed::Ball {
    let f = i as f32;
    mixed::Ball { c: Vec3A::new(f, -f, f * 0.5), r: 1.0 + f, _p0: i, _p1: i + 100, _p2: i + 200 }
}

fn scene(i: u32) -> mixed::Scene {
    let f = i as f32;
    mixed::Scene {
        n: i,
        _p0: [i + 1, i + 2, i + 3],
        balls: [ball(i), ball(i + 7)],
        ws: [f, f + 0.5, f + 0.75],
        m: 3 * i + 5,
        dirs: [Vec3A::new(1.0, f, 2.0), Vec3A::new(f, 0.0, -f)],
        uv: [Vec2::new(f, 1.0), Vec2::new(2.0, f)],
        last: ball(i + 13),
        t: 0.5 + (i % 4) as f32,
        _p1: [i * 2, i * 3, i * 4],
    }
}

#[test]
fn structs_of_every_member_kind_in_buffers() {
    let n = 100u32;
    let mixes: Vec<_> = (0..n).map(mix).collect();
    let scenes: Vec<_> = (0..n).map(scene).collect();
    let tails: Vec<_> = (0..n)
        .map(|i| mixed::Tail { f: i as f32, _p0: [i, 2 * i, 3 * i], c: Vec3A::new(0.5, i as f32, 1.5) })
        .collect();
    let want_mixes: Vec<_> = mixes.iter().map(|m| mixed::mix_step(*m)).collect();
    let want_scenes: Vec<_> = scenes.iter().map(|s| mixed::scene_step(*s)).collect();
    let want_tails: Vec<_> = tails.iter().map(|t| mixed::tail_step(*t)).collect();
    for device in devices() {
        let a = Buffer::from_slice(&device, &mixes).unwrap();
        let mut out = Buffer::<mixed::Mix>::zeroed(&device, n as usize).unwrap();
        mixed::mixes::launch(&device, n as usize, &a, &mut out).unwrap();
        assert_eq!(out.read().unwrap(), want_mixes, "{}", device.name());
        let a = Buffer::from_slice(&device, &scenes).unwrap();
        let mut out = Buffer::<mixed::Scene>::zeroed(&device, n as usize).unwrap();
        let mut t = Buffer::from_slice(&device, &tails).unwrap();
        mixed::scenes::launch(&device, n as usize, &a, &mut out, &mut t).unwrap();
        assert_eq!(out.read().unwrap(), want_scenes, "{}", device.name());
        assert_eq!(t.read().unwrap(), want_tails, "{}", device.name());
    }
}

#[test]
fn structs_with_f16_members_in_buffers() {
    let n = 100u32;
    let input: Vec<_> = (0..n).map(halves).collect();
    let want: Vec<_> = input.iter().map(|h| mixed::halves_step(*h)).collect();
    assert_eq!(mixed::halves::KERNEL.features, onekernel::abi::Features::F16);
    for device in devices() {
        let a = Buffer::from_slice(&device, &input).unwrap();
        let mut out = Buffer::<mixed::Halves>::zeroed(&device, n as usize).unwrap();
        mixed::halves::launch(&device, n as usize, &a, &mut out).unwrap();
        assert_eq!(out.read().unwrap(), want, "{}", device.name());
    }
}

#[test]
fn structs_and_vec3a_as_scalar_parameters() {
    let (m, b, c) = (mix(9), ball(4), Vec3A::new(0.5, -1.5, 2.5));
    for device in devices() {
        let mut mixes = Buffer::<mixed::Mix>::zeroed(&device, 1).unwrap();
        let mut balls = Buffer::<mixed::Ball>::zeroed(&device, 1).unwrap();
        let mut floats = Buffer::<f32>::zeroed(&device, 5).unwrap();
        mixed::uniforms::launch(&device, 1, &mut mixes, &mut balls, &mut floats, m, c, 1.25, b, 77).unwrap();
        assert_eq!(mixes.read().unwrap(), [mixed::mix_step(m)], "{}", device.name());
        assert_eq!(balls.read().unwrap(), [mixed::ball_step(b, 1.25)], "{}", device.name());
        assert_eq!(floats.read().unwrap(), [0.5, -1.5, 2.5, 1.25, 77.0], "{}", device.name());
    }
}

#[test]
fn vectors_in_shared_memory() {
    let n = 128usize;
    let c: Vec<Vec3A> = (0..n).map(|i| Vec3A::new(i as f32, -(i as f32), 0.5)).collect();
    let v: Vec<Vec2> = (0..n).map(|i| Vec2::new(i as f32, 1.0)).collect();
    let h: Vec<onekernel::F16Vec2> =
        (0..n).map(|i| onekernel::F16Vec2::new(f16::from_f32(i as f32), f16::from_f32(-2.0))).collect();
    let rev = |i: usize| (i / 64) * 64 + 63 - i % 64;
    let want_c: Vec<_> = (0..n).map(|i| c[rev(i)] + Vec3A::new(1.0, 2.0, 3.0)).collect();
    let want_v: Vec<_> = (0..n).map(|i| v[rev(i)]).collect();
    let want_h: Vec<_> = (0..n).map(|i| h[rev(i)]).collect();
    for device in devices() {
        let mut cb = Buffer::from_slice(&device, &c).unwrap();
        let mut vb = Buffer::from_slice(&device, &v).unwrap();
        let mut hb = Buffer::from_slice(&device, &h).unwrap();
        mixed::shared_vectors::launch(&device, Grid::blocks(2), &mut cb, &mut vb, &mut hb).unwrap();
        assert_eq!(cb.read().unwrap(), want_c, "{}", device.name());
        assert_eq!(vb.read().unwrap(), want_v, "{}", device.name());
        assert_eq!(hb.read().unwrap(), want_h, "{}", device.name());
    }
}
