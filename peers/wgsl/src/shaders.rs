//! The WGSL kernels. All take their sizes from a uniform `P` of four `u32`s
//! and guard every global access against them, so that they are safe to
//! compile without wgpu's bounds checks. Each has the entry point `main`.
//!
//! The tiled SGEMM is written out by `sgemm_128` because "loops fully
//! unrolled, 64 scalar accumulators" is 64 `var`s and 8 × 64 `fma`s: Rust
//! string formatting writes the WGSL that a person would otherwise type.

use std::fmt::Write;

/// The uniform every kernel reads its sizes from.
const PARAMS: &str = "struct P { a: u32, b: u32, c: u32, d: u32 }\n";

/// `c = a + b`, one f32 per thread, 256 threads per workgroup, the 1-D grid
/// laid out as 2-D (at most 65535 workgroups per dimension). `p.a` = n.
pub fn vadd_f32() -> String {
    format!(
        "{PARAMS}
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
@group(0) @binding(3) var<uniform> p: P;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) l: u32) {{
    let i = (wg.y * nwg.x + wg.x) * 256u + l;
    if (i < p.a) {{
        c[i] = a[i] + b[i];
    }}
}}
"
    )
}

/// `c = a + b` on `vec4<f32>`: one vec4 (16 bytes) per thread. `p.a` = number
/// of vec4s (n / 4; n must be a multiple of 4).
pub fn vadd_vec4() -> String {
    format!(
        "{PARAMS}
@group(0) @binding(0) var<storage, read> a: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read> b: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> c: array<vec4<f32>>;
@group(0) @binding(3) var<uniform> p: P;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) l: u32) {{
    let i = (wg.y * nwg.x + wg.x) * 256u + l;
    if (i < p.a) {{
        c[i] = a[i] + b[i];
    }}
}}
"
    )
}

/// The naive matmul: 16×16 threads per workgroup, one output each, reading
/// A and B straight from global memory. `p = (m, n, k)`, row-major
/// A (m×k), B (k×n), C (m×n); grid `(ceil(n/16), ceil(m/16))`.
pub fn matmul_naive() -> String {
    format!(
        "{PARAMS}
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
@group(0) @binding(3) var<uniform> p: P;

@compute @workgroup_size(16, 16)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {{
    let row = g.y;
    let col = g.x;
    if (row >= p.a || col >= p.b) {{
        return;
    }}
    var acc = 0.0;
    for (var k = 0u; k < p.c; k++) {{
        acc = fma(a[row * p.c + k], b[k * p.b + col], acc);
    }}
    c[row * p.b + col] = acc;
}}
"
    )
}

