//! Differential fuzzing of the whole pipeline (#11): random well-typed
//! kernels (`ast.rs`) are compiled with `onekernel_compiler` (the library
//! the macro runs), launched on the GPU (lavapipe in CI), and compared with
//! a reference interpreter of the same tree (`interp.rs`) that implements
//! docs/semantics.md: integers bit for bit, floats within the documented
//! bounds. Kernels that meet a documented CPU/GPU difference are skipped
//! (counted, not compared). A mismatch is shrunk to the smallest kernel
//! that still shows it.
//!
//! `fixed.rs` ties the interpreter to the real CPU path: kernels generated
//! once from fixed seeds, written out as `#[kernel]` source, go through the
//! macro and the CPU executor and must equal the interpreter bit for bit.
//!
//! `ONEKERNEL_FUZZ_KERNELS=N` (default 300) and `ONEKERNEL_FUZZ_SEED=S`
//! (default 0) set the run; docs/testing.md has the long-run command.
//! `ONEKERNEL_FUZZ_WRITE_FIXED=1` rewrites `fixed.rs` from the generator;
//! `ONEKERNEL_FUZZ_DUMP=1` prints every compiled kernel and its WGSL;
//! `ONEKERNEL_FUZZ_CHECKED=1` also runs every array kernel's checked variant;
//! `ONEKERNEL_FUZZ_SHRINK=K` (default 3) shrinks only the first K mismatches.
//!
//! `structs.rs` generates random structs (members of every shareable type,
//! in random order, nested) and a kernel that edits them leaf by leaf: the
//! GPU must read and write the bytes the host lays out
//! (`ONEKERNEL_FUZZ_STRUCTS=N`, default 40, from `ONEKERNEL_FUZZ_SEED`).

mod ast;
#[rustfmt::skip]
mod fixed;
mod interp;
#[rustfmt::skip]
mod raw;
mod structs;

use ast::{Kernel, ACC, N};
use interp::{Inputs, Outputs, Skip};
use onekernel::prelude::*;
use onekernel_runtime::__private::{backend, gpu_arg, gpu_arg_mut, DeviceBackend, KernelInfo, ScalarArg};
use std::sync::OnceLock;

fn gpu() -> &'static Device {
    static GPU: OnceLock<Device> = OnceLock::new();
    GPU.get_or_init(|| {
        Device::gpu().unwrap_or_else(|e| panic!("the differential fuzzer needs a GPU adapter (see .ci/run): {e}"))
    })
}

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// The buffers of one launch.
pub struct Bufs {
    pub ai: Buffer<i32>,
    pub au: Buffer<u32>,
    pub af: Buffer<f32>,
    pub oi: Buffer<i32>,
    pub ou: Buffer<u32>,
    pub of: Buffer<f32>,
    pub acc: Buffer<u32>,
}

impl Bufs {
    pub fn new(d: &Device, x: &Inputs) -> Bufs {
        Bufs {
            ai: Buffer::from_slice(d, &x.ai).unwrap(),
            au: Buffer::from_slice(d, &x.au).unwrap(),
            af: Buffer::from_slice(d, &x.af).unwrap(),
            oi: Buffer::zeroed(d, N).unwrap(),
            ou: Buffer::zeroed(d, N).unwrap(),
            of: Buffer::zeroed(d, N).unwrap(),
            acc: Buffer::zeroed(d, ACC).unwrap(),
        }
    }

    pub fn read(&self) -> Outputs {
        Outputs {
            oi: self.oi.read().unwrap(),
            ou: self.ou.read().unwrap(),
            of: self.of.read().unwrap(),
            of_err: vec![],
            acc: self.acc.read().unwrap(),
        }
    }
}

/// Compiles kernel source as the macro would; the leaked description
/// lives as long as the runtime's pipeline cache.
fn compile(src: &str) -> Result<&'static KernelInfo, String> {
    let mut item: syn::ItemFn = syn::parse_str(src).map_err(|e| format!("syn: {e}"))?;
    let attr = item.attrs.remove(0);
    let args = match attr.meta {
        syn::Meta::List(l) => l.tokens,
        _ => proc_macro2::TokenStream::new(),
    };
    match onekernel_compiler::compile(args, &item, &[]) {
        Ok(c) => Ok(Box::leak(Box::new(c.info))),
        Err(diags) => Err(diags.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("\n")),
    }
}

