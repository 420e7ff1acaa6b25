//! The playground, end to end: the binary is started on a free local port,
//! its HTTP API is called over std's `TcpStream` (compile, errors, run,
//! limits, a never-ending loop, malformed requests, every preset), and the
//! page is driven in headless chromium through chromedriver (WebDriver):
//! type a kernel, see its WGSL, break it and see the underline, run it and
//! see the numbers. The browser test also takes the screenshot of the docs
//! (`ONEKERNEL_UPDATE_SCREENSHOT=1` writes it to docs/book/src/img/).
//!
//! The runs need a GPU adapter: `source .ci/env.sh` for lavapipe.

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The playground binary, running until dropped.
struct Server {
    child: Child,
    /// `127.0.0.1:PORT`.
    addr: String,
}

impl Server {
    fn start() -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_onekernel-playground"))
            .args(["--port", "0"])
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start onekernel-playground");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        // "onekernel playground: http://127.0.0.1:PORT/"
        let addr = line
            .trim()
            .strip_prefix("onekernel playground: http://")
            .and_then(|s| s.strip_suffix('/'))
            .unwrap_or_else(|| panic!("unexpected first line: {line:?}"))
            .to_string();
        assert!(addr.starts_with("127.0.0.1:"), "bound to {addr}, not to 127.0.0.1 by default");
        Server { child, addr }
    }

    fn url(&self) -> String {
        format!("http://{}/", self.addr)
    }

    fn post(&self, path: &str, body: &str) -> (u16, Value) {
        let (status, text) = http(&self.addr, "POST", path, Some(body));
        (status, serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: not JSON ({e}): {text}")))
    }

    fn post_json(&self, path: &str, body: &Value) -> (u16, Value) {
        self.post(path, &body.to_string())
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One HTTP/1.1 request (`Connection: close`): the status and the body.
fn http(addr: &str, method: &str, path: &str, body: Option<&str>) -> (u16, String) {
    let mut stream = TcpStream::connect(addr).unwrap_or_else(|e| panic!("connect to {addr}: {e}"));
    stream.set_read_timeout(Some(Duration::from_secs(120))).unwrap();
    let body = body.unwrap_or("");
    let _ = write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    // Read the header, then the body by its length (chromedriver keeps the
    // connection open) or to the end. A server that refuses a large body
    // may close before reading all of it (a reset after its answer): keep
    // what was read.
    let mut raw = Vec::new();
    let mut buf = [0u8; 65536];
    let mut want: Option<usize> = None;
    loop {
        if want.is_none() {
            if let Some(end) = raw.windows(4).position(|w| w == b"\r\n\r\n") {
                let head = String::from_utf8_lossy(&raw[..end]).to_ascii_lowercase();
                if let Some(len) = head.lines().find_map(|l| l.strip_prefix("content-length:")) {
                    want = Some(end + 4 + len.trim().parse::<usize>().unwrap());
                }
            }
        }
        if want.is_some_and(|w| raw.len() >= w) {
            break;
        }
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => raw.extend_from_slice(&buf[..n]),
        }
    }
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, rest) = text.split_once("\r\n\r\n").unwrap_or_else(|| panic!("no HTTP header in {text:?}"));
    let status: u16 = head.split(' ').nth(1).and_then(|s| s.parse().ok()).expect("status");
    let chunked = head.lines().any(|l| l.to_ascii_lowercase().starts_with("transfer-encoding: chunked"));
    let body = if chunked { dechunk(rest) } else { rest.to_string() };
    (status, body)
}

fn dechunk(mut s: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = s.split_once("\r\n") {
        let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if n == 0 {
            break;
        }
        out.push_str(&rest[..n]);
        s = rest[n..].trim_start_matches("\r\n");
    }
    out
}

const TRIPLE: &str = "use onekernel::prelude::*;

#[kernel(workgroup_size = 64)]
fn triple(a: &[f32], out: &mut [f32]) {
    let i = global_id().x;
    if i < out.len() {
        out[i] = a[i] * 3.0;
    }
}
";

#[test]
fn compile_shows_every_view() {
    let s = Server::start();
    let (status, r) = s.post_json("/api/compile", &json!({ "source": TRIPLE }));
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["ok"], true, "{r}");
    assert_eq!(r["kernels"], json!(["triple"]));
    let v = &r["view"];
    assert!(v["wgsl"].as_str().unwrap().contains("@compute @workgroup_size(64, 1, 1)"), "{}", v["wgsl"]);
    assert!(v["wgsl"].as_str().unwrap().contains("fn triple("));
    assert!(v["spirv"].as_str().unwrap().contains("OpEntryPoint GLCompute"), "{}", v["spirv"]);
    assert!(
        v["naga"].as_str().unwrap().contains("entry point `triple` (Compute, workgroup_size [64, 1, 1])"),
        "{}",
        v["naga"]
    );
    assert!(v["bindings"].as_str().unwrap().contains("| `out` | `&mut [f32]` |"), "{}", v["bindings"]);
    // The explain view: line 7 of the text, `out[i] = a[i] * 3.0;`, and its WGSL.
    let rows = v["explain"].as_array().unwrap();
    let row = rows.iter().find(|r| r["line"] == 7).unwrap_or_else(|| panic!("no row for line 7: {rows:?}"));
    assert_eq!(row["rust"].as_str().unwrap().trim(), "out[i] = a[i] * 3.0;");
    assert!(row["wgsl"].as_array().unwrap().iter().any(|w| w.as_str().unwrap().contains("* 3f")), "{row}");
    assert_eq!(
        v["params"],
        json!([
            {"name": "a", "kind": "read", "ty": "f32", "supported": true},
            {"name": "out", "kind": "read_write", "ty": "f32", "supported": true},
        ])
    );
    assert!(r["errors"].as_array().unwrap().is_empty());
}

