//! Validation and the back ends: naga module → checked module, WGSL text
//! and SPIR-V words.

use crate::diagnostic::Diagnostic;
use crate::lower::Lowered;
use naga::back::spv;
use naga::valid::{Capabilities, ValidationFlags, Validator};
use naga::Handle;
use onekernel_abi::ConstParam;

/// Validates `module` as wgpu will on a device with `f16`, `f64`, 64-bit
/// integers and subgroups ([`CAPABILITIES`]; the kernel's
/// `KernelInfo::features` say which of them it needs, and the runtime checks
/// that the device has them), then writes WGSL and SPIR-V. `spans` maps naga span ids back to the user's tokens,
/// so that a validation error lands on the Rust code that caused it.
pub fn emit(lowered: &Lowered, fallback: proc_macro2::Span) -> Result<(String, Vec<u32>), Vec<Diagnostic>> {
    let module = &lowered.module;
    let info = validate(module, &lowered.spans, fallback)?;
    let wgsl = write_wgsl(lowered, &info, fallback)?;
    if !module.overrides.is_empty() {
        // naga's SPIR-V writer takes values for the overrides (const
        // parameters): a kernel with them has SPIR-V per specialisation
        // only ([`specialised_spirv`]).
        return Ok((wgsl, Vec::new()));
    }
    let words = write_spirv(module, &info)
        .map_err(|e| vec![Diagnostic::new(fallback, format!("internal compiler error: SPIR-V output failed: {e}"))])?;
    Ok((wgsl, words))
}

fn spv_options() -> spv::Options<'static> {
    spv::Options {
        lang_version: (1, 3),
        // Out-of-bounds indices are clamped into the array, so the SPIR-V
        // is safe to run on its own (naga's SPIR-V writer cannot yet skip
        // out-of-bounds atomics, so clamping is the policy for all).
        bounds_check_policies: naga::proc::BoundsCheckPolicies {
            index: naga::proc::BoundsCheckPolicy::Restrict,
            buffer: naga::proc::BoundsCheckPolicy::Restrict,
            ..Default::default()
        },
        flags: spv::WriterFlags::empty(),
        ..spv::Options::default()
    }
}

fn write_spirv(module: &naga::Module, info: &naga::valid::ModuleInfo) -> Result<Vec<u32>, spv::Error> {
    let entry = module.entry_points.first().map(|e| e.name.clone()).unwrap_or_default();
    let pipeline = spv::PipelineOptions { shader_stage: naga::ShaderStage::Compute, entry_point: entry };
    spv::write_vec(module, info, &spv_options(), Some(&pipeline))
}

/// The SPIR-V of `wgsl` (a kernel's module with overrides: const
/// parameters or constants of its scope) specialised for `values` (one per
/// override of `params`, in order): the one specialisation route
/// ([`onekernel_abi::specialised_wgsl`]), then naga's SPIR-V writer (an
/// override `params` leaves out, the checked module's `loop_budget`,
/// takes its default).
pub fn specialised_spirv(wgsl: &str, params: &[ConstParam], values: &[f64]) -> Result<Vec<u32>, String> {
    if values.len() != params.len() {
        return Err(format!("{} values for {} overrides", values.len(), params.len()));
    }
    let text = onekernel_abi::specialised_wgsl(wgsl, params, values)?;
    let module = naga::front::wgsl::parse_str(&text).map_err(|e| e.emit_to_string(&text))?;
    let info = Validator::new(ValidationFlags::all(), CAPABILITIES).validate(&module).map_err(|e| format!("{e:?}"))?;
    let none = naga::back::PipelineConstants::default();
    let (module, info) =
        naga::back::pipeline_constants::process_overrides(&module, &info, None, &none).map_err(|e| e.to_string())?;
    write_spirv(&module, &info).map_err(|e| e.to_string())
}