/// Runs a compiled kernel on the GPU, its checked variant when `checked`
/// (every index compared with its length: a failed check is an error).
fn run_gpu(info: &'static KernelInfo, x: &Inputs, checked: bool) -> Result<Outputs, String> {
    let d = gpu();
    let DeviceBackend::Gpu(g) = backend(d) else { unreachable!() };
    let mut b = Bufs::new(d, x);
    let e = |e: onekernel::LaunchError| e.to_string();
    let args = [
        gpu_arg(&b.ai, info, 0, g).map_err(e)?,
        gpu_arg(&b.au, info, 1, g).map_err(e)?,
        gpu_arg(&b.af, info, 2, g).map_err(e)?,
        gpu_arg_mut(&mut b.oi, info, 3, g).map_err(e)?,
        gpu_arg_mut(&mut b.ou, info, 4, g).map_err(e)?,
        gpu_arg_mut(&mut b.of, info, 5, g).map_err(e)?,
        gpu_arg_mut(&mut b.acc, info, 6, g).map_err(e)?,
    ];
    g.dispatch_with(info, Grid::threads(N), &args, &[ScalarArg::from(x.si), ScalarArg::from(x.sf)], checked)
        .map_err(e)?;
    Ok(b.read())
}

/// The first difference between the reference and a run, if any: integers
/// and the accumulator bit for bit, floats within the reference's bound
/// (plus one rounding of the final store).
fn compare(want: &Outputs, got: &Outputs) -> Option<String> {
    for i in 0..N {
        if want.oi[i] != got.oi[i] {
            return Some(format!("oi[{i}]: want {}, got {}", want.oi[i], got.oi[i]));
        }
        if want.ou[i] != got.ou[i] {
            return Some(format!("ou[{i}]: want {}, got {}", want.ou[i], got.ou[i]));
        }
        let (w, g) = (want.of[i], got.of[i]);
        let bound = want.of_err.get(i).copied().unwrap_or(0.0) + (w.abs() as f64) * f64::from(f32::EPSILON);
        if !((w as f64 - g as f64).abs() <= bound || w.to_bits() == g.to_bits()) {
            return Some(format!("of[{i}]: want {w:?} (± {bound:e}), got {g:?}"));
        }
    }
    (want.acc != got.acc).then(|| format!("acc: want {:?}, got {:?}", want.acc, got.acc))
}

/// What one kernel does on the GPU against the reference.
enum Verdict {
    Skipped(Skip),
    Agrees,
    Rejected(String),
    Differs(String),
}

/// `checked` also runs the checked variant, which must compute the same
/// and report no failed check (every index is in range by construction).
fn check(k: &Kernel, x: &Inputs, checked: bool) -> Verdict {
    check_arrays(k, x, checked).0
}

/// [`check`], and what the compiler made of the kernel's local arrays
/// (when it compiled it).
fn check_arrays(k: &Kernel, x: &Inputs, checked: bool) -> (Verdict, Option<ArrayUse>) {
    let want = match interp::run(k, x) {
        Ok(w) => w,
        Err(s) => return (Verdict::Skipped(s), None),
    };
    let info = match compile(&ast::print(k, "fuzz")) {
        Ok(i) => i,
        Err(e) => return (Verdict::Rejected(e), None),
    };
    let arrays = ArrayUse::of(info.wgsl());
    if std::env::var_os("ONEKERNEL_FUZZ_DUMP").is_some() {
        eprintln!("=== {arrays:?}\n{}\n{}", ast::print(k, "fuzz"), info.wgsl());
    }
    let mut verdict = match run_gpu(info, x, false) {
        Ok(got) => compare(&want, &got).map_or(Verdict::Agrees, Verdict::Differs),
        Err(e) => Verdict::Differs(format!("launch failed: {e}")),
    };
    if checked && matches!(verdict, Verdict::Agrees) {
        verdict = match run_gpu(info, x, true) {
            Ok(got) => compare(&want, &got).map_or(Verdict::Agrees, |d| Verdict::Differs(format!("checked: {d}"))),
            Err(e) => Verdict::Differs(format!("checked launch failed: {e}")),
        };
    }
    (verdict, Some(arrays))
}

/// What `lower/split_arrays.rs` did to a kernel's local arrays (named
/// `v{id}` by the generator), read off the WGSL: an element variable
/// `var v3_0_: f32;` is a split array, a `var v3_: array<..>` (or a row
/// `var v3_1_: array<..>`) a kept one.
#[derive(Clone, Copy, Debug, Default)]
struct ArrayUse {
    split: bool,
    kept: bool,
}

