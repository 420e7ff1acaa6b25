//! Hand-built kernels following the `#[kernel]` contract (what the macro
//! will generate): a `static KernelInfo` with hand-written WGSL, and launch
//! functions that mirror the generated host code on both paths.
#![allow(dead_code)]

use onekernel_abi::DataType;
use onekernel_runtime::__private::*;

/// `SCALE_ADD_WGSL`: the plain module (`"false"`) or the folded one
/// (`"true"`), its launch block in `uniform` (the default) or `storage`
/// (`ParamsBinding::Storage`).
macro_rules! scale_add_wgsl {
    ($folded:literal) => {
        scale_add_wgsl!($folded, "uniform")
    };
    ($folded:literal, $space:literal) => {
        concat!(
            "const grid_folded: bool = ",
            $folded,
            ";\n",
            r#"
struct Launch { groups: vec3<u32>, block_offset: u32, s: f32 }
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
@group(0) @binding(2) var<"#,
            $space,
            r#"> launch: Launch;

@compute @workgroup_size(256, 1, 1)
fn scale_add(@builtin(workgroup_id) wid: vec3<u32>,
             @builtin(num_workgroups) nwg: vec3<u32>,
             @builtin(local_invocation_id) lid: vec3<u32>) {
    var group = wid;
    if grid_folded {
        group = vec3<u32>(launch.block_offset + wid.x + nwg.x * wid.y, 0u, 0u);
    }
    let i = (group * vec3<u32>(256u, 1u, 1u) + lid).x;
    if i < arrayLength(&out) && i < arrayLength(&a) {
        out[i] = out[i] + launch.s * a[i];
    }
}
"#
        )
    };
}

/// `IDS_WGSL`: the plain module (`"false"`) or the folded one (`"true"`).
macro_rules! ids_wgsl {
    ($folded:literal) => {
        concat!(
            "const grid_folded: bool = ",
            $folded,
            ";\n",
            r#"
struct Launch { groups: vec3<u32>, block_offset: u32 }
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@group(0) @binding(1) var<uniform> launch: Launch;

fn enc(v: vec3<u32>) -> u32 { return v.x + 100u * v.y + 10000u * v.z; }

@compute @workgroup_size(4, 2, 2)
fn ids(@builtin(workgroup_id) wid: vec3<u32>,
       @builtin(num_workgroups) nwg: vec3<u32>,
       @builtin(local_invocation_id) lid: vec3<u32>) {
    var group = wid;
    if grid_folded {
        group = vec3<u32>(launch.block_offset + wid.x + nwg.x * wid.y, 0u, 0u);
    }
    let size = vec3<u32>(4u, 2u, 2u);
    let gid = group * size + lid;
    let dims = launch.groups * size;
    let at = 4u * (gid.x + dims.x * (gid.y + dims.y * gid.z));
    out[at] = enc(gid);
    out[at + 1u] = enc(lid);
    out[at + 2u] = enc(group);
    out[at + 3u] = enc(launch.groups);
}
"#
        )
    };
}

/// `COVERAGE_WGSL`: the plain module (`"false"`) or the folded one (`"true"`).
macro_rules! coverage_wgsl {
    ($folded:literal) => {
        concat!(
            "const grid_folded: bool = ",
            $folded,
            ";\n",
            r#"
struct Launch { groups: vec3<u32>, block_offset: u32 }
@group(0) @binding(0) var<storage, read_write> count: array<atomic<u32>>;
@group(0) @binding(1) var<storage, read_write> offsets: array<u32>;
@group(0) @binding(2) var<uniform> launch: Launch;

@compute @workgroup_size(1, 1, 1)
fn coverage(@builtin(workgroup_id) wid: vec3<u32>,
            @builtin(num_workgroups) nwg: vec3<u32>) {
    var group = wid;
    if grid_folded {
        group = vec3<u32>(launch.block_offset + wid.x + nwg.x * wid.y, 0u, 0u);
    }
    let g = group.x;
    if g < arrayLength(&count) && g < arrayLength(&offsets) {
        atomicAdd(&count[g], 1u);
        offsets[g] = launch.block_offset;
    }
}
"#
        )
    };
}