/// [`emit`] without the SPIR-V: for the checked modules, which the runtime
/// compiles from WGSL only.
pub fn emit_wgsl(lowered: &Lowered, fallback: proc_macro2::Span) -> Result<String, Vec<Diagnostic>> {
    let info = validate(&lowered.module, &lowered.spans, fallback)?;
    write_wgsl(lowered, &info, fallback)
}

/// The WGSL text of a module, its struct layouts spelled
/// ([`spell_struct_layouts`]) and checked: the text is parsed back and
/// every struct the host shares (the user's structs, the uniform block,
/// the buffers' arrays) must have in it the layout the IR has, and each of
/// the user's structs the layout the macro asserts against rustc's
/// ([`HostLayout`]). A difference is an internal error, never a kernel
/// that reads the wrong bytes.
fn write_wgsl(
    lowered: &Lowered,
    info: &naga::valid::ModuleInfo,
    fallback: proc_macro2::Span,
) -> Result<String, Vec<Diagnostic>> {
    let ice = |what: String| vec![Diagnostic::new(fallback, format!("internal compiler error: {what}"))];
    let module = &lowered.module;
    let text = naga::back::wgsl::write_string(module, info, naga::back::wgsl::WriterFlags::empty())
        .map_err(|e| ice(format!("WGSL output failed: {e}")))?;
    let (text, names) = spell_struct_layouts(module, &text).map_err(|e| ice(format!("WGSL output failed: {e}")))?;
    let parsed = naga::front::wgsl::parse_str(&text)
        .map_err(|e| ice(format!("the generated WGSL does not re-parse: {}", e.emit_to_string(&text))))?;
    check_layouts(module, &parsed, &names, &lowered.host_structs)
        .map_err(|e| ice(format!("the WGSL's struct layout is not the host's: {e}")))?;
    name_symbols(&text, &lowered.symbols).map_err(ice)
}

/// `text` with each array length the launch sets, a placeholder in the IR
/// ([`crate::types::Symbol`]), written as its override's name
/// (`array<f32, 8191>` → `array<f32, TM>`). A placeholder anywhere else in
/// the text would be a value computed from it: an internal error, never a
/// wrong length.
///
/// The name is the override's as the text declares it, found by `@id`
/// ([`onekernel_abi::override_decl`]): naga's writer renames a name that
/// ends in a digit (`BK4` is declared `BK4_`).
pub fn name_symbols(text: &str, symbols: &[crate::types::Symbol]) -> Result<String, String> {
    let mut out = text.to_string();
    for s in symbols {
        let id = crate::lower::OVERRIDE_ID_BASE + u16::try_from(s.over).unwrap_or(u16::MAX);
        let name = match onekernel_abi::override_decl(&out, id) {
            Some((_, name, _)) => name.to_string(),
            None => return Err(format!("the WGSL declares no `@id({id}) override` for `{}`", s.name)),
        };
        out = out.replace(&format!(", {}>", s.placeholder), &format!(", {name}>"));
        // `@workgroup_size(8191, 1, 1)`: the entry point's attribute.
        if let Some(at) = out.find("@workgroup_size(") {
            let start = at + "@workgroup_size(".len();
            if let Some(len) = out[start..].find(')') {
                let axes: Vec<String> = out[start..start + len]
                    .split(", ")
                    .map(|a| if a == s.placeholder.to_string() { name.clone() } else { a.to_string() })
                    .collect();
                out.replace_range(start..start + len, &axes.join(", "));
            }
        }
        let digits = s.placeholder.to_string();
        let bytes = out.as_bytes();
        let left = out.match_indices(&digits).any(|(at, _)| {
            let before = at.checked_sub(1).map(|i| bytes[i]);
            let after = bytes.get(at + digits.len()).copied();
            !before.is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_')
                && !after.is_some_and(|b| b.is_ascii_digit())
        });
        if left {
            return Err(format!("the WGSL still holds the stand-in length {digits} of `{}`", s.name));
        }
    }
    Ok(out)
}

