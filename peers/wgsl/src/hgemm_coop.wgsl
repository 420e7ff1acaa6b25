// f16 GEMM with f32 accumulation on tensor cores (cooperative matrices),
// C = A·B for row-major A (m×k), B (k×n), C (m×n); m a multiple of 256,
// n of 128, k of 32. p = (m, n, k); grid (n / 128, m / 256).
//
// Block: 256 threads = 8 subgroups in a 4×2 grid, a 256×128 square of C;
// each subgroup owns 64×64 of it: 4×4 accumulator tiles of 16×16 (acc_i_j).
// Per step of 32 along k the block stages A's 256×32 and B's 32×128 in
// workgroup memory as vec4<f16> (8-byte) copies, rows padded by 2 vectors
// (16 bytes) so that a tile load's 16 rows fall in different banks; the
// next step's vectors are loaded into registers (ra*, rb*) while the tensor
// cores work on this one. Tiles are loaded from the vec4<f16> arrays, with
// offsets and strides counted in vectors.
@group(0) @binding(0) var<storage> a: array<vec4<f16>>;
@group(0) @binding(1) var<storage> b: array<vec4<f16>>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
// p in a storage buffer, not a uniform one: on the H200 (Vulkan, driver
// 580) this same shader ran at 174 TFLOP/s with `var<uniform> p` and at
// 259 with `var<storage, read> p`.
@group(0) @binding(3) var<storage, read> p: P;
var<workgroup> a_s: array<vec4<f16>, 2560>;
var<workgroup> b_s: array<vec4<f16>, 1088>;
@compute @workgroup_size(256)
fn main(@builtin(local_invocation_index) t: u32, @builtin(workgroup_id) wg: vec3<u32>) {
    let n = p.b; let k = p.c;
    let kv = k / 4u; let nv = n / 4u;
    let sg = t / 32u;
    let wr = sg / 2u * 64u; let wc = sg % 2u * 64u;
    let row0 = wg.y * 256u; let col0 = wg.x * 128u;
    var acc_0_0 = coop_mat16x16<f32,C>();
    var acc_0_1 = coop_mat16x16<f32,C>();
    var acc_0_2 = coop_mat16x16<f32,C>();
    var acc_0_3 = coop_mat16x16<f32,C>();
    var acc_1_0 = coop_mat16x16<f32,C>();
    var acc_1_1 = coop_mat16x16<f32,C>();
    var acc_1_2 = coop_mat16x16<f32,C>();
    var acc_1_3 = coop_mat16x16<f32,C>();
    var acc_2_0 = coop_mat16x16<f32,C>();
    var acc_2_1 = coop_mat16x16<f32,C>();
    var acc_2_2 = coop_mat16x16<f32,C>();
    var acc_2_3 = coop_mat16x16<f32,C>();
    var acc_3_0 = coop_mat16x16<f32,C>();
    var acc_3_1 = coop_mat16x16<f32,C>();
    var acc_3_2 = coop_mat16x16<f32,C>();
    var acc_3_3 = coop_mat16x16<f32,C>();
    let ea0 = t + 0u; let ar0 = ea0 / 8u; let ac0 = ea0 % 8u;
    let ga0 = (row0 + ar0) * kv + ac0; let sa0 = ar0 * 10u + ac0;
    let ea1 = t + 256u; let ar1 = ea1 / 8u; let ac1 = ea1 % 8u;
    let ga1 = (row0 + ar1) * kv + ac1; let sa1 = ar1 * 10u + ac1;
    let ea2 = t + 512u; let ar2 = ea2 / 8u; let ac2 = ea2 % 8u;
    let ga2 = (row0 + ar2) * kv + ac2; let sa2 = ar2 * 10u + ac2;
    let ea3 = t + 768u; let ar3 = ea3 / 8u; let ac3 = ea3 % 8u;
    let ga3 = (row0 + ar3) * kv + ac3; let sa3 = ar3 * 10u + ac3;
    let ea4 = t + 1024u; let ar4 = ea4 / 8u; let ac4 = ea4 % 8u;
    let ga4 = (row0 + ar4) * kv + ac4; let sa4 = ar4 * 10u + ac4;
    let ea5 = t + 1280u; let ar5 = ea5 / 8u; let ac5 = ea5 % 8u;
    let ga5 = (row0 + ar5) * kv + ac5; let sa5 = ar5 * 10u + ac5;
    let ea6 = t + 1536u; let ar6 = ea6 / 8u; let ac6 = ea6 % 8u;
    let ga6 = (row0 + ar6) * kv + ac6; let sa6 = ar6 * 10u + ac6;
    let ea7 = t + 1792u; let ar7 = ea7 / 8u; let ac7 = ea7 % 8u;
    let ga7 = (row0 + ar7) * kv + ac7; let sa7 = ar7 * 10u + ac7;
    let eb0 = t + 0u; let br0 = eb0 / 32u; let bc0 = eb0 % 32u;
    let gb0 = br0 * nv + col0 / 4u + bc0; let sb0 = br0 * 34u + bc0;
    let eb1 = t + 256u; let br1 = eb1 / 32u; let bc1 = eb1 % 32u;
    let gb1 = br1 * nv + col0 / 4u + bc1; let sb1 = br1 * 34u + bc1;
    let eb2 = t + 512u; let br2 = eb2 / 32u; let bc2 = eb2 % 32u;
    let gb2 = br2 * nv + col0 / 4u + bc2; let sb2 = br2 * 34u + bc2;
    let eb3 = t + 768u; let br3 = eb3 / 32u; let bc3 = eb3 % 32u;
    let gb3 = br3 * nv + col0 / 4u + bc3; let sb3 = br3 * 34u + bc3;
    var ra0 = a[ga0];
    var ra1 = a[ga1];
    var ra2 = a[ga2];
    var ra3 = a[ga3];
    var ra4 = a[ga4];
    var ra5 = a[ga5];
    var ra6 = a[ga6];
    var ra7 = a[ga7];
    var rb0 = b[gb0];
    var rb1 = b[gb1];
    var rb2 = b[gb2];
    var rb3 = b[gb3];
    var kk = 0u;
    loop {
        if kk >= k { break; }
        a_s[sa0] = ra0;
        a_s[sa1] = ra1;
        a_s[sa2] = ra2;
        a_s[sa3] = ra3;
        a_s[sa4] = ra4;
        a_s[sa5] = ra5;
        a_s[sa6] = ra6;
        a_s[sa7] = ra7;
        b_s[sb0] = rb0;
        b_s[sb1] = rb1;
        b_s[sb2] = rb2;
        b_s[sb3] = rb3;
        workgroupBarrier();
        let kn = kk + 32u;
        if kn < k {
            ra0 = a[ga0 + kn / 4u];
            ra1 = a[ga1 + kn / 4u];
            ra2 = a[ga2 + kn / 4u];
            ra3 = a[ga3 + kn / 4u];
            ra4 = a[ga4 + kn / 4u];
            ra5 = a[ga5 + kn / 4u];
            ra6 = a[ga6 + kn / 4u];
            ra7 = a[ga7 + kn / 4u];
            rb0 = b[gb0 + kn * nv];
            rb1 = b[gb1 + kn * nv];
            rb2 = b[gb2 + kn * nv];
            rb3 = b[gb3 + kn * nv];
        }
        let tb0_0 = coopLoadT<coop_mat16x16<f16,B>>(&b_s[0u * 34u + (wc + 0u) / 4u], 34u);
        let tb0_1 = coopLoadT<coop_mat16x16<f16,B>>(&b_s[0u * 34u + (wc + 16u) / 4u], 34u);
        let tb0_2 = coopLoadT<coop_mat16x16<f16,B>>(&b_s[0u * 34u + (wc + 32u) / 4u], 34u);
        let tb0_3 = coopLoadT<coop_mat16x16<f16,B>>(&b_s[0u * 34u + (wc + 48u) / 4u], 34u);
        let ta0_0 = coopLoadT<coop_mat16x16<f16,A>>(&a_s[(wr + 0u) * 10u + 0u], 10u);
        acc_0_0 = coopMultiplyAdd(ta0_0, tb0_0, acc_0_0);
        acc_0_1 = coopMultiplyAdd(ta0_0, tb0_1, acc_0_1);
        acc_0_2 = coopMultiplyAdd(ta0_0, tb0_2, acc_0_2);
        acc_0_3 = coopMultiplyAdd(ta0_0, tb0_3, acc_0_3);
        let ta0_1 = coopLoadT<coop_mat16x16<f16,A>>(&a_s[(wr + 16u) * 10u + 0u], 10u);
        acc_1_0 = coopMultiplyAdd(ta0_1, tb0_0, acc_1_0);
        acc_1_1 = coopMultiplyAdd(ta0_1, tb0_1, acc_1_1);
        acc_1_2 = coopMultiplyAdd(ta0_1, tb0_2, acc_1_2);
        acc_1_3 = coopMultiplyAdd(ta0_1, tb0_3, acc_1_3);
        let ta0_2 = coopLoadT<coop_mat16x16<f16,A>>(&a_s[(wr + 32u) * 10u + 0u], 10u);
        acc_2_0 = coopMultiplyAdd(ta0_2, tb0_0, acc_2_0);
        acc_2_1 = coopMultiplyAdd(ta0_2, tb0_1, acc_2_1);
        acc_2_2 = coopMultiplyAdd(ta0_2, tb0_2, acc_2_2);
        acc_2_3 = coopMultiplyAdd(ta0_2, tb0_3, acc_2_3);
        let ta0_3 = coopLoadT<coop_mat16x16<f16,A>>(&a_s[(wr + 48u) * 10u + 0u], 10u);
        acc_3_0 = coopMultiplyAdd(ta0_3, tb0_0, acc_3_0);
        acc_3_1 = coopMultiplyAdd(ta0_3, tb0_1, acc_3_1);
        acc_3_2 = coopMultiplyAdd(ta0_3, tb0_2, acc_3_2);
        acc_3_3 = coopMultiplyAdd(ta0_3, tb0_3, acc_3_3);
        let tb1_0 = coopLoadT<coop_mat16x16<f16,B>>(&b_s[16u * 34u + (wc + 0u) / 4u], 34u);
        let tb1_1 = coopLoadT<coop_mat16x16<f16,B>>(&b_s[16u * 34u + (wc + 16u) / 4u], 34u);
        let tb1_2 = coopLoadT<coop_mat16x16<f16,B>>(&b_s[16u * 34u + (wc + 32u) / 4u], 34u);
        let tb1_3 = coopLoadT<coop_mat16x16<f16,B>>(&b_s[16u * 34u + (wc + 48u) / 4u], 34u);
        let ta1_0 = coopLoadT<coop_mat16x16<f16,A>>(&a_s[(wr + 0u) * 10u + 4u], 10u);
        acc_0_0 = coopMultiplyAdd(ta1_0, tb1_0, acc_0_0);
        acc_0_1 = coopMultiplyAdd(ta1_0, tb1_1, acc_0_1);
        acc_0_2 = coopMultiplyAdd(ta1_0, tb1_2, acc_0_2);
        acc_0_3 = coopMultiplyAdd(ta1_0, tb1_3, acc_0_3);
        let ta1_1 = coopLoadT<coop_mat16x16<f16,A>>(&a_s[(wr + 16u) * 10u + 4u], 10u);
        acc_1_0 = coopMultiplyAdd(ta1_1, tb1_0, acc_1_0);
        acc_1_1 = coopMultiplyAdd(ta1_1, tb1_1, acc_1_1);
        acc_1_2 = coopMultiplyAdd(ta1_1, tb1_2, acc_1_2);
        acc_1_3 = coopMultiplyAdd(ta1_1, tb1_3, acc_1_3);
        let ta1_2 = coopLoadT<coop_mat16x16<f16,A>>(&a_s[(wr + 32u) * 10u + 4u], 10u);
        acc_2_0 = coopMultiplyAdd(ta1_2, tb1_0, acc_2_0);
        acc_2_1 = coopMultiplyAdd(ta1_2, tb1_1, acc_2_1);
        acc_2_2 = coopMultiplyAdd(ta1_2, tb1_2, acc_2_2);
        acc_2_3 = coopMultiplyAdd(ta1_2, tb1_3, acc_2_3);
        let ta1_3 = coopLoadT<coop_mat16x16<f16,A>>(&a_s[(wr + 48u) * 10u + 4u], 10u);
        acc_3_0 = coopMultiplyAdd(ta1_3, tb1_0, acc_3_0);
        acc_3_1 = coopMultiplyAdd(ta1_3, tb1_1, acc_3_1);
        acc_3_2 = coopMultiplyAdd(ta1_3, tb1_2, acc_3_2);
        acc_3_3 = coopMultiplyAdd(ta1_3, tb1_3, acc_3_3);
        workgroupBarrier();
        kk += 32u;
    }
    let at_0_0 = (row0 + wr + 0u) * n + col0 + wc + 0u;
    coopStoreT(acc_0_0, &c[at_0_0], n);
    let at_0_1 = (row0 + wr + 0u) * n + col0 + wc + 16u;
    coopStoreT(acc_0_1, &c[at_0_1], n);
    let at_0_2 = (row0 + wr + 0u) * n + col0 + wc + 32u;
    coopStoreT(acc_0_2, &c[at_0_2], n);
    let at_0_3 = (row0 + wr + 0u) * n + col0 + wc + 48u;
    coopStoreT(acc_0_3, &c[at_0_3], n);
    let at_1_0 = (row0 + wr + 16u) * n + col0 + wc + 0u;
    coopStoreT(acc_1_0, &c[at_1_0], n);
    let at_1_1 = (row0 + wr + 16u) * n + col0 + wc + 16u;
    coopStoreT(acc_1_1, &c[at_1_1], n);
    let at_1_2 = (row0 + wr + 16u) * n + col0 + wc + 32u;
    coopStoreT(acc_1_2, &c[at_1_2], n);
    let at_1_3 = (row0 + wr + 16u) * n + col0 + wc + 48u;
    coopStoreT(acc_1_3, &c[at_1_3], n);
    let at_2_0 = (row0 + wr + 32u) * n + col0 + wc + 0u;
    coopStoreT(acc_2_0, &c[at_2_0], n);
    let at_2_1 = (row0 + wr + 32u) * n + col0 + wc + 16u;
    coopStoreT(acc_2_1, &c[at_2_1], n);
    let at_2_2 = (row0 + wr + 32u) * n + col0 + wc + 32u;
    coopStoreT(acc_2_2, &c[at_2_2], n);
    let at_2_3 = (row0 + wr + 32u) * n + col0 + wc + 48u;
    coopStoreT(acc_2_3, &c[at_2_3], n);
    let at_3_0 = (row0 + wr + 48u) * n + col0 + wc + 0u;
    coopStoreT(acc_3_0, &c[at_3_0], n);
    let at_3_1 = (row0 + wr + 48u) * n + col0 + wc + 16u;
    coopStoreT(acc_3_1, &c[at_3_1], n);
    let at_3_2 = (row0 + wr + 48u) * n + col0 + wc + 32u;
    coopStoreT(acc_3_2, &c[at_3_2], n);
    let at_3_3 = (row0 + wr + 48u) * n + col0 + wc + 48u;
    coopStoreT(acc_3_3, &c[at_3_3], n);
}