/// `fn scale_add(a: &[f32], out: &mut [f32], s: f32) { out[i] += s * a[i] }`
pub static SCALE_ADD: KernelInfo = SCALE_ADD_FIELDS;

const SCALE_ADD_FIELDS: KernelInfo = KernelInfo {
    name: Cow::Borrowed("scale_add"),
    entry_point: Cow::Borrowed("scale_add"),
    modules: Cow::Borrowed(&[
        Module { key: ModuleKey::PLAIN, wgsl: Cow::Borrowed(scale_add_wgsl!("false")), spirv: None },
        Module { key: ModuleKey::FOLDED, wgsl: Cow::Borrowed(scale_add_wgsl!("true")), spirv: None },
    ]),
    explain: Cow::Borrowed(""),
    workgroup_size: [256, 1, 1],
    params: Cow::Borrowed(&[
        ParamInfo { name: Cow::Borrowed("a"), kind: ParamKind::ReadOnlyBuffer, ty: DataType::F32, slot: 0 },
        ParamInfo { name: Cow::Borrowed("out"), kind: ParamKind::ReadWriteBuffer, ty: DataType::F32, slot: 1 },
        ParamInfo { name: Cow::Borrowed("s"), kind: ParamKind::Scalar, ty: DataType::F32, slot: 16 },
    ]),
    uniform_binding: 2,
    uniform_size: 32,
    max_workgroup_invocations: 256,
    cpu: CpuPlan::Independent,
    workgroup_memory_words: 0,
    features: onekernel_abi::Features::NONE,
    ..KernelInfo::EMPTY
};

/// `SCALE_ADD` with its launch block bound as a read-only storage buffer,
/// as kernels with matrix tiles have it.
pub static SCALE_ADD_STORAGE_PARAMS: KernelInfo = KernelInfo {
    name: Cow::Borrowed("scale_add_storage_params"),
    modules: Cow::Borrowed(&[
        Module { key: ModuleKey::PLAIN, wgsl: Cow::Borrowed(scale_add_wgsl!("false", "storage")), spirv: None },
        Module { key: ModuleKey::FOLDED, wgsl: Cow::Borrowed(scale_add_wgsl!("true", "storage")), spirv: None },
    ]),
    params_binding: ParamsBinding::Storage,
    ..SCALE_ADD_FIELDS
};

/// What the macro would generate for `scale_add(a, out, s)` launched on `grid`.
pub fn scale_add(
    device: &Device,
    grid: impl Into<Grid>,
    a: &Buffer<f32>,
    out: &mut Buffer<f32>,
    s: f32,
) -> Result<(), LaunchError> {
    scale_add_with(&SCALE_ADD, device, grid, a, out, s)
}

/// [`scale_add`] through kernel `k` (`SCALE_ADD` or a variant of it).
pub fn scale_add_with(
    k: &'static KernelInfo,
    device: &Device,
    grid: impl Into<Grid>,
    a: &Buffer<f32>,
    out: &mut Buffer<f32>,
    s: f32,
) -> Result<(), LaunchError> {
    match backend(device) {
        DeviceBackend::Gpu(gpu) => {
            let a = gpu_arg(a, k, 0, gpu)?;
            let out = gpu_arg_mut(out, k, 1, gpu)?;
            gpu.dispatch(k, grid.into(), &[a, out], &[s.into()])
        }
        DeviceBackend::Cpu(cpu) => {
            let a = cpu_slice(a, k, 0, cpu)?;
            let out = cpu_shared(out, k, 1, cpu)?;
            cpu.execute(k, grid.into(), |inv| {
                let i = inv.global_id.x;
                if i < out.len() && i < a.len() {
                    out.store(i, out.load(i) + s * a[i]);
                }
            })
        }
    }
}

