//! Element and scalar types beyond `f32`/`i32`/`u32` (f16, f64, i64, u64,
//! glam vectors, user structs), device features and unchecked launches, on
//! the CPU executor and on the GPU. The GPU half needs an adapter: run with
//! lavapipe (`source .ci/env.sh`), which has SHADER_F16, SHADER_F64,
//! SHADER_INT64 and SUBGROUP but no cooperative matrices.

use glam::{IVec4, UVec2, Vec2, Vec3, Vec3A, Vec4};
use half::f16;
use onekernel_abi::{DataType, Features, ScalarType};
use onekernel_runtime::__private::*;
use onekernel_runtime::{abi::DataType as ReexportedDataType, BufferError};
use std::sync::OnceLock;

fn gpu() -> &'static Device {
    static DEVICE: OnceLock<Device> = OnceLock::new();
    DEVICE.get_or_init(|| match Device::gpu() {
        Ok(d) => d,
        Err(e) => panic!("these tests need a GPU adapter (try `source .ci/env.sh` for lavapipe): {e}"),
    })
}

fn devices() -> [Device; 2] {
    [Device::cpu(), gpu().clone()]
}

/// What `#[kernel]` emits for a struct a kernel uses, checked against
/// WGSL's `struct Particle { pos: vec2<f32>, vel: vec2<f32> }` (16 bytes,
/// aligned to 8).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
#[bytemuck(crate = "onekernel_runtime::__private::bytemuck")]
struct Particle {
    pos: Vec2,
    vel: Vec2,
}

impl Element for Particle {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("Particle"), size: 16, align: 8 };
}

/// `struct Params { scale: f32, bias: f32, n: u32, pad: u32 }`, passed as a
/// scalar (16 bytes, aligned to 4; 16 in a uniform block).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
#[bytemuck(crate = "onekernel_runtime::__private::bytemuck")]
struct Params {
    scale: f32,
    bias: f32,
    n: u32,
    pad: u32,
}

impl Element for Params {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("Params"), size: 16, align: 4 };
}

/// A wrong impl: claims 32 bytes for a 16-byte type.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
#[bytemuck(crate = "onekernel_runtime::__private::bytemuck")]
struct Liar {
    a: [f32; 4],
}

impl Element for Liar {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("Liar"), size: 32, align: 16 };
}

fn round_trip<T: Element + std::fmt::Debug + PartialEq>(dev: &Device, data: &[T]) {
    let n = data.len();
    let mut b = Buffer::from_slice(dev, data).unwrap();
    assert_eq!(b.read().unwrap(), data, "{dev}");
    if n >= 3 {
        // Odd offsets and lengths: for 2-byte elements these are not whole
        // words on the GPU.
        assert_eq!(b.read_range(1..n - 1).unwrap(), &data[1..n - 1], "{dev}");
        assert_eq!(b.read_range(1..2).unwrap(), &data[1..2], "{dev}");
        b.write_range(1, &data[n - 1..]).unwrap();
        let mut want = data.to_vec();
        want[1] = data[n - 1];
        assert_eq!(b.read().unwrap(), want, "{dev}");
        let mut c = Buffer::<T>::zeroed(dev, n).unwrap();
        c.copy_range_from(1, &b, 0..n - 1).unwrap();
        let mut shifted = vec![T::zeroed()];
        shifted.extend_from_slice(&want[..n - 1]);
        assert_eq!(c.read().unwrap(), shifted, "{dev}");
        let mut out = vec![T::zeroed(); n];
        c.read_into(&mut out).unwrap();
        assert_eq!(out, shifted);
        assert_eq!(pollster::block_on(c.read_range_async(1..n)).unwrap(), &shifted[1..], "{dev}");
    }
}

