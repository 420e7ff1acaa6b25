//! Random structs (issue 21): members of every kind a kernel shares with
//! the host (`f32`, `i32`, `u32`, `f16`, `Vec2`/`Vec3A`/`Vec4`,
//! `IVec*`/`UVec*`, `F16Vec*`, arrays of them, nested structs), in random
//! order, with the padding the compiler asks for, so that each struct is
//! laid out byte for byte as the host lays it out: its fields one after
//! the other. A kernel copies an array of them, reading and writing leaf
//! by leaf (lanes, elements, nested fields, some from other leaves of the
//! same type); the GPU's output bytes are compared leaf by leaf with the
//! same edits made on the host's bytes, and the struct offsets of the WGSL
//! the GPU compiles (parsed back by naga) with the host's.

use super::ast::Rng;
use std::fmt::Write;

/// The lane type of a scalar or vector.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lane {
    F32,
    I32,
    U32,
    F16,
}

impl Lane {
    fn rust(self) -> &'static str {
        match self {
            Lane::F32 => "f32",
            Lane::I32 => "i32",
            Lane::U32 => "u32",
            Lane::F16 => "f16",
        }
    }
    fn bytes(self) -> u32 {
        if self == Lane::F16 {
            2
        } else {
            4
        }
    }
}

/// The vectors a struct may hold: name, lanes' type, lanes, WGSL size and
/// alignment (a `Vec3A` is 16 bytes on the host).
const VECTORS: [(&str, Lane, u32, u32, u32); 9] = [
    ("Vec2", Lane::F32, 2, 8, 8),
    ("Vec3A", Lane::F32, 3, 16, 16),
    ("Vec4", Lane::F32, 4, 16, 16),
    ("IVec2", Lane::I32, 2, 8, 8),
    ("IVec4", Lane::I32, 4, 16, 16),
    ("UVec2", Lane::U32, 2, 8, 8),
    ("UVec4", Lane::U32, 4, 16, 16),
    ("F16Vec2", Lane::F16, 2, 4, 4),
    ("F16Vec4", Lane::F16, 4, 8, 8),
];

/// A member's type.
#[derive(Clone, Debug)]
pub enum FTy {
    Scalar(Lane),
    /// An index into [`VECTORS`].
    Vector(usize),
    Array(Box<FTy>, u32),
    /// An earlier struct of the module.
    Struct(usize),
}

/// One struct: its fields (padding included) and the size and alignment
/// the GPU gives it.
#[derive(Clone, Debug)]
pub struct Def {
    pub name: String,
    pub fields: Vec<(String, FTy)>,
    pub size: u32,
    pub align: u32,
}

/// A leaf of the top struct: a scalar or a vector, where it is on the host.
#[derive(Clone, Debug)]
struct Leaf {
    /// `.a.b[2].c`
    path: String,
    lane: Lane,
    /// 1 for a scalar.
    lanes: u32,
    /// The vector's index in [`VECTORS`].
    vector: Option<usize>,
    offset: u32,
}

/// One generated module: its structs (the last one is the buffers'
/// element) and the kernel's edits.
pub struct Case {
    pub defs: Vec<Def>,
    leaves: Vec<Leaf>,
    /// (destination lane, source lane, constant): each lane an offset and
    /// a type; the destination gets the source plus the constant (the
    /// source negated for `f16` lanes with constant 0).
    edits: Vec<Edit>,
    /// The kernel's statements.
    body: Vec<String>,
}

#[derive(Clone, Copy, Debug)]
struct Edit {
    dst: u32,
    src: u32,
    lane: Lane,
    add: i32,
}

fn size_align(defs: &[Def], t: &FTy) -> (u32, u32) {
    match t {
        FTy::Scalar(l) => (l.bytes(), l.bytes()),
        FTy::Vector(v) => (VECTORS[*v].3, VECTORS[*v].4),
        FTy::Array(e, n) => {
            let (s, a) = size_align(defs, e);
            (s.next_multiple_of(a) * n, a)
        }
        FTy::Struct(i) => (defs[*i].size, defs[*i].align),
    }
}