/// `fn ids(out: &mut [u32])`: every invocation writes its builtins
/// (4 words, encoded `x + 100 y + 10000 z`) at its linear global index.
pub static IDS: KernelInfo = KernelInfo {
    name: Cow::Borrowed("ids"),
    entry_point: Cow::Borrowed("ids"),
    modules: Cow::Borrowed(&[
        Module { key: ModuleKey::PLAIN, wgsl: Cow::Borrowed(ids_wgsl!("false")), spirv: None },
        Module { key: ModuleKey::FOLDED, wgsl: Cow::Borrowed(ids_wgsl!("true")), spirv: None },
    ]),
    explain: Cow::Borrowed(""),
    workgroup_size: [4, 2, 2],
    params: Cow::Borrowed(&[ParamInfo {
        name: Cow::Borrowed("out"),
        kind: ParamKind::ReadWriteBuffer,
        ty: DataType::U32,
        slot: 0,
    }]),
    uniform_binding: 1,
    uniform_size: 32,
    max_workgroup_invocations: 256,
    cpu: CpuPlan::Independent,
    workgroup_memory_words: 0,
    features: onekernel_abi::Features::NONE,
    ..KernelInfo::EMPTY
};

fn enc(d: Dim3) -> u32 {
    (d.x + 100 * d.y + 10000 * d.z) as u32
}

/// What the macro would generate for `ids(out)` launched on `Grid::blocks(blocks)`.
pub fn ids(device: &Device, blocks: Dim3, out: &mut Buffer<u32>) -> Result<(), LaunchError> {
    let k = &IDS;
    match backend(device) {
        DeviceBackend::Gpu(gpu) => {
            let out = gpu_arg_mut(out, k, 0, gpu)?;
            gpu.dispatch(k, Grid::Blocks(blocks), &[out], &[])
        }
        DeviceBackend::Cpu(cpu) => {
            let out = cpu_shared(out, k, 0, cpu)?;
            cpu.execute(k, Grid::Blocks(blocks), |inv| {
                assert_eq!(inv.block_dim, Dim3::new(4, 2, 2));
                let g = inv.global_id;
                let dims = Dim3::new(inv.grid_dim.x * 4, inv.grid_dim.y * 2, inv.grid_dim.z * 2);
                let at = 4 * (g.x + dims.x * (g.y + dims.y * g.z));
                out.store(at, enc(g));
                out.store(at + 1, enc(inv.thread_id));
                out.store(at + 2, enc(inv.block_id));
                out.store(at + 3, enc(inv.grid_dim));
            })
        }
    }
}

/// The expected `ids` output, computed directly from the definitions.
pub fn expected_ids(blocks: Dim3) -> Vec<u32> {
    let size = Dim3::new(4, 2, 2);
    let dims = Dim3::new(blocks.x * 4, blocks.y * 2, blocks.z * 2);
    let mut v = vec![0u32; 4 * dims.x * dims.y * dims.z];
    for z in 0..dims.z {
        for y in 0..dims.y {
            for x in 0..dims.x {
                let at = 4 * (x + dims.x * (y + dims.y * z));
                v[at] = enc(Dim3::new(x, y, z));
                v[at + 1] = enc(Dim3::new(x % size.x, y % size.y, z % size.z));
                v[at + 2] = enc(Dim3::new(x / size.x, y / size.y, z / size.z));
                v[at + 3] = enc(blocks);
            }
        }
    }
    v
}

