//! Specialisations of kernels with `override`s (const parameters,
//! `fn k<const N: u32>`, and constants of the kernel's Rust scope): one
//! `&'static KernelInfo` per kernel and value tuple, made at its first
//! launch and kept for the program's life, so that everything keyed by a
//! kernel's address (the pipeline cache, the bind group cache) keys a
//! specialisation the same way.
//!
//! A specialisation carries its values ([`Consts::values`]) and its
//! modules as the one specialisation route makes them
//! ([`onekernel_abi::specialised_wgsl`]: each `override` a `const` of its
//! value, since WGSL needs constants where a parameter sizes a local
//! array; the `#[unroll]` loops over parameters unrolled; local arrays
//! indexed by constants split into scalars; shared arrays of tile kernels
//! padded), and its workgroup size and shared memory for them
//! ([`KernelInfo::sizes_for`]); a tuple that cannot run is an error naming
//! the specialisation and the parameter, a module that does not validate
//! one naming the kernel and its values (never a silently slower module).
//! The CPU executor runs the body rustc monomorphised for the values.

use crate::error::LaunchError;
use onekernel_abi::{ConstType, Consts, Dim, KernelInfo, Module};
use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

/// A value a launch gives an override: the types a kernel's overrides may
/// have. Generated code names the type (`const_value::<usize>(BLOCK)`), so
/// rustc checks a constant of the kernel's scope against the type the
/// kernel's uses gave it.
pub trait ConstArg: Copy {
    /// The value as a pipeline constant holds it.
    fn to_f64(self) -> f64;
}

macro_rules! const_arg {
    ($($t:ty),*) => {$(
        impl ConstArg for $t {
            #[inline]
            fn to_f64(self) -> f64 {
                self as f64
            }
        }
    )*};
}
const_arg!(u32, i32, usize, f32);

impl ConstArg for bool {
    #[inline]
    fn to_f64(self) -> f64 {
        f64::from(u8::from(self))
    }
}

/// An integer of any Rust type: the value of a constant of a kernel's
/// scope whose uses in the kernel leave its type open (`0..BLOCK`).
pub trait ConstInt: Copy {
    /// The value as a pipeline constant holds it (large values inexactly:
    /// the specialisation rejects any outside the GPU type's range).
    fn to_f64(self) -> f64;
}

macro_rules! const_int {
    ($($t:ty),*) => {$(
        impl ConstInt for $t {
            #[inline]
            fn to_f64(self) -> f64 {
                self as f64
            }
        }
    )*};
}
const_int!(u8, u16, u32, u64, u128, usize, i8, i16, i32, i64, i128, isize);

/// `v`, an integer of any type, as the value of an `i32` override.
#[inline]
pub fn const_value_int<T: ConstInt>(v: T) -> f64 {
    v.to_f64()
}

/// `v` as the value of an override of type `T`.
#[inline]
pub fn const_value<T: ConstArg>(v: T) -> f64 {
    v.to_f64()
}

type Key = (usize, Vec<u64>);

fn cache() -> &'static Mutex<HashMap<Key, &'static KernelInfo>> {
    static CACHE: OnceLock<Mutex<HashMap<Key, &'static KernelInfo>>> = OnceLock::new();
    CACHE.get_or_init(Default::default)
}