fn rust_type(defs: &[Def], t: &FTy) -> String {
    match t {
        FTy::Scalar(l) => l.rust().to_string(),
        FTy::Vector(v) => VECTORS[*v].0.to_string(),
        FTy::Array(e, n) => format!("[{}; {n}]", rust_type(defs, e)),
        FTy::Struct(i) => defs[*i].name.clone(),
    }
}

fn random_member(rng: &mut Rng, defs: &[Def], halves: bool, depth: u32) -> FTy {
    let lanes: &[Lane] =
        if halves { &[Lane::F32, Lane::I32, Lane::U32, Lane::F16] } else { &[Lane::F32, Lane::I32, Lane::U32] };
    match rng.below(100) {
        0..=29 => FTy::Scalar(lanes[rng.below(lanes.len())]),
        30..=69 => loop {
            let v = rng.below(VECTORS.len());
            if halves || VECTORS[v].1 != Lane::F16 {
                break FTy::Vector(v);
            }
        },
        70..=84 if depth < 2 => {
            FTy::Array(Box::new(random_member(rng, defs, halves, depth + 1)), 1 + rng.below(3) as u32)
        }
        _ if !defs.is_empty() => FTy::Struct(rng.below(defs.len())),
        _ => FTy::Vector(1), // a `Vec3A`
    }
}

/// The padding fields that fill `gap` bytes from `end` (a multiple of 2).
fn padding(fields: &mut Vec<(String, FTy)>, mut end: u32, gap: u32) {
    let mut left = gap;
    if end % 4 == 2 && left >= 2 {
        fields.push((format!("_pad{}", fields.len()), FTy::Scalar(Lane::F16)));
        end += 2;
        left -= 2;
    }
    while left >= 4 {
        fields.push((format!("_pad{}", fields.len()), FTy::Scalar(Lane::U32)));
        end += 4;
        left -= 4;
    }
    if left == 2 {
        fields.push((format!("_pad{}", fields.len()), FTy::Scalar(Lane::F16)));
    }
    let _ = end;
}

/// The structs of one seed: one to three, each nesting earlier ones; the
/// last (the buffers' element) at most 512 bytes, in whole words.
pub fn generate(seed: u64) -> Case {
    let mut rng = Rng::new(seed.wrapping_mul(0x2545_F491_4F6C_DD1D) ^ 0x57);
    loop {
        let case = generate_with(&mut rng);
        if case.top().size <= 512 {
            return case;
        }
    }
}