/// The register-blocked SGEMM: a 128×128 tile of C per workgroup of 256
/// threads, K in steps of BK = 8 staged through workgroup memory, 8×8
/// outputs per thread held in 64 scalar `var`s, every inner loop unrolled.
///
/// Thread `t` (tx = t % 16, ty = t / 16) owns rows `{ty*4 + i, 64 + ty*4 + i}`
/// and columns `{tx*4 + j, 64 + tx*4 + j}` (i, j < 4) of the tile, so that its
/// reads of the staged tiles are two `vec4`s of A and two of B per k, and
/// neighbouring threads read neighbouring `vec4`s (no bank conflicts).
///
/// Staging: A's 128×8 tile is stored transposed (`As[k][m]`), B's 8×128 tile
/// as is (`Bs[k][n]`), both as 8 × 32 `vec4`s.
///
/// * `guarded = false`: the fast path, for m and n multiples of 128 and k a
///   multiple of 8. Each thread loads one `vec4` of A and one of B per step
///   and stores C as `vec4`s. Buffers are `array<vec4<f32>>`.
/// * `guarded = true`: any m, n, k. The same tiling with scalar loads (a
///   row of length k need not be 16-byte aligned), zero-filled outside the
///   matrices, and guarded scalar stores. Buffers are `array<f32>`.
///
/// `p = (m, n, k)`; grid `(ceil(n/128), ceil(m/128))`.
pub fn sgemm_128(guarded: bool) -> String {
    let mut s = String::new();
    let elem = if guarded { "f32" } else { "vec4<f32>" };
    let _ = write!(
        s,
        "{PARAMS}
@group(0) @binding(0) var<storage, read> a: array<{elem}>;
@group(0) @binding(1) var<storage, read> b: array<{elem}>;
@group(0) @binding(2) var<storage, read_write> c: array<{elem}>;
@group(0) @binding(3) var<uniform> p: P;

// Staged tiles, 8 (k) × 32 vec4s: As[k * 32 + m / 4] holds A[m][k] (transposed),
// Bs[k * 32 + n / 4] holds B[k][n].
var<workgroup> As: array<vec4<f32>, 256>;
var<workgroup> Bs: array<vec4<f32>, 256>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) t: u32) {{
    let m = p.a;
    let n = p.b;
    let k = p.c;
    let row0 = wg.y * 128u;
    let col0 = wg.x * 128u;
    let tx = t % 16u;
    let ty = t / 16u;
    // What this thread stages: 4 consecutive k of one row of A, and 4
    // consecutive columns of one row of B.
    let a_row = t >> 1u;
    let a_k = (t & 1u) * 4u;
    let b_k = t >> 5u;
    let b_col = (t & 31u) * 4u;
"
    );
    // The 64 accumulators, c_i_j for output row i and column j of the
    // thread's 8×8 block.
    for i in 0..8 {
        let _ = write!(s, "    var c_{i}_0 = 0.0; var c_{i}_1 = 0.0; var c_{i}_2 = 0.0; var c_{i}_3 = 0.0;");
        let _ = writeln!(s, " var c_{i}_4 = 0.0; var c_{i}_5 = 0.0; var c_{i}_6 = 0.0; var c_{i}_7 = 0.0;");
    }
    s.push_str("    for (var k0 = 0u; k0 < k; k0 += 8u) {\n");
    if guarded {
        // Scalar loads, zero outside A and B.
        s.push_str(
            "        let ar = row0 + a_row;
        var av = vec4<f32>(0.0);
        for (var q = 0u; q < 4u; q++) {
            let kk = k0 + a_k + q;
            if (ar < m && kk < k) {
                av[q] = a[ar * k + kk];
            }
        }
        let bk = k0 + b_k;
        var bv = vec4<f32>(0.0);
        for (var q = 0u; q < 4u; q++) {
            let bc = col0 + b_col + q;
            if (bk < k && bc < n) {
                bv[q] = b[bk * n + bc];
            }
        }
",
        );
    } else {
        // One vec4 of A (a row's 4 consecutive k) and one of B.
        s.push_str(
            "        let av = a[((row0 + a_row) * k + k0 + a_k) / 4u];
        let bv = b[((k0 + b_k) * n + col0 + b_col) / 4u];
",
        );
    }
    s.push_str(
        "        // A transposed into As: the vec4 spans 4 k rows of As.
        let am = a_row >> 2u;
        let ac = a_row & 3u;
        As[(a_k + 0u) * 32u + am][ac] = av.x;
        As[(a_k + 1u) * 32u + am][ac] = av.y;
        As[(a_k + 2u) * 32u + am][ac] = av.z;
        As[(a_k + 3u) * 32u + am][ac] = av.w;
        Bs[b_k * 32u + (b_col >> 2u)] = bv;
        workgroupBarrier();
",
    );
    // The unrolled k-step: 8 values of A and 8 of B into scalars, then the
    // 64 fmas.
    for kk in 0..8 {
        let _ = writeln!(s, "        {{");
        let _ = writeln!(s, "            let x0 = As[{} + ty]; let x1 = As[{} + ty];", kk * 32, kk * 32 + 16);
        let _ = writeln!(s, "            let y0 = Bs[{} + tx]; let y1 = Bs[{} + tx];", kk * 32, kk * 32 + 16);
        let comp = ["x", "y", "z", "w"];
        for i in 0..8 {
            let ai = format!("x{}.{}", i / 4, comp[i % 4]);
            let _ = write!(s, "           ");
            for j in 0..8 {
                let bj = format!("y{}.{}", j / 4, comp[j % 4]);
                let _ = write!(s, " c_{i}_{j} = fma({ai}, {bj}, c_{i}_{j});");
            }
            s.push('\n');
        }
        let _ = writeln!(s, "        }}");
    }
    s.push_str("        workgroupBarrier();\n    }\n");
    // Stores: output row r_i, column blocks tx*4 and 64 + tx*4.
    for i in 0..8 {
        let r = if i < 4 { format!("row0 + ty * 4u + {i}u") } else { format!("row0 + 64u + ty * 4u + {}u", i - 4) };
        let _ = writeln!(s, "    {{\n        let r = {r};");
        for half in 0..2 {
            let col = if half == 0 { "col0 + tx * 4u" } else { "col0 + 64u + tx * 4u" };
            let j0 = half * 4;
            if guarded {
                for q in 0..4 {
                    let _ = writeln!(
                        s,
                        "        if (r < m && {col} + {q}u < n) {{ c[r * n + {col} + {q}u] = c_{i}_{}; }}",
                        j0 + q
                    );
                }
            } else {
                let _ = writeln!(
                    s,
                    "        c[(r * n + {col}) / 4u] = vec4<f32>(c_{i}_{}, c_{i}_{}, c_{i}_{}, c_{i}_{});",
                    j0,
                    j0 + 1,
                    j0 + 2,
                    j0 + 3
                );
            }
        }
        let _ = writeln!(s, "    }}");
    }
    s.push_str("}\n");
    s
}

