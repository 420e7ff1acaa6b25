//! `onekernel-abi/src/specialise.rs`: a local array whose every index is a constant
//! (after unrolling) becomes one variable per element; any other array
//! stays one. The values are checked on the CPU and the GPU by the
//! language suite (`split_arrays` in `tests/language`).

/// The plain and the checked WGSL of a kernel (every variant is validated
/// and re-parsed by `compile`).
fn wgsl(src: &str) -> (String, String) {
    let k = super::compiled("workgroup_size = 64", src, &[]);
    (k.info.wgsl().to_string(), k.info.module(onekernel_abi::ModuleKey::CHECKED).expect("checked").wgsl.to_string())
}

#[test]
fn constant_indices_under_unroll_split() {
    let (w, checked) = wgsl(
        r#"
fn k(a: &[f32], out: &mut [f32]) {
    let i = global_id().x;
    if i >= a.len() { return; }
    let mut r = [0.0f32; 4];
    #[unroll]
    for j in 0..4 { r[j] = a[i] * j as f32; }
    r[1] += 2.0;
    out[i] = r[0] + r[1] + r[3];
}"#,
    );
    for w in [&w, &checked] {
        assert!(!w.contains("array<f32, 4>"), "{w}");
        for j in 0..4 {
            assert!(w.contains(&format!("var r_{j}_: f32;")), "{w}");
        }
        // The zero initialiser, element by element.
        assert!(w.contains("r_3_ = 0f;"), "{w}");
    }
    // Constant in-range indices are not checked: nothing was left to check.
    assert!(!checked.contains("index_ok"), "{checked}");
}

#[test]
fn one_dynamic_index_keeps_the_array() {
    let (w, checked) = wgsl(
        r#"
fn k(a: &[f32], out: &mut [f32]) {
    let i = global_id().x;
    if i >= a.len() { return; }
    let mut r = [0.0f32; 4];
    #[unroll]
    for j in 0..4 { r[j] = a[i] * j as f32; }
    out[i] = r[0] + r[i % 4];
}"#,
    );
    for w in [&w, &checked] {
        assert!(w.contains("var r: array<f32, 4>;"), "{w}");
        assert!(!w.contains("r_0_"), "{w}");
    }
}

#[test]
fn initialisers_split_into_element_stores() {
    let (w, _) = wgsl(
        r#"
fn k(a: &[f32], out: &mut [f32]) {
    let i = global_id().x;
    if i >= a.len() { return; }
    let mut ones = [1.5f32; 3];
    let mut listed = [a[i], 2.0, -a[i]];
    #[unroll]
    for j in 0..3 { ones[j] *= listed[2 - j]; listed[j] += 1.0; }
    out[i] = ones[0] + ones[2] + listed[1];
}"#,
    );
    assert!(!w.contains("array<f32, 3>"), "{w}");
    assert!(w.contains("ones_2_ = 1.5f;"), "{w}");
    assert!(w.contains("listed_1_ = 2f;"), "{w}");
}

#[test]
fn a_copy_splits_the_copy_and_keeps_the_array_read_whole() {
    let (w, _) = wgsl(
        r#"
fn k(a: &[f32], out: &mut [f32]) {
    let i = global_id().x;
    if i >= a.len() { return; }
    let mut x = [0.0f32; 4];
    #[unroll]
    for j in 0..4 { x[j] = a[i] + j as f32; }
    let mut y = x;
    y[2] = 7.0;
    out[i] = x[2] + y[1] + y[2];
}"#,
    );
    // `x` is read whole (by the copy); `y` gets the copy's elements.
    assert!(w.contains("var x: array<f32, 4>;"), "{w}");
    assert!(w.contains("var y_3_: f32;") && !w.contains("var y: array"), "{w}");
    assert!(w.contains("y_2_ = 7f;"), "{w}");
}

#[test]
fn nested_arrays_split_level_by_level() {
    let (w, checked) = wgsl(
        r#"
fn k(a: &[f32], out: &mut [f32]) {
    let i = global_id().x;
    if i >= a.len() { return; }
    let mut m = [[0.0f32; 2]; 3];
    #[unroll]
    for r in 0..3 {
        #[unroll]
        for c in 0..2 { m[r][c] = a[i] * (r * 2 + c) as f32; }
    }
    out[i] = m[2][1] - m[1][0];
}"#,
    );
    for w in [&w, &checked] {
        assert!(!w.contains("array<f32, 2>"), "{w}");
        assert!(w.contains("var m_0_0_: f32;") && w.contains("var m_2_1_: f32;"), "{w}");
    }
}

#[test]
fn arrays_of_vectors_and_structs_split() {
    let (w, _) = wgsl(
        r#"
fn k(a: &[f32], out: &mut [f32]) {
    let i = global_id().x;
    if i >= a.len() { return; }
    let mut v = [Vec4::ZERO; 2];
    let mut t = [(0u32, 0.0f32); 2];
    #[unroll]
    for j in 0..2 {
        v[j] = Vec4::splat(a[i] + j as f32);
        v[j].y = 1.0;
        t[j].1 = v[j].x;
    }
    out[i] = v[0].y + v[1].x + t[1].1;
}"#,
    );
    assert!(w.contains("var v_1_: vec4<f32>;") && w.contains("var t_1_: tuple_u32_f32_;"), "{w}");
    assert!(!w.contains("array<vec4<f32>, 2>") && !w.contains("array<tuple"), "{w}");
}

#[test]
fn arrays_passed_whole_stay_arrays() {
    let w = super::wgsl_with(
        "workgroup_size = 64",
        r#"
fn k(a: &[f32], out: &mut [f32]) {
    let i = global_id().x;
    if i >= a.len() { return; }
    let mut x = [0.0f32; 4];
    #[unroll]
    for j in 0..4 { x[j] = a[i] * j as f32; }
    out[i] = total(x);
}"#,
        &[r#"
fn total(v: [f32; 4]) -> f32 {
    let mut v = v;
    v[3] *= 2.0;
    v[0] + v[1] + v[2] + v[3]
}"#],
    );
    // The kernel's `x` is passed whole; the helper's copy of its argument
    // is indexed by constants only, and splits.
    assert!(w.contains("var x: array<f32, 4>;"), "{w}");
    assert!(w.contains("var v_3_: f32;"), "{w}");
}

#[test]
fn nested_listed_initialisers_split_without_leftovers() {
    let (w, _) = wgsl(
        r#"
fn k(a: &[f32], out: &mut [f32]) {
    let i = global_id().x;
    if i >= a.len() { return; }
    let mut m = [[1.0f32, 2.0], [3.0, a[i]]];
    m[0][1] += m[1][1];
    out[i] = m[0][0] + m[0][1] + m[1][0];
}"#,
    );
    assert!(!w.contains("array<f32, 2>"), "{w}");
    assert!(w.contains("m_0_1_ = 2f;") && w.contains("m_1_0_ = 3f;"), "{w}");
}
