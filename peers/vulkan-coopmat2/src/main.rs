//! Probe: how fast is an f16 GEMM (f32 accumulation) with
//! `VK_NV_cooperative_matrix2` on this device? Neither naga nor wgpu knows
//! the extension, so the SPIR-V is built with rspirv ([`build_spirv`]), the
//! device is opened through wgpu-hal's `open_with_callback` with the
//! extension and its features enabled, and the module goes through wgpu's
//! SPIR-V passthrough. One accumulator tile of *workgroup* scope per
//! workgroup; per k-step a load of A and of B (tensor-layout loads, or KHR
//! loads) and one `OpCooperativeMatrixMulAddKHR`: the driver stages the
//! tiles through shared memory itself.
//!
//! Results and the command: docs/performance.md, "VK_NV_cooperative_matrix2".
//!
//! ```sh
//! ./vulkan-coopmat2                       # every configuration
//! CM2_WG=256 CM2_ONLY="bm: 128, bn: 256, bk: 32, wg|tensor: true, prefetch: false" ./vulkan-coopmat2
//! ./vulkan-coopmat2 dump [tensor] [prefetch]   # print the SPIR-V (no GPU)
//! ```
//!
//! `CM2_ONLY` keeps the configurations whose `Debug` text contains every
//! `|`-separated part; run one configuration per process, since a driver
//! fault ends the process. Each configuration is checked against `f64`
//! (512³ in full, 8192³ at 256 sampled elements) and timed at 8192³ (best
//! of three batches of 20 launches, wall clock).
use std::ffi::c_void;
use std::time::Instant;

use ash::vk;
use half::f16;
use rspirv::dr::{Builder, Operand};
use rspirv::spirv::{self, Capability as Cap};
use wgpu::hal;

/// `VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_FEATURES_NV` and
/// friends (ash 0.38 predates the extension, so its structures are
/// declared here as in `vulkan_core.h`).
const STYPE_FEATURES: i32 = 1000593000;
const STYPE_FLEX_PROPERTIES: i32 = 1000593001;
const STYPE_PROPERTIES: i32 = 1000593002;

/// `VkPhysicalDeviceCooperativeMatrix2FeaturesNV`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
struct Cm2Features {
    s_type: i32,
    p_next: *mut c_void,
    workgroup_scope: u32,
    flexible_dimensions: u32,
    reductions: u32,
    conversions: u32,
    per_element: u32,
    tensor_addressing: u32,
    block_loads: u32,
}
impl Default for Cm2Features {
    fn default() -> Self {
        Self {
            s_type: STYPE_FEATURES,
            p_next: std::ptr::null_mut(),
            workgroup_scope: 0,
            flexible_dimensions: 0,
            reductions: 0,
            conversions: 0,
            per_element: 0,
            tensor_addressing: 0,
            block_loads: 0,
        }
    }
}

/// `VkPhysicalDeviceCooperativeMatrix2PropertiesNV`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
struct Cm2Props {
    s_type: i32,
    p_next: *mut c_void,
    wg_max_size: u32,
    flex_max_dim: u32,
    wg_reserved_shared: u32,
}

/// `VkCooperativeMatrixFlexibleDimensionsPropertiesNV`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
struct FlexProps {
    s_type: i32,
    p_next: *mut c_void,
    m_gran: u32,
    n_gran: u32,
    k_gran: u32,
    a_type: i32,
    b_type: i32,
    c_type: i32,
    result_type: i32,
    saturating: u32,
    scope: i32,
    invocations: u32,
}

type FlexFn = unsafe extern "system" fn(vk::PhysicalDevice, *mut u32, *mut FlexProps) -> vk::Result;

/// One kernel configuration: the workgroup's tile (`bm × bn`, k-step
/// `bk`), its invocations, tensor-layout loads or KHR loads, and whether the
/// next tiles are loaded before the current product.
#[derive(Clone, Copy, Debug)]
struct Cfg {
    bm: u32,
    bn: u32,
    bk: u32,
    wg: u32,
    tensor: bool,
    prefetch: bool,
}

