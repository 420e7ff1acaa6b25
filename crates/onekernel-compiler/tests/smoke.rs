use onekernel_compiler::compile;

fn wgsl(attr: &str, src: &str) -> String {
    let item: syn::ItemFn = syn::parse_str(src).unwrap();
    match compile(attr.parse().unwrap(), &item, &[]) {
        Ok(k) => k.info.wgsl.to_string(),
        Err(e) => panic!("{:?}", e.iter().map(|d| d.to_string()).collect::<Vec<_>>()),
    }
}

#[test]
fn vector_add() {
    let w = wgsl(
        "workgroup_size = 256",
        r#"
fn vector_add(a: &[f32], b: &[f32], out: &mut [f32]) {
    let i = global_id().x;
    if i < out.len() { out[i] = a[i] + b[i]; }
}"#,
    );
    println!("{w}");
}

#[test]
fn control_flow() {
    let w = wgsl(
        "workgroup_size = 64",
        r#"
fn k(a: &[i32], out: &mut [i32], n: u32) {
    let i = global_id().x;
    if i >= out.len() { return; }
    let mut acc = 0;
    'outer: for j in 0..n {
        let mut k = 0u32;
        while k < 4 {
            k += 1;
            if k == 2 { continue; }
            if j as i32 > a[i] { break 'outer; }
            acc += (j * k) as i32;
        }
    }
    let x = if acc > 10 { acc - 10 } else { -acc };
    let y = loop { break 5; };
    out[i] = x + y + 2i32.pow(3) + (2.5f32.powi(2) as i32) + (1.5f32).round() as i32;
}"#,
    );
    println!("{w}");
}