#[test]
fn every_element_type_round_trips_on_both_devices() {
    for dev in devices() {
        round_trip(&dev, &[1.5f32, -2.0, 3.0]);
        round_trip(&dev, &(0..7).map(|i| f16::from_f32(i as f32 * 0.5 - 1.0)).collect::<Vec<_>>());
        round_trip(&dev, &[f16::ONE, f16::NEG_ONE]);
        round_trip(&dev, &[f16::MAX]);
        round_trip(&dev, &[0.1f64, -1e300, 3.0]);
        round_trip(&dev, &[i64::MIN, -1, i64::MAX]);
        round_trip(&dev, &[u64::MAX, 0, 1 << 40]);
        round_trip(&dev, &[Vec2::new(1.0, 2.0), Vec2::ONE, Vec2::NEG_ONE]);
        round_trip(&dev, &[Vec3A::new(1.0, 2.0, 3.0), Vec3A::ONE, Vec3A::Z]);
        round_trip(&dev, &[Vec4::new(1.0, 2.0, 3.0, 4.0), Vec4::ONE, Vec4::W]);
        round_trip(&dev, &[IVec4::new(-1, 2, -3, 4), IVec4::MIN, IVec4::MAX]);
        round_trip(&dev, &[UVec2::new(1, 2), UVec2::MAX, UVec2::ZERO]);
        round_trip(&dev, &[glam::DVec4::new(1.0, 2.0, 3.0, 4.0), glam::DVec4::NEG_ONE, glam::DVec4::ONE]);
        round_trip(&dev, &[glam::U64Vec2::new(1, u64::MAX), glam::U64Vec2::ONE, glam::U64Vec2::ZERO]);
        let h = |x: f32| f16::from_f32(x);
        let (h4, h2) = (onekernel_runtime::F16Vec4::new, onekernel_runtime::F16Vec2::new);
        round_trip(&dev, &[h4(h(1.0), h(-2.0), h(0.5), f16::MAX), h4(f16::ONE, f16::ZERO, f16::INFINITY, h(3.0))]);
        round_trip(&dev, &[h2(h(1.0), h(-2.0)), h2(f16::MIN, f16::MAX), h2(h(0.25), h(8.0))]);
        let p = |x: f32| Particle { pos: Vec2::splat(x), vel: Vec2::new(x, -x) };
        round_trip(&dev, &[p(1.0), p(2.0), p(3.0)]);
        assert_eq!(Buffer::<f16>::zeroed(&dev, 5).unwrap().read().unwrap(), vec![f16::ZERO; 5]);
    }
}

#[test]
fn element_types_match_wgsl() {
    assert_eq!(Vec3A::TYPE, DataType::Vector { elem: ScalarType::F32, lanes: 3 });
    assert_eq!(<f16 as Element>::TYPE.wgsl_name(), "f16");
    assert_eq!(UVec2::TYPE.wgsl_name(), "vec2<u32>");
    assert_eq!(onekernel_runtime::F16Vec4::TYPE.wgsl_name(), "vec4<f16>");
    assert_eq!(onekernel_runtime::F16Vec2::TYPE.rust_name(), "F16Vec2");
    assert_eq!(onekernel_runtime::F16Vec2::TYPE.stride() as usize, size_of::<onekernel_runtime::F16Vec2>());
    assert_eq!(Particle::TYPE.stride() as usize, size_of::<Particle>());
    // The runtime re-exports the ABI's types (as `abi`).
    let _: ReexportedDataType = f64::TYPE;
}

#[test]
fn a_wrong_element_impl_is_an_error_not_ub() {
    for dev in devices() {
        let err = Buffer::from_slice(&dev, &[Liar { a: [1.0; 4] }]).unwrap_err();
        assert!(matches!(err, BufferError::InvalidElement { .. }), "{err}");
        assert!(err.to_string().contains("is 16 bytes, but its kernel type Liar (`Liar`) takes 32"), "{err}");
        assert!(Buffer::<Liar>::zeroed(&dev, 2).is_err());
    }
}

// A kernel over vectors, a struct buffer and scalars of several types:
//
//   fn k(a: &[Vec4], out: &mut [Vec4], ps: &mut [Particle], v: Vec3, w: f32, p: Params) {
//       let i = global_id().x;
//       if i < p.n {
//           out[i] = a[i] * p.scale + Vec4::new(v.x, v.y, v.z, w) + p.bias;
//           ps[i].pos += ps[i].vel * w;
//       }
//   }
//
// Uniform block: launch description 0..16, `v: vec3<f32>` at 16 (12
// bytes), `w: f32` at 28 (packed right after the vec3, as WGSL does), `p:
// Params` at 32 (a struct is 16-aligned in a uniform block), 48 bytes.
const MIXED_WGSL: &str = r#"
struct Particle { pos: vec2<f32>, vel: vec2<f32> }
struct Params { scale: f32, bias: f32, n: u32, pad: u32 }
struct Launch { groups: vec3<u32>, block_offset: u32, v: vec3<f32>, w: f32, p: Params }
@group(0) @binding(0) var<storage, read> a: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> out: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> ps: array<Particle>;
@group(0) @binding(3) var<uniform> launch: Launch;

@compute @workgroup_size(64, 1, 1)
fn mixed(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if i < launch.p.n {
        out[i] = a[i] * launch.p.scale + vec4<f32>(launch.v, launch.w) + launch.p.bias;
        ps[i].pos += ps[i].vel * launch.w;
    }
}
"#;