impl ArrayUse {
    fn of(wgsl: &str) -> ArrayUse {
        let mut u = ArrayUse::default();
        for line in wgsl.lines() {
            let Some(rest) = line.trim_start().strip_prefix("var v") else { continue };
            let Some((name, ty)) = rest.split_once(':') else { continue };
            if ty.trim_start().starts_with("array<") {
                u.kept = true;
            } else if name.trim_end_matches('_').contains('_') {
                // `v3_0_`, not `v0_` (a scalar: naga adds `_` after a
                // trailing digit).
                u.split = true;
            }
        }
        u
    }
}

/// Shrinks `k` while `still(k)` holds: deletes statements, replaces
/// subexpressions by a literal or by a child of the same type.
fn shrink(mut k: Kernel, still: impl Fn(&Kernel) -> bool) -> Kernel {
    'outer: loop {
        let mut n = 0;
        while let Some(smaller) = shrink::mutate(&k, n) {
            if still(&smaller) {
                k = smaller;
                continue 'outer;
            }
            n += 1;
        }
        return k;
    }
}

mod shrink {
    use super::ast::*;

    /// The `target`-th one-step reduction of `k`, if there is one.
    pub fn mutate(k: &Kernel, target: usize) -> Option<Kernel> {
        let mut k = k.clone();
        let mut m = M { target, count: 0, done: false };
        if m.hit() && k.tile.is_some() {
            k.tile = None;
            return Some(k);
        }
        m.stmts(&mut k.before);
        if let Some(t) = k.tile.as_mut() {
            m.expr(t);
        }
        m.stmts(&mut k.after);
        m.expr(&mut k.out_i);
        m.expr(&mut k.out_u);
        m.expr(&mut k.out_f);
        m.done.then_some(k)
    }

    struct M {
        target: usize,
        count: usize,
        done: bool,
    }

    impl M {
        fn hit(&mut self) -> bool {
            let h = !self.done && self.count == self.target;
            self.count += 1;
            self.done |= h;
            h
        }

        fn stmts(&mut self, v: &mut Vec<Stmt>) {
            let mut i = 0;
            while i < v.len() && !self.done {
                if self.hit() {
                    v.remove(i);
                    return;
                }
                match &mut v[i] {
                    Stmt::Let(_, e) | Stmt::Assign(_, e) => self.expr(e),
                    Stmt::If(c, t, f) => {
                        self.expr(c);
                        self.stmts(t);
                        self.stmts(f);
                    }
                    Stmt::For(_, b, body) => {
                        self.expr(b);
                        self.stmts(body);
                    }
                    Stmt::Atomic(a, b) => {
                        self.expr(a);
                        self.expr(b);
                    }
                    Stmt::ArrLet(_, Init::Repeat(e)) => self.expr(e),
                    Stmt::ArrLet(_, Init::List(es)) => es.iter_mut().for_each(|e| self.expr(e)),
                    Stmt::ArrLet(_, Init::Copy(_)) | Stmt::ArrCopy(..) => {}
                    Stmt::ArrLet(_, Init::Row(_, i)) | Stmt::RowSet(_, i, _) => self.indices(std::slice::from_mut(i)),
                    Stmt::ArrSet(_, idx, _, e) => {
                        self.indices(idx);
                        self.expr(e);
                    }
                    Stmt::Unroll(_, _, body) => self.stmts(body),
                }
                i += 1;
            }
        }

        /// The run-time indices of an element.
        fn indices(&mut self, idx: &mut [Idx]) {
            for i in idx {
                if let Idx::Dyn(e, _) = i {
                    self.expr(e);
                }
            }
        }

        fn expr(&mut self, e: &mut Expr) {
            if self.done || matches!(e.kind, Kind::Lit(_)) {
                return;
            }
            if self.hit() {
                let one = if e.ty == Ty::F { 1.0f32.to_bits() } else { 1 };
                *e = Expr { ty: e.ty, kind: Kind::Lit(one) };
                return;
            }
            let ty = e.ty;
            let children: Vec<&mut Expr> = match &mut e.kind {
                Kind::Input(a) | Kind::Tile(a) | Kind::Un(_, a) | Kind::Cast(a) => vec![a],
                Kind::Elem(_, idx) => idx
                    .iter_mut()
                    .filter_map(|i| match i {
                        Idx::Dyn(a, _) => Some(&mut **a),
                        _ => None,
                    })
                    .collect(),
                Kind::Bin(_, a, b) => vec![a, b],
                Kind::Select(c, a, b) => vec![c, a, b],
                _ => vec![],
            };
            let mut replace = None;
            for c in children {
                if c.ty == ty && self.hit() {
                    replace = Some(c.clone());
                    break;
                }
                self.expr(c);
                if self.done {
                    return;
                }
            }
            if let Some(c) = replace {
                *e = c;
            }
        }
    }
}