/// Common part of the row kernels: x and y are `rows × cols` f32 matrices
/// read as `vec4`s (cols must be a multiple of 4), one workgroup of 256
/// threads per row; `p = (rows, cols / 4)`.
const ROW_HEADER: &str = "
@group(0) @binding(0) var<storage, read> x: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> y: array<vec4<f32>>;
@group(0) @binding(2) var<uniform> p: P;
";

/// The online-softmax state: running maximum `m` and sum `s` of `exp(x - m)`;
/// `combine` merges two states. The initial maximum is -3.4e38 (WGSL has no
/// infinity literal); `exp` of a huge negative number is 0.
const SOFTMAX_HELPERS: &str = "
const LOWEST: f32 = -3.4e38;

fn combine(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> {
    let m = max(a.x, b.x);
    return vec2<f32>(m, a.y * exp(a.x - m) + b.y * exp(b.x - m));
}

// This thread's part of the row: online max and sum over its vec4s.
fn thread_state(base: u32, cols4: u32, l: u32) -> vec2<f32> {
    var st = vec2<f32>(LOWEST, 0.0);
    for (var i = l; i < cols4; i += 256u) {
        let v = x[base + i];
        let vm = max(max(v.x, v.y), max(v.z, v.w));
        let m = max(st.x, vm);
        let e = exp(v - vec4<f32>(m));
        st = vec2<f32>(m, st.y * exp(st.x - m) + e.x + e.y + e.z + e.w);
    }
    return st;
}

fn write_row(base: u32, cols4: u32, l: u32, st: vec2<f32>) {
    let inv = 1.0 / st.y;
    for (var i = l; i < cols4; i += 256u) {
        y[base + i] = exp(x[base + i] - vec4<f32>(st.x)) * inv;
    }
}
";

/// Row softmax, `y[r] = exp(x[r] - max) / sum(exp(x[r] - max))`: each thread
/// runs an online max/sum over its strided `vec4`s, the 256 states are merged
/// by a tree in workgroup memory, then the row is read again and written.
pub fn softmax_shared() -> String {
    format!(
        "{PARAMS}{ROW_HEADER}{SOFTMAX_HELPERS}
var<workgroup> red: array<vec2<f32>, 256>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) l: u32) {{
    let row = wg.x;
    let cols4 = p.b;
    let base = row * cols4;
    // rows = p.a = number of workgroups, so every workgroup has a row.
    red[l] = thread_state(base, cols4, l);
    workgroupBarrier();
    for (var stride = 128u; stride > 0u; stride >>= 1u) {{
        if (l < stride) {{
            red[l] = combine(red[l], red[l + stride]);
        }}
        workgroupBarrier();
    }}
    write_row(base, cols4, l, red[0]);
}}
"
    )
}

/// Row softmax with subgroup reductions: each subgroup merges its states with
/// `subgroupMax` / `subgroupAdd`, its first invocation writes one state per
/// subgroup to workgroup memory, and after one barrier every thread merges
/// those few states itself (no second barrier, no assumption about how many
/// subgroups there are).
pub fn softmax_subgroup() -> String {
    format!(
        "{PARAMS}{ROW_HEADER}{SOFTMAX_HELPERS}
var<workgroup> red: array<vec2<f32>, 256>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) l: u32,
        @builtin(subgroup_id) sg: u32, @builtin(num_subgroups) nsg: u32,
        @builtin(subgroup_invocation_id) lane: u32) {{
    let row = wg.x;
    let cols4 = p.b;
    let base = row * cols4;
    let st = thread_state(base, cols4, l);
    let m = subgroupMax(st.x);
    let s = subgroupAdd(st.y * exp(st.x - m));
    if (lane == 0u) {{
        red[sg] = vec2<f32>(m, s);
    }}
    workgroupBarrier();
    var total = red[0];
    for (var i = 1u; i < nsg; i++) {{
        total = combine(total, red[i]);
    }}
    write_row(base, cols4, l, total);
}}
"
    )
}

