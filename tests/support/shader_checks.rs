//! Checks every test suite runs on generated shaders: the SPIR-V passes
//! `spirv-val` (SPIRV-Tools; Debian's `spirv-tools` package, installed by
//! .ci/run) and the WGSL re-parses and validates in naga's WGSL front end.

use std::process::Command;

/// Runs `spirv-val` on `words`; fails the test with its output otherwise.
pub fn spirv_val(name: &str, words: &[u32]) {
    let path = std::env::temp_dir().join(format!("kernel-test-{}-{name}.spv", std::process::id()));
    std::fs::write(&path, bytemuck::cast_slice::<u32, u8>(words)).unwrap();
    let out = Command::new("spirv-val")
        .args(["--target-env", "vulkan1.1"])
        .arg(&path)
        .output()
        .unwrap_or_else(|e| panic!("spirv-val is needed (apt-get install spirv-tools): {e}"));
    let _ = std::fs::remove_file(&path);
    assert!(
        out.status.success(),
        "spirv-val rejected `{name}`:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// [`reparse`] on every module of the kernel's table, and [`spirv_val`] on
/// every SPIR-V it holds: each module a program embeds.
#[allow(dead_code)]
pub fn every_module(name: &str, kernel: &onekernel::abi::KernelInfo) {
    assert!(!kernel.modules.is_empty(), "`{name}` has no modules");
    for m in kernel.modules.iter() {
        let name = format!("{name}-{}", m.key).replace(' ', "-");
        reparse(&name, &m.wgsl);
        if let Some(words) = &m.spirv {
            spirv_val(&name, words);
        }
    }
}

/// Parses and validates `wgsl` with naga, with the capabilities of the
/// wide types (`f16`, `f64`, `i64`/`u64`), which a kernel may use when the
/// device has them.
pub fn reparse(name: &str, wgsl: &str) {
    use naga::valid::Capabilities as C;
    let module = naga::front::wgsl::parse_str(wgsl)
        .unwrap_or_else(|e| panic!("`{name}` WGSL does not parse:\n{}", e.emit_to_string(wgsl)));
    naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        C::SHADER_FLOAT16.union(C::FLOAT64).union(C::SHADER_INT64).union(C::SUBGROUP),
    )
    .validate(&module)
    .unwrap_or_else(|e| panic!("`{name}` WGSL does not validate:\n{}", e.emit_to_string(wgsl)));
}

/// [`reparse`] for kernels with matrix tiles (naga's cooperative matrices).
#[allow(dead_code)]
pub fn reparse_with_tiles(name: &str, wgsl: &str) {
    use naga::valid::Capabilities as C;
    let module = naga::front::wgsl::parse_str(wgsl)
        .unwrap_or_else(|e| panic!("`{name}` WGSL does not parse:\n{}", e.emit_to_string(wgsl)));
    let info = naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        C::SHADER_FLOAT16.union(C::SUBGROUP).union(C::COOPERATIVE_MATRIX),
    )
    .validate(&module)
    .unwrap_or_else(|e| panic!("`{name}` WGSL does not validate:\n{}", e.emit_to_string(wgsl)));
    // What wgpu does with that text on Vulkan: naga 30's SPIR-V back end
    // once panicked on a tile store with an inline offset (H200).
    // wgpu first resolves the pipeline constants (a checked module's
    // `override loop_budget`), here to their defaults.
    let (module, info) = naga::back::pipeline_constants::process_overrides(&module, &info, None, &Default::default())
        .unwrap_or_else(|e| panic!("`{name}`: the pipeline constants do not resolve: {e}"));
    let options = naga::back::spv::Options { lang_version: (1, 5), ..Default::default() };
    naga::back::spv::write_vec(&module, &info, &options, None)
        .unwrap_or_else(|e| panic!("`{name}`: the SPIR-V back end fails on the re-parsed WGSL: {e}"));
}