/// The text naga validates in place of `wgsl` when lengths are set at the
/// launch (a local `array<f32, TM>` with `TM` an override is not WGSL):
/// each of those overrides a `const` of its placeholder.
pub fn with_placeholders(
    wgsl: &str,
    params: &[onekernel_abi::ConstParam],
    symbols: &[crate::types::Symbol],
) -> Result<String, String> {
    let (params, values): (Vec<_>, Vec<f64>) =
        symbols.iter().filter_map(|s| params.get(s.over).map(|p| (p.clone(), f64::from(s.placeholder)))).unzip();
    onekernel_abi::wgsl_with_constants(wgsl, &params, &values)
}

/// The name the WGSL text gives each struct type of the module.
pub type StructNames = Vec<(Handle<naga::Type>, String)>;

/// The layout the macro gives one of the user's structs (and asserts
/// against rustc's `offset_of!` and `size_of`): its fields' byte offsets
/// and its size.
#[derive(Clone, Debug)]
pub struct HostLayout {
    /// The struct's type in the lowered module.
    pub ty: Handle<naga::Type>,
    /// The Rust name.
    pub name: String,
    /// The fields' names and byte offsets, in declaration order.
    pub fields: Vec<(String, u32)>,
    /// `size_of`.
    pub size: u32,
}

/// naga's WGSL writer declares a struct's members without the IR's
/// offsets, so WGSL's own rules place them: a member right after a
/// `vec3<f32>` (12 bytes, aligned to 16) lands at byte 12, where the IR,
/// the SPIR-V and the host (glam's 16-byte `Vec3A`) have it at 16; the
/// uniform block's members after a struct likewise. Where the IR leaves
/// more room after a member than WGSL would, the member gets an explicit
/// `@size(N)` (N: the distance to the next member, or to the struct's
/// end), so the text has the IR's layout exactly.
///
/// Returns the text and the name the text gives each struct of the module
/// (the writer renames WGSL keywords). The writer declares the structs
/// first, in the module's type order, one member a line.
pub fn spell_struct_layouts(module: &naga::Module, wgsl: &str) -> Result<(String, StructNames), String> {
    use naga::TypeInner;
    let mut layouter = naga::proc::Layouter::default();
    layouter.update(module.to_ctx()).map_err(|e| e.to_string())?;
    let special = &module.special_types;
    // The `@size` of each member, by declared struct.
    let mut declared: Vec<(Handle<naga::Type>, Vec<Option<u32>>)> = Vec::new();
    for (h, ty) in module.types.iter() {
        let TypeInner::Struct { members, span } = &ty.inner else { continue };
        if special.predeclared_types.values().any(|t| *t == h)
            || Some(h) == special.external_texture_params
            || Some(h) == special.external_texture_transfer_function
        {
            continue;
        }
        let name = ty.name.as_deref().unwrap_or("?");
        let mut sizes: Vec<Option<u32>> = vec![None; members.len()];
        let (mut end, mut align) = (0u32, naga::proc::Alignment::ONE);
        for (i, m) in members.iter().enumerate() {
            let l = layouter[m.ty];
            let natural = l.alignment.round_up(end);
            if m.offset < natural || (i == 0 && m.offset > 0) {
                return Err(format!(
                    "the member {i} of `{name}` is at byte {}, where WGSL cannot place it (at {natural})",
                    m.offset
                ));
            }
            if m.offset > natural {
                sizes[i - 1] = Some(m.offset - members[i - 1].offset);
            }
            end = m.offset + l.size;
            align = align.max(l.alignment);
        }
        if let Some(last) = members.last() {
            if *span > align.round_up(end) && align.round_up(*span) == *span {
                sizes[members.len() - 1] = Some(span - last.offset);
            } else if *span != align.round_up(end) {
                return Err(format!("`{name}` is {span} bytes, which WGSL cannot spell (its members end at {end})"));
            }
        }
        declared.push((h, sizes));
    }
    let mut out = String::with_capacity(wgsl.len() + 64);
    let mut names = Vec::new();
    let mut lines = wgsl.split_inclusive('\n');
    let mut next = declared.iter();
    while let Some(line) = lines.next() {
        out.push_str(line);
        let Some(name) = line.strip_prefix("struct ").and_then(|l| l.trim_end().strip_suffix(" {")) else { continue };
        let (h, sizes) = next.next().ok_or("the WGSL declares more structs than the module has")?;
        names.push((*h, name.to_string()));
        for size in sizes {
            let member = lines.next().ok_or("a struct's declaration ends early")?;
            let body = member.trim_start();
            if body.starts_with('}') {
                return Err(format!("`{name}` declares fewer members than the module's struct"));
            }
            out.push_str(&member[..member.len() - body.len()]);
            if let Some(n) = size {
                out.push_str(&format!("@size({n}) "));
            }
            out.push_str(body);
        }
    }
    if next.next().is_some() {
        return Err("the WGSL declares fewer structs than the module has".into());
    }
    Ok((out, names))
}

