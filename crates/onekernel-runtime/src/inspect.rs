//! Looking inside a compiled kernel from the host: its WGSL, SPIR-V (words
//! and disassembly), naga IR, binding layout and the explain view (each
//! Rust line beside the WGSL it produced).
//!
//! ```ignore
//! println!("{}", onekernel::inspect::explain(&vector_add::KERNEL));
//! println!("{}", onekernel::inspect::spirv_disassembly(&vector_add::KERNEL));
//! ```
//!
//! The `onekernel-cli` binary prints the same views for any Rust file.

use onekernel_abi::{KernelInfo, ParamKind, ScalarType};
use std::fmt::Write;
use wgpu::naga;

/// The WGSL the GPU path compiles.
pub fn wgsl(k: &KernelInfo) -> &str {
    &k.wgsl
}

/// The SPIR-V words.
pub fn spirv(k: &KernelInfo) -> &[u32] {
    &k.spirv
}

/// The SPIR-V as text (rspirv's disassembler), or a line saying why not.
pub fn spirv_disassembly(k: &KernelInfo) -> String {
    use rspirv::binary::Disassemble;
    if k.spirv.is_empty() {
        return "; (no SPIR-V)\n".to_string();
    }
    match rspirv::dr::load_words(&*k.spirv) {
        Ok(module) => module.disassemble() + "\n",
        Err(e) => format!("; (the SPIR-V does not load: {e})\n"),
    }
}

/// The naga IR of the kernel's WGSL, as wgpu itself parses it: the types,
/// the globals and each function and entry point (arguments, locals,
/// expressions by handle, and the statement tree).
pub fn naga_ir(k: &KernelInfo) -> String {
    let module = match naga::front::wgsl::parse_str(&k.wgsl) {
        Ok(m) => m,
        Err(e) => return format!("(the WGSL does not parse: {})\n", e.emit_to_string(&k.wgsl)),
    };
    let mut s = String::from("types:\n");
    for (h, t) in module.types.iter() {
        let _ = writeln!(
            s,
            "  [{}] {}{:?}",
            h.index(),
            t.name.as_ref().map(|n| format!("{n} = ")).unwrap_or_default(),
            t.inner
        );
    }
    s.push_str("globals:\n");
    for (h, g) in module.global_variables.iter() {
        let binding =
            g.binding.as_ref().map(|b| format!(" @group({}) @binding({})", b.group, b.binding)).unwrap_or_default();
        let name = g.name.as_deref().unwrap_or("_");
        let _ = writeln!(s, "  [{}] {name}: {:?}{binding}, type [{}]", h.index(), g.space, g.ty.index());
    }
    for (_, f) in module.functions.iter() {
        let _ = writeln!(s, "function `{}`:", f.name.as_deref().unwrap_or("_"));
        function(&mut s, f);
    }
    for e in &module.entry_points {
        let _ = writeln!(s, "entry point `{}` ({:?}, workgroup_size {:?}):", e.name, e.stage, e.workgroup_size);
        function(&mut s, &e.function);
    }
    s
}

fn function(s: &mut String, f: &naga::Function) {
    for (i, a) in f.arguments.iter().enumerate() {
        let _ =
            writeln!(s, "  argument {i}: {} type [{}] {:?}", a.name.as_deref().unwrap_or("_"), a.ty.index(), a.binding);
    }
    if let Some(r) = &f.result {
        let _ = writeln!(s, "  result: type [{}]", r.ty.index());
    }
    for (h, l) in f.local_variables.iter() {
        let _ = writeln!(s, "  local [{}] {}: type [{}]", h.index(), l.name.as_deref().unwrap_or("_"), l.ty.index());
    }
    s.push_str("  expressions:\n");
    for (h, e) in f.expressions.iter() {
        let name = f.named_expressions.get(&h).map(|n| format!(" ({n})")).unwrap_or_default();
        let _ = writeln!(s, "    [{}]{name} {e:?}", h.index());
    }
    s.push_str("  body:\n");
    for line in format!("{:#?}", f.body).lines() {
        let _ = writeln!(s, "    {line}");
    }
}

/// The binding layout as a table: each parameter, how it is passed, its
/// WGSL declaration and its binding (or uniform offset).
pub fn bindings(k: &KernelInfo) -> String {
    let mut rows = vec![["parameter".to_string(), "Rust".into(), "WGSL".into(), "where".into()]];
    for p in k.params.iter() {
        let (rust, place) = match p.kind {
            ParamKind::ReadOnlyBuffer => (format!("&[{}]", p.ty), format!("@group(0) @binding({})", p.slot)),
            ParamKind::ReadWriteBuffer => (format!("&mut [{}]", p.ty), format!("@group(0) @binding({})", p.slot)),
            ParamKind::AtomicBuffer => {
                let atomic = match p.ty {
                    ScalarType::U32 => "AtomicU32".to_string(),
                    ScalarType::I32 => "AtomicI32".to_string(),
                    // The compiler accepts only the two integer atomics.
                    ScalarType::F32 => format!("atomic {}", p.ty),
                };
                (format!("&[{atomic}]"), format!("@group(0) @binding({})", p.slot))
            }
            ParamKind::Scalar => (p.ty.to_string(), format!("uniform, offset {}", p.slot)),
        };
        let wgsl = match p.kind {
            ParamKind::Scalar => format!("params.{}: {}", p.name, p.ty.wgsl_name()),
            ParamKind::ReadOnlyBuffer | ParamKind::ReadWriteBuffer | ParamKind::AtomicBuffer => {
                declaration(&k.wgsl, p.slot).unwrap_or_default()
            }
        };
        rows.push([p.name.to_string(), rust, wgsl, place]);
    }
    let launch = declaration(&k.wgsl, k.uniform_binding).unwrap_or_default();
    let place = format!("@group(0) @binding({}), {} bytes", k.uniform_binding, k.uniform_size);
    rows.push(["(launch)".into(), "-".into(), launch, place]);
    table(&rows)
}

/// The `var<...> name: type` the WGSL declares at `@binding(slot)`.
fn declaration(wgsl: &str, slot: u32) -> Option<String> {
    let attr = format!("@binding({slot})");
    let mut lines = wgsl.lines();
    while let Some(line) = lines.next() {
        if let Some(at) = line.find(&attr) {
            let rest = line[at + attr.len()..].trim();
            let decl = if rest.is_empty() { lines.next()?.trim() } else { rest };
            return Some(decl.trim_end_matches(';').to_string());
        }
    }
    None
}

/// A plain-text table with aligned columns.
fn table(rows: &[[String; 4]]) -> String {
    let widths: Vec<usize> = (0..4).map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0)).collect();
    let mut s = String::new();
    for (i, r) in rows.iter().enumerate() {
        let cells: Vec<String> = r.iter().zip(&widths).map(|(c, w)| format!("{c:<w$}")).collect();
        let _ = writeln!(s, "{}", cells.join(" | ").trim_end());
        if i == 0 {
            let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
            let _ = writeln!(s, "{}", rule.join("-+-"));
        }
    }
    s
}

/// Each Rust line of the kernel beside the WGSL it produced.
pub fn explain(k: &KernelInfo) -> &str {
    &k.explain
}
