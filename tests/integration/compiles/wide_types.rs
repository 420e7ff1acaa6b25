use onekernel::prelude::*;

// What used to be refused before the wide types: an `f64` parameter and
// literal, a `u64` local, a shared `f64` array, `f16` through half's API.
// Each needs its device feature, which `KERNEL.features` lists.
#[kernel(workgroup_size = 64)]
fn wide(scale: f64, h: &[f16], out: &mut [f64], bits: &mut [u64]) {
    let tile = shared::<[f64; 64]>();
    let i = global_id().x;
    let t = thread_id().x;
    tile[t] = 0.5f64 * scale;
    workgroup_barrier();
    if i < out.len() {
        let wide: u64 = 1 << 40;
        out[i] = tile[63 - t] + h[i].to_f64() + f64::from(f16::ONE);
        bits[i] = wide | out[i].to_bits();
    }
}

// The example of docs/supported-rust.md ("Wide types").
#[kernel(workgroup_size = 64)]
fn accumulate(x: &[f16], scale: f64, out: &mut [f64], bits: &mut [u64]) {
    let i = global_id().x;
    if i < x.len() {
        out[i] = x[i].to_f64() * scale + 0.5; // `0.5` is an `f64` here
        bits[i] = out[i].to_bits() ^ (1u64 << 63);
    }
}

#[test]
fn compiles() {
    assert_eq!(accumulate::KERNEL.features, wide::KERNEL.features);
    let f = wide::KERNEL.features;
    assert!(f.contains(
        onekernel::abi::Features::F64.union(onekernel::abi::Features::INT64).union(onekernel::abi::Features::F16)
    ));
    assert!(wide::WGSL.starts_with("enable f16;"));
}