static MIXED: KernelInfo = KernelInfo {
    name: Cow::Borrowed("mixed"),
    entry_point: Cow::Borrowed("mixed"),
    modules: Cow::Borrowed(&[
        Module { key: ModuleKey::PLAIN, wgsl: Cow::Borrowed(MIXED_WGSL), spirv: None },
        Module { key: ModuleKey::FOLDED, wgsl: Cow::Borrowed(MIXED_WGSL), spirv: None },
    ]),
    explain: Cow::Borrowed(""),
    workgroup_size: [64, 1, 1],
    params: Cow::Borrowed(&[
        ParamInfo {
            name: Cow::Borrowed("a"),
            kind: ParamKind::ReadOnlyBuffer,
            ty: DataType::Vector { elem: ScalarType::F32, lanes: 4 },
            slot: 0,
        },
        ParamInfo {
            name: Cow::Borrowed("out"),
            kind: ParamKind::ReadWriteBuffer,
            ty: DataType::Vector { elem: ScalarType::F32, lanes: 4 },
            slot: 1,
        },
        ParamInfo {
            name: Cow::Borrowed("ps"),
            kind: ParamKind::ReadWriteBuffer,
            ty: DataType::Struct { name: Cow::Borrowed("Particle"), size: 16, align: 8 },
            slot: 2,
        },
        ParamInfo {
            name: Cow::Borrowed("v"),
            kind: ParamKind::Scalar,
            ty: DataType::Vector { elem: ScalarType::F32, lanes: 3 },
            slot: 16,
        },
        ParamInfo { name: Cow::Borrowed("w"), kind: ParamKind::Scalar, ty: DataType::F32, slot: 28 },
        ParamInfo {
            name: Cow::Borrowed("p"),
            kind: ParamKind::Scalar,
            ty: DataType::Struct { name: Cow::Borrowed("Params"), size: 16, align: 4 },
            slot: 32,
        },
    ]),
    uniform_binding: 3,
    uniform_size: 48,
    max_workgroup_invocations: 256,
    cpu: CpuPlan::Independent,
    workgroup_memory_words: 0,
    features: Features::NONE,
    ..KernelInfo::EMPTY
};

/// What the macro would generate for `mixed`.
#[allow(clippy::too_many_arguments)]
fn mixed(
    device: &Device,
    grid: impl Into<Grid>,
    a: &Buffer<Vec4>,
    out: &mut Buffer<Vec4>,
    ps: &mut Buffer<Particle>,
    v: Vec3,
    w: f32,
    p: Params,
) -> Result<(), LaunchError> {
    let k = &MIXED;
    match backend(device) {
        DeviceBackend::Gpu(gpu) => {
            let args = [gpu_arg(a, k, 0, gpu)?, gpu_arg_mut(out, k, 1, gpu)?, gpu_arg_mut(ps, k, 2, gpu)?];
            gpu.dispatch(k, grid.into(), &args, &[ScalarArg::from(v), ScalarArg::from(w), ScalarArg::from(p)])
        }
        DeviceBackend::Cpu(cpu) => {
            let a = cpu_slice(a, k, 0, cpu)?;
            let out = cpu_shared(out, k, 1, cpu)?;
            let ps = cpu_shared(ps, k, 2, cpu)?;
            cpu.execute(k, grid.into(), |inv| {
                let i = inv.global_id.x;
                if i < p.n as usize {
                    out.store(i, a[i] * p.scale + Vec4::new(v.x, v.y, v.z, w) + p.bias);
                    let mut q = ps.load(i);
                    q.pos += q.vel * w;
                    ps.store(i, q);
                }
            })
        }
    }
}

fn mixed_inputs(n: usize) -> (Vec<Vec4>, Vec<Particle>) {
    let a = (0..n).map(|i| Vec4::new(i as f32, -(i as f32), 0.5, 2.0)).collect();
    let ps = (0..n).map(|i| Particle { pos: Vec2::new(i as f32, 1.0), vel: Vec2::new(0.25, -(i as f32)) }).collect();
    (a, ps)
}

fn run_mixed(dev: &Device, n: usize, p: Params) -> (Vec<Vec4>, Vec<Particle>) {
    let (a, ps) = mixed_inputs(n);
    let a = Buffer::from_slice(dev, &a).unwrap();
    let mut out = Buffer::<Vec4>::zeroed(dev, n).unwrap();
    let mut ps = Buffer::from_slice(dev, &ps).unwrap();
    mixed(dev, n, &a, &mut out, &mut ps, Vec3::new(1.0, 2.0, 3.0), 0.5, p).unwrap();
    (out.read().unwrap(), ps.read().unwrap())
}

#[test]
fn vectors_structs_and_mixed_scalars_agree_on_both_devices() {
    let n = 300;
    let p = Params { scale: 2.0, bias: 0.25, n: 250, pad: 0 };
    let (a, ps) = mixed_inputs(n);
    let want_out: Vec<Vec4> =
        (0..n).map(|i| if i < 250 { a[i] * 2.0 + Vec4::new(1.0, 2.0, 3.0, 0.5) + 0.25 } else { Vec4::ZERO }).collect();
    let want_ps: Vec<Particle> = (0..n)
        .map(|i| {
            let mut q = ps[i];
            if i < 250 {
                q.pos += q.vel * 0.5;
            }
            q
        })
        .collect();
    for dev in devices() {
        let (out, ps) = run_mixed(&dev, n, p);
        assert_eq!(out, want_out, "{dev}");
        assert_eq!(ps, want_ps, "{dev}");
    }
}