/// `fn coverage(count: &mut [u32], offsets: &mut [u32])` with a workgroup
/// of one invocation: logical workgroup `g` adds 1 to `count[g]` and writes
/// its dispatch's `block_offset` to `offsets[g]`. After a launch, `count`
/// is 1 exactly on `0..groups` (every logical workgroup ran once, no
/// padding workgroup ran).
pub static COVERAGE: KernelInfo = KernelInfo {
    name: Cow::Borrowed("coverage"),
    entry_point: Cow::Borrowed("coverage"),
    modules: Cow::Borrowed(&[
        Module { key: ModuleKey::PLAIN, wgsl: Cow::Borrowed(coverage_wgsl!("false")), spirv: None },
        Module { key: ModuleKey::FOLDED, wgsl: Cow::Borrowed(coverage_wgsl!("true")), spirv: None },
    ]),
    explain: Cow::Borrowed(""),
    workgroup_size: [1, 1, 1],
    params: Cow::Borrowed(&[
        ParamInfo { name: Cow::Borrowed("count"), kind: ParamKind::AtomicBuffer, ty: DataType::U32, slot: 0 },
        ParamInfo { name: Cow::Borrowed("offsets"), kind: ParamKind::ReadWriteBuffer, ty: DataType::U32, slot: 1 },
    ]),
    uniform_binding: 2,
    uniform_size: 32,
    max_workgroup_invocations: 256,
    cpu: CpuPlan::Independent,
    workgroup_memory_words: 0,
    features: onekernel_abi::Features::NONE,
    ..KernelInfo::EMPTY
};

/// A kernel whose workgroup is `[512, 1, 1]` (over the default limit of 256).
pub static BIG_WORKGROUP: KernelInfo = KernelInfo {
    name: Cow::Borrowed("big_workgroup"),
    entry_point: Cow::Borrowed("main"),
    modules: Cow::Borrowed(&[]),
    explain: Cow::Borrowed(""),
    workgroup_size: [512, 1, 1],
    params: Cow::Borrowed(&[]),
    uniform_binding: 0,
    uniform_size: 32,
    max_workgroup_invocations: 256,
    cpu: CpuPlan::Independent,
    workgroup_memory_words: 0,
    features: onekernel_abi::Features::NONE,
    ..KernelInfo::EMPTY
};

/// Inputs whose `out + s * a` is exact in f32 (so GPU FMA cannot differ).
pub fn inputs(n: usize) -> (Vec<f32>, Vec<f32>) {
    let a = (0..n).map(|i| (i % 1000) as f32).collect();
    let out = (0..n).map(|i| (i % 7) as f32).collect();
    (a, out)
}

/// `scale_add` computed on the host.
pub fn expected_scale_add(a: &[f32], out: &[f32], s: f32, launched: usize) -> Vec<f32> {
    out.iter().zip(a).enumerate().map(|(i, (&o, &a))| if i < launched { o + s * a } else { o }).collect()
}

/// `LENS_WGSL`: the plain module (`"false"`) or the folded one (`"true"`).
macro_rules! lens_wgsl {
    ($folded:literal) => {
        concat!(
            "const grid_folded: bool = ",
            $folded,
            ";\n",
            r#"
struct Launch { groups: vec3<u32>, block_offset: u32 }
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<u32>;
@group(0) @binding(2) var<storage, read_write> b: array<u32>;
@group(0) @binding(3) var<uniform> launch: Launch;

@compute @workgroup_size(1, 1, 1)
fn lens(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    var i = wid.x;
    if grid_folded {
        i = launch.block_offset + wid.x + nwg.x * wid.y;
    }
    if i < arrayLength(&out) {
        out[i] = arrayLength(&a) * 100u + arrayLength(&b);
    }
    if i == 0u && arrayLength(&b) > 0u {
        b[0] = 7u;
    }
}
"#
        )
    };
}

