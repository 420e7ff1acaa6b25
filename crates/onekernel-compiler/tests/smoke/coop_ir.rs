//! What naga 30 accepts for cooperative matrices, learned on a module built
//! by hand: one 16×16×16 tile product C = A·B (f16 inputs, f32
//! accumulator) loaded from and stored to storage buffers. It pins the IR
//! shapes `lower/tile.rs` emits (the pointer operand is an element pointer,
//! the stride a `u32`, `rows` the tile's M/K as SPIR-V's `Rows`), and what
//! the two back ends write for them.

use naga::ir::*;
use naga::valid::{Capabilities, ValidationFlags, Validator};
use naga::{Range, Span};

/// `c[0..256] = a[0..256] · b[0..256] + 0`, row-major with a stride of 16.
fn tile_module() -> Module {
    let s = Span::UNDEFINED;
    let mut m = Module::default();
    let f16 = m.types.insert(Type { name: None, inner: TypeInner::Scalar(Scalar::F16) }, s);
    let f32t = m.types.insert(Type { name: None, inner: TypeInner::Scalar(Scalar::F32) }, s);
    let arr = |m: &mut Module, base, stride| {
        m.types.insert(Type { name: None, inner: TypeInner::Array { base, size: ArraySize::Dynamic, stride } }, s)
    };
    let arr16 = arr(&mut m, f16, 2);
    let arr32 = arr(&mut m, f32t, 4);
    let sixteen = CooperativeSize::Sixteen;
    let acc_ty = m.types.insert(
        Type {
            name: None,
            inner: TypeInner::CooperativeMatrix {
                columns: sixteen,
                rows: sixteen,
                scalar: Scalar::F32,
                role: CooperativeRole::C,
            },
        },
        s,
    );
    let global = |m: &mut Module, name: &str, ty, binding, access| {
        m.global_variables.append(
            GlobalVariable {
                name: Some(name.into()),
                space: AddressSpace::Storage { access },
                binding: Some(ResourceBinding { group: 0, binding }),
                ty,
                init: None,
                memory_decorations: MemoryDecorations::empty(),
            },
            s,
        )
    };
    let ga = global(&mut m, "a", arr16, 0, StorageAccess::LOAD);
    let gb = global(&mut m, "b", arr16, 1, StorageAccess::LOAD);
    let gc = global(&mut m, "c", arr32, 2, StorageAccess::LOAD | StorageAccess::STORE);

    let mut f = Function::default();
    let acc = f.local_variables.append(LocalVariable { name: Some("acc".into()), ty: acc_ty, init: None }, s);
    let ex = &mut f.expressions;
    let pa = ex.append(Expression::GlobalVariable(ga), s);
    let pb = ex.append(Expression::GlobalVariable(gb), s);
    let pc = ex.append(Expression::GlobalVariable(gc), s);
    let pacc = ex.append(Expression::LocalVariable(acc), s);
    let zero = ex.append(Expression::Literal(Literal::U32(0)), s);
    let stride = ex.append(Expression::Literal(Literal::U32(16)), s);
    // Element pointers: the load reads the tile starting there.
    let ea = ex.append(Expression::Access { base: pa, index: zero }, s);
    let eb = ex.append(Expression::Access { base: pb, index: zero }, s);
    let data = |pointer| CooperativeData { pointer, stride, row_major: true };
    let la = ex.append(
        Expression::CooperativeLoad { columns: sixteen, rows: sixteen, role: CooperativeRole::A, data: data(ea) },
        s,
    );
    let lb = ex.append(
        Expression::CooperativeLoad { columns: sixteen, rows: sixteen, role: CooperativeRole::B, data: data(eb) },
        s,
    );
    let lacc = ex.append(Expression::Load { pointer: pacc }, s);
    let mad = ex.append(Expression::CooperativeMultiplyAdd { a: la, b: lb, c: lacc }, s);
    let ec = ex.append(Expression::Access { base: pc, index: zero }, s);
    f.body.push(Statement::Emit(Range::new_from_bounds(ea, lb)), s);
    f.body.push(Statement::Emit(Range::new_from_bounds(lacc, ec)), s);
    f.body.push(Statement::CooperativeStore { target: mad, data: data(ec) }, s);
    f.body.push(Statement::Return { value: None }, s);
    m.entry_points.push(EntryPoint {
        name: "main".into(),
        stage: ShaderStage::Compute,
        early_depth_test: None,
        workgroup_size: [32, 1, 1],
        workgroup_size_overrides: None,
        function: f,
        mesh_info: None,
        task_payload: None,
        incoming_ray_payload: None,
    });
    m
}

fn caps() -> Capabilities {
    Capabilities::SHADER_FLOAT16 | Capabilities::COOPERATIVE_MATRIX
}