#[test]
fn scalars_are_checked_against_their_parameters() {
    let dev = gpu();
    let DeviceBackend::Gpu(g) = backend(dev) else { unreachable!() };
    let a = Buffer::<Vec4>::zeroed(dev, 4).unwrap();
    let mut out = Buffer::<Vec4>::zeroed(dev, 4).unwrap();
    let mut ps = Buffer::<Particle>::zeroed(dev, 4).unwrap();
    macro_rules! args {
        ($a:expr, $out:expr, $ps:expr) => {
            [
                gpu_arg($a, &MIXED, 0, g).unwrap(),
                gpu_arg_mut($out, &MIXED, 1, g).unwrap(),
                gpu_arg_mut($ps, &MIXED, 2, g).unwrap(),
            ]
        };
    }
    let p = Params { scale: 1.0, bias: 0.0, n: 4, pad: 0 };
    // `Vec3A` (16 bytes, the 4th lane padding) is accepted for a vec3 too.
    let ok = [ScalarArg::from(Vec3A::ONE), ScalarArg::from(1.0f32), ScalarArg::from(p)];
    g.dispatch(&MIXED, Grid::threads(4), &args!(&a, &mut out, &mut ps), &ok).unwrap();
    // A scalar of the wrong type names the argument.
    let bad = [ScalarArg::from(Vec4::ONE), ScalarArg::from(1.0f32), ScalarArg::from(p)];
    let err = g.dispatch(&MIXED, Grid::threads(4), &args!(&a, &mut out, &mut ps), &bad).unwrap_err();
    assert!(err.to_string().contains("argument `v`: a scalar of Vec4 passed for a parameter of Vec3A"), "{err}");
    // A struct of another name is another type.
    let liar = [ScalarArg::from(Vec3::ONE), ScalarArg::from(1.0f32), ScalarArg::from(Liar { a: [0.0; 4] })];
    let err = g.dispatch(&MIXED, Grid::threads(4), &args!(&a, &mut out, &mut ps), &liar).unwrap_err();
    assert!(err.to_string().contains("a scalar of Liar passed for a parameter of Params"), "{err}");
    // The right type with the wrong size: a lying impl, refused.
    let short = ScalarArg::from_bytes(Params::TYPE, &[0u8; 12]);
    let err = g
        .dispatch(&MIXED, Grid::threads(4), &args!(&a, &mut out, &mut ps), &[Vec3::ONE.into(), 1.0f32.into(), short])
        .unwrap_err();
    assert!(err.to_string().contains("is 12 bytes, but its kernel type Params takes 16"), "{err}");
    // `from_pod` says the same as `From`.
    assert_eq!(ScalarArg::from_pod(&p), ScalarArg::from(p));
    assert_eq!(ScalarArg::from(f16::ONE).bytes(), f16::ONE.to_le_bytes());
    assert_eq!(ScalarArg::from(-1i64).ty(), &DataType::Scalar(ScalarType::I64));
}

#[test]
fn slots_must_follow_wgsl_uniform_alignment() {
    // A struct scalar at a slot that is not 16-aligned, and two scalars
    // that overlap: both are bugs in the KernelInfo, reported as such.
    static MISALIGNED: KernelInfo = KernelInfo {
        params: Cow::Borrowed(&[ParamInfo {
            name: Cow::Borrowed("p"),
            kind: ParamKind::Scalar,
            ty: DataType::Struct { name: Cow::Borrowed("Params"), size: 16, align: 4 },
            slot: 20,
        }]),
        uniform_binding: 0,
        uniform_size: 48,
        ..SCALARS_ONLY
    };
    static OVERLAP: KernelInfo = KernelInfo {
        params: Cow::Borrowed(&[
            ParamInfo {
                name: Cow::Borrowed("v"),
                kind: ParamKind::Scalar,
                ty: DataType::Vector { elem: ScalarType::F32, lanes: 4 },
                slot: 16,
            },
            ParamInfo { name: Cow::Borrowed("w"), kind: ParamKind::Scalar, ty: DataType::F32, slot: 28 },
        ]),
        uniform_binding: 0,
        uniform_size: 32,
        ..SCALARS_ONLY
    };
    let DeviceBackend::Gpu(g) = backend(gpu()) else { unreachable!() };
    let p = Params { scale: 1.0, bias: 0.0, n: 0, pad: 0 };
    let err = g.dispatch(&MISALIGNED, Grid::threads(1), &[], &[p.into()]).unwrap_err();
    assert!(err.to_string().contains("is not aligned to 16 bytes"), "{err}");
    let err = g.dispatch(&OVERLAP, Grid::threads(1), &[], &[Vec4::ONE.into(), 1.0f32.into()]).unwrap_err();
    assert!(err.to_string().contains("scalars `v` and `w` overlap"), "{err}");
}