/// The GEMM `C (m×n, f16) = A (m×k) · B (k×n)` for `cfg`, sizes baked in
/// as constants; bindings 0, 1, 2 are A, B, C (row-major).
fn build_spirv(cfg: Cfg, m: u32, n: u32, k: u32) -> Vec<u32> {
    let mut b = Builder::new();
    b.set_version(1, 6);
    for c in
        [Cap::Shader, Cap::Float16, Cap::StorageBuffer16BitAccess, Cap::VulkanMemoryModel, Cap::CooperativeMatrixKHR]
    {
        b.capability(c);
    }
    if cfg.tensor {
        b.capability(Cap::CooperativeMatrixTensorAddressingNV);
        b.capability(Cap::TensorAddressingNV);
        b.extension("SPV_NV_tensor_addressing");
    }
    b.extension("SPV_KHR_cooperative_matrix");
    b.extension("SPV_NV_cooperative_matrix2");
    b.memory_model(spirv::AddressingModel::Logical, spirv::MemoryModel::Vulkan);

    let void = b.type_void();
    let fnty = b.type_function(void, []);
    let u32t = b.type_int(32, 0);
    let f16t = b.type_float(16, None);
    let f32t = b.type_float(32, None);
    let boolt = b.type_bool();
    let uvec3 = b.type_vector(u32t, 3);
    let uvec4 = b.type_vector(u32t, 4);
    let c = |b: &mut Builder, v: u32| b.constant_bit32(u32t, v);
    let c0 = c(&mut b, 0);
    let scope_wg = c(&mut b, spirv::Scope::Workgroup as u32);
    let (cbm, cbn, cbk) = (c(&mut b, cfg.bm), c(&mut b, cfg.bn), c(&mut b, cfg.bk));
    let (ck, cn, cm) = (c(&mut b, k), c(&mut b, n), c(&mut b, m));
    let (use_a, use_b, use_acc) = (c(&mut b, 0), c(&mut b, 1), c(&mut b, 2));
    let mat_a = b.type_cooperative_matrix_khr(f16t, scope_wg, cbm, cbk, use_a);
    let mat_b = b.type_cooperative_matrix_khr(f16t, scope_wg, cbk, cbn, use_b);
    let mat_c = b.type_cooperative_matrix_khr(f32t, scope_wg, cbm, cbn, use_acc);
    let mat_o = b.type_cooperative_matrix_khr(f16t, scope_wg, cbm, cbn, use_acc);
    let zero_f32 = b.constant_bit32(f32t, 0f32.to_bits());
    let acc0 = b.constant_composite(mat_c, [zero_f32]);

    // Buffers: A, B as uvec4 arrays (tensor loads) or f16 arrays; C as f16.
    let in_elem = if cfg.tensor { uvec4 } else { f16t };
    let rta_in = b.type_runtime_array(in_elem);
    b.decorate(rta_in, spirv::Decoration::ArrayStride, [Operand::LiteralBit32(if cfg.tensor { 16 } else { 2 })]);
    let st_in = b.type_struct([rta_in]);
    b.decorate(st_in, spirv::Decoration::Block, []);
    b.member_decorate(st_in, 0, spirv::Decoration::Offset, [Operand::LiteralBit32(0)]);
    let rta_out = if cfg.tensor { b.type_runtime_array(f16t) } else { rta_in };
    let st_out = if cfg.tensor {
        b.decorate(rta_out, spirv::Decoration::ArrayStride, [Operand::LiteralBit32(2)]);
        let s = b.type_struct([rta_out]);
        b.decorate(s, spirv::Decoration::Block, []);
        b.member_decorate(s, 0, spirv::Decoration::Offset, [Operand::LiteralBit32(0)]);
        s
    } else {
        st_in
    };
    let p_in = b.type_pointer(None, spirv::StorageClass::StorageBuffer, st_in);
    let p_out = b.type_pointer(None, spirv::StorageClass::StorageBuffer, st_out);
    let p_in_elem = b.type_pointer(None, spirv::StorageClass::StorageBuffer, in_elem);
    let p_f16 = b.type_pointer(None, spirv::StorageClass::StorageBuffer, f16t);
    let va = b.variable(p_in, None, spirv::StorageClass::StorageBuffer, None);
    let vb = b.variable(p_in, None, spirv::StorageClass::StorageBuffer, None);
    let vc = b.variable(p_out, None, spirv::StorageClass::StorageBuffer, None);
    for (v, binding) in [(va, 0), (vb, 1), (vc, 2)] {
        b.decorate(v, spirv::Decoration::DescriptorSet, [Operand::LiteralBit32(0)]);
        b.decorate(v, spirv::Decoration::Binding, [Operand::LiteralBit32(binding)]);
    }
    b.decorate(va, spirv::Decoration::NonWritable, []);
    b.decorate(vb, spirv::Decoration::NonWritable, []);
    let p_uvec3_in = b.type_pointer(None, spirv::StorageClass::Input, uvec3);
    let wgid = b.variable(p_uvec3_in, None, spirv::StorageClass::Input, None);
    b.decorate(wgid, spirv::Decoration::BuiltIn, [Operand::BuiltIn(spirv::BuiltIn::WorkgroupId)]);

    let tl_ty = if cfg.tensor {
        let two = c(&mut b, 2);
        let clamp = c(&mut b, 0); // Undefined: the tiles never leave the matrix
        Some(b.type_tensor_layout_nv(two, clamp))
    } else {
        None
    };

    let main = b.begin_function(void, None, spirv::FunctionControl::NONE, fnty).unwrap();
    b.begin_block(None).unwrap();
    let wg = b.load(uvec3, None, wgid, None, []).unwrap();
    let tx = b.composite_extract(u32t, None, wg, [0]).unwrap();
    let ty = b.composite_extract(u32t, None, wg, [1]).unwrap();
    let row0 = b.i_mul(u32t, None, ty, cbm).unwrap();
    let col0 = b.i_mul(u32t, None, tx, cbn).unwrap();
    let layouts = tl_ty.map(|tl| {
        let t = b.create_tensor_layout_nv(tl, None).unwrap();
        let ta = b.tensor_layout_set_dimension_nv(tl, None, t, [cm, ck]).unwrap();
        let t = b.create_tensor_layout_nv(tl, None).unwrap();
        let tb = b.tensor_layout_set_dimension_nv(tl, None, t, [ck, cn]).unwrap();
        (ta, tb)
    });
    let undef_a = b.undef(mat_a, None);
    let undef_b = b.undef(mat_b, None);
    let pa0 = b.access_chain(p_in_elem, None, va, [c0, c0]).unwrap();
    let pb0 = b.access_chain(p_in_elem, None, vb, [c0, c0]).unwrap();
    // Loads of the A and B tiles at k-offset `kk`.
    let load = |b: &mut Builder, kk: u32| -> (u32, u32) {
        if let (Some(tl), Some((ta, tb))) = (tl_ty, layouts) {
            let sa = b.tensor_layout_slice_nv(tl, None, ta, [row0, cbm, kk, cbk]).unwrap();
            let la = b
                .cooperative_matrix_load_tensor_nv(
                    mat_a,
                    None,
                    pa0,
                    undef_a,
                    sa,
                    spirv::MemoryAccess::NONE,
                    spirv::TensorAddressingOperands::NONE,
                    [],
                )
                .unwrap();
            let sb = b.tensor_layout_slice_nv(tl, None, tb, [kk, cbk, col0, cbn]).unwrap();
            let lb = b
                .cooperative_matrix_load_tensor_nv(
                    mat_b,
                    None,
                    pb0,
                    undef_b,
                    sb,
                    spirv::MemoryAccess::NONE,
                    spirv::TensorAddressingOperands::NONE,
                    [],
                )
                .unwrap();
            (la, lb)
        } else {
            let t = b.i_mul(u32t, None, row0, ck).unwrap();
            let ia = b.i_add(u32t, None, t, kk).unwrap();
            let pa = b.access_chain(p_f16, None, va, [c0, ia]).unwrap();
            let la = b.cooperative_matrix_load_khr(mat_a, None, pa, c0, Some(ck), None, []).unwrap();
            let t = b.i_mul(u32t, None, kk, cn).unwrap();
            let ib = b.i_add(u32t, None, t, col0).unwrap();
            let pb = b.access_chain(p_f16, None, vb, [c0, ib]).unwrap();
            let lb = b.cooperative_matrix_load_khr(mat_b, None, pb, c0, Some(cn), None, []).unwrap();
            (la, lb)
        }
    };
    let first = if cfg.prefetch { Some(load(&mut b, c0)) } else { None };
    let entry = b.selected_block().unwrap();
    let entry_label = b.module_ref().functions.last().unwrap().blocks[entry].label.as_ref().unwrap().result_id.unwrap();

    let header = b.id();
    let body = b.id();
    let cont = b.id();
    let merge = b.id();
    let k_next = b.id();
    let acc_next = b.id();
    let (a_next, b_next) = (b.id(), b.id());
    b.branch(header).unwrap();

    b.begin_block(Some(header)).unwrap();
    let kk = b.phi(u32t, None, [(c0, entry_label), (k_next, cont)]).unwrap();
    let acc = b.phi(mat_c, None, [(acc0, entry_label), (acc_next, cont)]).unwrap();
    let cur = first.map(|(fa, fb)| {
        let ca = b.phi(mat_a, None, [(fa, entry_label), (a_next, cont)]).unwrap();
        let cb = b.phi(mat_b, None, [(fb, entry_label), (b_next, cont)]).unwrap();
        (ca, cb)
    });
    let cond = b.u_less_than(boolt, None, kk, ck).unwrap();
    b.loop_merge(merge, cont, spirv::LoopControl::NONE, []).unwrap();
    b.branch_conditional(cond, body, merge, []).unwrap();

    b.begin_block(Some(body)).unwrap();
    b.i_add(u32t, Some(k_next), kk, cbk).unwrap();
    if let Some((ca, cb)) = cur {
        // The next tiles first (the last step reloads the first tiles: in
        // range, and unused), then the product of the current ones.
        let more = b.u_less_than(boolt, None, k_next, ck).unwrap();
        let kn = b.select(u32t, None, more, k_next, c0).unwrap();
        let (na, nb) = load(&mut b, kn);
        b.copy_object(mat_a, Some(a_next), na).unwrap();
        b.copy_object(mat_b, Some(b_next), nb).unwrap();
        b.cooperative_matrix_mul_add_khr(mat_c, Some(acc_next), ca, cb, acc, None).unwrap();
    } else {
        let (la, lb) = load(&mut b, kk);
        b.cooperative_matrix_mul_add_khr(mat_c, Some(acc_next), la, lb, acc, None).unwrap();
    }
    b.branch(cont).unwrap();

    b.begin_block(Some(cont)).unwrap();
    b.branch(header).unwrap();

    b.begin_block(Some(merge)).unwrap();
    let out = b.f_convert(mat_o, None, acc).unwrap();
    let t = b.i_mul(u32t, None, row0, cn).unwrap();
    let ic = b.i_add(u32t, None, t, col0).unwrap();
    let pc = b.access_chain(p_f16, None, vc, [c0, ic]).unwrap();
    b.cooperative_matrix_store_khr(pc, out, c0, Some(cn), None, []).unwrap();
    b.ret().unwrap();
    b.end_function().unwrap();

    b.entry_point(spirv::ExecutionModel::GLCompute, main, "main", [va, vb, vc, wgid]);
    b.execution_mode(main, spirv::ExecutionMode::LocalSize, [cfg.wg, 1, 1]);
    use rspirv::binary::Assemble;
    b.module().assemble()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("dump") {
        let cfg =
            Cfg { bm: 128, bn: 128, bk: 32, wg: 256, tensor: args.get(2).is_some(), prefetch: args.get(3).is_some() };
        let words = build_spirv(cfg, 256, 256, 256);
        let mut loader = rspirv::dr::Loader::new();
        rspirv::binary::parse_words(&words, &mut loader).unwrap();
        use rspirv::binary::Disassemble;
        println!("{}", loader.module().disassemble());
        return;
    }
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor {
        backends: wgpu::Backends::VULKAN,
        ..wgpu::InstanceDescriptor::new_without_display_handle()
    });
    let adapter = pollster::block_on(instance.request_adapter(&Default::default())).expect("adapter");
    println!("adapter: {:?}", adapter.get_info().name);
    let features = wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX
        | wgpu::Features::SHADER_F16
        | wgpu::Features::PASSTHROUGH_SHADERS;
    assert!(adapter.features().contains(features), "missing features: {:?}", features - adapter.features());

    let flex = query_coopmat2(&adapter);
    let (device, queue) = open_with_coopmat2(&adapter, features);
    println!("device opened with VK_NV_cooperative_matrix2");

    // f16 × f16 → f32 at workgroup scope (component types 0 = f16, 1 = f32;
    // scope 2 = workgroup): the invocation counts the driver accepts.
    let mut wg_options: Vec<u32> = flex
        .iter()
        .filter(|p| p.a_type == 0 && p.b_type == 0 && p.c_type == 1 && p.scope == 2)
        .map(|p| p.invocations)
        .collect();
    wg_options.sort();
    wg_options.dedup();
    if let Ok(w) = std::env::var("CM2_WG") {
        wg_options = vec![w.parse().expect("CM2_WG: a number")];
    }
    println!("workgroup sizes for f16xf16->f32 workgroup scope: {wg_options:?}");
    let only: Option<String> = std::env::var("CM2_ONLY").ok();
    let tiles = [
        (128, 128, 32),
        (128, 256, 32),
        (256, 128, 32),
        (128, 128, 64),
        (256, 256, 32),
        (128, 256, 64),
        (256, 128, 64),
        (128, 256, 16),
        (256, 256, 16),
        (128, 128, 16),
        (64, 256, 32),
        (64, 256, 64),
        (64, 128, 32),
        (64, 256, 16),
        (64, 128, 64),
    ];
    for prefetch in [true, false] {
        for tensor in [true, false] {
            for &wg in &wg_options {
                for &(bm, bn, bk) in &tiles {
                    let cfg = Cfg { bm, bn, bk, wg, tensor, prefetch };
                    let text = format!("{cfg:?}");
                    if only.as_ref().is_none_or(|o| o.split('|').all(|part| text.contains(part))) {
                        run_cfg(&device, &queue, cfg);
                    }
                }
            }
        }
    }
}