/// Compares the layout of the re-parsed text (`parsed`) with the IR's
/// (`module`): each struct the text declares (`names`, from
/// [`spell_struct_layouts`]) and the type of each global with a binding
/// (the buffers' arrays and their strides, the uniform block), member by
/// member, element by element; then each of the user's structs with the
/// layout the macro asserts against rustc's (`host`).
pub fn check_layouts(
    module: &naga::Module,
    parsed: &naga::Module,
    names: &[(Handle<naga::Type>, String)],
    host: &[HostLayout],
) -> Result<(), String> {
    let layout = |m: &naga::Module| {
        let mut l = naga::proc::Layouter::default();
        l.update(m.to_ctx()).map(|_| l).map_err(|e| e.to_string())
    };
    let (ours, theirs) = (layout(module)?, layout(parsed)?);
    let cmp = Compare { a: module, b: parsed, la: &ours, lb: &theirs };
    let by_name = |name: &str| {
        parsed
            .types
            .iter()
            .find(|(_, t)| t.name.as_deref() == Some(name))
            .map(|(h, _)| h)
            .ok_or_else(|| format!("the re-parsed WGSL has no struct `{name}`"))
    };
    for (h, name) in names {
        cmp.same(*h, by_name(name)?, name)?;
    }
    for (_, g) in module.global_variables.iter() {
        let Some(binding) = &g.binding else { continue };
        let (_, other) = parsed
            .global_variables
            .iter()
            .find(|(_, o)| o.binding.as_ref() == Some(binding))
            .ok_or_else(|| format!("the re-parsed WGSL has no binding {}", binding.binding))?;
        cmp.same(g.ty, other.ty, g.name.as_deref().unwrap_or("?"))?;
    }
    for s in host {
        let name = &names.iter().find(|(h, _)| *h == s.ty).ok_or_else(|| format!("`{}` is not declared", s.name))?.1;
        let naga::TypeInner::Struct { members, span } = &parsed.types[by_name(name)?].inner else {
            return Err(format!("`{name}` is not a struct"));
        };
        if members.len() != s.fields.len() {
            return Err(format!("`{}` has {} fields, and its WGSL {} members", s.name, s.fields.len(), members.len()));
        }
        for ((field, at), m) in s.fields.iter().zip(members) {
            if m.offset != *at {
                return Err(format!(
                    "`{}.{field}` is at byte {at} on the host and at {} in the WGSL",
                    s.name, m.offset
                ));
            }
        }
        if *span != s.size {
            return Err(format!("`{}` is {} bytes on the host and {span} in the WGSL", s.name, s.size));
        }
    }
    Ok(())
}

/// Two modules' types, compared by layout.
struct Compare<'a> {
    a: &'a naga::Module,
    b: &'a naga::Module,
    la: &'a naga::proc::Layouter,
    lb: &'a naga::proc::Layouter,
}