#[test]
fn errors_have_the_macros_message_span_and_help() {
    let s = Server::start();
    let source = TRIPLE
        .replace("    let i = global_id().x;\n", "    let i = global_id().x;\n    let label = format!(\"v {}\", i);\n");
    let (status, r) = s.post_json("/api/compile", &json!({ "source": source }));
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["ok"], false);
    let errors = r["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 1, "{errors:?}");
    let e = &errors[0];
    assert_eq!(e["message"], "macros such as `format!` are not supported in a kernel");
    assert_eq!(
        e["help"],
        "a kernel has no strings; write the numbers into an output buffer and format them on the host"
    );
    assert_eq!(e["start"], json!({"line": 6, "column": 16}));
    assert_eq!(e["end"]["line"], 6);
    let rendered = e["rendered"].as_str().unwrap();
    assert!(rendered.contains("--> kernel.rs:6:17") && rendered.contains("^^^^^^"), "{rendered}");
    // A syntax error, and a text without kernels.
    let (_, r) = s.post_json("/api/compile", &json!({ "source": "fn f( {" }));
    assert_eq!(r["ok"], false);
    assert_eq!(r["errors"][0]["start"]["line"], 1, "{r}");
    let (_, r) = s.post_json("/api/compile", &json!({ "source": "fn f() {}" }));
    assert!(r["errors"][0]["message"].as_str().unwrap().contains("no `#[kernel]`"), "{r}");
    // The playground reads no files.
    let (_, r) = s.post_json(
        "/api/compile",
        &json!({ "source": "#[path = \"/etc/passwd\"] mod secrets;\n".to_string() + TRIPLE }),
    );
    assert_eq!(r["ok"], false);
    assert!(r["errors"][0]["message"].as_str().unwrap().contains("cannot read the file of `mod secrets;`"), "{r}");
}

const SHOW: &str = "use onekernel::prelude::*;