fn generate_with(rng: &mut Rng) -> Case {
    let halves = rng.chance(40);
    let mut defs: Vec<Def> = Vec::new();
    let count = 1 + rng.below(3);
    for s in 0..count {
        let mut types: Vec<FTy> = Vec::new();
        for _ in 0..1 + rng.below(5) {
            let t = random_member(rng, &defs, halves, 0);
            let vec3a = matches!(t, FTy::Vector(1));
            types.push(t);
            // What WGSL alone would pack into a `Vec3A`'s last 4 bytes.
            if vec3a && rng.chance(60) {
                let small = [FTy::Scalar(Lane::F32), FTy::Scalar(Lane::I32), FTy::Scalar(Lane::U32)];
                types.push(match rng.below(if halves { 5 } else { 3 }) {
                    3 => FTy::Scalar(Lane::F16),
                    4 => FTy::Vector(7), // `F16Vec2`
                    k => small[k].clone(),
                });
            }
        }
        // The buffers' struct nests every other one somewhere.
        if s == count - 1 {
            for j in 0..s {
                let t = if rng.chance(25) { FTy::Array(Box::new(FTy::Struct(j)), 2) } else { FTy::Struct(j) };
                types.insert(rng.below(types.len() + 1), t);
            }
        }
        let mut fields = Vec::new();
        let (mut end, mut align) = (0u32, 1u32);
        for t in types {
            let (size, a) = size_align(&defs, &t);
            padding(&mut fields, end, end.next_multiple_of(a) - end);
            end = end.next_multiple_of(a);
            fields.push((format!("m{}", fields.len()), t));
            end += size;
            align = align.max(a);
        }
        let mut size = end.next_multiple_of(align);
        if size % 4 != 0 {
            // `f16`s only: a last `f16` makes whole words.
            size += 2;
        }
        padding(&mut fields, end, size - end);
        defs.push(Def { name: format!("S{}", ["a", "b", "c"][s]), fields, size, align });
    }
    let top = defs.len() - 1;
    let mut leaves = Vec::new();
    collect_leaves(&defs, &FTy::Struct(top), String::new(), 0, &mut leaves);
    let (mut edits, mut body) = (Vec::new(), Vec::new());
    // Most leaves once, in order, and some more at random.
    let mut picks: Vec<usize> = (0..leaves.len()).filter(|_| rng.chance(70)).collect();
    for _ in 0..rng.below(4) {
        picks.push(rng.below(leaves.len()));
    }
    for p in picks {
        let d = &leaves[p];
        // A source leaf of the same type: usually the leaf itself.
        let same: Vec<&Leaf> = leaves.iter().filter(|l| l.lane == d.lane && l.vector == d.vector).collect();
        let s = if rng.chance(70) { d } else { same[rng.below(same.len())] };
        let constant = |rng: &mut Rng| 1 + rng.below(9) as i32;
        match d.vector {
            // The whole vector.
            Some(v) if rng.chance(50) => {
                let adds: Vec<i32> = (0..d.lanes).map(|_| constant(rng)).collect();
                let lits: Vec<String> = adds.iter().map(|a| literal(d.lane, *a)).collect();
                body.push(format!("o{} = s{} + {}::new({});", d.path, s.path, VECTORS[v].0, lits.join(", ")));
                for (k, a) in adds.iter().enumerate() {
                    let k = k as u32 * d.lane.bytes();
                    edits.push(Edit { dst: d.offset + k, src: s.offset + k, lane: d.lane, add: *a });
                }
            }
            // One lane, or a scalar.
            _ => {
                let (k, lane_name) = match d.vector {
                    Some(_) => {
                        let k = rng.below(d.lanes as usize);
                        (k as u32, format!(".{}", ["x", "y", "z", "w"][k]))
                    }
                    None => (0, String::new()),
                };
                let a = constant(rng);
                body.push(format!("o{}{lane_name} = s{}{lane_name} + {};", d.path, s.path, literal(d.lane, a)));
                let k = k * d.lane.bytes();
                edits.push(Edit { dst: d.offset + k, src: s.offset + k, lane: d.lane, add: a });
            }
        }
    }
    Case { defs, leaves, edits, body }
}

fn literal(lane: Lane, v: i32) -> String {
    match lane {
        Lane::F32 => format!("{v}.0"),
        Lane::I32 => format!("{v}"),
        Lane::U32 => format!("{v}u32"),
        Lane::F16 => format!("f16::from_f32({v}.0)"),
    }
}

fn collect_leaves(defs: &[Def], t: &FTy, path: String, offset: u32, out: &mut Vec<Leaf>) {
    match t {
        FTy::Scalar(l) => out.push(Leaf { path, lane: *l, lanes: 1, vector: None, offset }),
        FTy::Vector(v) => {
            let (_, lane, lanes, _, _) = VECTORS[*v];
            out.push(Leaf { path, lane, lanes, vector: Some(*v), offset })
        }
        FTy::Array(e, n) => {
            let (s, a) = size_align(defs, e);
            for k in 0..*n {
                collect_leaves(defs, e, format!("{path}[{k}]"), offset + k * s.next_multiple_of(a), out);
            }
        }
        FTy::Struct(i) => {
            let mut at = 0;
            for (name, f) in &defs[*i].fields {
                collect_leaves(defs, f, format!("{path}.{name}"), offset + at, out);
                at += size_align(defs, f).0;
            }
        }
    }
}

impl Case {
    /// The top struct: the buffers' element.
    pub fn top(&self) -> &Def {
        self.defs.last().unwrap()
    }

    /// The structs, as a `#[onekernel::kernels]` module writes them.
    pub fn structs_source(&self) -> Vec<String> {
        self.defs
            .iter()
            .map(|d| {
                let mut s = format!("pub struct {} {{\n", d.name);
                for (n, t) in &d.fields {
                    let _ = writeln!(s, "    pub {n}: {},", rust_type(&self.defs, t));
                }
                s.push('}');
                s
            })
            .collect()
    }