/// Prints what the driver says about `VK_NV_cooperative_matrix2` (features,
/// limits, the flexible-dimension configurations) and returns the
/// configurations.
fn query_coopmat2(adapter: &wgpu::Adapter) -> Vec<FlexProps> {
    // SAFETY: the hal adapter is only used while `adapter` lives, and no
    // wgpu call runs meanwhile.
    let hal_adapter = unsafe { adapter.as_hal::<hal::api::Vulkan>() }.expect("a Vulkan adapter");
    let instance = hal_adapter.shared_instance();
    let pd = hal_adapter.raw_physical_device();
    let raw = instance.raw_instance();
    let name = c"vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV";
    // SAFETY: a valid instance and a NUL-terminated name.
    let f = unsafe { instance.entry().get_instance_proc_addr(raw.handle(), name.as_ptr()) }
        .expect("the driver lacks VK_NV_cooperative_matrix2");
    // SAFETY: the function of that name has this signature (vulkan_core.h).
    let f: FlexFn = unsafe { std::mem::transmute(f) };
    let empty = FlexProps {
        s_type: STYPE_FLEX_PROPERTIES,
        p_next: std::ptr::null_mut(),
        m_gran: 0,
        n_gran: 0,
        k_gran: 0,
        a_type: 0,
        b_type: 0,
        c_type: 0,
        result_type: 0,
        saturating: 0,
        scope: 0,
        invocations: 0,
    };
    let mut count = 0u32;
    // SAFETY: the usual two-call enumeration; the second call gets `count`
    // initialised structures with their `sType` set.
    let flex = unsafe {
        f(pd, &mut count, std::ptr::null_mut()).result().expect("flexible dimensions");
        let mut v = vec![empty; count as usize];
        f(pd, &mut count, v.as_mut_ptr()).result().expect("flexible dimensions");
        v.truncate(count as usize);
        v
    };
    for p in &flex {
        println!(
            "flex: M{} N{} K{} A{} B{} C{} R{} scope{} invocations {}",
            p.m_gran, p.n_gran, p.k_gran, p.a_type, p.b_type, p.c_type, p.result_type, p.scope, p.invocations
        );
    }
    let mut props = Cm2Props {
        s_type: STYPE_PROPERTIES,
        p_next: std::ptr::null_mut(),
        wg_max_size: 0,
        flex_max_dim: 0,
        wg_reserved_shared: 0,
    };
    let mut p2 = vk::PhysicalDeviceProperties2 { p_next: (&raw mut props).cast(), ..Default::default() };
    let mut feats = Cm2Features::default();
    let mut f2 = vk::PhysicalDeviceFeatures2 { p_next: (&raw mut feats).cast(), ..Default::default() };
    // SAFETY: each chain holds one structure of the right `sType`, alive
    // for the calls.
    unsafe {
        raw.get_physical_device_properties2(pd, &mut p2);
        raw.get_physical_device_features2(pd, &mut f2);
    }
    println!(
        "cm2 props: wg max size {} flex max dim {} reserved shared {}",
        props.wg_max_size, props.flex_max_dim, props.wg_reserved_shared
    );
    println!("cm2 features: {feats:?}");
    flex
}