impl Compare<'_> {
    fn same(&self, a: Handle<naga::Type>, b: Handle<naga::Type>, path: &str) -> Result<(), String> {
        use naga::TypeInner as T;
        let (la, lb) = (self.la[a], self.lb[b]);
        if la.size != lb.size || la.alignment != lb.alignment {
            return Err(format!(
                "`{path}` takes {} bytes aligned to {} in the IR and {} aligned to {} in the WGSL",
                la.size,
                la.alignment.round_up(1),
                lb.size,
                lb.alignment.round_up(1)
            ));
        }
        match (&self.a.types[a].inner, &self.b.types[b].inner) {
            (T::Struct { members: ma, span: sa }, T::Struct { members: mb, span: sb }) => {
                if ma.len() != mb.len() || sa != sb {
                    return Err(format!(
                        "`{path}` has {} members in {sa} bytes in the IR, {} in {sb} in the WGSL",
                        ma.len(),
                        mb.len()
                    ));
                }
                for (x, y) in ma.iter().zip(mb) {
                    let field = format!("{path}.{}", x.name.as_deref().unwrap_or("?"));
                    if x.offset != y.offset {
                        return Err(format!(
                            "`{field}` is at byte {} in the IR and at {} in the WGSL",
                            x.offset, y.offset
                        ));
                    }
                    self.same(x.ty, y.ty, &field)?;
                }
                Ok(())
            }
            (T::Array { base: ba, size: na, stride: sa }, T::Array { base: bb, size: nb, stride: sb }) => {
                if na != nb || sa != sb {
                    return Err(format!("`{path}` has the stride {sa} in the IR and {sb} in the WGSL"));
                }
                self.same(*ba, *bb, &format!("{path}[]"))
            }
            (x, y) if x == y => Ok(()),
            (x, y) => Err(format!("`{path}` is {x:?} in the IR and {y:?} in the WGSL")),
        }
    }
}

/// The optional naga capabilities a kernel may use: those of the device
/// features the runtime checks before a launch (`f16`, `f64`, `i64`/`u64`,
/// subgroup operations).
pub const CAPABILITIES: Capabilities = Capabilities::SHADER_FLOAT16
    .union(Capabilities::FLOAT64)
    .union(Capabilities::SHADER_INT64)
    .union(Capabilities::SUBGROUP)
    .union(Capabilities::COOPERATIVE_MATRIX);

/// The device features `module` needs: one per wide scalar type it uses
/// anywhere (buffers, locals, intermediate values), found in its type arena,
/// where naga keeps every type an expression or variable has, and
/// cooperative matrices when a tile type is there.
pub fn features(module: &naga::Module) -> onekernel_abi::Features {
    use naga::{Scalar, ScalarKind as K, TypeInner};
    use onekernel_abi::Features;
    let mut f = Features::NONE;
    if module.types.iter().any(|(_, ty)| matches!(ty.inner, TypeInner::CooperativeMatrix { .. })) {
        f = Features::COOPERATIVE_MATRIX;
    }
    let mut add = |s: Scalar| {
        f = f.union(match (s.kind, s.width) {
            (K::Float, 2) => Features::F16,
            (K::Float, 8) => Features::F64,
            (K::Sint | K::Uint, 8) => Features::INT64,
            _ => Features::NONE,
        })
    };
    for (_, ty) in module.types.iter() {
        match ty.inner {
            TypeInner::Scalar(s) | TypeInner::Vector { scalar: s, .. } | TypeInner::Matrix { scalar: s, .. } => add(s),
            TypeInner::CooperativeMatrix { scalar, .. } => add(scalar),
            _ => {}
        }
    }
    // Values whose type was never interned (naga resolves the type of a
    // literal or a conversion without the arena): `(x as f64) as f32` in
    // an `f32` kernel still needs `f64`.
    let mut lits = |exprs: &naga::Arena<naga::Expression>| {
        for (_, e) in exprs.iter() {
            match *e {
                naga::Expression::Literal(l) => add(l.scalar()),
                naga::Expression::As { kind, convert: Some(width), .. } => add(Scalar { kind, width }),
                _ => {}
            }
        }
    };
    lits(&module.global_expressions);
    for (_, func) in module.functions.iter() {
        lits(&func.expressions);
    }
    for ep in &module.entry_points {
        lits(&ep.function.expressions);
    }
    f
}