#[test]
fn hand_built_tile_product_validates_and_writes_wgsl_and_spirv() {
    let m = tile_module();
    // Without the capability the matrix type itself is rejected.
    assert!(Validator::new(ValidationFlags::all(), Capabilities::SHADER_FLOAT16).validate(&m).is_err());
    let info = Validator::new(ValidationFlags::all(), caps()).validate(&m).expect("valid");
    let wgsl = naga::back::wgsl::write_string(&m, &info, naga::back::wgsl::WriterFlags::empty()).unwrap();
    assert!(wgsl.contains("enable wgpu_cooperative_matrix;"), "{wgsl}");
    // `row_major: true` is WGSL's transposed form, `coopLoadT`.
    assert!(wgsl.contains("coopLoadT<coop_mat16x16<f16,A>>"), "{wgsl}");
    assert!(wgsl.contains("coopMultiplyAdd("), "{wgsl}");
    assert!(wgsl.contains("coopStoreT("), "{wgsl}");
    // The WGSL is the same program: it parses back and validates.
    let back = naga::front::wgsl::parse_str(&wgsl).unwrap_or_else(|e| panic!("{}", e.emit_to_string(&wgsl)));
    Validator::new(ValidationFlags::all(), caps()).validate(&back).expect("re-parsed WGSL validates");

    let options = naga::back::spv::Options { lang_version: (1, 3), ..Default::default() };
    let pipeline = naga::back::spv::PipelineOptions { shader_stage: ShaderStage::Compute, entry_point: "main".into() };
    let words = naga::back::spv::write_vec(&m, &info, &options, Some(&pipeline)).unwrap();
    let ops: Vec<u32> = words[5..]
        .iter()
        .scan(0usize, |skip, &w| {
            let out = if *skip == 0 {
                *skip = (w >> 16) as usize;
                Some(Some(w & 0xffff))
            } else {
                Some(None)
            };
            *skip -= 1;
            out
        })
        .flatten()
        .collect();
    // OpTypeCooperativeMatrixKHR, OpCooperativeMatrixLoadKHR,
    // OpCooperativeMatrixStoreKHR, OpCooperativeMatrixMulAddKHR.
    for op in [4456, 4457, 4458, 4459] {
        assert!(ops.contains(&op), "SPIR-V lacks op {op}");
    }
}

/// Writes the SPIR-V to `$ONEKERNEL_DUMP_COOP_SPV` when set (to run a
/// newer `spirv-val` on it by hand).
#[test]
fn dump_spirv_for_spirv_val() {
    let Some(path) = std::env::var_os("ONEKERNEL_DUMP_COOP_SPV") else { return };
    let m = tile_module();
    let info = Validator::new(ValidationFlags::all(), caps()).validate(&m).unwrap();
    let options = naga::back::spv::Options { lang_version: (1, 3), ..Default::default() };
    let pipeline = naga::back::spv::PipelineOptions { shader_stage: ShaderStage::Compute, entry_point: "main".into() };
    let words = naga::back::spv::write_vec(&m, &info, &options, Some(&pipeline)).unwrap();
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    std::fs::write(path, bytes).unwrap();
}

/// The tile operations of the kernel language lower to the same IR.
#[test]
fn tile_kernel_lowers_to_cooperative_matrices() {
    let src = r#"
fn tile_product(a: &[f16], b: &[f16], c: &mut [f32], k: u32) {
    let tile_b = shared::<[f16; 256]>();
    let mut acc = Accumulator::<f32, 16, 16>::zeros();
    for i in 0..256 / 32 {
        tile_b[thread_id().x * 8 + i] = b[thread_id().x * 8 + i];
    }
    workgroup_barrier();
    let mut s = 0;
    while s < k as usize {
        let ta = MatrixA::<16, 16>::load(&a, s, k as usize);
        let tb = MatrixB::<16, 16>::load_col_major(&tile_b, 0, 16);
        acc = mma(ta, tb, acc);
        s += 16;
    }
    acc.store(&mut c, 0, 16);
}"#;
    let k = super::compiled("workgroup_size = 32", src, &[]);
    let wgsl = k.info.wgsl().to_string();
    println!("{wgsl}");
    for needle in
        ["enable wgpu_cooperative_matrix;", "coopLoadT<coop_mat16x16<f16,A>>", "coopLoad<coop_mat16x16<f16,B>>"]
    {
        assert!(wgsl.contains(needle), "{needle} in {wgsl}");
    }
    assert!(wgsl.contains("coopMultiplyAdd(") && wgsl.contains("coopStoreT("), "{wgsl}");
}

/// Tiles loaded from `f16` vector memory (issue #14): the cooperative load
/// takes a pointer into the `vec4<f16>`/`vec2<f16>` array, and naga
/// validates every role with it, an `f16` accumulator's too (compiling
/// validates the plain, folded and checked modules and writes SPIR-V).
#[test]
fn tiles_load_from_f16_vectors() {
    let src = r#"
fn tile_vectors(a: &[F16Vec4], c_in: &[F16Vec4], c: &mut [f16], k: u32) {
    let tile_b = shared::<[F16Vec2; 128]>();
    for i in 0..4 {
        tile_b[thread_id().x * 4 + i] = F16Vec2::splat(c_in[i].x);
    }
    workgroup_barrier();
    let acc = Accumulator::<f16, 16, 16>::load(&c_in, 0, 4);
    let ta = MatrixA::<16, 16>::load(&a, 2, k as usize);
    let tb = MatrixB::<16, 16>::load_col_major(&tile_b, 0, 8);
    mma(ta, tb, acc).store(&mut c, 0, 16);
}"#;
    let k = super::compiled("workgroup_size = 32", src, &[]);
    let wgsl = k.info.wgsl().to_string();
    for needle in [
        "var<storage> a: array<vec4<f16>>;",
        "coopLoadT<coop_mat16x16<f16,C>>((&c_in[0u]), 4u)",
        "coopLoad<coop_mat16x16<f16,B>>((&tile_b[0u]), 8u)",
    ] {
        assert!(wgsl.contains(needle), "{needle} in {wgsl}");
    }
    assert!(!k.info.spirv().is_empty());
    // The checked module checks the vector that holds each tile's last
    // lane: A's row 15 ends at vector `2 + 15 * k + 3` (16 lanes are 4
    // `vec4`s), the accumulator's at `15 * 4 + 3`, B's column 15 (8
    // `vec2`s) at `15 * 8 + 7`.
    let checked = k.info.module(onekernel_abi::ModuleKey::CHECKED).expect("checked").wgsl.to_string();
    for needle in ["(2u + ((15u * k) + 3u))", "select(0u, 63u, c_in_in_bounds", "(127u < 128u)"] {
        assert!(checked.contains(needle), "{needle} in {checked}");
    }
}