/// Random kernels on the GPU against the reference interpreter.
#[test]
fn generated_kernels_agree_with_the_reference_on_the_gpu() {
    let count = env("ONEKERNEL_FUZZ_KERNELS", 300);
    let first = env("ONEKERNEL_FUZZ_SEED", 0);
    let start = std::time::Instant::now();
    let (mut agreed, mut skipped) = (0, std::collections::BTreeMap::<&str, u64>::new());
    let mut failures = Vec::new();
    // Compiled kernels with a split array, with a kept array.
    let (mut compiled, mut split, mut kept) = (0u64, 0u64, 0u64);
    // The checked variants (where the pass meets `checked_index_const`)
    // of a quarter of the kernels with a local array, of all of them with
    // `ONEKERNEL_FUZZ_CHECKED=1`.
    let all_checked = env("ONEKERNEL_FUZZ_CHECKED", 0) != 0;
    let shrink_first = env("ONEKERNEL_FUZZ_SHRINK", 3);
    for seed in first..first + count {
        let k = ast::generate(seed);
        let x = Inputs::new(seed);
        let checked = k.dims.iter().any(|d| !d.is_empty()) && (all_checked || seed % 4 == 0);
        let (verdict, arrays) = check_arrays(&k, &x, checked);
        if let Some(a) = arrays {
            compiled += 1;
            split += u64::from(a.split);
            kept += u64::from(a.kept);
        }
        match verdict {
            Verdict::Agrees => agreed += 1,
            Verdict::Skipped(Skip(why)) => *skipped.entry(why).or_default() += 1,
            Verdict::Rejected(e) => {
                failures.push(format!("seed {seed}: the compiler rejected\n{}\n{e}", ast::print(&k, "fuzz")))
            }
            // A compiler bug that hits many kernels: only the first few
            // are shrunk (each step compiles and launches: minutes for a
            // kernel), the rest listed.
            Verdict::Differs(first_diff) if failures.len() as u64 >= shrink_first => {
                failures.push(format!("seed {seed}: {first_diff} (not shrunk)"))
            }
            Verdict::Differs(first_diff) => {
                let small = shrink(k.clone(), |s| matches!(check(s, &x, checked), Verdict::Differs(_)));
                let diff = match check(&small, &x, checked) {
                    Verdict::Differs(d) => d,
                    _ => first_diff,
                };
                failures.push(format!("seed {seed}: {diff}\nsmallest kernel:\n{}", ast::print(&small, "fuzz")));
            }
        }
    }
    let skipped_total: u64 = skipped.values().sum();
    eprintln!(
        "differential: {count} kernels (seeds {first}..{}), {agreed} agree, {skipped_total} skipped {skipped:?}, {} failures, {:.1} s; \
         local arrays: of {compiled} compiled kernels, {split} with an array split into variables, {kept} with an array kept",
        first + count,
        failures.len(),
        start.elapsed().as_secs_f64()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    // The skips must not swallow the test.
    assert!(agreed * 2 >= count, "only {agreed} of {count} kernels were compared");
    // The array splitting pass is exercised both ways (a run of the
    // default size always has both; a tiny one may not).
    if count >= 100 {
        assert!(split > 0 && kept > 0, "of {compiled} kernels, {split} split an array and {kept} kept one");
    }
}

/// The seeds of `fixed.rs`: the first kernels the reference does not skip
/// and the compiler accepts.
fn fixed_seeds() -> Vec<u64> {
    (1000..)
        .filter(|&s| interp::run(&ast::generate(s), &Inputs::new(s)).is_ok())
        .filter(|&s| compile(&ast::print(&ast::generate(s), "k")).is_ok())
        .take(24)
        .collect()
}

fn fixed_source() -> String {
    let mut s = String::from(
        "//! Generated by `ONEKERNEL_FUZZ_WRITE_FIXED=1 cargo test --test differential fixed`: kernels of\n\
         //! the differential fuzzer, through the real macro and CPU executor. Do not edit.\n\
         #![allow(unused_mut, unused_variables, unused_assignments, unused_parens, unused_comparisons, arithmetic_overflow, unconditional_panic, clippy::all)]\n\n\
         use super::interp::{Inputs, Outputs};\n\
         use super::{ast::N, Bufs};\n\
         use onekernel::prelude::*;\n\
         use std::sync::atomic::{AtomicU32, Ordering};\n\n",
    );
    let seeds = fixed_seeds();
    for seed in &seeds {
        let name = format!("k{seed}");
        s.push_str(&format!("// seed {seed}\n"));
        s.push_str(&ast::print(&ast::generate(*seed), &name));
        s.push('\n');
    }
    s.push_str(
        "/// Each kernel's seed and a launch of it.\npub const ALL: &[(u64, fn(&Device, &Inputs) -> Outputs)] = &[\n",
    );
    for seed in &seeds {
        s.push_str(&format!(
            "    ({seed}, |d, x| {{\n        let mut b = Bufs::new(d, x);\n        k{seed}::launch(d, N, &b.ai, &b.au, &b.af, &mut b.oi, &mut b.ou, &mut b.of, &mut b.acc, x.si, x.sf).unwrap();\n        b.read()\n    }}),\n"
        ));
    }
    s.push_str("];\n");
    s
}

/// `fixed.rs` is what the generator makes today (so the two never drift),
/// rewritten with `ONEKERNEL_FUZZ_WRITE_FIXED=1`.
#[test]
fn fixed_kernels_are_current() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/differential/fixed.rs");
    let want = fixed_source();
    if std::env::var_os("ONEKERNEL_FUZZ_WRITE_FIXED").is_some() {
        std::fs::write(path, &want).unwrap();
    }
    assert!(
        std::fs::read_to_string(path).unwrap() == want,
        "fixed.rs is stale: rerun with ONEKERNEL_FUZZ_WRITE_FIXED=1"
    );
}

