//! The `KernelInfo` the macro writes into the user's crate: the compiler's
//! [`onekernel_abi::KernelInfo`] value, written out as a `static`.
//!
//! Every field is destructured by name and every enum matched without a
//! wildcard, so a field or case added to the ABI is a compile error here
//! until the macro writes it.

use onekernel_abi::{
    CheckKind, CheckSite, CpuPlan, DataType, Features, KernelInfo, Module, ModuleKey, ParamInfo, ParamKind, ScalarType,
};
use proc_macro2::TokenStream;
use quote::{quote, ToTokens};

/// The items of the kernel's module that describe it: the constants a user
/// reads (`WGSL`, `SPIRV`, ...) and `KERNEL`, which points at them. The
/// plain module is `WGSL` and `SPIRV`; the table `KERNEL.modules` holds
/// every module the compiler built, as it built it.
pub fn kernel_items(info: &KernelInfo) -> TokenStream {
    let k = super::krate();
    let KernelInfo {
        name,
        entry_point,
        modules,
        checks,
        debug_sites,
        source_file: _,
        explain,
        workgroup_size: [wx, wy, wz],
        max_workgroup_invocations,
        params,
        uniform_binding,
        uniform_size,
        params_binding,
        cpu,
        workgroup_memory_words,
        features,
        tile_shapes,
        consts,
    } = info;
    let consts = consts_info(consts, &k);
    let (name, entry_point, explain) = (name.as_ref(), entry_point.as_ref(), explain.as_ref());
    let (wgsl, spirv) = (info.wgsl(), info.spirv());
    let modules = modules.iter().map(|m| module(m, &k));
    let checks = checks.iter().map(|c| check_site(c, &k));
    let debug_sites = debug_sites.iter().map(|s| debug_site(s, &k));
    let params = params.iter().map(|p| param_info(p, &k));
    let cpu = cpu_plan(*cpu, &k);
    let params_binding = match params_binding {
        onekernel_abi::ParamsBinding::Uniform => quote!(Uniform),
        onekernel_abi::ParamsBinding::Storage => quote!(Storage),
    };
    let Features(feature_bits) = *features;
    let tile_shapes = tile_shapes.iter().map(|t| {
        let onekernel_abi::TileShape { m, n, k: depth, ab, acc } = *t;
        let (ab, acc) = (scalar_type(ab), scalar_type(acc));
        let (ab, acc) = (quote!(#k::ScalarType::#ab), quote!(#k::ScalarType::#acc));
        quote!(#k::TileShape { m: #m, n: #n, k: #depth, ab: #ab, acc: #acc })
    });
    let wgsl_doc = format!("The WGSL this kernel compiles to:\n\n```wgsl\n{wgsl}```");
    let bindings_table = info.bindings_table();
    quote! {
        #[doc = #wgsl_doc]
        pub const WGSL: &str = #wgsl;
        /// The SPIR-V words (validated by naga; `spirv-val` in the tests).
        pub const SPIRV: &[u32] = &[#(#spirv),*];
        /// The entry point's name in `WGSL` and `SPIRV`.
        pub const ENTRY_POINT: &str = #entry_point;
        /// Threads per block (workgroup) along x, y and z.
        pub const WORKGROUP_SIZE: [u32; 3] = [#wx, #wy, #wz];
        /// The binding layout, as a table for people.
        pub const BINDINGS: &str = #bindings_table;
        /// Each Rust line of the kernel beside the WGSL it produced.
        pub const EXPLAIN: &str = #explain;
        /// Everything the runtime needs to launch this kernel.
        pub static KERNEL: #k::KernelInfo = #k::KernelInfo {
            name: #k::Cow::Borrowed(#name),
            entry_point: #k::Cow::Borrowed(ENTRY_POINT),
            modules: #k::Cow::Borrowed(&[#(#modules),*]),
            checks: #k::Cow::Borrowed(&[#(#checks),*]),
            debug_sites: #k::Cow::Borrowed(&[#(#debug_sites),*]),
            // The user's file: these tokens expand where the kernel is.
            source_file: #k::Cow::Borrowed(::core::file!()),
            explain: #k::Cow::Borrowed(EXPLAIN),
            workgroup_size: WORKGROUP_SIZE,
            max_workgroup_invocations: #max_workgroup_invocations,
            params: #k::Cow::Borrowed(&[#(#params),*]),
            uniform_binding: #uniform_binding,
            uniform_size: #uniform_size,
            params_binding: #k::ParamsBinding::#params_binding,
            cpu: #cpu,
            workgroup_memory_words: #workgroup_memory_words,
            features: #k::Features(#feature_bits),
            tile_shapes: #k::Cow::Borrowed(&[#(#tile_shapes),*]),
            consts: #consts,
        };
    }
}

/// One module of the table; the plain one points at `WGSL` and `SPIRV`.
fn module(m: &Module, k: &TokenStream) -> TokenStream {
    let Module { key, wgsl, spirv } = m;
    let plain = *key == ModuleKey::PLAIN;
    let ModuleKey { folded, checked } = *key;
    let key = quote!(#k::ModuleKey { folded: #folded, checked: #checked });
    let wgsl = if plain { quote!(WGSL) } else { wgsl.as_ref().to_token_stream() };
    let spirv = match spirv {
        Some(_) if plain => quote!(::core::option::Option::Some(#k::Cow::Borrowed(SPIRV))),
        Some(words) => {
            let words = words.iter();
            quote!(::core::option::Option::Some(#k::Cow::Borrowed(&[#(#words),*])))
        }
        None => quote!(::core::option::Option::None),
    };
    quote!(#k::Module { key: #key, wgsl: #k::Cow::Borrowed(#wgsl), spirv: #spirv })
}

fn consts_info(consts: &onekernel_abi::Consts, k: &TokenStream) -> TokenStream {
    let onekernel_abi::Consts { params, values, arrays, workgroup_size, max_shared_bytes } = consts;
    let params = params.iter().map(|p| {
        let onekernel_abi::ConstParam { name, id, ty, generic } = p;
        let name = name.as_ref();
        let ty = match ty {
            onekernel_abi::ConstType::U32 => quote!(U32),
            onekernel_abi::ConstType::I32 => quote!(I32),
            onekernel_abi::ConstType::Usize => quote!(Usize),
            onekernel_abi::ConstType::F32 => quote!(F32),
            onekernel_abi::ConstType::Bool => quote!(Bool),
        };
        quote!(#k::ConstParam { name: #k::Cow::Borrowed(#name), id: #id, ty: #k::ConstType::#ty, generic: #generic })
    });
    let values = values.iter();
    let dim = |d: &onekernel_abi::Dim| match d {
        onekernel_abi::Dim::Lit(n) => quote!(#k::Dim::Lit(#n)),
        onekernel_abi::Dim::Param(i) => quote!(#k::Dim::Param(#i)),
    };
    let arrays = arrays.iter().map(|a| {
        let onekernel_abi::ArrayShape { name, shared, elem_bytes, dims } = a;
        let name = name.as_ref();
        let dims = dims.iter().map(dim);
        quote!(#k::ArrayShape {
            name: #k::Cow::Borrowed(#name),
            shared: #shared,
            elem_bytes: #elem_bytes,
            dims: #k::Cow::Borrowed(&[#(#dims),*]),
        })
    });
    let axes = workgroup_size.iter().map(|a| match a {
        Some(i) => quote!(::core::option::Option::Some(#i)),
        None => quote!(::core::option::Option::None),
    });
    quote!(#k::Consts {
        params: #k::Cow::Borrowed(&[#(#params),*]),
        values: #k::Cow::Borrowed(&[#(#values),*]),
        arrays: #k::Cow::Borrowed(&[#(#arrays),*]),
        workgroup_size: [#(#axes),*],
        max_shared_bytes: #max_shared_bytes,
    })
}

fn check_site(c: &CheckSite, k: &TokenStream) -> TokenStream {
    let CheckSite { kind, line, column, what } = c;
    let kind = match kind {
        CheckKind::OutOfBounds => quote!(OutOfBounds),
        CheckKind::DivisionByZero => quote!(DivisionByZero),
        CheckKind::LoopBudget => quote!(LoopBudget),
    };
    let what = what.as_ref();
    quote!(#k::CheckSite { kind: #k::CheckKind::#kind, line: #line, column: #column, what: #k::Cow::Borrowed(#what) })
}

/// A debug site; a `debug_assert*!`'s `enabled` is the user's crate's
/// `cfg!(debug_assertions)`.
fn debug_site(s: &onekernel_abi::DebugSite, k: &TokenStream) -> TokenStream {
    use onekernel_abi::{DebugArg, DebugKind, DebugSite};
    let DebugSite { kind, line, column, format, has_message, args, condition, enabled: _, debug_only, file } = s;
    let kind = match kind {
        DebugKind::Print { stderr, newline } => quote!(Print { stderr: #stderr, newline: #newline }),
        DebugKind::Panic => quote!(Panic),
        DebugKind::Unreachable => quote!(Unreachable),
        DebugKind::Todo => quote!(Todo),
        DebugKind::Unimplemented => quote!(Unimplemented),
        DebugKind::Assert => quote!(Assert),
        DebugKind::AssertEq => quote!(AssertEq),
        DebugKind::AssertNe => quote!(AssertNe),
    };
    let args = args.iter().map(|a| {
        let DebugArg { name, ty } = a;
        let name = match name {
            Some(n) => {
                let n = n.as_ref();
                quote!(::core::option::Option::Some(#k::Cow::Borrowed(#n)))
            }
            None => quote!(::core::option::Option::None),
        };
        let ty = print_type(ty, k);
        quote!(#k::DebugArg { name: #name, ty: #ty })
    });
    let (format, condition, file) = (format.as_ref(), condition.as_ref(), file.as_ref());
    let enabled = if *debug_only { quote!(::core::cfg!(debug_assertions)) } else { quote!(true) };
    quote!(#k::DebugSite {
        kind: #k::DebugKind::#kind,
        line: #line,
        column: #column,
        format: #k::Cow::Borrowed(#format),
        has_message: #has_message,
        args: #k::Cow::Borrowed(&[#(#args),*]),
        condition: #k::Cow::Borrowed(#condition),
        enabled: #enabled,
        debug_only: #debug_only,
        file: #k::Cow::Borrowed(#file),
    })
}

fn print_type(t: &onekernel_abi::PrintType, k: &TokenStream) -> TokenStream {
    use onekernel_abi::{PrintField, PrintType};
    match t {
        PrintType::Bool => quote!(#k::PrintType::Bool),
        PrintType::Scalar(s) => {
            let s = scalar_type(*s);
            quote!(#k::PrintType::Scalar(#k::ScalarType::#s))
        }
        PrintType::Vector { elem, lanes, aligned } => {
            let s = scalar_type(*elem);
            quote!(#k::PrintType::Vector { elem: #k::ScalarType::#s, lanes: #lanes, aligned: #aligned })
        }
        PrintType::Dim3 => quote!(#k::PrintType::Dim3),
        PrintType::Struct { name, fields } => {
            let name = name.as_ref();
            let fields = fields.iter().map(|f| {
                let PrintField { name, ty } = f;
                let name = name.as_ref();
                let ty = print_type(ty, k);
                quote!(#k::PrintField { name: #k::Cow::Borrowed(#name), ty: #ty })
            });
            quote!(#k::PrintType::Struct { name: #k::Cow::Borrowed(#name), fields: #k::Cow::Borrowed(&[#(#fields),*]) })
        }
    }
}

fn param_info(p: &ParamInfo, k: &TokenStream) -> TokenStream {
    let ParamInfo { name, kind, ty, slot } = p;
    let name = name.as_ref();
    let kind = match kind {
        ParamKind::ReadOnlyBuffer => quote!(ReadOnlyBuffer),
        ParamKind::ReadWriteBuffer => quote!(ReadWriteBuffer),
        ParamKind::AtomicBuffer => quote!(AtomicBuffer),
        ParamKind::Scalar => quote!(Scalar),
    };
    let ty = data_type(ty, k);
    quote!(#k::ParamInfo {
        name: #k::Cow::Borrowed(#name),
        kind: #k::ParamKind::#kind,
        ty: #ty,
        slot: #slot,
    })
}

/// A `DataType` as an expression.
fn data_type(ty: &DataType, k: &TokenStream) -> TokenStream {
    match ty {
        DataType::Scalar(s) => {
            let s = scalar_type(*s);
            quote!(#k::DataType::Scalar(#k::ScalarType::#s))
        }
        DataType::Vector { elem, lanes } => {
            let s = scalar_type(*elem);
            quote!(#k::DataType::Vector { elem: #k::ScalarType::#s, lanes: #lanes })
        }
        DataType::Struct { name, size, align } => {
            let name = name.as_ref();
            quote!(#k::DataType::Struct { name: #k::Cow::Borrowed(#name), size: #size, align: #align })
        }
    }
}

/// The variant's name in `ScalarType`.
pub fn scalar_type(ty: ScalarType) -> TokenStream {
    match ty {
        ScalarType::F16 => quote!(F16),
        ScalarType::F32 => quote!(F32),
        ScalarType::F64 => quote!(F64),
        ScalarType::I32 => quote!(I32),
        ScalarType::U32 => quote!(U32),
        ScalarType::I64 => quote!(I64),
        ScalarType::U64 => quote!(U64),
    }
}

fn cpu_plan(p: CpuPlan, k: &TokenStream) -> TokenStream {
    match p {
        CpuPlan::Independent => quote!(#k::CpuPlan::Independent),
        CpuPlan::OwnElement { chunk_loop } => quote!(#k::CpuPlan::OwnElement { chunk_loop: #chunk_loop }),
        CpuPlan::Cooperative { phased } => quote!(#k::CpuPlan::Cooperative { phased: #phased }),
    }
}