/// `fn lens(a: &[f32], out: &mut [u32], b: &mut [u32])`, one invocation per
/// workgroup: `out[i] = 100 * a.len() + b.len()`, and invocation 0 writes
/// 7 to `b[0]` if `b` is not empty. What a kernel sees of empty buffers.
pub static LENS: KernelInfo = KernelInfo {
    name: Cow::Borrowed("lens"),
    entry_point: Cow::Borrowed("lens"),
    modules: Cow::Borrowed(&[
        Module { key: ModuleKey::PLAIN, wgsl: Cow::Borrowed(lens_wgsl!("false")), spirv: None },
        Module { key: ModuleKey::FOLDED, wgsl: Cow::Borrowed(lens_wgsl!("true")), spirv: None },
    ]),
    explain: Cow::Borrowed(""),
    workgroup_size: [1, 1, 1],
    params: Cow::Borrowed(&[
        ParamInfo { name: Cow::Borrowed("a"), kind: ParamKind::ReadOnlyBuffer, ty: DataType::F32, slot: 0 },
        ParamInfo { name: Cow::Borrowed("out"), kind: ParamKind::ReadWriteBuffer, ty: DataType::U32, slot: 1 },
        ParamInfo { name: Cow::Borrowed("b"), kind: ParamKind::ReadWriteBuffer, ty: DataType::U32, slot: 2 },
    ]),
    uniform_binding: 3,
    uniform_size: 16,
    max_workgroup_invocations: 256,
    cpu: CpuPlan::Independent,
    workgroup_memory_words: 0,
    features: onekernel_abi::Features::NONE,
    ..KernelInfo::EMPTY
};

/// What the macro would generate for `lens(a, out, b)` launched on `Grid::blocks(blocks)`.
pub fn lens(
    device: &Device,
    blocks: usize,
    a: &Buffer<f32>,
    out: &mut Buffer<u32>,
    b: &mut Buffer<u32>,
) -> Result<(), LaunchError> {
    let k = &LENS;
    match backend(device) {
        DeviceBackend::Gpu(gpu) => {
            let args = [gpu_arg(a, k, 0, gpu)?, gpu_arg_mut(out, k, 1, gpu)?, gpu_arg_mut(b, k, 2, gpu)?];
            gpu.dispatch(k, Grid::Blocks(blocks.into()), &args, &[])
        }
        DeviceBackend::Cpu(cpu) => {
            let a = cpu_slice(a, k, 0, cpu)?;
            let out = cpu_shared(out, k, 1, cpu)?;
            let b = cpu_shared(b, k, 2, cpu)?;
            cpu.execute(k, Grid::Blocks(blocks.into()), |inv| {
                let i = inv.global_id.x;
                if i < out.len() {
                    out.store(i, (a.len() * 100 + b.len()) as u32);
                }
                if i == 0 && !b.is_empty() {
                    b.store(0, 7);
                }
            })
        }
    }
}

/// Runs `lens` over buffers of these lengths; returns (out, b).
pub fn lens_on(dev: &Device, blocks: usize, a_len: usize, out_len: usize, b_len: usize) -> (Vec<u32>, Vec<u32>) {
    let a = Buffer::from_slice(dev, &vec![1.0f32; a_len]).unwrap();
    let mut out = Buffer::<u32>::from_slice(dev, &vec![u32::MAX; out_len]).unwrap();
    let mut b = Buffer::<u32>::zeroed(dev, b_len).unwrap();
    lens(dev, blocks, &a, &mut out, &mut b).unwrap();
    (out.read().unwrap(), b.read().unwrap())
}

/// A `lens_on` case: (blocks, a, out, b lengths), and the (out, b) it gives.
pub type LensCase = ((usize, usize, usize, usize), (Vec<u32>, Vec<u32>));

/// The cases of `lens_on`.
pub fn lens_cases() -> Vec<LensCase> {
    vec![
        ((10, 0, 10, 1), (vec![1; 10], vec![7])),
        ((10, 3, 10, 0), (vec![300; 10], vec![])),
        ((10, 0, 0, 1), (vec![], vec![7])),
        ((10, 0, 4, 0), (vec![0; 4], vec![])),
        ((0, 0, 0, 0), (vec![], vec![])),
        // Folded on a GPU (more than 65535 workgroups).
        ((70000, 0, 70000, 2), (vec![2; 70000], vec![7, 0])),
    ]
}