/// Validates `module` as wgpu will; a failure is an internal error placed
/// on the user's tokens the failing IR came from.
fn validate(
    module: &naga::Module,
    spans: &[proc_macro2::Span],
    fallback: proc_macro2::Span,
) -> Result<naga::valid::ModuleInfo, Vec<Diagnostic>> {
    wgsl_braces_fit(module, spans, fallback)?;
    Validator::new(ValidationFlags::all(), CAPABILITIES)
        .validate(module)
        .map_err(|e| {
            let span = e
                .spans()
                .filter_map(|(s, _)| s.to_range())
                .filter_map(|r| spans.get(r.start).copied())
                .last()
                .unwrap_or(fallback);
            let mut msg = e.as_inner().to_string();
            let mut source = std::error::Error::source(e.as_inner());
            while let Some(s) = source {
                msg.push_str(": ");
                msg.push_str(&s.to_string());
                source = s.source();
            }
            Diagnostic::new(span, format!("internal compiler error: the generated GPU code is invalid: {msg}"))
                .help("this is a bug in onekernel; please report it with this kernel")
        })
        .map_err(|d| vec![d])
}

/// WGSL allows 127 levels of braces in a function (naga's parser refuses
/// more, so the WGSL would not re-parse): deeper control flow is an error
/// at the statement past the limit. Each Rust block, `if`, loop and
/// `match` arm is one level or two (a `match` arm is a `case` in a
/// `switch`); the nesting limit ([`crate::nesting`]) lets more through.
fn wgsl_braces_fit(
    module: &naga::Module,
    spans: &[proc_macro2::Span],
    fallback: proc_macro2::Span,
) -> Result<(), Vec<Diagnostic>> {
    const WGSL_MAX_BRACES: usize = 127;
    use naga::Statement as S;
    let bodies =
        module.functions.iter().map(|(_, f)| &f.body).chain(module.entry_points.iter().map(|e| &e.function.body));
    // Explicit stack: the blocks and their depth (the function's braces
    // are the first level).
    let mut stack: Vec<(&naga::Block, usize)> = bodies.map(|b| (b, 1)).collect();
    while let Some((block, depth)) = stack.pop() {
        for (statement, span) in block.span_iter() {
            let inner: Vec<(&naga::Block, usize)> = match statement {
                S::Block(b) => vec![(b, depth + 1)],
                S::If { accept, reject, .. } => vec![(accept, depth + 1), (reject, depth + 1)],
                S::Switch { cases, .. } => cases.iter().map(|c| (&c.body, depth + 2)).collect(),
                S::Loop { body, continuing, .. } => vec![(body, depth + 1), (continuing, depth + 2)],
                _ => continue,
            };
            for (b, d) in inner {
                if d > WGSL_MAX_BRACES && !b.is_empty() {
                    let at = span.to_range().and_then(|r| spans.get(r.start).copied()).unwrap_or(fallback);
                    return Err(vec![Diagnostic::new(
                        at,
                        format!("blocks nested too deep for WGSL: this code is {d} braces deep on the GPU, and WGSL allows {WGSL_MAX_BRACES}"),
                    )
                    .note("each block, `if`, `else if`, loop and `match` arm nests one level of braces in the WGSL (an arm two)")
                    .help("move the inner part into a `#[helper]` function (each function has its own limit), or flatten it with early `continue`, `break` or `return`")]);
                }
                stack.push((b, d));
            }
        }
    }
    Ok(())
}

