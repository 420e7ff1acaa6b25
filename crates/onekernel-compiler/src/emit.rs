//! Validation and the back ends: naga module → checked module, WGSL text
//! and SPIR-V words.

use crate::diagnostic::Diagnostic;
use naga::back::spv;
use naga::valid::{Capabilities, ValidationFlags, Validator};

/// Validates `module` as wgpu will on a device with `f16`, `f64`, 64-bit
/// integers and subgroups ([`CAPABILITIES`]; the kernel's
/// `KernelInfo::features` say which of them it needs, and the runtime checks
/// that the device has them), then writes WGSL and SPIR-V. `spans` maps naga span ids back to the user's tokens,
/// so that a validation error lands on the Rust code that caused it.
pub fn emit(
    module: &naga::Module,
    spans: &[proc_macro2::Span],
    fallback: proc_macro2::Span,
) -> Result<(String, Vec<u32>), Vec<Diagnostic>> {
    let info = validate(module, spans, fallback)?;
    let wgsl = write_wgsl(module, &info, fallback)?;
    let options = spv::Options {
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
    };
    let entry = module.entry_points.first().map(|e| e.name.clone()).unwrap_or_default();
    let pipeline = spv::PipelineOptions { shader_stage: naga::ShaderStage::Compute, entry_point: entry };
    let words = spv::write_vec(module, &info, &options, Some(&pipeline))
        .map_err(|e| vec![Diagnostic::new(fallback, format!("internal compiler error: SPIR-V output failed: {e}"))])?;
    Ok((wgsl, words))
}

/// [`emit`] without the SPIR-V: for the checked modules, which the runtime
/// compiles from WGSL only.
pub fn emit_wgsl(
    module: &naga::Module,
    spans: &[proc_macro2::Span],
    fallback: proc_macro2::Span,
) -> Result<String, Vec<Diagnostic>> {
    let info = validate(module, spans, fallback)?;
    write_wgsl(module, &info, fallback)
}

fn write_wgsl(
    module: &naga::Module,
    info: &naga::valid::ModuleInfo,
    fallback: proc_macro2::Span,
) -> Result<String, Vec<Diagnostic>> {
    naga::back::wgsl::write_string(module, info, naga::back::wgsl::WriterFlags::empty())
        .map_err(|e| vec![Diagnostic::new(fallback, format!("internal compiler error: WGSL output failed: {e}"))])
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