/// The generated kernels through `#[kernel]` on the CPU executor equal the
/// reference interpreter bit for bit: the interpreter is the language as
/// the CPU path runs it.
#[test]
fn fixed_kernels_on_the_cpu_executor_match_the_reference() {
    assert!(!fixed::ALL.is_empty(), "fixed.rs holds no kernels: run with ONEKERNEL_FUZZ_WRITE_FIXED=1");
    let d = Device::cpu();
    for (seed, launch) in fixed::ALL {
        let x = Inputs::new(*seed);
        let want = interp::run(&ast::generate(*seed), &x).expect("fixed kernels are not skipped");
        let got = launch(&d, &x);
        assert_eq!((&got.oi, &got.ou, &got.acc), (&want.oi, &want.ou, &want.acc), "seed {seed}");
        let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&got.of), bits(&want.of), "seed {seed}: floats");
    }
}

/// One random struct case: the compiler asks for exactly the generator's
/// padding, the WGSL it writes lays every struct out as the host does
/// (read back by naga), and the GPU edits the host's bytes leaf by leaf.
fn check_struct_case(case: &structs::Case, seed: u64) -> Result<(), String> {
    let items = onekernel_compiler::parse::ModuleItems {
        consts: Vec::new(),
        structs: case
            .structs_source()
            .iter()
            .map(|s| syn::parse_str(s).map_err(|e| format!("syn: {e}")))
            .collect::<Result<_, _>>()?,
    };
    let diags = |d: Vec<onekernel_compiler::Diagnostic>| d.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("\n");
    let (_, errors) = onekernel_compiler::parse::define_structs(&items, &mut Default::default());
    if !errors.is_empty() {
        return Err(format!("the compiler rejected the structs:\n{}", diags(errors)));
    }
    let mut item: syn::ItemFn = syn::parse_str(&case.kernel_source()).map_err(|e| format!("syn: {e}"))?;
    let syn::Meta::List(attr) = item.attrs.remove(0).meta else { unreachable!() };
    let kernel = onekernel_compiler::Kernel { attr: attr.tokens, item, module: items };
    let c = onekernel_compiler::compile_kernel(&kernel, &[], &Default::default())
        .map_err(|d| format!("the compiler rejected the kernel:\n{}", diags(d)))?
        .remove(0);
    // The GPU, on the host's bytes, in elements of plain words of the
    // struct's size (the launch's parameter types say so).
    let size = case.top().size;
    let mut info = c.info;
    for p in info.params.to_mut() {
        p.ty = onekernel::abi::DataType::Struct { name: "raw".into(), size, align: 4 };
    }
    let info: &'static KernelInfo = Box::leak(Box::new(info));
    let n = 100;
    let input = case.input(n, seed);
    let got = with_raw!(size / 4, run_raw, info, &input, n)?;
    let bytes = case.compare(&case.expected(&input), &got).map(|d| format!("the GPU's bytes differ: {d}"));
    match (bytes, wgsl_offsets(case, info.wgsl()).err()) {
        (None, None) => Ok(()),
        (a, b) => Err(a.into_iter().chain(b).collect::<Vec<_>>().join("\n")),
    }
}

