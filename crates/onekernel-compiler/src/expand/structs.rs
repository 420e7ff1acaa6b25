//! A struct of a `#[onekernel::kernels]` module that kernels use: it gets
//! `#[repr(C)]`, `Clone` and `Copy`, `bytemuck::Pod` and `Zeroable`
//! (derived through the runtime's re-export, so the user's crate needs no
//! `bytemuck` of its own), and `Element` with its WGSL layout, so that
//! `Buffer<Particle>` and a `Particle` scalar argument work. The layout
//! was checked to have no padding (`parse::items`); compile-time asserts
//! check it against rustc's own layout as well, on every target.

use crate::types::{Ty, TypeTable};
use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

/// The struct with what kernels need of it; unchanged when `ty` is None
/// (a host-only struct).
pub fn expand_struct(item: &syn::ItemStruct, ty: Option<Ty>, table: &TypeTable) -> TokenStream {
    let Some(ty) = ty else { return quote!(#item) };
    let (Some((size, align)), Some(offsets), Some((name, fields))) =
        (table.wgsl_layout(ty), table.struct_offsets(ty), table.as_struct(ty))
    else {
        return quote!(#item);
    };
    let k = super::krate();
    let mut item = item.clone();
    let has_repr_c = item.attrs.iter().any(|a| {
        a.path().is_ident("repr")
            && a.parse_args_with(syn::punctuated::Punctuated::<syn::Meta, syn::Token![,]>::parse_terminated)
                .is_ok_and(|m| m.iter().any(|m| m.path().is_ident("C")))
    });
    let mut added: Vec<syn::Attribute> = Vec::new();
    if !has_repr_c {
        added.push(syn::parse_quote!(#[repr(C)]));
    }
    added.extend(pod_derives(&item, &k));
    item.attrs.splice(0..0, added);
    let ident = &item.ident;
    let asserts = fields.iter().zip(&offsets).zip(item_fields(&item)).map(|(((field, _), at), f)| {
        let field_ident = syn::Ident::new(field, f.span());
        let msg = format!("`{name}.{field}` is not at byte {at}, where the GPU reads it");
        quote_spanned!(f.span()=> ::core::assert!(::core::mem::offset_of!(#ident, #field_ident) == #at as usize, #msg);)
    });
    let size_msg = format!("`{name}` is not {size} bytes, as the GPU lays it out");
    let align_msg = format!("`{name}` is aligned to more than the GPU's {align} bytes");
    quote! {
        #item

        impl #k::Element for #ident {
            const TYPE: #k::DataType =
                #k::DataType::Struct { name: #k::Cow::Borrowed(#name), size: #size, align: #align };
        }

        // Rust's layout is the GPU's (checked by rustc, for this target).
        const _: () = {
            #(#asserts)*
            ::core::assert!(::core::mem::size_of::<#ident>() == #size as usize, #size_msg);
            ::core::assert!(::core::mem::align_of::<#ident>() <= #align as usize, #align_msg);
        };
    }
}

/// The derives that make `item` a `Pod` through the runtime's re-export of
/// bytemuck (`k` is the facade's path): `Clone` and `Copy` where the user
/// did not derive them, `Pod` and `Zeroable`, and bytemuck's crate path.
fn pod_derives(item: &syn::ItemStruct, k: &TokenStream) -> Vec<syn::Attribute> {
    let derived = |t: &str| {
        item.attrs.iter().any(|a| {
            a.path().is_ident("derive")
                && a.parse_args_with(syn::punctuated::Punctuated::<syn::Path, syn::Token![,]>::parse_terminated)
                    .is_ok_and(|ps| ps.iter().any(|p| p.segments.last().is_some_and(|s| s.ident == t)))
        })
    };
    let mut added: Vec<syn::Attribute> = Vec::new();
    if !derived("Clone") {
        added.push(syn::parse_quote!(#[derive(::core::clone::Clone)]));
    }
    if !derived("Copy") {
        added.push(syn::parse_quote!(#[derive(::core::marker::Copy)]));
    }
    let bytemuck_path = format!("{}::bytemuck", k.to_string().replace(' ', ""));
    added.push(syn::parse_quote!(#[derive(#k::bytemuck::Pod, #k::bytemuck::Zeroable)]));
    added.push(syn::parse_quote!(#[bytemuck(crate = #bytemuck_path)]));
    added
}

fn item_fields(item: &syn::ItemStruct) -> Vec<&syn::Field> {
    item.fields.iter().collect()
}

/// Whether a field is a padding member: its name starts with `_pad` (the
/// names the layout check's help suggests: `_pad1_0: u32`, `_pad2: [u32; 3]`).
/// The constructor [`expand_struct_api`] emits fills them with zeros.
pub fn is_padding_member(name: &str) -> bool {
    name.starts_with("_pad")
}

/// What a kernel struct offers the host besides its layout: `S::new(..)`,
/// taking the fields that are not padding members in order and filling the
/// padding members with zeros, and `Default` (all zeros: the struct is
/// `Zeroable`). Either is left out where the module defines it itself
/// (`has_new`: an inherent `fn new`; `has_default`: `Default` derived or
/// implemented).
pub fn expand_struct_api(item: &syn::ItemStruct, has_new: bool, has_default: bool) -> TokenStream {
    let syn::Fields::Named(named) = &item.fields else { return TokenStream::new() };
    let k = super::krate();
    let (ident, vis) = (&item.ident, &item.vis);
    let derives_default = item.attrs.iter().any(|a| {
        a.path().is_ident("derive")
            && a.parse_args_with(syn::punctuated::Punctuated::<syn::Path, syn::Token![,]>::parse_terminated)
                .is_ok_and(|ps| ps.iter().any(|p| p.segments.last().is_some_and(|s| s.ident == "Default")))
    });
    let mut out = TokenStream::new();
    if !has_new {
        let (mut params, mut inits) = (Vec::new(), Vec::new());
        for f in &named.named {
            let Some(name) = &f.ident else { continue };
            let ty = &f.ty;
            if is_padding_member(&name.to_string()) {
                inits.push(quote!(#name: #k::bytemuck::Zeroable::zeroed()));
            } else {
                params.push(quote!(#name: #ty));
                inits.push(quote!(#name));
            }
        }
        let doc = format!(
            "A `{ident}` from its fields in order, leaving out the padding members (`_pad..`), which are zero."
        );
        out.extend(quote! {
            impl #ident {
                #[doc = #doc]
                #[allow(clippy::too_many_arguments, dead_code)]
                #[inline]
                #vis fn new(#(#params),*) -> Self {
                    #ident { #(#inits),* }
                }
            }
        });
    }
    if !has_default && !derives_default {
        out.extend(quote! {
            /// All zeros (padding members included).
            impl ::core::default::Default for #ident {
                #[inline]
                fn default() -> Self {
                    #k::bytemuck::Zeroable::zeroed()
                }
            }
        });
    }
    out
}

/// A struct kernels use that was rejected (its layout has padding, or a
/// field cannot be shared with the GPU), with its errors reported at its
/// members: a stand-in that makes its uses on the host (`Buffer<S>`, a
/// scalar argument) add no errors of their own. It is `#[repr(C, packed(4))]`
/// so that deriving `Pod` cannot fail on padding, and its `Element` type is
/// never used: the module does not compile. `None` when a field's type may
/// not be `Pod` (deriving it would add an error at that field).
pub fn expand_rejected_struct(item: &syn::ItemStruct) -> Option<TokenStream> {
    let syn::Fields::Named(named) = &item.fields else { return None };
    if !item.generics.params.is_empty() || !named.named.iter().all(|f| pod_type(&f.ty)) {
        return None;
    }
    let k = super::krate();
    let mut item = item.clone();
    let mut added: Vec<syn::Attribute> = vec![syn::parse_quote!(#[repr(C, packed(4))])];
    added.extend(pod_derives(&item, &k));
    item.attrs.retain(|a| !a.path().is_ident("repr"));
    item.attrs.splice(0..0, added);
    let ident = &item.ident;
    let name = ident.to_string();
    Some(quote! {
        #item

        impl #k::Element for #ident {
            const TYPE: #k::DataType = #k::DataType::Struct {
                name: #k::Cow::Borrowed(#name),
                size: ::core::mem::size_of::<#ident>() as u32,
                align: 1,
            };
        }
    })
}

/// Whether a field type is one that is certainly `Pod`: a kernel scalar
/// (`bool` excepted), a glam or `f16` vector, or an array of them.
fn pod_type(ty: &syn::Type) -> bool {
    match ty {
        syn::Type::Paren(p) => pod_type(&p.elem),
        syn::Type::Group(g) => pod_type(&g.elem),
        syn::Type::Array(a) => pod_type(&a.elem),
        syn::Type::Path(p) if p.qself.is_none() => p.path.segments.last().is_some_and(|s| {
            s.arguments.is_empty()
                && matches!(
                    s.ident.to_string().as_str(),
                    "f32"
                        | "i32"
                        | "u32"
                        | "f64"
                        | "i64"
                        | "u64"
                        | "usize"
                        | "isize"
                        | "f16"
                        | "Vec2"
                        | "Vec3"
                        | "Vec3A"
                        | "Vec4"
                        | "IVec2"
                        | "IVec3"
                        | "IVec4"
                        | "UVec2"
                        | "UVec3"
                        | "UVec4"
                        | "DVec2"
                        | "DVec3"
                        | "DVec4"
                        | "F16Vec2"
                        | "F16Vec4"
                )
        }),
        _ => false,
    }
}