    /// The kernel: every invocation edits its element leaf by leaf.
    pub fn kernel_source(&self) -> String {
        let top = &self.top().name;
        let mut s = format!(
            "#[kernel(workgroup_size = 64)]\npub fn fuzz(a: &[{top}], out: &mut [{top}]) {{\n    let i = global_id().x;\n    if i < a.len() {{\n        let s = a[i];\n        let mut o = s;\n"
        );
        for line in &self.body {
            let _ = writeln!(s, "        {line}");
        }
        s.push_str("        out[i] = o;\n    }\n}\n");
        s
    }

    /// `n` elements of random small values, as the host lays them out.
    pub fn input(&self, n: usize, seed: u64) -> Vec<u8> {
        let mut rng = Rng::new(seed ^ 0xB17E5);
        let size = self.top().size as usize;
        let mut bytes = vec![0u8; n * size];
        for e in 0..n {
            for l in &self.leaves {
                for k in 0..l.lanes {
                    let at = e * size + (l.offset + k * l.lane.bytes()) as usize;
                    let v = if l.lane == Lane::U32 { rng.below(64) as i32 } else { rng.below(64) as i32 - 32 };
                    put(&mut bytes[at..], l.lane, v as f64);
                }
            }
        }
        bytes
    }

    /// What the kernel makes of `input`, computed on the host's bytes.
    pub fn expected(&self, input: &[u8]) -> Vec<u8> {
        let size = self.top().size as usize;
        let mut out = input.to_vec();
        for e in 0..input.len() / size {
            let (src, dst) = (&input[e * size..], e * size);
            for ed in &self.edits {
                let v = get(&src[ed.src as usize..], ed.lane) + f64::from(ed.add);
                put(&mut out[dst + ed.dst as usize..], ed.lane, v);
            }
        }
        out
    }

    /// The first leaf whose bytes differ, described.
    pub fn compare(&self, want: &[u8], got: &[u8]) -> Option<String> {
        let size = self.top().size as usize;
        if want.len() != got.len() {
            return Some(format!("{} bytes, want {}", got.len(), want.len()));
        }
        for e in 0..want.len() / size {
            for l in &self.leaves {
                let at = e * size + l.offset as usize;
                let bytes = (l.lanes * l.lane.bytes()) as usize;
                if want[at..at + bytes] != got[at..at + bytes] {
                    let lanes = |b: &[u8]| {
                        (0..l.lanes).map(|k| get(&b[(k * l.lane.bytes()) as usize..], l.lane)).collect::<Vec<_>>()
                    };
                    return Some(format!(
                        "element {e}, `{}` (byte {} of {size}): want {:?}, got {:?}",
                        l.path,
                        l.offset,
                        lanes(&want[at..]),
                        lanes(&got[at..])
                    ));
                }
            }
        }
        None
    }

    /// Each struct's field offsets as the host lays them out.
    pub fn host_offsets(&self, d: &Def) -> Vec<(String, u32)> {
        let mut at = 0;
        d.fields
            .iter()
            .map(|(n, t)| {
                let here = at;
                at += size_align(&self.defs, t).0;
                (n.clone(), here)
            })
            .collect()
    }
}

fn get(b: &[u8], lane: Lane) -> f64 {
    let w = |n: usize| b[..n].to_vec();
    match lane {
        Lane::F32 => f64::from(f32::from_le_bytes(w(4).try_into().unwrap())),
        Lane::I32 => f64::from(i32::from_le_bytes(w(4).try_into().unwrap())),
        Lane::U32 => f64::from(u32::from_le_bytes(w(4).try_into().unwrap())),
        Lane::F16 => {
            f64::from(onekernel::prelude::f16::from_bits(u16::from_le_bytes(w(2).try_into().unwrap())).to_f32())
        }
    }
}

/// Stores `v` (a small integer: exact in every lane type).
fn put(b: &mut [u8], lane: Lane, v: f64) {
    match lane {
        Lane::F32 => b[..4].copy_from_slice(&(v as f32).to_le_bytes()),
        Lane::I32 => b[..4].copy_from_slice(&(v as i32).to_le_bytes()),
        Lane::U32 => b[..4].copy_from_slice(&((v as i64) as u32).to_le_bytes()),
        Lane::F16 => b[..2].copy_from_slice(&onekernel::prelude::f16::from_f32(v as f32).to_bits().to_le_bytes()),
    }
}
