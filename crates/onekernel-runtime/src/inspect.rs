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

use onekernel_abi::KernelInfo;
use std::fmt::Write;
use wgpu::naga;

/// The plain module's WGSL, which the GPU path compiles (the other
/// modules are `k.module(key)`).
pub fn wgsl(k: &KernelInfo) -> &str {
    k.wgsl()
}

/// The plain module's SPIR-V words.
pub fn spirv(k: &KernelInfo) -> &[u32] {
    k.spirv()
}

/// The SPIR-V as text (rspirv's disassembler), or a line saying why not.
pub fn spirv_disassembly(k: &KernelInfo) -> String {
    use rspirv::binary::Disassemble;
    if k.spirv().is_empty() {
        return "; (no SPIR-V)\n".to_string();
    }
    match rspirv::dr::load_words(k.spirv()) {
        Ok(module) => module.disassemble() + "\n",
        Err(e) => format!("; (the SPIR-V does not load: {e})\n"),
    }
}

/// The naga IR of the kernel's WGSL, as wgpu itself parses it: the types,
/// the globals and each function and entry point (arguments, locals,
/// expressions by handle, and the statement tree).
pub fn naga_ir(k: &KernelInfo) -> String {
    let module = match naga::front::wgsl::parse_str(k.wgsl()) {
        Ok(m) => m,
        Err(e) => return format!("(the WGSL does not parse: {})\n", e.emit_to_string(k.wgsl())),
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

/// The binding layout as a table: each parameter, its Rust type, its WGSL
/// declaration and its binding (or uniform offset). The kernel's
/// `BINDINGS` and the CLI's `--emit bindings` print the same table.
pub fn bindings(k: &KernelInfo) -> String {
    k.bindings_table()
}

/// Each Rust line of the kernel beside the WGSL it produced.
pub fn explain(k: &KernelInfo) -> &str {
    &k.explain
}