/// A kernel with no parameters, as a base for hand-built variants.
const SCALARS_ONLY: KernelInfo = KernelInfo {
    name: Cow::Borrowed("scalars_only"),
    entry_point: Cow::Borrowed("main"),
    modules: Cow::Borrowed(&[
        Module { key: ModuleKey::PLAIN, wgsl: Cow::Borrowed("@compute @workgroup_size(1) fn main() {}"), spirv: None },
        Module { key: ModuleKey::FOLDED, wgsl: Cow::Borrowed("@compute @workgroup_size(1) fn main() {}"), spirv: None },
    ]),
    explain: Cow::Borrowed(""),
    workgroup_size: [1, 1, 1],
    params: Cow::Borrowed(&[]),
    uniform_binding: 0,
    uniform_size: 16,
    max_workgroup_invocations: 256,
    cpu: CpuPlan::Independent,
    workgroup_memory_words: 0,
    features: Features::NONE,
    ..KernelInfo::EMPTY
};

/// `fn halves(h: &[f16], out: &mut [f16], lens: &mut [u32], s: f16)` by
/// hand, as the ABI lays it out: `h` and `out` have sub-word elements, so
/// their lengths are words of the launch block before the scalar `s`.
const HALVES_WGSL: &str = r#"
enable f16;
struct Launch { groups: vec3<u32>, block_offset: u32, h_len: u32, out_len: u32, s: f16 }
@group(0) @binding(0) var<storage, read> h: array<f16>;
@group(0) @binding(1) var<storage, read_write> out: array<f16>;
@group(0) @binding(2) var<storage, read_write> lens: array<u32>;
@group(0) @binding(3) var<uniform> params: Launch;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    if i == 0u {
        lens[0] = params.h_len;
        lens[1] = params.out_len;
        lens[2] = arrayLength(&out);
    }
    if i < params.h_len && i < params.out_len {
        out[i] = h[i] * params.s;
    }
}
"#;

static HALVES: KernelInfo = KernelInfo {
    name: Cow::Borrowed("halves"),
    modules: Cow::Borrowed(&[Module { key: ModuleKey::PLAIN, wgsl: Cow::Borrowed(HALVES_WGSL), spirv: None }]),
    params: Cow::Borrowed(&[
        ParamInfo {
            name: Cow::Borrowed("h"),
            kind: ParamKind::ReadOnlyBuffer,
            ty: DataType::Scalar(ScalarType::F16),
            slot: 0,
        },
        ParamInfo {
            name: Cow::Borrowed("out"),
            kind: ParamKind::ReadWriteBuffer,
            ty: DataType::Scalar(ScalarType::F16),
            slot: 1,
        },
        ParamInfo { name: Cow::Borrowed("lens"), kind: ParamKind::ReadWriteBuffer, ty: DataType::U32, slot: 2 },
        ParamInfo {
            name: Cow::Borrowed("s"),
            kind: ParamKind::Scalar,
            ty: DataType::Scalar(ScalarType::F16),
            slot: 24,
        },
    ]),
    uniform_binding: 3,
    uniform_size: 32,
    workgroup_size: [64, 1, 1],
    features: Features::F16,
    ..KernelInfo::EMPTY
};

#[test]
fn buffers_of_two_byte_elements_have_any_length() {
    assert_eq!((HALVES.length_slot(0), HALVES.length_slot(1), HALVES.length_slot(2)), (Some(16), Some(20), None));
    assert_eq!(HALVES.scalars_start(), 24);
    // Any length is accepted on both devices; the host sees the logical one.
    for dev in devices() {
        for n in [0, 1, 3, 4099] {
            let h: Vec<f16> = (0..n).map(|i| f16::from_f32(i as f32 - 3.0)).collect();
            let buf = Buffer::from_slice(&dev, &h).unwrap();
            assert_eq!((buf.len(), buf.read().unwrap()), (n, h.clone()));
            match backend(&dev) {
                DeviceBackend::Gpu(g) => assert!(gpu_arg(&buf, &HALVES, 0, g).is_ok()),
                DeviceBackend::Cpu(c) => assert_eq!(cpu_slice(&buf, &HALVES, 0, c).unwrap(), &h[..]),
            }
        }
    }
    // On the GPU the runtime writes each length word: the kernel sees 3
    // where the binding (whole words) holds 4.
    let DeviceBackend::Gpu(g) = backend(gpu()) else { unreachable!() };
    let h = Buffer::from_slice(gpu(), &[f16::ONE, f16::from_f32(2.0), f16::from_f32(-4.0)]).unwrap();
    let mut out = Buffer::<f16>::zeroed(gpu(), 3).unwrap();
    let mut lens = Buffer::<u32>::zeroed(gpu(), 3).unwrap();
    let args = [
        gpu_arg(&h, &HALVES, 0, g).unwrap(),
        gpu_arg_mut(&mut out, &HALVES, 1, g).unwrap(),
        gpu_arg_mut(&mut lens, &HALVES, 2, g).unwrap(),
    ];
    g.dispatch(&HALVES, Grid::threads(64), &args, &[f16::from_f32(0.5).into()]).unwrap();
    assert_eq!(lens.read().unwrap(), [3, 3, 4]);
    assert_eq!(out.read().unwrap(), [f16::from_f32(0.5), f16::ONE, f16::from_f32(-2.0)]);
}