/// Parses WGSL text back and validates it: the oracle that the text the
/// user sees is the program that runs. Returns the entry point's name as
/// written in the WGSL (naga renames Rust names that are WGSL keywords).
pub fn reparse_wgsl(wgsl: &str) -> Result<String, String> {
    let module = naga::front::wgsl::parse_str(wgsl).map_err(|e| e.emit_to_string(wgsl))?;
    Validator::new(ValidationFlags::all(), CAPABILITIES).validate(&module).map_err(|e| e.emit_to_string(wgsl))?;
    module.entry_points.first().map(|e| e.name.clone()).ok_or_else(|| "no entry point".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A module whose IR has `r` at byte 16, after a `vec3<f32>`.
    fn sphere_module() -> naga::Module {
        let src = "struct S { @size(16) c: vec3<f32>, r: f32, p: u32 }\n\
                   @group(0) @binding(0) var<storage, read_write> s: array<S>;\n\
                   @compute @workgroup_size(1) fn main() { s[0].r = s[0].c.z; }";
        naga::front::wgsl::parse_str(src).unwrap()
    }

    fn written(module: &naga::Module) -> String {
        let info = Validator::new(ValidationFlags::all(), CAPABILITIES).validate(module).unwrap();
        naga::back::wgsl::write_string(module, &info, naga::back::wgsl::WriterFlags::empty()).unwrap()
    }

    fn host(module: &naga::Module, r_at: u32) -> HostLayout {
        let (ty, _) = module.types.iter().find(|(_, t)| t.name.as_deref() == Some("S")).unwrap();
        let fields = vec![("c".into(), 0), ("r".into(), r_at), ("p".into(), r_at + 4)];
        HostLayout { ty, name: "S".into(), fields, size: 32 }
    }

    #[test]
    fn sizes_are_spelled_where_wgsl_would_pack_tighter() {
        let ir = sphere_module();
        let raw = written(&ir);
        // naga's writer drops the offset: WGSL alone puts `r` at byte 12.
        assert!(raw.contains("    c: vec3<f32>,\n    r: f32,"), "{raw}");
        let (text, names) = spell_struct_layouts(&ir, &raw).unwrap();
        assert!(text.contains("    @size(16) c: vec3<f32>,\n    r: f32,\n    p: u32,\n"), "{text}");
        assert_eq!(names.iter().map(|(_, n)| n.as_str()).collect::<Vec<_>>(), ["S"]);
        let parsed = naga::front::wgsl::parse_str(&text).unwrap();
        check_layouts(&ir, &parsed, &names, &[host(&ir, 16)]).unwrap();
        // A module whose layout WGSL gives anyway is written unchanged.
        let plain = naga::front::wgsl::parse_str("struct T { a: f32, b: vec2<f32> }").unwrap();
        let plain_text = written(&plain);
        assert_eq!(spell_struct_layouts(&plain, &plain_text).unwrap().0, plain_text);
    }

    #[test]
    fn a_layout_difference_is_an_error() {
        let ir = sphere_module();
        let raw = written(&ir);
        let (_, names) = spell_struct_layouts(&ir, &raw).unwrap();
        // The text as naga writes it: every member after `c` moves.
        let unspelled = naga::front::wgsl::parse_str(&raw).unwrap();
        let e = check_layouts(&ir, &unspelled, &names, &[]).unwrap_err();
        assert!(e.contains("`S.r` is at byte 16 in the IR and at 12 in the WGSL"), "{e}");
        // The host's layout is compared with the text, not with the IR.
        let (text, _) = spell_struct_layouts(&ir, &raw).unwrap();
        let parsed = naga::front::wgsl::parse_str(&text).unwrap();
        let e = check_layouts(&ir, &parsed, &names, &[host(&ir, 12)]).unwrap_err();
        assert!(e.contains("`S.r` is at byte 12 on the host and at 16 in the WGSL"), "{e}");
        // The buffer's array (its stride) is compared as well.
        let other = naga::front::wgsl::parse_str(
            "struct S { @size(16) c: vec3<f32>, r: f32, p: u32, q: u32, w: vec4<f32> }\n\
             @group(0) @binding(0) var<storage, read_write> s: array<S>;",
        )
        .unwrap();
        let e = check_layouts(&ir, &other, &[], &[]).unwrap_err();
        assert!(e.contains("`s`"), "{e}");
    }
}
