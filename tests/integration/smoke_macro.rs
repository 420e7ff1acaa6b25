use onekernel::prelude::*;

#[kernel(workgroup_size = 256)]
fn vector_add(a: &[f32], b: &[f32], out: &mut [f32]) {
    let i = global_id().x;
    if i < out.len() {
        out[i] = a[i] + b[i];
    }
}

#[helper]
fn square(x: f32) -> f32 {
    x * x
}

#[kernel(workgroup_size = 64)]
fn squares(a: &[f32], out: &mut [f32], bias: f32) {
    let i = global_id().x;
    if i < out.len() {
        out[i] = square(a[i]) + bias;
        out[i] += 1.0;
    }
}

#[test]
fn runs_on_cpu() {
    let device = Device::cpu();
    let a = Buffer::from_slice(&device, &[1.0f32, 2.0, 3.0]).unwrap();
    let b = Buffer::from_slice(&device, &[10.0f32, 20.0, 30.0]).unwrap();
    let mut out = Buffer::zeroed(&device, 3).unwrap();
    vector_add::launch(&device, 3, &a, &b, &mut out).unwrap();
    assert_eq!(out.read().unwrap(), vec![11.0, 22.0, 33.0]);
    squares::launch(&device, 3, &a, &mut out, 0.5).unwrap();
    assert_eq!(out.read().unwrap(), vec![2.5, 5.5, 10.5]);
    println!("{}", squares::WGSL);
}

/// The in-place update pattern of the book's launch chapter (one `&mut [T]`
/// parameter read and written), which `launch(&d, n, &x, &mut x)` cannot be.
#[kernel(workgroup_size = 256)]
fn scale_in_place(x: &mut [f32], s: f32) {
    let i = global_id().x;
    if i < x.len() {
        x[i] = x[i] * s;
    }
}

#[test]
fn scales_in_place_on_cpu_and_gpu() {
    let data: Vec<f32> = (0..1000).map(|i| i as f32 * 0.5 - 7.0).collect();
    let expected: Vec<f32> = data.iter().map(|v| v * 3.0).collect();
    let gpu = Device::gpu().expect("the test needs a GPU adapter (source .ci/env.sh for lavapipe)");
    for device in [Device::cpu(), gpu] {
        let mut x = Buffer::from_slice(&device, &data).unwrap();
        scale_in_place::launch(&device, data.len(), &mut x, 3.0).unwrap();
        assert_eq!(x.read().unwrap(), expected, "{device:?}");
    }
}

/// A kernel written by `macro_rules!` whose local is named by a
/// metavariable (`$acc`) and assigned in the macro's own tokens with a
/// fragment of the caller's (`{ $($step)* }`): the CPU body must name the
/// local with the token's own hygiene, not with the joined span of the
/// whole assignment (which nightly rustc resolves with the macro's
/// context: "cannot find value `acc`").
macro_rules! running_kernel {
    ($name:ident, |$acc:ident, $v:ident| $($step:tt)*) => {
        #[kernel(workgroup_size = 64)]
        fn $name(x: &[u32], out: &mut [u32]) {
            let i = global_id().x;
            if i < out.len() {
                let mut $acc = 0u32;
                let mut j = 0;
                while j <= i {
                    let $v = x[j];
                    $acc = { $($step)* };
                    j += 1;
                }
                let mut arr = [$acc; 2];
                arr[1] = { let $v = 1u32; $($step)* };
                out[i] = arr[1];
            }
        }
    };
}

running_kernel!(running_sum_plus_one, |acc, v| acc.wrapping_add(v));

#[test]
fn macro_rules_local_assigned_across_fragments() {
    let x = [3u32, 1, 4, 1, 5];
    let want: Vec<u32> = (0..x.len()).map(|i| x[..=i].iter().sum::<u32>() + 1).collect();
    for device in [Some(Device::cpu()), Device::gpu().ok()].into_iter().flatten() {
        let xb = Buffer::from_slice(&device, &x).unwrap();
        let mut out = Buffer::zeroed(&device, x.len()).unwrap();
        running_sum_plus_one::launch(&device, x.len(), &xb, &mut out).unwrap();
        assert_eq!(out.read().unwrap(), want, "{}", device.name());
    }
}