// f16, f64 and i64 arithmetic on the GPU (lavapipe has all three), against
// the CPU executor:
//
//   fn wide(h: &[f16], d: &mut [f64], q: &mut [i64], s: f16, t: u64) {
//       let i = global_id().x;
//       if i < d.len() {
//           d[i] = d[i] * 2.0 + f64::from(h[i] * s);
//           q[i] = q[i] * -3 + t as i64;
//       }
//   }
const WIDE_WGSL: &str = r#"
enable f16;
struct Launch { groups: vec3<u32>, block_offset: u32, h_len: u32, t: u64, s: f16 }
@group(0) @binding(0) var<storage, read> h: array<f16>;
@group(0) @binding(1) var<storage, read_write> d: array<f64>;
@group(0) @binding(2) var<storage, read_write> q: array<i64>;
@group(0) @binding(3) var<uniform> launch: Launch;

@compute @workgroup_size(64, 1, 1)
fn wide(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if i < arrayLength(&d) {
        d[i] = d[i] * 2.0lf + f64(h[i] * launch.s);
        q[i] = q[i] * -3li + i64(launch.t);
    }
}
"#;

static WIDE: KernelInfo = KernelInfo {
    name: Cow::Borrowed("wide"),
    entry_point: Cow::Borrowed("wide"),
    modules: Cow::Borrowed(&[
        Module { key: ModuleKey::PLAIN, wgsl: Cow::Borrowed(WIDE_WGSL), spirv: None },
        Module { key: ModuleKey::FOLDED, wgsl: Cow::Borrowed(WIDE_WGSL), spirv: None },
    ]),
    explain: Cow::Borrowed(""),
    workgroup_size: [64, 1, 1],
    params: Cow::Borrowed(&[
        ParamInfo {
            name: Cow::Borrowed("h"),
            kind: ParamKind::ReadOnlyBuffer,
            ty: DataType::Scalar(ScalarType::F16),
            slot: 0,
        },
        ParamInfo {
            name: Cow::Borrowed("d"),
            kind: ParamKind::ReadWriteBuffer,
            ty: DataType::Scalar(ScalarType::F64),
            slot: 1,
        },
        ParamInfo {
            name: Cow::Borrowed("q"),
            kind: ParamKind::ReadWriteBuffer,
            ty: DataType::Scalar(ScalarType::I64),
            slot: 2,
        },
        ParamInfo {
            name: Cow::Borrowed("s"),
            kind: ParamKind::Scalar,
            ty: DataType::Scalar(ScalarType::F16),
            slot: 32,
        },
        ParamInfo {
            name: Cow::Borrowed("t"),
            kind: ParamKind::Scalar,
            ty: DataType::Scalar(ScalarType::U64),
            slot: 24,
        },
    ]),
    uniform_binding: 3,
    uniform_size: 48,
    max_workgroup_invocations: 256,
    cpu: CpuPlan::OwnElement { chunk_loop: false },
    workgroup_memory_words: 0,
    features: Features::F16.union(Features::F64).union(Features::INT64),
    ..KernelInfo::EMPTY
};