/// The text the GPU compiles, parsed back: each struct's offsets and size
/// must be the host's.
fn wgsl_offsets(case: &structs::Case, wgsl: &str) -> Result<(), String> {
    let module = naga::front::wgsl::parse_str(wgsl).map_err(|e| e.emit_to_string(wgsl))?;
    for d in &case.defs {
        let Some((_, ty)) = module.types.iter().find(|(_, t)| t.name.as_deref() == Some(&d.name)) else {
            if d.name == case.top().name {
                return Err(format!("the WGSL declares no `{}`", d.name));
            }
            continue;
        };
        let naga::TypeInner::Struct { members, span } = &ty.inner else {
            return Err(format!("`{}` is no struct", d.name));
        };
        let wgsl: Vec<u32> = members.iter().map(|m| m.offset).collect();
        let host: Vec<u32> = case.host_offsets(d).iter().map(|(_, at)| *at).collect();
        if wgsl != host || *span != d.size {
            return Err(format!(
                "`{}` in the WGSL: offsets {wgsl:?}, {span} bytes; on the host: {host:?}, {} bytes",
                d.name, d.size
            ));
        }
    }
    Ok(())
}

/// Random structs through the compiler and the GPU (issue 21: a member
/// after a `Vec3A` was read from the wrong bytes).
#[test]
fn random_structs_keep_the_host_layout_on_the_gpu() {
    let count = env("ONEKERNEL_FUZZ_STRUCTS", 40);
    let first = env("ONEKERNEL_FUZZ_SEED", 0);
    let start = std::time::Instant::now();
    let mut failures = Vec::new();
    let (mut vec3a, mut nested) = (0, 0);
    for seed in first..first + count {
        let case = structs::generate(seed);
        let structs = case.structs_source().join("\n");
        vec3a += u64::from(structs.contains("Vec3A"));
        nested += u64::from(
            case.defs.len() > 1 && case.top().fields.iter().any(|(_, t)| format!("{t:?}").contains("Struct")),
        );
        if std::env::var_os("ONEKERNEL_FUZZ_DUMP").is_some() {
            eprintln!("=== seed {seed}\n{structs}\n{}", case.kernel_source());
        }
        if let Err(e) = check_struct_case(&case, seed) {
            failures.push(format!("seed {seed}: {e}\n{structs}\n{}", case.kernel_source()));
        }
    }
    eprintln!(
        "differential structs: {count} modules (seeds {first}..{}), {vec3a} with a Vec3A, {nested} nesting a struct, {} failures, {:.1} s",
        first + count,
        failures.len(),
        start.elapsed().as_secs_f64()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Runs a two-buffer kernel (`a`, `out`) on the GPU, the elements `R`
/// words holding `input`'s bytes.
fn run_raw<R: onekernel::Element>(info: &'static KernelInfo, input: &[u8], n: usize) -> Result<Vec<u8>, String> {
    let d = gpu();
    let DeviceBackend::Gpu(g) = backend(d) else { unreachable!() };
    let elems: Vec<R> = bytemuck::pod_collect_to_vec(input);
    let a = Buffer::from_slice(d, &elems).unwrap();
    let mut out = Buffer::<R>::zeroed(d, elems.len()).unwrap();
    let e = |e: onekernel::LaunchError| e.to_string();
    let args = [gpu_arg(&a, info, 0, g).map_err(e)?, gpu_arg_mut(&mut out, info, 1, g).map_err(e)?];
    g.dispatch_with(info, Grid::threads(n), &args, &[], false).map_err(e)?;
    Ok(bytemuck::cast_slice(&out.read().unwrap()).to_vec())
}
