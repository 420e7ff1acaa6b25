//! The arguments of `#[kernel(...)]`.
//!
//! ```text
//! #[kernel(workgroup_size = 256)]
//! #[kernel(workgroup_size = (16, 16))]
//! #[kernel(workgroup_size = (8, 8, 4))]
//! #[kernel(workgroup_size = 1024, max_workgroup_invocations = 1024)]
//! #[kernel(workgroup_size = 256, max_shared_bytes = 32768)]    // more shared memory
//! #[kernel(workgroup_size = 64, types = [f32, i32])]   // a generic kernel's types
//! ```

use crate::diagnostic::{Diagnostic, Diagnostics};
use crate::hir::ElemBound;
use crate::types::Ty;
use proc_macro2::{Span, TokenStream};
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Expr, Lit, MetaNameValue, Token};

/// The WebGPU default for `max_compute_invocations_per_workgroup`: the
/// largest workgroup every device accepts.
pub const DEFAULT_MAX_WORKGROUP_INVOCATIONS: u32 = 256;

/// The WebGPU default for `max_compute_workgroup_storage_size`: the shared
/// memory, in bytes, every device gives a workgroup.
pub const DEFAULT_MAX_SHARED_BYTES: u32 = 16384;

/// The checked arguments of one `#[kernel]` attribute.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelAttr {
    /// Threads per workgroup (block) along x, y and z; unused axes are 1.
    pub workgroup_size: [u32; 3],
    /// The axes a const parameter or a constant of the kernel's scope sets
    /// (`workgroup_size = BM`, `(BX, 4)`): its name and where, and 0 in
    /// `workgroup_size` there (the launch sets it).
    pub workgroup_names: [Option<SizeName>; 3],
    /// The largest workgroup the kernel may use: 256 unless the user asks
    /// for more (and then the launch checks the device supports it).
    pub max_workgroup_invocations: u32,
    /// The most shared memory the kernel may declare, in bytes: 16384
    /// unless the user asks for more (and then the launch checks the device
    /// has it).
    pub max_shared_bytes: u32,
    /// The types a generic kernel is compiled for, when `types = [..]`
    /// narrows its bound (each of the bound's types otherwise).
    pub types: Option<Vec<Ty>>,
}

/// An axis of `workgroup_size` written as a name (`BM`).
#[derive(Clone, Debug)]
pub struct SizeName {
    /// The name.
    pub name: String,
    /// Where.
    pub span: Span,
}

impl PartialEq for SizeName {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

impl Eq for SizeName {}

impl KernelAttr {
    /// Parses and checks the tokens inside `#[kernel(...)]`. `attr_span`
    /// points at the attribute itself, for errors about missing keys.
    pub fn parse(tokens: TokenStream, attr_span: Span) -> Result<KernelAttr, Vec<Diagnostic>> {
        Self::parse_for(tokens, attr_span, None)
    }

