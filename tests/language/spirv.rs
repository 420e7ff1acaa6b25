//! Every kernel's SPIR-V (both the plain and the folded module) passes `spirv-val` (SPIRV-Tools; Debian's
//! `spirv-tools` package, installed by .ci/run), and its WGSL re-parses and
//! validates in naga's WGSL front end.

use crate::kernels;
use std::process::Command;

fn spirv_val(name: &str, words: &[u32]) {
    let path = std::env::temp_dir().join(format!("kernel-test-{}-{name}.spv", std::process::id()));
    std::fs::write(&path, bytemuck::cast_slice::<u32, u8>(words)).unwrap();
    let out = Command::new("spirv-val")
        .args(["--target-env", "vulkan1.1"])
        .arg(&path)
        .output()
        .unwrap_or_else(|e| panic!("spirv-val is needed (apt-get install spirv-tools): {e}"));
    let _ = std::fs::remove_file(&path);
    assert!(out.status.success(), "spirv-val rejected `{name}`:\n{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
}

fn reparse(name: &str, wgsl: &str) {
    let module = naga::front::wgsl::parse_str(wgsl).unwrap_or_else(|e| panic!("`{name}` WGSL does not parse:\n{}", e.emit_to_string(wgsl)));
    naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::empty())
        .validate(&module)
        .unwrap_or_else(|e| panic!("`{name}` WGSL does not validate:\n{}", e.emit_to_string(wgsl)));
}

macro_rules! check {
    ($($k:ident),* $(,)?) => {
        #[test]
        fn every_kernel_spirv_passes_spirv_val_and_wgsl_reparses() {
            $(
                spirv_val(stringify!($k), kernels::$k::SPIRV);
                reparse(stringify!($k), kernels::$k::WGSL);
                spirv_val(concat!(stringify!($k), "_folded"), kernels::$k::SPIRV_FOLDED);
                reparse(concat!(stringify!($k), "_folded"), kernels::$k::WGSL_FOLDED);
            )*
        }
    };
}

check!(vector_add, int_ops, uint_ops, float_ops, casts, float_math, int_math, control_flow, builtins_2d, folded_ids, helpers_and_scalars, literals);