/// What the macro would generate for `wide` (the owned-element path).
fn wide(
    device: &Device,
    grid: impl Into<Grid>,
    h: &Buffer<f16>,
    d: &mut Buffer<f64>,
    q: &mut Buffer<i64>,
    s: f16,
    t: u64,
) -> Result<(), LaunchError> {
    let k = &WIDE;
    let grid = grid.into();
    match backend(device) {
        DeviceBackend::Gpu(gpu) => {
            let args = [gpu_arg(h, k, 0, gpu)?, gpu_arg_mut(d, k, 1, gpu)?, gpu_arg_mut(q, k, 2, gpu)?];
            gpu.dispatch(k, grid, &args, &[ScalarArg::from(s), ScalarArg::from(t)])
        }
        DeviceBackend::Cpu(cpu) => {
            let h = cpu_slice(h, k, 0, cpu)?;
            let d = cpu_shared(d, k, 1, cpu)?;
            let q = cpu_shared(q, k, 2, cpu)?;
            let body = |inv: &Invocation, d: &dyn OutputSliceDyn<f64>, q: &dyn OutputSliceDyn<i64>| {
                let i = inv.global_id.x;
                if i < d.len() {
                    d.store(i, d.load(i) * 2.0 + f64::from(h[i] * s));
                    q.store(i, q.load(i).wrapping_mul(-3).wrapping_add(t as i64));
                }
            };
            if cpu.can_partition(k, &grid) {
                cpu.execute_partitioned(k, grid, (d, q), |chunk, (d, q)| chunk.for_each(|inv| body(inv, &d, &q)))
            } else {
                cpu.execute(k, grid, |inv| body(inv, &d, &q))
            }
        }
    }
}

/// `OutputSlice` as an object, so that one closure serves both paths.
trait OutputSliceDyn<T> {
    fn len(&self) -> usize;
    fn load(&self, i: usize) -> T;
    fn store(&self, i: usize, v: T);
}

impl<T: Element, O: OutputSlice<T>> OutputSliceDyn<T> for O {
    fn len(&self) -> usize {
        OutputSlice::len(self)
    }
    fn load(&self, i: usize) -> T {
        OutputSlice::load(self, i)
    }
    fn store(&self, i: usize, v: T) {
        OutputSlice::store(self, i, v)
    }
}

#[test]
fn f16_f64_and_i64_kernels_agree_on_both_devices() {
    assert!(gpu().features().contains(WIDE.features), "lavapipe was expected to offer f16, f64 and int64");
    let n = 1000;
    let h: Vec<f16> = (0..n).map(|i| f16::from_f32((i % 50) as f32 * 0.25)).collect();
    let d0: Vec<f64> = (0..n).map(|i| i as f64 / 3.0).collect();
    let q0: Vec<i64> = (0..n).map(|i| (i as i64) << 33).collect();
    let (s, t) = (f16::from_f32(1.5), 1u64 << 40);
    let want_d: Vec<f64> = (0..n).map(|i| d0[i] * 2.0 + f64::from(h[i] * s)).collect();
    let want_q: Vec<i64> = (0..n).map(|i| q0[i].wrapping_mul(-3).wrapping_add(t as i64)).collect();
    for dev in devices() {
        let hb = Buffer::from_slice(&dev, &h).unwrap();
        let mut db = Buffer::from_slice(&dev, &d0).unwrap();
        let mut qb = Buffer::from_slice(&dev, &q0).unwrap();
        wide(&dev, n, &hb, &mut db, &mut qb, s, t).unwrap();
        assert_eq!(db.read().unwrap(), want_d, "{dev}");
        assert_eq!(qb.read().unwrap(), want_q, "{dev}");
    }
}

#[test]
fn device_features() {
    let cpu = Device::cpu();
    for (f, _) in Features::ALL {
        assert!(cpu.features().contains(f));
    }
    assert_eq!((cpu.subgroup_sizes(), cpu.cooperative_matrix_properties().len()), (None, 0));
    let g = gpu();
    let f = g.features();
    eprintln!(
        "{g}: {:?}, subgroup sizes {:?}, cooperative matrices {:?}",
        f.names().collect::<Vec<_>>(),
        g.subgroup_sizes(),
        g.cooperative_matrix_properties()
    );
    // What lavapipe offers (Mesa 25).
    assert!(f.contains(Features::F16.union(Features::F64).union(Features::INT64).union(Features::SUBGROUP)));
    let (min, max) = g.subgroup_sizes().expect("lavapipe has subgroups");
    assert!(min >= 1 && min <= max && max <= 128, "{min}..{max}");
    let DeviceBackend::Gpu(raw) = backend(g) else { unreachable!() };
    assert!(raw.features().contains(wgpu_features::SUBGROUP_BARRIER));
    if !f.contains(Features::COOPERATIVE_MATRIX) {
        assert!(g.cooperative_matrix_properties().is_empty());
    }
}

use onekernel_runtime::wgpu::Features as wgpu_features;

