//! Specialisations for the tools (`onekernel explain --const N=128`, the
//! playground): the values a person types for a kernel's `override`s
//! (its const parameters and the constants of its Rust scope, see
//! `KernelInfo::consts`), and its WGSL with those values in place, made
//! by the function the runtime specialises with at launch
//! ([`onekernel_abi::specialised_wgsl`]): what the tools show is what runs.

use onekernel_abi::{ConstParam, ConstType, Consts, KernelInfo, Module, ModuleKey};
use std::borrow::Cow;

/// `text` as a value of an override of type `ty`, as a pipeline constant
/// holds it; Err says what it should be.
pub fn parse_value(ty: ConstType, text: &str) -> Result<f64, String> {
    let t = text.trim().replace('_', "");
    let parsed = match ty {
        ConstType::U32 => t.parse::<u32>().map(f64::from).map_err(|_| "a `u32` (0 to 4294967295)"),
        ConstType::Usize => {
            t.parse::<u32>().map(f64::from).map_err(|_| "a `usize` the GPU holds in 32 bits (0 to 4294967295)")
        }
        ConstType::I32 => t.parse::<i32>().map(f64::from).map_err(|_| "an `i32` (-2147483648 to 2147483647)"),
        ConstType::F32 => match t.parse::<f32>() {
            Ok(v) if v.is_finite() => Ok(f64::from(v)),
            _ => Err("a finite `f32` (`0.5`, `1e-3`)"),
        },
        ConstType::Bool => match t.as_str() {
            "true" => Ok(1.0),
            "false" => Ok(0.0),
            _ => Err("a `bool` (`true` or `false`)"),
        },
    };
    parsed.map_err(|want| format!("`{}` is not {want}", text.trim()))
}

/// `N: u32, BLOCK: usize`: a kernel's overrides, for messages.
pub fn list(params: &[ConstParam]) -> String {
    params.iter().map(|p| format!("{}: {}", p.name, p.ty.rust_name())).collect::<Vec<_>>().join(", ")
}

/// The values of `params` (in their order) from `given` (`NAME`, `VALUE`
/// text pairs, each naming one of them): Err says which name is unknown
/// (listing the parameters), which value does not parse, or which
/// parameters have no value.
pub fn values(kernel: &str, params: &[ConstParam], given: &[(String, String)]) -> Result<Vec<f64>, String> {
    let mut values: Vec<Option<f64>> = vec![None; params.len()];
    for (name, text) in given {
        let Some(i) = params.iter().position(|p| p.name == name.as_str()) else {
            return Err(if params.is_empty() {
                format!("`{name}` is not a const parameter of `{kernel}`, which has none")
            } else {
                format!("`{name}` is not a const parameter of `{kernel}`; it has: {}", list(params))
            });
        };
        let v = parse_value(params[i].ty, text).map_err(|e| format!("`{name}` of `{kernel}`: {e}"))?;
        values[i] = Some(v);
    }
    let missing: Vec<String> =
        params.iter().zip(&values).filter(|(_, v)| v.is_none()).map(|(p, _)| format!("`{}`", p.name)).collect();
    if !missing.is_empty() {
        return Err(format!(
            "`{kernel}` needs a value for each of its const parameters ({}); missing: {}",
            list(params),
            missing.join(", ")
        ));
    }
    Ok(values.into_iter().flatten().collect())
}

/// `wgsl` (a kernel's module with overrides) specialised for `values`
/// (one per override of `params`, in order): the one specialisation route,
/// [`onekernel_abi::specialised_wgsl`], which the runtime launches too.
/// Each `@id(n) override NAME: T;` becomes `const NAME: T = value;`.
///
/// Why not naga's `process_overrides` written back as WGSL: that writes
/// each value where the override was used (`k < 3u`), so the names the
/// Rust code reads (`N`, `BLOCK`) vanish from the body and the text is
/// no longer line for line the one the unspecialised view shows. With the
/// declarations turned into constants, a learner sees the same module
/// with each parameter's value at the top: what the pipeline computes.
/// The text is parsed and validated again, so values naga refuses (an
/// array of zero elements) are refused here.
pub fn wgsl(wgsl: &str, params: &[ConstParam], values: &[f64]) -> Result<String, String> {
    onekernel_abi::specialised_wgsl(wgsl, params, values)
}

/// `text` with each declaration of `declarations` replaced (also the
/// explain view's text, whose WGSL lines are the module's).
pub fn substitute(text: &str, declarations: &[(String, String)]) -> String {
    declarations.iter().fold(text.to_string(), |t, (decl, constant)| t.replace(decl.as_str(), constant))
}

/// For the explain view: each override's declaration in `wgsl`
/// (`@id(1) override N: u32;`, found by `@id`:
/// [`onekernel_abi::override_decl`]) and the constant that replaces it
/// (`const N: u32 = 3u; // @id(1) override, specialised`), as the module's
/// specialisation writes it ([`onekernel_abi::wgsl_with_constants`]).
pub fn declarations(wgsl: &str, params: &[ConstParam], values: &[f64]) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    for (p, v) in params.iter().zip(values) {
        let Some((decl, ..)) = onekernel_abi::override_decl(wgsl, p.id) else {
            return Err(format!("the WGSL has no `@id({}) override` for `{}`", p.id, p.name));
        };
        let constant = onekernel_abi::wgsl_with_constants(decl, core::slice::from_ref(p), &[*v])?;
        out.push((decl.to_string(), constant));
    }
    Ok(out)
}

/// `info` as the tools show its specialisation for `values` (one per
/// override, in order): each module's WGSL with its overrides as
/// constants ([`wgsl`]), the plain module's SPIR-V
/// ([`crate::emit::specialised_spirv`]), the explain view likewise (under a
/// line naming the values), and [`KernelInfo::consts`] holding the values.
/// For showing only: the runtime launches the module with its overrides,
/// given the values as pipeline constants.
pub fn kernel(info: &KernelInfo, values: &[f64]) -> Result<KernelInfo, String> {
    let params = &info.consts.params;
    let mut modules = Vec::new();
    let (workgroup_size, words) = info.sizes_for(values).map_err(|e| e.problem)?;
    for m in info.modules.iter() {
        let text = wgsl(&m.wgsl, params, values)?;
        let spirv = if m.key == ModuleKey::PLAIN {
            Some(Cow::Owned(crate::emit::specialised_spirv(&m.wgsl, params, values)?))
        } else {
            m.spirv.clone()
        };
        modules.push(Module { key: m.key, wgsl: Cow::Owned(text), spirv });
    }
    let described: Vec<String> =
        params.iter().zip(values).map(|(p, v)| format!("{} = {}", p.name, p.ty.display(*v))).collect();
    let explain = format!(
        "// Specialised: {} (each `override` is a `const` of its value).\n{}",
        described.join(", "),
        substitute(&info.explain, &declarations(info.wgsl(), params, values)?)
    );
    Ok(KernelInfo {
        modules: Cow::Owned(modules),
        workgroup_size,
        workgroup_memory_words: words,
        explain: Cow::Owned(explain),
        consts: Consts { values: Cow::Owned(values.iter().map(|v| v.to_bits()).collect()), ..info.consts.clone() },
        ..info.clone()
    })
}