#[kernel(workgroup_size = 64)]
fn show(a: &[f32], out: &mut [f32]) {
    let i = global_id().x;
    if i < out.len() {
        if i < 4 {
            println!(\"a[{i}] = {:.2}\", a[i]);
        }
        assert!(a[i] < 1000.0, \"too big: {} at {}\", a[i], i);
        out[i] = a[i] * 2.0;
    }
}
";

/// A kernel's `println!` lines come back with the run, and a failed
/// `assert!` is the run's error (kind `panic`, at its line) with the lines
/// printed before it; a flood of lines is cut, a huge format width refused,
/// and the server goes on.
#[test]
fn runs_return_printed_lines_and_panics() {
    let s = Server::start();
    let run = |source: &str, len: usize| {
        s.post_json(
            "/api/run",
            &json!({"source": source, "grid": {"threads": [len]}, "inputs": {"a": {"len": len, "formula": "i"}, "out": {"len": len}}}),
        )
    };
    let texts = |r: &Value| -> Vec<String> {
        r["prints"].as_array().unwrap().iter().map(|l| l["text"].as_str().unwrap().to_string()).collect()
    };
    let expected: Vec<String> = (0..4).map(|i| format!("[show ({i}, 0, 0)] a[{i}] = {:.2}", i as f32)).collect();
    let (status, r) = run(SHOW, 100);
    assert_eq!((status, &r["ok"]), (200, &json!(true)), "{r}");
    assert_eq!(texts(&r), expected, "{r}");
    assert_eq!(r["prints_more"], 0);
    // The panic, with the lines.
    let (status, r) = run(SHOW, 1001);
    assert_eq!((status, &r["ok"]), (200, &json!(false)), "{r}");
    assert_eq!(r["error"]["kind"], "panic", "{r}");
    assert_eq!(r["error"]["line"], 10, "{r}");
    let message = r["error"]["message"].as_str().unwrap();
    assert!(message.contains("panicked at kernel.rs:10:9 in invocation (1000, 0, 0)"), "{message}");
    assert!(message.ends_with("too big: 1000 at 1000"), "{message}");
    assert_eq!(texts(&r), expected, "{r}");
    // A flood: 1000 lines back, the rest counted (and the GPU's buffer
    // says how many it dropped).
    let flood = SHOW.replace("if i < 4 {", "for k in 0..20 {").replace("a[{i}] = {:.2}", "{k}");
    let (_, r) = run(&flood, 999);
    assert_eq!(r["ok"], true, "{r}");
    assert_eq!(r["prints"].as_array().unwrap().len(), 1000);
    assert!(r["prints_more"].as_u64().unwrap() > 0, "{}", r["prints_more"]);
    // A format width past the playground's limit is refused.
    let (_, r) = run(&SHOW.replace("{:.2}", "{:>100000}"), 8);
    assert_eq!(r["ok"], false, "{r}");
    assert!(r["error"]["message"].as_str().unwrap().contains("up to 256"), "{r}");
    let (_, r) = run(TRIPLE, 8);
    assert_eq!(r["ok"], true, "{r}");
    assert!(r["prints"].as_array().unwrap().is_empty(), "{r}");
}

/// The page shows a run's printed lines and its panic, as a person sees
/// them (the screenshot is kept in the target dir, `playground_prints.png`).
#[test]
fn the_page_shows_printed_lines_and_panics() {
    let s = Server::start();
    let Some(b) = Browser::start() else { return };
    b.session("POST", "/url", json!({ "url": s.url() }));
    b.wait_for("the preset's WGSL", "return document.getElementById('wgsl').textContent.includes('fn map(')");
    b.script(&format!("editor.setText({}); return null", json!(SHOW)));
    b.wait_for("the kernel", "return document.getElementById('wgsl').textContent.includes('fn show(') && document.getElementById('status').textContent.startsWith('compiled')");
    b.click("button[data-tab=run]");
    b.wait_for("the inputs form", "return document.querySelector('#inputs tr[data-param=a] [data-field=formula]')");
    for (css, value) in [
        ("#inputs tr[data-param=a] [data-field=formula]", "i"),
        ("#inputs tr[data-param=a] [data-field=len]", "1024"),
        ("#inputs tr[data-param=out] [data-field=len]", "1024"),
        ("#grid-x", "1024"),
    ] {
        b.clear(css);
        b.type_into(css, value);
    }
    b.script("document.querySelector('#inputs tr[data-param=a] [data-field=mode]').value = 'formula'; document.querySelector('#inputs tr[data-param=a] [data-field=mode]').onchange(); return null");
    b.click("#run-button");
    let printed = b.wait_for("the printed lines", "const p = document.getElementById('printed'); return p && !document.getElementById('prints').hidden && p.textContent");
    assert_eq!(
        printed.as_str().unwrap(),
        (0..4).map(|i| format!("[show ({i}, 0, 0)] a[{i}] = {i}.00\n")).collect::<String>()
    );
    let status = b.script("return document.getElementById('run-status').textContent");
    // 1024 elements of `i`: invocations 1000 to 1023 panic, one reports.
    let status = status.as_str().unwrap();
    assert!(status.contains("panicked at kernel.rs:10:9") && status.contains("too big: 10"), "{status}");
    assert!(status.contains("(23 more invocations panicked)"), "{status}");
    let heading = b.script("return document.querySelector('#prints h3').textContent");
    assert_eq!(heading, "printed: 4 lines");
    let png = b.screenshot();
    assert!(png.starts_with(b"\x89PNG"), "not a PNG");
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("playground_prints.png");
    std::fs::write(&path, &png).unwrap();
    eprintln!("screenshot: {}", path.display());
    // A run without prints hides the box again.
    b.script(&format!("editor.setText({}); return null", json!(TRIPLE)));
    b.wait_for("triple", "return document.getElementById('wgsl').textContent.includes('fn triple(') && document.getElementById('status').textContent.startsWith('compiled')");
    b.click("#run-button");
    b.wait_for("the outputs", "return document.querySelector('td[data-output=out]')");
    assert_eq!(b.script("return document.getElementById('prints').hidden"), json!(true));
}

#[test]
fn run_computes_and_reports_the_grid_and_time() {
    let s = Server::start();
    let (status, r) = s.post_json(
        "/api/run",
        &json!({
            "source": TRIPLE,
            "grid": {"threads": [100]},
            "inputs": {"a": {"len": 100, "formula": "i * 0.5 - 1"}, "out": {"len": 100}},
        }),
    );
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["ok"], true, "{r}");
    let out = &r["outputs"][0];
    assert_eq!((out["name"].as_str(), out["len"].as_u64(), out["ty"].as_str()), (Some("out"), Some(100), Some("f32")));
    let values: Vec<f64> = out["values"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
    assert_eq!(values, (0..100).map(|i| (i as f64 * 0.5 - 1.0) * 3.0).collect::<Vec<_>>());
    assert_eq!(r["grid"]["workgroups"], json!([2, 1, 1]));
    assert_eq!(r["grid"]["invocations"], 128);
    assert!(r["time_us"].as_f64().unwrap() > 0.0, "{r}");
    // Seeded random inputs are the same every time; integers by `as`.
    let body = json!({
        "source": "#[kernel(workgroup_size = 8)]\nfn copy(a: &[u32], out: &mut [u32], k: u32) {\n    let i = global_id().x;\n    if i < out.len() { out[i] = a[i] + k; }\n}\n",
        "grid": {"blocks": [2]},
        "inputs": {"a": {"len": 16, "random": {"seed": 9, "min": 0, "max": 10}}, "out": {"len": 16}, "k": {"value": 100}},
    });
    let (_, r1) = s.post_json("/api/run", &body);
    let (_, r2) = s.post_json("/api/run", &body);
    assert_eq!(r1["ok"], true, "{r1}");
    assert_eq!(r1["outputs"], r2["outputs"]);
    assert!(
        r1["outputs"][0]["values"].as_array().unwrap().iter().all(|v| (100..110).contains(&v.as_u64().unwrap())),
        "{r1}"
    );
    // A bounds mistake is reported with its line (runs are checked).
    let (_, r) = s.post_json(
        "/api/run",
        &json!({
            "source": TRIPLE.replace("    if i < out.len() {\n        out[i] = a[i] * 3.0;\n    }\n", "    out[i] = a[i] * 3.0;\n"),
            "grid": {"threads": [100]},
            "inputs": {"a": {"len": 100, "formula": "1"}, "out": {"len": 100}},
        }),
    );
    assert_eq!(r["error"]["kind"], "out_of_bounds", "{r}");
    assert_eq!(r["error"]["line"], 6, "{r}");
    // A kernel with errors does not run.
    let (status, r) = s.post_json(
        "/api/run",
        &json!({"source": TRIPLE.replace("3.0", "3.0 +"), "grid": {"threads": [1]}, "inputs": {}}),
    );
    assert_eq!((status, &r["error"]["kind"]), (200, &json!("compile")), "{r}");
}

const AXPY: &str = "use onekernel::prelude::*;

#[kernel(workgroup_size = 64)]
fn axpy<T: Num>(a: T, x: &[T], y: &mut [T]) {
    let i = global_id().x;
    if i < y.len() {
        y[i] = a * x[i] + y[i];
    }
}
";

/// A generic kernel is compiled for every type of its bound, as the macro
/// compiles it: each instantiation is a kernel of the menu, shown and run
/// for its own type.
#[test]
fn generic_kernel_every_instantiation() {
    let s = Server::start();
    let (status, r) = s.post_json("/api/compile", &json!({ "source": AXPY }));
    assert_eq!((status, &r["ok"]), (200, &json!(true)), "{r}");
    let types = ["f32", "i32", "u32", "f16", "f64", "i64", "u64"];
    let names: Vec<String> = types.iter().map(|t| format!("axpy::<{t}>")).collect();
    assert_eq!(r["kernels"], json!(names));
    // The function's name chooses the first instantiation.
    assert_eq!(r["view"]["name"], "axpy::<f32>");
    assert!(r["view"]["wgsl"].as_str().unwrap().contains("array<f32>"), "{}", r["view"]["wgsl"]);
    for t in types {
        let (_, r) = s.post_json("/api/compile", &json!({ "source": AXPY, "kernel": format!("axpy::<{t}>") }));
        let v = &r["view"];
        assert_eq!(v["name"], format!("axpy::<{t}>"));
        assert!(v["wgsl"].as_str().unwrap().contains(&format!("y: array<{t}>")), "{t}: {}", v["wgsl"]);
        assert_eq!(v["params"][0], json!({"name": "a", "kind": "scalar", "ty": t, "supported": true}), "{t}");
    }
    // Each instantiation runs on its own type: `i32` wraps below zero.
    let run = |kernel: &str| {
        let (status, r) = s.post_json(
            "/api/run",
            &json!({
                "source": AXPY,
                "kernel": kernel,
                "grid": {"threads": [5]},
                "inputs": {"a": {"value": -3}, "x": {"len": 5, "formula": "i"}, "y": {"len": 5, "formula": "1"}},
            }),
        );
        assert_eq!((status, &r["ok"]), (200, &json!(true)), "{kernel}: {r}");
        assert_eq!(r["kernel"], kernel, "{r}");
        let y = &r["outputs"][0];
        assert_eq!(y["ty"], kernel.trim_start_matches("axpy::<").trim_end_matches('>'), "{r}");
        y["values"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect::<Vec<f64>>()
    };
    assert_eq!(run("axpy::<i32>"), [1.0, -2.0, -5.0, -8.0, -11.0]);
    assert_eq!(run("axpy::<f32>"), [1.0, -2.0, -5.0, -8.0, -11.0]);
    // A name that is no instantiation is refused.
    let (status, _) = s.post_json(
        "/api/run",
        &json!({"source": AXPY, "kernel": "axpy::<bool>", "grid": {"threads": [1]}, "inputs": {}}),
    );
    assert_eq!(status, 400);
}

const CONSTS: &str = "use onekernel::prelude::*;

const OFFSET: f32 = 0.5;

#[kernel(workgroup_size = 64)]
fn affine<const N: u32, const M: i32>(a: &[i32], out: &mut [i32]) {
    let i = global_id().x;
    if i < a.len() {
        let mut acc = a[i] * M;
        for k in 0..N {
            acc = acc + k as i32;
        }
        out[i] = acc;
    }
}

#[kernel(workgroup_size = 64)]
fn shift(a: &[f32], out: &mut [f32]) {
    let i = global_id().x;
    if i < a.len() {
        out[i] = a[i] + OFFSET;
    }
}
";

/// Const parameters and constants of the kernel's scope: the view lists
/// them; with values (`consts`) every tab shows the specialised module and
/// a run uses them; without, the WGSL keeps its `override`s and a run
/// says which values it needs; bad values are errors naming them.
#[test]
fn const_parameters_are_specialised_and_run() {
    let s = Server::start();
    let compile = |kernel: &str, consts: Option<&str>| {
        let (status, r) = s.post_json("/api/compile", &json!({"source": CONSTS, "kernel": kernel, "consts": consts}));
        assert_eq!((status, &r["ok"]), (200, &json!(true)), "{r}");
        r["view"].clone()
    };
    let v = compile("affine", None);
    assert_eq!(
        v["consts"],
        json!([{"name": "N", "ty": "u32", "generic": true}, {"name": "M", "ty": "i32", "generic": true}])
    );
    assert!(v["wgsl"].as_str().unwrap().contains("@id(1) override N: u32;"), "{}", v["wgsl"]);
    assert!(v["spirv"].as_str().unwrap().contains("no SPIR-V"), "{}", v["spirv"]);
    assert_eq!((&v["specialised"], &v["consts_error"]), (&Value::Null, &Value::Null));
    let v = compile("affine", Some("N=3, M=-2"));
    assert_eq!(v["specialised"], "N = 3, M = -2");
    let wgsl = v["wgsl"].as_str().unwrap();
    assert!(wgsl.contains("const N: u32 = 3u;") && wgsl.contains("const M: i32 = -2i;"), "{wgsl}");
    assert!(!wgsl.contains("override N"), "{wgsl}");
    assert!(v["spirv"].as_str().unwrap().contains("OpEntryPoint GLCompute"), "{}", v["spirv"]);
    assert!(v["explain_text"].as_str().unwrap().contains("const N: u32 = 3u;"), "{}", v["explain_text"]);
    // Bad values: the view stays unspecialised and says why.
    for (consts, want) in [
        ("N=3, X=1", "`X` is not a const parameter of `affine`; it has: N: u32, M: i32"),
        ("N=-1, M=0", "`-1` is not a `u32`"),
        ("N=3", "missing: `M`"),
        ("N", "is not `NAME=VALUE`"),
    ] {
        let v = compile("affine", Some(consts));
        let e = v["consts_error"].as_str().unwrap_or_else(|| panic!("{consts}: {v}"));
        assert!(e.contains(want), "{consts}: {e}");
        assert_eq!(v["specialised"], Value::Null);
    }
    // A constant of a plain kernel's scope.
    let v = compile("shift", Some("OFFSET=0.25"));
    assert_eq!(v["consts"], json!([{"name": "OFFSET", "ty": "f32", "generic": false}]));
    assert!(v["wgsl"].as_str().unwrap().contains("const OFFSET: f32 = 0.25f;"), "{}", v["wgsl"]);
    // Runs use the values; each tuple its own result.
    let run = |kernel: &str, consts: Option<&str>| {
        let inputs = json!({"a": {"len": 5, "formula": "i"}, "out": {"len": 5}});
        let body =
            json!({"source": CONSTS, "kernel": kernel, "consts": consts, "grid": {"threads": [5]}, "inputs": inputs});
        let (status, r) = s.post_json("/api/run", &body);
        assert_eq!(status, 200, "{r}");
        r
    };
    let values = |r: &Value| -> Vec<f64> {
        assert_eq!(r["ok"], true, "{r}");
        r["outputs"][0]["values"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect()
    };
    // out[i] = i * M + N * (N - 1) / 2
    assert_eq!(values(&run("affine", Some("N=3, M=-2"))), [3.0, 1.0, -1.0, -3.0, -5.0]);
    assert_eq!(values(&run("affine", Some("N=4 M=10"))), [6.0, 16.0, 26.0, 36.0, 46.0]);
    assert_eq!(values(&run("affine", Some("N=3, M=-2"))), [3.0, 1.0, -1.0, -3.0, -5.0]);
    assert_eq!(values(&run("shift", Some("OFFSET=0.25"))), [0.25, 1.25, 2.25, 3.25, 4.25]);
    // Without values, or with bad ones, a run is an error that says why.
    let r = run("affine", None);
    assert_eq!(r["error"]["kind"], "consts", "{r}");
    assert!(r["error"]["message"].as_str().unwrap().contains("give their values (`N=.., M=..`)"), "{r}");
    let r = run("affine", Some("N=3, M=x"));
    assert_eq!(r["error"]["kind"], "consts", "{r}");
    assert!(r["error"]["message"].as_str().unwrap().contains("`x` is not an `i32`"), "{r}");
}

/// A loop that never ends is stopped by the loop budget and reported; the
/// server answers other requests meanwhile.
#[test]
fn a_never_ending_loop_is_stopped_and_reported() {
    let s = Server::start();
    let spin = json!({
        "source": "#[kernel(workgroup_size = 64)]\nfn spin(flag: &[u32], out: &mut [u32]) {\n    let i = global_id().x;\n    let mut n = 0u32;\n    while flag[0] == 0 {\n        n += 1;\n    }\n    if i < out.len() {\n        out[i] = n;\n    }\n}\n",
        "grid": {"threads": [65536]},
        "inputs": {"flag": {"len": 1}, "out": {"len": 65536}},
    });
    let addr = s.addr.clone();
    let started = Instant::now();
    let runner = std::thread::spawn(move || {
        let (status, text) = http(&addr, "POST", "/api/run", Some(&spin.to_string()));
        (status, serde_json::from_str::<Value>(&text).unwrap(), Instant::now())
    });
    // While it runs, the server still compiles.
    std::thread::sleep(Duration::from_millis(200));
    let (status, r) = s.post_json("/api/compile", &json!({ "source": TRIPLE }));
    let compiled_at = Instant::now();
    assert_eq!((status, &r["ok"]), (200, &json!(true)), "{r}");
    let (status, r, ran_at) = runner.join().unwrap();
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["ok"], false, "{r}");
    assert_eq!(r["error"]["kind"], "loop_budget", "{r}");
    let message = r["error"]["message"].as_str().unwrap();
    assert!(message.contains("kernel `spin`: the loop at") && message.contains("ran past the budget of"), "{message}");
    assert_eq!(r["error"]["line"], 5, "{r}");
    eprintln!(
        "endless loop stopped after {:?}; a compile meanwhile answered after {:?}",
        ran_at - started,
        compiled_at - started
    );
}

#[test]
fn limits_are_4xx_with_a_message() {
    let s = Server::start();
    let run = |grid: Value, inputs: Value| {
        s.post_json("/api/run", &json!({"source": TRIPLE, "grid": grid, "inputs": inputs}))
    };
    // Source size.
    let big = format!("{TRIPLE}{}", "// padding\n".repeat(7000));
    let (status, r) = s.post_json("/api/compile", &json!({ "source": big }));
    assert_eq!(status, 413, "{r}");
    assert!(r["error"].as_str().unwrap().contains("limit"), "{r}");
    // Body size.
    let (status, text) = http(&s.addr, "POST", "/api/compile", Some(&"x".repeat(300 * 1024)));
    assert_eq!(status, 413, "{text}");
    // Buffer size.
    let (status, r) = run(json!({"threads": [64]}), json!({"a": {"len": 100_000_000usize}, "out": {"len": 64}}));
    assert_eq!(status, 422, "{r}");
    assert!(r["error"].as_str().unwrap().contains("parameter `a`: 100000000 elements"), "{r}");
    // Grid size.
    let (status, r) = run(json!({"blocks": [65535, 65535]}), json!({"a": {"len": 1}, "out": {"len": 1}}));
    assert_eq!(status, 422, "{r}");
    assert!(r["error"].as_str().unwrap().contains("invocations"), "{r}");
}

#[test]
fn malformed_requests_are_4xx_with_a_message() {
    let s = Server::start();
    let cases: &[(&str, &str, &str)] = &[
        ("/api/compile", "{not json", "malformed request"),
        ("/api/compile", "{}", "missing field `source`"),
        ("/api/compile", r#"{"source": 5}"#, "invalid type"),
        ("/api/compile", r#"{"source": "", "extra": 1}"#, "unknown field `extra`"),
        ("/api/run", r#"{"source": "x"}"#, "missing field `grid`"),
    ];
    for (path, body, expect) in cases {
        let (status, r) = s.post(path, body);
        assert_eq!(status, 400, "{body}: {r}");
        assert!(r["error"].as_str().unwrap().contains(expect), "{body}: {r}");
    }
    let run = |grid: Value, inputs: Value| {
        s.post_json("/api/run", &json!({"source": TRIPLE, "grid": grid, "inputs": inputs}))
    };
    let cases = [
        (
            json!({"threads": [64]}),
            json!({"a": {"len": 64, "formula": "i +"}, "out": {"len": 64}}),
            "parameter `a`: the formula ends too early",
        ),
        (
            json!({"threads": [64]}),
            json!({"a": {"len": 64, "formula": "foo(i)"}, "out": {"len": 64}}),
            "unknown function `foo`",
        ),
        (json!({"threads": [64]}), json!({"out": {"len": 64}}), "parameter `a`: no input"),
        (json!({"threads": [64]}), json!({"a": {"len": 4}, "out": {"len": 4}, "b": {"len": 4}}), "no parameter `b`"),
        (json!({"threads": [1, 2, 3, 4]}), json!({}), "1 to 3 numbers"),
        (json!({"threads": [64], "blocks": [1]}), json!({}), "`threads` or `blocks`"),
        (json!({"threads": [64]}), json!({"a": {"shape": [2, 3], "len": 7}, "out": {"len": 4}}), "does not hold 7"),
    ];
    for (grid, inputs, expect) in cases {
        let (status, r) = run(grid.clone(), inputs.clone());
        assert_eq!(status, 400, "{grid} {inputs}: {r}");
        assert!(r["error"].as_str().unwrap().contains(expect), "{grid} {inputs}: {r}");
    }
    let (status, _) = http(&s.addr, "GET", "/api/nothing", None);
    assert_eq!(status, 404);
    let (status, _) = http(&s.addr, "GET", "/api/compile", None);
    assert_eq!(status, 405);
    // The server is still there.
    let (status, r) = s.post_json("/api/compile", &json!({ "source": TRIPLE }));
    assert_eq!((status, &r["ok"]), (200, &json!(true)));
}

/// Every preset compiles and runs with the inputs the menu gives it.
#[test]
fn every_preset_compiles_and_runs() {
    let s = Server::start();
    let (status, text) = http(&s.addr, "GET", "/api/presets", None);
    assert_eq!(status, 200);
    let presets: Vec<Value> = serde_json::from_str(&text).unwrap();
    assert!(presets.len() >= 20, "{}", presets.len());
    for p in &presets {
        let id = p["id"].as_str().unwrap();
        let source = p["source"].as_str().unwrap();
        assert!(source.contains("#[kernel"), "{id}: {source}");
        assert!(!source.contains("fn main"), "{id}: {source}");
        let (_, r) = s.post_json("/api/compile", &json!({"source": source, "kernel": p["kernel"]}));
        assert_eq!(r["ok"], true, "{id}: {r}");
        assert_eq!(r["view"]["name"], p["kernel"], "{id}");
        let mut run = p["run"].clone();
        run["source"] = json!(source);
        run["kernel"] = p["kernel"].clone();
        let (status, r) = s.post_json("/api/run", &run);
        assert_eq!((status, &r["ok"]), (200, &json!(true)), "{id}: {r}");
    }
}

// ---- the page in a real browser ---------------------------------------------

/// A WebDriver session with chromedriver.
struct Browser {
    driver: Child,
    addr: String,
    session: String,
}

impl Browser {
    /// Starts chromedriver and a headless chromium wherever both are
    /// installed (on PATH or where Debian puts them), with or without CI;
    /// None (with a note) where they are not, except under CI (`CI` set, as
    /// CI services and `.ci/run` set it), where that is a failure.
    fn start() -> Option<Browser> {
        let find = |names: &[&str], dirs: &[&str]| {
            let path = std::env::var_os("PATH").unwrap_or_default();
            std::env::split_paths(&path)
                .chain(dirs.iter().map(std::path::PathBuf::from))
                .flat_map(|dir| names.iter().map(move |n| dir.join(n)))
                .find(|p| p.is_file())
        };
        let driver_path = find(&["chromedriver"], &["/usr/lib/chromium"]);
        let browser_path = find(&["chromium", "chromium-browser", "google-chrome"], &["/usr/lib/chromium"]);
        let (Some(driver_path), Some(browser_path)) = (driver_path, browser_path) else {
            assert!(
                std::env::var_os("CI").is_none(),
                "CI must have chromium and chromium-driver (.ci/run installs them)"
            );
            eprintln!(
                "skipped: chromium and chromium-driver are not installed (apt-get install chromium chromium-driver)"
            );
            return None;
        };
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let driver = Command::new(driver_path)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let addr = format!("127.0.0.1:{port}");
        let deadline = Instant::now() + Duration::from_secs(30);
        while TcpStream::connect(&addr).is_err() {
            assert!(Instant::now() < deadline, "chromedriver did not start");
            std::thread::sleep(Duration::from_millis(100));
        }
        let mut b = Browser { driver, addr, session: String::new() };
        let r = b.call(
            "POST",
            "/session",
            json!({"capabilities": {"alwaysMatch": {"browserName": "chrome", "goog:chromeOptions": {
                "binary": browser_path,
                "args": ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--window-size=1500,1000", "--hide-scrollbars"],
            }}}}),
        );
        b.session = r["sessionId"].as_str().unwrap_or_else(|| panic!("no session: {r}")).to_string();
        Some(b)
    }

    fn call(&self, method: &str, path: &str, body: Value) -> Value {
        let body = if method == "GET" { None } else { Some(body.to_string()) };
        let (status, text) = http(&self.addr, method, path, body.as_deref());
        let r: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}: {text}"));
        assert_eq!(status, 200, "WebDriver {method} {path}: {r}");
        r["value"].clone()
    }

    fn session(&self, method: &str, path: &str, body: Value) -> Value {
        self.call(method, &format!("/session/{}{path}", self.session), body)
    }

    fn script(&self, script: &str) -> Value {
        self.session("POST", "/execute/sync", json!({"script": script, "args": []}))
    }

    fn element(&self, css: &str) -> String {
        let r = self.session("POST", "/element", json!({"using": "css selector", "value": css}));
        r.as_object()
            .and_then(|o| o.values().next())
            .and_then(Value::as_str)
            .unwrap_or_else(|| panic!("{css}: {r}"))
            .to_string()
    }

    fn click(&self, css: &str) {
        let e = self.element(css);
        self.session("POST", &format!("/element/{e}/click"), json!({}));
    }

    fn type_into(&self, css: &str, text: &str) {
        let e = self.element(css);
        self.session("POST", &format!("/element/{e}/value"), json!({ "text": text }));
    }

    fn clear(&self, css: &str) {
        let e = self.element(css);
        self.session("POST", &format!("/element/{e}/clear"), json!({}));
    }

    /// Waits until `script` returns something truthy, and returns it.
    fn wait_for(&self, what: &str, script: &str) -> Value {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let v = self.script(script);
            if !(v.is_null() || v == json!(false) || v == json!("")) {
                return v;
            }
            assert!(Instant::now() < deadline, "timed out waiting for {what}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Waits until `script` returns `expected` (the page may show
    /// intermediate states first, e.g. errors of a half-typed line).
    fn wait_for_eq(&self, what: &str, script: &str, expected: Value) {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let v = self.script(script);
            if v == expected {
                return;
            }
            assert!(Instant::now() < deadline, "timed out waiting for {what}: last {v}, expected {expected}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn screenshot(&self) -> Vec<u8> {
        base64(self.session("GET", "/screenshot", Value::Null).as_str().unwrap())
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        if !self.session.is_empty() {
            let _ = http(&self.addr, "DELETE", &format!("/session/{}", self.session), None);
        }
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

fn base64(s: &str) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        _ => 63,
    };
    let bytes: Vec<u8> = s.bytes().filter(|c| !c.is_ascii_whitespace() && *c != b'=').map(value).collect();
    let mut out = Vec::with_capacity(bytes.len() * 3 / 4);
    for chunk in bytes.chunks(4) {
        let n = chunk.iter().enumerate().fold(0u32, |acc, (i, &v)| acc | (v as u32) << (18 - 6 * i));
        out.extend_from_slice(&n.to_be_bytes()[1..chunk.len()]);
    }
    out
}

const ENTER: &str = "\u{E007}";

#[test]
fn the_page_in_a_browser() {
    let s = Server::start();
    let Some(b) = Browser::start() else { return };
    b.session("POST", "/url", json!({ "url": s.url() }));
    // The first preset (map) is loaded and compiled.
    b.wait_for("the preset's WGSL", "return document.getElementById('wgsl').textContent.includes('fn map(')");
    // Type a kernel: select all, delete, type it line by line (the editor
    // indents; `}` dedents).
    let lines = [
        "#[kernel(workgroup_size = 64)]",
        "fn triple(a: &[f32], out: &mut [f32]) {",
        "let i = global_id().x;",
        "if i < out.len() {",
        "out[i] = a[i] * 3.0;",
        "}",
        "}",
    ];
    b.click(".cm-content");
    b.type_into(".cm-content", "\u{E009}a\u{E000}\u{E003}");
    b.type_into(".cm-content", &lines.join(ENTER));
    let text = b.wait_for(
        "the typed kernel's WGSL",
        "return document.getElementById('wgsl').textContent.includes('fn triple(') && document.getElementById('status').textContent.startsWith('compiled') && document.getElementById('wgsl').textContent",
    );
    assert!(text.as_str().unwrap().contains("* 3f"), "{text}");
    let typed = b.script("return document.querySelector('.cm-content').innerText");
    assert!(typed.as_str().unwrap().contains("        out[i] = a[i] * 3.0;"), "{typed}");
    // Break it on line 4: an underline appears on that line, with the message.
    b.type_into(".cm-content", "\u{E009}\u{E011}\u{E000}"); // Ctrl+Home
    for _ in 0..3 {
        b.type_into(".cm-content", "\u{E015}"); // Down
    }
    b.type_into(".cm-content", "\u{E010}"); // End: line 4, `if i < out.len() {`
    b.type_into(".cm-content", &format!("{ENTER}let label = format!(\"v\");"));
    b.wait_for_eq(
        "the underline on line 5, under the macro call",
        "const r = document.querySelector('.cm-lintRange-error'); if (!r) return null; \
         const lines = [...document.querySelectorAll('.cm-content .cm-line')]; \
         return [lines.indexOf(r.closest('.cm-line')) + 1, r.textContent, document.getElementById('status').textContent]",
        json!([5, "format!(\"v\")", "1 error"]),
    );
    let problems = b.script("return document.getElementById('problems').textContent");
    assert!(
        problems.as_str().unwrap().contains("macros such as `format!` are not supported in a kernel"),
        "{problems}"
    );
    assert!(problems.as_str().unwrap().contains("help: a kernel has no strings"), "{problems}");
    // Fix it again (undo the typing), and run it on 100 elements of `i`.
    let typed = typed.as_str().unwrap().to_string();
    for _ in 0..6 {
        b.type_into(".cm-content", "\u{E009}z\u{E000}");
        std::thread::sleep(Duration::from_millis(200));
        if b.script("return document.querySelector('.cm-content').innerText") == json!(typed) {
            break;
        }
    }
    b.wait_for("the fix", "return document.querySelector('.cm-lintRange-error') === null && document.getElementById('status').textContent.startsWith('compiled')");
    b.click("button[data-tab=run]");
    b.wait_for("the inputs form", "return document.querySelector('#inputs tr[data-param=a] [data-field=formula]')");
    for (css, value) in [
        ("#inputs tr[data-param=a] [data-field=formula]", "i"),
        ("#inputs tr[data-param=a] [data-field=len]", "100"),
        ("#inputs tr[data-param=out] [data-field=len]", "100"),
        ("#grid-x", "100"),
    ] {
        b.clear(css);
        b.type_into(css, value);
    }
    b.script("document.querySelector('#inputs tr[data-param=a] [data-field=mode]').value = 'formula'; document.querySelector('#inputs tr[data-param=a] [data-field=mode]').onchange(); return null");
    b.click("#run-button");
    let value = b.wait_for(
        "the outputs",
        "const td = document.querySelector('td[data-output=out][data-i=\"33\"]'); return td && td.textContent",
    );
    assert_eq!(value, "99");
    let info = b.script("return document.getElementById('run-info').textContent");
    assert!(info.as_str().unwrap().contains("2 × 1 × 1 workgroups of 64 × 1 × 1 = 128 invocations"), "{info}");
    assert!(info.as_str().unwrap().contains("kernel time:"), "{info}");
    // The explain view: pointing at a row marks its line in the editor.
    b.click("button[data-tab=explain]");
    let marked = b.script(
        "const tr = document.querySelector('#explain tr[data-line=\"5\"]'); tr.dispatchEvent(new MouseEvent('mouseenter')); \
         const m = document.querySelector('.ok-marked-line'); return [tr.cells[1].classList.contains('hot'), m && m.textContent.trim()]",
    );
    assert_eq!(marked, json!([true, "out[i] = a[i] * 3.0;"]));
    b.script("document.querySelector('#explain tr[data-line=\"5\"]').dispatchEvent(new MouseEvent('mouseleave')); return null");
    // A kernel with const parameters: the field appears, its values
    // specialise the WGSL, and the run uses them.
    b.script(&format!("editor.setText({}); return null", json!(CONSTS)));
    b.wait_for(
        "the const field",
        "return !document.getElementById('consts-form').hidden && document.getElementById('consts-names').textContent === 'N: u32, M: i32 ='",
    );
    b.type_into("#consts", "N=3, M=-2");
    b.wait_for(
        "the specialised WGSL",
        "return document.getElementById('wgsl').textContent.includes('const N: u32 = 3u;') && document.getElementById('status').textContent.includes('specialised: N = 3, M = -2')",
    );
    b.click("button[data-tab=run]");
    b.click("#run-button");
    let value = b.wait_for(
        "the specialised kernel's outputs",
        "const td = document.querySelector('td[data-output=out][data-i=\"33\"]'); return td && td.textContent === '-63' && td.textContent",
    );
    assert_eq!(value, "-63", "33 * M + 0 + 1 + 2");
    b.clear("#consts");
    b.type_into("#consts", "N=3, M=z");
    b.wait_for("the error", "return document.getElementById('consts').classList.contains('invalid') && document.getElementById('status').textContent.includes('`z` is not an `i32`')");
    // The screenshot of the docs: the matmul preset, run, on the Run tab.
    b.session("POST", "/url", json!({ "url": format!("{}?preset=matmul", s.url()) }));
    b.wait_for("matmul", "return document.getElementById('wgsl').textContent.includes('fn matmul(')");
    b.click("button[data-tab=run]");
    b.click("#run-button");
    b.wait_for("matmul's outputs", "return document.querySelector('td[data-output=c]')");
    b.script("document.getElementById('run-button').scrollIntoView(); return null");
    let png = b.screenshot();
    assert!(png.starts_with(b"\x89PNG"), "not a PNG");
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("playground.png");
    std::fs::write(&path, &png).unwrap();
    eprintln!("screenshot: {}", path.display());
    if std::env::var_os("ONEKERNEL_UPDATE_SCREENSHOT").is_some() {
        let docs = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/book/src/img/playground.png");
        std::fs::write(&docs, &png).unwrap();
        eprintln!("screenshot: {}", docs.display());
    }
}

/// Deeply nested kernels (every recursive form, thousands of levels, up to
/// the source size limit) are one error each, and the server lives on: a
/// normal request afterwards succeeds. (A kernel of 150 nested parentheses
/// used to overflow a blocking thread's stack and abort the server.)
#[test]
fn deep_nesting_is_an_error_and_the_server_lives_on() {
    let s = Server::start();
    let kernel = |body: String| {
        format!("use onekernel::prelude::*;\n#[kernel(workgroup_size = 64)]\nfn k(a: &[f32], out: &mut [f32]) {{\n    {body}\n}}\n")
    };
    let forms: Vec<(&str, String)> = vec![
        ("parentheses", format!("out[0] = {}a[0]{};", "(".repeat(10_000), ")".repeat(10_000))),
        ("blocks", format!("{} out[0] = a[0]; {}", "{".repeat(10_000), "}".repeat(10_000))),
        ("else if", format!("if a[0] > 0.0 {{}} {}", "else if a[0] > 1.0 {} ".repeat(2_500))),
        ("array literals", format!("let v = {}a[0]{}; out[0] = 1.0;", "[".repeat(10_000), "]".repeat(10_000))),
        ("types", format!("let v: {}f32{} = 0.0; out[0] = a[0];", "[".repeat(5_000), "; 1]".repeat(5_000))),
        ("negation", format!("out[0] = {}a[0];", "-".repeat(10_000))),
        ("a sum", format!("out[0] = a[0]{};", "+a[0]".repeat(10_000))),
        ("method calls", format!("out[0] = a[0]{};", ".abs()".repeat(8_000))),
        // Past the limit, and also past syn's and the old server's reach.
        ("150 parentheses", format!("out[0] = {}a[0]{};", "(".repeat(150), ")".repeat(150))),
    ];
    for (name, body) in forms {
        let source = kernel(body);
        let (status, r) = s.post_json("/api/compile", &json!({ "source": source }));
        assert_eq!(status, 200, "{name}: {r}");
        assert_eq!(r["ok"], false, "{name}");
        let errors = r["errors"].as_array().unwrap();
        assert_eq!(errors.len(), 1, "{name}: {errors:?}");
        let message = errors[0]["message"].as_str().unwrap();
        assert!(message.contains("nested too deep: more than 128 levels"), "{name}: {message}");
        assert_eq!(errors[0]["start"]["line"], 4, "{name}: {r}");
        // A run request compiles the same way.
        let (status, r) = s.post_json(
            "/api/run",
            &json!({"source": source, "grid": {"threads": [64]}, "inputs": {"a": {"len": 64}, "out": {"len": 64}}}),
        );
        assert_eq!(status, 200, "{name}: {r}");
        assert_eq!(r["ok"], false, "{name}: {r}");
    }
    // The server is alive and compiles and runs normal kernels, and deep
    // nesting below the limit.
    let (status, r) = s.post_json("/api/compile", &json!({ "source": TRIPLE }));
    assert_eq!((status, &r["ok"]), (200, &json!(true)), "{r}");
    let deep_ok = kernel(format!("out[0] = {}a[0]{};", "(".repeat(100), ")".repeat(100)));
    let (status, r) = s.post_json("/api/compile", &json!({ "source": deep_ok }));
    assert_eq!((status, &r["ok"]), (200, &json!(true)), "{r}");
    let (status, r) = s.post_json(
        "/api/run",
        &json!({"source": TRIPLE, "grid": {"threads": [64]}, "inputs": {"a": {"len": 64}, "out": {"len": 64}}}),
    );
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["ok"], true, "{r}");
}