#[test]
fn a_kernel_needing_a_missing_feature_is_an_error_naming_it() {
    // Lavapipe has no cooperative matrices: claim them (with f16, which
    // it has) on a trivial kernel.
    static COOP: KernelInfo = KernelInfo {
        name: Cow::Borrowed("tensor_cores"),
        features: Features::COOPERATIVE_MATRIX.union(Features::F16),
        ..SCALARS_ONLY
    };
    let g = gpu();
    assert!(!g.features().contains(Features::COOPERATIVE_MATRIX), "the test assumes lavapipe lacks them");
    let DeviceBackend::Gpu(raw) = backend(g) else { unreachable!() };
    let err = raw.dispatch(&COOP, Grid::threads(1), &[], &[]).unwrap_err();
    match &err {
        LaunchError::MissingFeature { kernel, missing, .. } => {
            assert_eq!((*kernel, *missing), ("tensor_cores", Features::COOPERATIVE_MATRIX));
        }
        other => panic!("{other:?}"),
    }
    assert!(
        err.to_string().starts_with(
            "kernel `tensor_cores` needs the device feature EXPERIMENTAL_COOPERATIVE_MATRIX, which device #"
        ),
        "{err}"
    );
    // Nothing was compiled for it; the CPU executor has every feature.
    assert!(Device::cpu().features().contains(COOP.features));
    // A kernel whose features the device has runs (f16 on lavapipe).
    static HALF: KernelInfo = KernelInfo { name: Cow::Borrowed("half_ok"), features: Features::F16, ..SCALARS_ONLY };
    raw.dispatch(&HALF, Grid::threads(1), &[], &[]).unwrap();
}

#[test]
fn a_tile_shape_the_device_does_not_offer_is_an_error_naming_it() {
    // The shapes are checked against the adapter's cooperative matrices
    // (none on lavapipe) before any pipeline exists: a kernel claiming a
    // 16x16x16 product, without claiming the feature, reaches that check.
    static SHAPES: [onekernel_abi::TileShape; 1] =
        [onekernel_abi::TileShape { m: 16, n: 16, k: 16, ab: ScalarType::F16, acc: ScalarType::F32 }];
    static TILES: KernelInfo =
        KernelInfo { name: Cow::Borrowed("tile_shapes"), tile_shapes: Cow::Borrowed(&SHAPES), ..SCALARS_ONLY };
    let g = gpu();
    let DeviceBackend::Gpu(raw) = backend(g) else { unreachable!() };
    if !raw.cooperative_matrix_properties().is_empty() {
        return; // a device with cooperative matrices may offer it
    }
    let err = raw.dispatch(&TILES, Grid::threads(1), &[], &[]).unwrap_err();
    match &err {
        LaunchError::UnsupportedTileShape { kernel, shape, offered, .. } => {
            assert_eq!((*kernel, *shape, offered.as_str()), ("tile_shapes", SHAPES[0], "none"));
        }
        other => panic!("{other:?}"),
    }
    assert!(err.to_string().contains("16x16x16 (MxNxK) f16 x f16 -> f32"), "{err}");
}

#[test]
fn unchecked_launches_match_checked_ones() {
    let checked = gpu();
    // SAFETY: `mixed` accesses only elements `i < p.n <= len` of its
    // buffers, has no loops and no integer division; the launches below
    // pass buffers of at least `p.n` elements.
    let unchecked = unsafe { checked.unchecked() };
    assert!(unchecked.is_unchecked() && !checked.is_unchecked());
    assert_eq!(unchecked.id(), checked.id());
    let cpu = Device::cpu();
    // SAFETY: a plain clone on the CPU.
    assert!(!unsafe { cpu.unchecked() }.is_unchecked());
    let DeviceBackend::Gpu(raw) = backend(checked) else { unreachable!() };
    let p = Params { scale: 3.0, bias: -1.0, n: 1000, pad: 0 };
    let want = run_mixed(&Device::cpu(), 1000, p);
    assert_eq!(run_mixed(checked, 1000, p), want);
    let before = raw.compiled_kernels();
    // Buffers of the checked handle are the unchecked handle's too.
    let (a, ps) = mixed_inputs(1000);
    let a = Buffer::from_slice(checked, &a).unwrap();
    let mut out = Buffer::<Vec4>::zeroed(checked, 1000).unwrap();
    let mut ps = Buffer::from_slice(checked, &ps).unwrap();
    mixed(&unchecked, 1000, &a, &mut out, &mut ps, Vec3::new(1.0, 2.0, 3.0), 0.5, p).unwrap();
    assert_eq!((out.read().unwrap(), ps.read().unwrap()), want);
    // Its own pipeline, once.
    assert_eq!(raw.compiled_kernels(), before + 1);
    mixed(&unchecked, 1000, &a, &mut out, &mut ps, Vec3::new(1.0, 2.0, 3.0), 0.5, p).unwrap();
    assert_eq!(raw.compiled_kernels(), before + 1);
    // Buffers made through the unchecked handle work on the checked one.
    let mut more = Buffer::<Vec4>::zeroed(&unchecked, 1000).unwrap();
    mixed(checked, 1000, &a, &mut more, &mut ps, Vec3::ZERO, 0.0, p).unwrap();
    assert_eq!(more.read().unwrap()[1], Vec4::new(1.0, -1.0, 0.5, 2.0) * 3.0 - 1.0);
}