/// A wgpu device on `adapter` with `features` and, on top of what wgpu
/// enables, `VK_NV_cooperative_matrix2` with workgroup scope, flexible
/// dimensions and tensor addressing.
fn open_with_coopmat2(adapter: &wgpu::Adapter, features: wgpu::Features) -> (wgpu::Device, wgpu::Queue) {
    let limits = adapter.limits();
    // SAFETY: as in `query_coopmat2`.
    let hal_adapter = unsafe { adapter.as_hal::<hal::api::Vulkan>() }.expect("a Vulkan adapter");
    let add_coopmat2 = Box::new(|args: hal::vulkan::CreateDeviceCallbackArgs<'_, '_, '_>| {
        args.extensions.push(c"VK_NV_cooperative_matrix2");
        // Leaked: the chain must outlive device creation; one per process.
        let feats = Box::leak(Box::new(Cm2Features {
            p_next: args.create_info.p_next as *mut c_void,
            workgroup_scope: 1,
            flexible_dimensions: 1,
            tensor_addressing: 1,
            ..Default::default()
        }));
        args.create_info.p_next = (feats as *mut Cm2Features).cast_const().cast();
    });
    // SAFETY: the callback only adds an extension the adapter offers and a
    // features structure for it; it removes nothing.
    let open = unsafe {
        hal_adapter.open_with_callback(features, &limits, &wgpu::MemoryHints::Performance, Some(add_coopmat2))
    }
    .expect("open device");
    let desc = wgpu::DeviceDescriptor { required_features: features, required_limits: limits, ..Default::default() };
    // SAFETY: `open` was opened from this adapter with these features and limits.
    unsafe { adapter.create_device_from_hal(open, &desc) }.expect("device")
}