/// Layer norm helpers: per-thread (count, mean, M2) over its strided vec4s
/// (Chan et al.'s parallel variance), merged by `merge`; `normalize_row`
/// writes `(x - mean) * rsqrt(var + eps) * gamma + beta`, eps = 1e-5.
const LAYERNORM_HELPERS: &str = "
@group(0) @binding(3) var<storage, read> gamma: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read> beta: array<vec4<f32>>;

// (count, mean, M2), M2 = sum of squared deviations from the mean.
fn merge(a: vec3<f32>, b: vec3<f32>) -> vec3<f32> {
    let n = a.x + b.x;
    if (n == 0.0) {
        return vec3<f32>(0.0);
    }
    let d = b.y - a.y;
    return vec3<f32>(n, a.y + d * (b.x / n), a.z + b.z + d * d * (a.x * b.x / n));
}

fn thread_stats(base: u32, cols4: u32, l: u32) -> vec3<f32> {
    var st = vec3<f32>(0.0);
    for (var i = l; i < cols4; i += 256u) {
        let v = x[base + i];
        let mean4 = (v.x + v.y + v.z + v.w) * 0.25;
        let d = v - vec4<f32>(mean4);
        st = merge(st, vec3<f32>(4.0, mean4, dot(d, d)));
    }
    return st;
}

fn normalize_row(base: u32, cols4: u32, l: u32, st: vec3<f32>) {
    let mean = st.y;
    let rstd = inverseSqrt(st.z / st.x + 1e-5);
    for (var i = l; i < cols4; i += 256u) {
        y[base + i] = (x[base + i] - vec4<f32>(mean)) * rstd * gamma[i] + beta[i];
    }
}
";

/// Layer norm over each row (biased variance, eps = 1e-5, with weight and
/// bias as in `torch.nn.functional.layer_norm`): tree reduction of the
/// per-thread statistics in workgroup memory.
pub fn layernorm_shared() -> String {
    format!(
        "{PARAMS}{ROW_HEADER}{LAYERNORM_HELPERS}
var<workgroup> red: array<vec3<f32>, 256>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) l: u32) {{
    let cols4 = p.b;
    let base = wg.x * cols4;
    red[l] = thread_stats(base, cols4, l);
    workgroupBarrier();
    for (var stride = 128u; stride > 0u; stride >>= 1u) {{
        if (l < stride) {{
            red[l] = merge(red[l], red[l + stride]);
        }}
        workgroupBarrier();
    }}
    normalize_row(base, cols4, l, red[0]);
}}
"
    )
}

/// Layer norm with subgroup reductions. Within a subgroup the statistics are
/// merged exactly with sums: total count N = Σn, mean = Σ(n·mean)/N,
/// M2 = Σ(M2 + n·(mean_i − mean)²). Then, as in `softmax_subgroup`, one state
/// per subgroup goes through workgroup memory and every thread merges them.
pub fn layernorm_subgroup() -> String {
    format!(
        "{PARAMS}{ROW_HEADER}{LAYERNORM_HELPERS}
var<workgroup> red: array<vec3<f32>, 256>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) l: u32,
        @builtin(subgroup_id) sg: u32, @builtin(num_subgroups) nsg: u32,
        @builtin(subgroup_invocation_id) lane: u32) {{
    let cols4 = p.b;
    let base = wg.x * cols4;
    let st = thread_stats(base, cols4, l);
    let n = subgroupAdd(st.x);
    let mean = subgroupAdd(st.x * st.y) / max(n, 1.0);
    let d = st.y - mean;
    let m2 = subgroupAdd(st.z + st.x * d * d);
    if (lane == 0u) {{
        red[sg] = vec3<f32>(n, mean, m2);
    }}
    workgroupBarrier();
    var total = red[0];
    for (var i = 1u; i < nsg; i++) {{
        total = merge(total, red[i]);
    }}
    normalize_row(base, cols4, l, total);
}}
"
    )
}

/// The tiny kernel of the launch round trip: one thread writes `p.a + 1`.
pub fn tiny() -> String {
    format!(
        "{PARAMS}
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@group(0) @binding(1) var<uniform> p: P;

@compute @workgroup_size(1)
fn main() {{
    out[0] = p.a + 1u;
}}
"
    )
}

/// f16 GEMM with f32 accumulation on tensor cores (WGSL cooperative
/// matrices): 256×128 of C per workgroup, 8 subgroups of 4×4 accumulator
/// tiles, `vec4<f16>` staging (see the comment in `hgemm_coop.wgsl`).
/// `p = (m, n, k)`; grid `(n / 128, m / 256)`.
pub fn hgemm_coop() -> String {
    format!("enable f16;\nenable wgpu_cooperative_matrix;\n{PARAMS}{}", include_str!("hgemm_coop.wgsl"))
}
