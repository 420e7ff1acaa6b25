//! The explain view: its line markers never change the WGSL it shows, and
//! each Rust line is beside the WGSL it produced.

use onekernel_compiler::compile;

/// The WGSL lines of an explain view, in order.
fn shown_wgsl(explain: &str) -> Vec<String> {
    explain
        .lines()
        .filter_map(|l| l.split_once(" |     "))
        .filter(|(n, _)| n.trim().is_empty())
        .map(|(_, w)| w.to_string())
        .collect()
}

fn check(attr: &str, kernel: &str, helpers: &[&str]) -> String {
    let item: syn::ItemFn = syn::parse_str(kernel).unwrap();
    let helpers: Vec<syn::ItemFn> = helpers.iter().map(|h| syn::parse_str(h).unwrap()).collect();
    let k = compile(attr.parse().unwrap(), &item, &helpers)
        .unwrap_or_else(|e| panic!("{:?}", e.iter().map(|d| d.to_string()).collect::<Vec<_>>()));
    let real: Vec<String> = k.info.wgsl().lines().map(|l| l.trim_end().to_string()).filter(|l| !l.is_empty()).collect();
    // The helpers come first in the WGSL but each group keeps WGSL order.
    assert_eq!(shown_wgsl(&k.info.explain), real, "{}", k.info.explain);
    assert!(!k.info.explain.contains("explain_line"));
    k.info.explain.to_string()
}

#[test]
fn shows_exactly_the_real_wgsl() {
    let e = check(
        "workgroup_size = 64",
        "fn k(a: &[i32], out: &mut [i32], n: u32) {
    let i = global_id().x;
    if i >= out.len() { return; }
    let mut acc = 0;
    'outer: for j in 0..n {
        let mut k = 0u32;
        while k < 4 {
            k += 1;
            if k == 2 { continue; }
            if j as i32 > a[i] { break 'outer; }
            acc += twice((j * k) as i32);
        }
    }
    let x = if acc > 10 { acc - 10 } else { -acc };
    out[i] = x + 2i32.pow(3);
}",
        &["fn twice(x: i32) -> i32 {\n    let y = x * 2;\n    y\n}"],
    );
    assert!(e.contains("  1 | fn k(a: &[i32], out: &mut [i32], n: u32) {"), "{e}");
    assert!(
        e.contains("  3 |     if i >= out.len() { return; }\n    |         if (i >= arrayLength((&out))) {"),
        "{e}"
    );
    assert!(e.contains("  1 | fn twice(x: i32) -> i32 {\n    |     fn twice(x_1: i32) -> i32 {"), "{e}");
}
