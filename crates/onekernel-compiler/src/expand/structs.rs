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
    let derived = |t: &str| {
        item.attrs.iter().any(|a| {
            a.path().is_ident("derive")
                && a.parse_args_with(syn::punctuated::Punctuated::<syn::Path, syn::Token![,]>::parse_terminated)
                    .is_ok_and(|ps| ps.iter().any(|p| p.segments.last().is_some_and(|s| s.ident == t)))
        })
    };
    let mut added: Vec<syn::Attribute> = Vec::new();
    if !has_repr_c {
        added.push(syn::parse_quote!(#[repr(C)]));
    }
    if !derived("Clone") {
        added.push(syn::parse_quote!(#[derive(::core::clone::Clone)]));
    }
    if !derived("Copy") {
        added.push(syn::parse_quote!(#[derive(::core::marker::Copy)]));
    }
    let bytemuck_path = format!("{}::bytemuck", k.to_string().replace(' ', ""));
    added.push(syn::parse_quote!(#[derive(#k::bytemuck::Pod, #k::bytemuck::Zeroable)]));
    added.push(syn::parse_quote!(#[bytemuck(crate = #bytemuck_path)]));
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

fn item_fields(item: &syn::ItemStruct) -> Vec<&syn::Field> {
    item.fields.iter().collect()
}