    /// [`KernelAttr::parse`] for a kernel generic over `bound` (None: not
    /// generic), which may narrow the types it is compiled for with
    /// `types = [f32, i32]`.
    pub fn parse_for(
        tokens: TokenStream,
        attr_span: Span,
        bound: Option<ElemBound>,
    ) -> Result<KernelAttr, Vec<Diagnostic>> {
        let mut diags = Diagnostics::default();
        let args = match Punctuated::<MetaNameValue, Token![,]>::parse_terminated.parse2(tokens) {
            Ok(args) => args,
            Err(e) => {
                return Err(vec![Diagnostic::new(e.span(), format!("malformed `#[kernel]` arguments: {e}"))
                    .help("write `#[kernel(workgroup_size = 256)]` or `#[kernel(workgroup_size = (16, 16))]`")])
            }
        };
        let mut size: Option<([u32; 3], Span)> = None;
        let mut names: [Option<SizeName>; 3] = Default::default();
        let mut max: Option<(u32, Span)> = None;
        let mut shared: Option<u32> = None;
        let mut types: Option<Vec<Ty>> = None;
        for arg in &args {
            let key = arg.path.get_ident().map(|i| i.to_string()).unwrap_or_default();
            match key.as_str() {
                "workgroup_size" => {
                    if size.is_some() {
                        diags.error(arg.path.span(), "duplicate `workgroup_size` argument");
                        continue;
                    }
                    if let Some(s) = parse_size(&arg.value, &mut names, &mut diags) {
                        size = Some((s, arg.value.span()));
                    }
                }
                "max_workgroup_invocations" => {
                    if max.is_some() {
                        diags.error(arg.path.span(), "duplicate `max_workgroup_invocations` argument");
                        continue;
                    }
                    if let Some(v) = parse_u32(&arg.value, &mut diags) {
                        max = Some((v, arg.value.span()));
                    }
                }
                "max_shared_bytes" => {
                    if shared.is_some() {
                        diags.error(arg.path.span(), "duplicate `max_shared_bytes` argument");
                        continue;
                    }
                    shared = parse_u32(&arg.value, &mut diags);
                }
                "types" => {
                    if types.is_some() {
                        diags.error(arg.path.span(), "duplicate `types` argument");
                        continue;
                    }
                    types = parse_types(&arg.value, bound, &mut diags);
                }
                _ => diags.push(
                    Diagnostic::new(
                        arg.path.span(),
                        format!("unknown `#[kernel]` argument `{}`", quote::ToTokens::to_token_stream(&arg.path)),
                    )
                    .help("the arguments are `workgroup_size`, `max_workgroup_invocations`, `max_shared_bytes` and, for a generic kernel, `types`"),
                ),
            }
        }
        let Some((workgroup_size, size_span)) = size else {
            if diags.is_empty() {
                diags.push(
                    Diagnostic::new(attr_span, "`#[kernel]` needs a workgroup size")
                        .help("write `#[kernel(workgroup_size = 256)]`; 64 to 256 threads per block suit most GPUs"),
                );
            }
            return Err(diags.into_vec());
        };
        let max_invocations = max.map(|(v, _)| v).unwrap_or(DEFAULT_MAX_WORKGROUP_INVOCATIONS);
        let product: u64 = workgroup_size.iter().map(|&v| v as u64).product();
        // A size the launch sets is checked at the launch.
        if product > max_invocations as u64 && names.iter().all(Option::is_none) {
            let d = Diagnostic::new(
                size_span,
                format!(
                    "a workgroup of {product} threads exceeds the limit of {max_invocations} threads per workgroup"
                ),
            );
            diags.push(if max.is_none() {
                d.help(format!(
                    "256 is what every WebGPU device supports; to target devices that allow more, add `max_workgroup_invocations = {product}`"
                ))
            } else {
                d.help("raise `max_workgroup_invocations` or shrink the workgroup")
            });
        }
        diags.finish(KernelAttr {
            workgroup_size,
            workgroup_names: names,
            max_workgroup_invocations: max_invocations,
            max_shared_bytes: shared.unwrap_or(DEFAULT_MAX_SHARED_BYTES),
            types,
        })
    }
}

/// `types = [f32, i32]`: some of the types of a generic kernel's bound, each
/// once, in the order written.
fn parse_types(expr: &Expr, bound: Option<ElemBound>, diags: &mut Diagnostics) -> Option<Vec<Ty>> {
    let Some(bound) = bound else {
        diags.push(
            Diagnostic::new(expr.span(), "`types` is for a generic kernel")
                .help("remove it, or make the kernel generic: `fn name<T: Num>(..)`"),
        );
        return None;
    };
    let Expr::Array(list) = strip(expr) else {
        diags.push(
            Diagnostic::new(expr.span(), "expected a list of types")
                .help("write `types = [f32, i32]`: the types of the bound to compile the kernel for"),
        );
        return None;
    };
    let allowed: Vec<String> = bound.types().iter().map(|t| format!("`{}`", t.rust_name())).collect();
    let mut out = Vec::new();
    for e in &list.elems {
        let ty = match strip(e) {
            Expr::Path(p) if p.qself.is_none() => {
                p.path.segments.last().and_then(|s| Ty::from_name(&s.ident.to_string()))
            }
            _ => None,
        };
        match ty {
            Some(t) if bound.types().contains(&t) && !out.contains(&t) => out.push(t),
            Some(t) if out.contains(&t) => diags.error(e.span(), format!("`{t}` is listed twice")),
            _ => diags.push(
                Diagnostic::new(
                    e.span(),
                    format!("`{}` is not a type of `{}`", crate::diagnostic::code(e), bound.name()),
                )
                .help(format!("the types of `{}` are {}", bound.name(), allowed.join(", "))),
            ),
        }
    }
    if list.elems.is_empty() {
        diags.push(
            Diagnostic::new(expr.span(), "a generic kernel needs at least one type")
                .help(format!("list some of {}, or remove `types` to compile for all of them", allowed.join(", "))),
        );
    }
    (!out.is_empty()).then_some(out)
}

/// Looks through the invisible groups of `macro_rules!` fragments.
fn strip(e: &Expr) -> &Expr {
    match e {
        Expr::Group(g) => strip(&g.expr),
        other => other,
    }
}

fn parse_size(expr: &Expr, names: &mut [Option<SizeName>; 3], diags: &mut Diagnostics) -> Option<[u32; 3]> {
    let elems: Vec<&Expr> = match strip(expr) {
        Expr::Tuple(t) => t.elems.iter().collect(),
        Expr::Array(a) => a.elems.iter().collect(),
        Expr::Paren(p) => vec![&*p.expr],
        other => vec![other],
    };
    if elems.is_empty() || elems.len() > 3 {
        diags.push(
            Diagnostic::new(
                expr.span(),
                format!("a workgroup size has one to three dimensions, found {}", elems.len()),
            )
            .help("write `workgroup_size = 256`, `(16, 16)` or `(8, 8, 4)`"),
        );
        return None;
    }
    let mut size = [1u32; 3];
    let mut ok = true;
    for (axis, e) in elems.into_iter().enumerate() {
        // A name: a const parameter or a constant of the kernel's scope,
        // whose value the launch gives (the compiler resolves it with the
        // body, `lib.rs`).
        if let Expr::Path(p) = strip(e) {
            if let (Some(ident), None) = (p.path.get_ident(), &p.qself) {
                names[axis] = Some(SizeName { name: ident.to_string(), span: ident.span() });
                size[axis] = 0;
                continue;
            }
        }
        match parse_u32(e, diags) {
            Some(0) => {
                diags.error(e.span(), "a workgroup size must be at least 1 in every dimension");
                ok = false;
            }
            Some(v) => size[axis] = v,
            None => ok = false,
        }
    }
    ok.then_some(size)
}

fn parse_u32(expr: &Expr, diags: &mut Diagnostics) -> Option<u32> {
    if let Expr::Lit(lit) = strip(expr) {
        if let Lit::Int(int) = &lit.lit {
            return match int.base10_parse::<u32>() {
                Ok(v) => Some(v),
                Err(_) => {
                    diags.error(int.span(), "this number does not fit in a u32");
                    None
                }
            };
        }
    }
    diags.push(
        Diagnostic::new(expr.span(), "expected an integer literal").help(
            "write a number such as `256`, or the name of a const parameter or constant (`workgroup_size = BLOCK`)",
        ),
    );
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    fn parse(t: TokenStream) -> Result<KernelAttr, Vec<Diagnostic>> {
        KernelAttr::parse(t, Span::call_site())
    }

    #[test]
    fn sizes_in_one_to_three_dimensions() {
        assert_eq!(parse(quote!(workgroup_size = 64)).unwrap().workgroup_size, [64, 1, 1]);
        assert_eq!(parse(quote!(workgroup_size = (16, 16))).unwrap().workgroup_size, [16, 16, 1]);
        assert_eq!(parse(quote!(workgroup_size = [4, 4, 4])).unwrap().workgroup_size, [4, 4, 4]);
    }

    #[test]
    fn rejects_bad_sizes() {
        assert!(parse(quote!()).is_err());
        assert!(parse(quote!(workgroup_size = 0)).is_err());
        assert!(parse(quote!(workgroup_size = 512)).is_err());
        assert_eq!(parse(quote!(workgroup_size = (N, 4))).unwrap().workgroup_size, [0, 4, 1]);
        assert!(parse(quote!(workgroup_size = N + 1)).is_err());
        assert!(parse(quote!(workgroup_size = 64, workgroup_size = 64)).is_err());
        assert!(parse(quote!(workgroup_size = 64, colour = 1)).is_err());
        assert_eq!(
            parse(quote!(workgroup_size = 512, max_workgroup_invocations = 1024)).unwrap().max_workgroup_invocations,
            1024
        );
    }

    #[test]
    fn a_generic_kernels_types() {
        let parse_num = |t| KernelAttr::parse_for(t, Span::call_site(), Some(ElemBound::Num));
        assert_eq!(parse_num(quote!(workgroup_size = 64)).unwrap().types, None);
        assert_eq!(
            parse_num(quote!(workgroup_size = 64, types = [i32, half::f16])).unwrap().types,
            Some(vec![Ty::I32, Ty::F16])
        );
        assert!(parse_num(quote!(workgroup_size = 64, types = [])).is_err());
        assert!(parse_num(quote!(workgroup_size = 64, types = [f32, f32])).is_err());
        assert!(parse_num(quote!(workgroup_size = 64, types = [u8])).is_err());
        assert!(parse_num(quote!(workgroup_size = 64, types = f32)).is_err());
        let float = KernelAttr::parse_for(
            quote!(workgroup_size = 64, types = [i32]),
            Span::call_site(),
            Some(ElemBound::Float),
        );
        assert_eq!(float.unwrap_err().len(), 1);
        assert!(parse(quote!(workgroup_size = 64, types = [f32])).is_err());
    }
}