/// Checks `cfg` at 512³ and times it at 8192³, printing one line each.
fn run_cfg(device: &wgpu::Device, queue: &wgpu::Queue, cfg: Cfg) {
    let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
    // Small correctness check, then 8192³ timing.
    for &(m, n, k, timed) in &[(512u32, 512u32, 512u32, false), (8192, 8192, 8192, true)] {
        if m % cfg.bm != 0 || n % cfg.bn != 0 || k % cfg.bk != 0 {
            continue;
        }
        let words = build_spirv(cfg, m, n, k);
        // SAFETY: `build_spirv`'s module, checked against f64 on the H200;
        // the driver validates it when it builds the pipeline.
        let module = unsafe {
            device.create_shader_module_passthrough(wgpu::ShaderModuleDescriptorPassthrough {
                label: Some("cm2"),
                entry_points: vec![wgpu::PassthroughShaderEntryPoint {
                    name: "main".into(),
                    workgroup_size: (cfg.wg, 1, 1),
                }]
                .into(),
                spirv: Some(words.into()),
                ..Default::default()
            })
        };
        let entry = |binding, read_only| wgpu::BindGroupLayoutEntry {
            binding,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Storage { read_only },
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        };
        let bgl = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: None,
            entries: &[entry(0, true), entry(1, true), entry(2, false)],
        });
        let pl = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: None,
            bind_group_layouts: &[Some(&bgl)],
            immediate_size: 0,
        });
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some("cm2"),
            layout: Some(&pl),
            module: &module,
            entry_point: Some("main"),
            compilation_options: Default::default(),
            cache: None,
        });
        let mut seed = 12345u64;
        let mut rnd = move || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((seed >> 33) as f32 / (1u64 << 31) as f32) * 2.0 - 1.0
        };
        let a: Vec<f16> = (0..m as usize * k as usize).map(|_| f16::from_f32(rnd())).collect();
        let bm: Vec<f16> = (0..k as usize * n as usize).map(|_| f16::from_f32(rnd())).collect();
        use wgpu::util::DeviceExt;
        let ba = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: None,
            contents: bytemuck::cast_slice(&a),
            usage: wgpu::BufferUsages::STORAGE,
        });
        let bb = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: None,
            contents: bytemuck::cast_slice(&bm),
            usage: wgpu::BufferUsages::STORAGE,
        });
        let csize = m as u64 * n as u64 * 2;
        let bc = device.create_buffer(&wgpu::BufferDescriptor {
            label: None,
            size: csize,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        let rb = device.create_buffer(&wgpu::BufferDescriptor {
            label: None,
            size: csize,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let bg = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &bgl,
            entries: &[
                wgpu::BindGroupEntry { binding: 0, resource: ba.as_entire_binding() },
                wgpu::BindGroupEntry { binding: 1, resource: bb.as_entire_binding() },
                wgpu::BindGroupEntry { binding: 2, resource: bc.as_entire_binding() },
            ],
        });
        let run = |reps: u32| {
            let mut enc = device.create_command_encoder(&Default::default());
            {
                let mut pass = enc.begin_compute_pass(&Default::default());
                pass.set_pipeline(&pipeline);
                pass.set_bind_group(0, &bg, &[]);
                for _ in 0..reps {
                    pass.dispatch_workgroups(n / cfg.bn, m / cfg.bm, 1);
                }
            }
            queue.submit([enc.finish()]);
            device.poll(wgpu::PollType::wait_indefinitely()).unwrap();
        };
        run(1);
        let mut best = f64::MAX;
        if timed {
            for _ in 0..3 {
                let t = Instant::now();
                run(20);
                best = best.min(t.elapsed().as_secs_f64() / 20.0);
            }
        }
        let mut enc = device.create_command_encoder(&Default::default());
        enc.copy_buffer_to_buffer(&bc, 0, &rb, 0, csize);
        queue.submit([enc.finish()]);
        rb.slice(..).map_async(wgpu::MapMode::Read, |_| {});
        device.poll(wgpu::PollType::wait_indefinitely()).unwrap();
        let out: Vec<f16> = bytemuck::cast_slice(&rb.slice(..).get_mapped_range().unwrap()).to_vec();
        // Check sampled entries against f64.
        let mut max_err = 0f64;
        let samples = if timed { 256 } else { (m * n) as usize };
        for s in 0..samples {
            let idx = if timed { (s * 2654435761usize) % (m as usize * n as usize) } else { s };
            let (i, j) = (idx / n as usize, idx % n as usize);
            let mut acc = 0f64;
            for kk in 0..k as usize {
                acc += a[i * k as usize + kk].to_f64() * bm[kk * n as usize + j].to_f64();
            }
            max_err = max_err.max((acc - out[idx].to_f64()).abs() / (1.0 + acc.abs()));
        }
        let ok = max_err < 1e-2;
        if timed {
            let tflops = 2.0 * m as f64 * n as f64 * k as f64 / best / 1e12;
            println!(
                "{cfg:?} {m}x{n}x{k}: {tflops:.1} TFLOP/s ({:.3} ms) max rel err {max_err:.2e} {}",
                best * 1e3,
                if ok { "OK" } else { "WRONG" }
            );
        } else {
            println!("{cfg:?} {m}^3 check: max rel err {max_err:.2e} {}", if ok { "OK" } else { "WRONG" });
        }
    }
    if let Some(e) = pollster::block_on(scope.pop()) {
        println!("{cfg:?}: validation error {e}");
    }
}