/// The specialisation of `kernel` for `values` (one per override, in
/// order), made on first use.
pub fn specialise(kernel: &'static KernelInfo, values: &[f64]) -> Result<&'static KernelInfo, LaunchError> {
    let params = &kernel.consts.params;
    if values.len() != params.len() {
        return Err(LaunchError::InvalidKernel {
            kernel: &kernel.name,
            problem: format!("it has {} overrides but the launch gives {} values", params.len(), values.len()),
        });
    }
    let bits: Vec<u64> = values.iter().map(|v| v.to_bits()).collect();
    let key = (kernel as *const KernelInfo as usize, bits);
    // A panic while holding the lock cannot leave the map half-updated.
    if let Some(k) = cache().lock().unwrap_or_else(|p| p.into_inner()).get(&key) {
        return Ok(k);
    }
    let made = make(kernel, values, name(kernel, values, &key))?;
    let mut map = cache().lock().unwrap_or_else(|p| p.into_inner());
    // Two threads racing on one tuple both make it; the first insert wins
    // and is leaked, the other's copy is dropped.
    Ok(*map.entry(key.clone()).or_insert_with(|| Box::leak(Box::new(made))))
}

/// `N = 128, BM = 64`: the values, for names and messages.
pub fn describe(kernel: &KernelInfo, values: &[f64], generic_only: bool) -> String {
    kernel
        .consts
        .params
        .iter()
        .zip(values)
        .filter(|(p, _)| p.generic || !generic_only)
        .map(|(p, v)| format!("{} = {}", p.name, p.ty.display(*v)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The specialisation's name (`k::<N = 128>`), made once per kernel and
/// tuple and kept for the program's life, so that an error about a tuple
/// the device cannot run names it (and a tuple launched again in vain
/// leaks nothing more).
fn name(kernel: &'static KernelInfo, values: &[f64], key: &Key) -> &'static str {
    static NAMES: OnceLock<Mutex<HashMap<Key, &'static str>>> = OnceLock::new();
    let mut names = NAMES.get_or_init(Default::default).lock().unwrap_or_else(|p| p.into_inner());
    names.entry(key.clone()).or_insert_with(|| {
        let generic = describe(kernel, values, true);
        if generic.is_empty() {
            &kernel.name
        } else {
            Box::leak(format!("{}::<{generic}>", kernel.name).into_boxed_str())
        }
    })
}

fn make(kernel: &'static KernelInfo, values: &[f64], name: &'static str) -> Result<KernelInfo, LaunchError> {
    for (p, v) in kernel.consts.params.iter().zip(values) {
        let fits = match p.ty {
            ConstType::U32 | ConstType::Usize => v.fract() == 0.0 && (0.0..=f64::from(u32::MAX)).contains(v),
            ConstType::I32 => v.fract() == 0.0 && (f64::from(i32::MIN)..=f64::from(i32::MAX)).contains(v),
            ConstType::F32 => v.is_finite(),
            ConstType::Bool => true,
        };
        if !fits {
            return Err(LaunchError::InvalidArgument {
                kernel: name,
                arg: &p.name,
                problem: format!("`{}` = {v} does not fit the GPU's 32-bit `{}`", p.name, p.ty.rust_name()),
            });
        }
    }
    let mut info = kernel.clone();
    info.name = Cow::Borrowed(name);
    sizes(kernel, name, values, &mut info)?;
    // Every module as the one specialisation route makes it; the pipeline
    // is made from this text.
    let mut modules = Vec::with_capacity(kernel.modules.len());
    for m in kernel.modules.iter() {
        let wgsl = onekernel_abi::specialised_wgsl(&m.wgsl, &kernel.consts.params, values).map_err(|problem| {
            LaunchError::InvalidKernel {
                kernel: name,
                problem: format!(
                    "its {} module specialised for {} is not a valid module (a compiler bug): {problem}",
                    m.key,
                    describe(kernel, values, false)
                ),
            }
        })?;
        modules.push(Module { key: m.key, wgsl: Cow::Owned(wgsl), spirv: None });
    }
    info.modules = Cow::Owned(modules);
    info.consts = Consts { values: Cow::Owned(values.iter().map(|v| v.to_bits()).collect()), ..kernel.consts.clone() };
    Ok(info)
}

/// The shared memory and workgroup size of `kernel` for `values`, into
/// `info` ([`KernelInfo::sizes_for`]): Err names the parameter. The
/// device's limits are checked at each launch
/// ([`crate::plan::check_workgroup`], which names the parameters through
/// [`sized_by`]).
fn sizes(
    kernel: &'static KernelInfo,
    name: &'static str,
    values: &[f64],
    info: &mut KernelInfo,
) -> Result<(), LaunchError> {
    let (size, words) = kernel.sizes_for(values).map_err(|e| LaunchError::InvalidArgument {
        kernel: name,
        arg: kernel.consts.params.get(usize::from(e.param)).map_or("?", |p| &*p.name),
        problem: e.problem,
    })?;
    info.workgroup_size = size;
    info.workgroup_memory_words = words;
    Ok(())
}

/// The first of the parameters `indices` and all of them as text
/// (`` `BM`, `BK` ``), each once.
fn names(kernel: &'static KernelInfo, indices: impl Iterator<Item = u16>) -> (&'static str, String) {
    let mut seen: Vec<&'static str> = Vec::new();
    for i in indices {
        if let Some(p) = kernel.consts.params.get(usize::from(i))
            && !seen.contains(&&*p.name)
        {
            seen.push(&p.name);
        }
    }
    let list = seen.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ");
    (seen.first().copied().unwrap_or("?"), list)
}

/// What a specialisation's parameters size that a device limits: the
/// parameters of its shared arrays' lengths (`shared` true) or of its
/// workgroup size, as [`names`] gives them; None when none does.
pub(crate) fn sized_by(kernel: &'static KernelInfo, shared: bool) -> Option<(&'static str, String)> {
    let consts = &kernel.consts;
    let indices: Vec<u16> = if shared {
        consts
            .arrays
            .iter()
            .filter(|a| a.shared)
            .flat_map(|a| a.dims.iter().filter_map(|d| if let Dim::Param(i) = d { Some(*i) } else { None }))
            .collect()
    } else {
        consts.workgroup_size.iter().flatten().copied().collect()
    };
    if indices.is_empty() {
        return None;
    }
    Some(names(kernel, indices.into_iter()))
}
