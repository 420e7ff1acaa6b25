//! `ops::sort` against Rust's stable sort on the mapped keys.

use super::common::{devices, gpu, hash, LENGTHS};
use onekernel::ops::sort::{sort, sort_into, sort_pairs, sort_pairs_into, Order, SortKey, SortScratch};
use onekernel::prelude::*;

/// Keys with many duplicates (digits repeat), the extremes, and for `f32`
/// NaNs of both signs, infinities and both zeros.
fn keys_u32(n: usize, seed: u32) -> Vec<u32> {
    (0..n)
        .map(|i| match hash(i, seed) % 8 {
            0 => 0,
            1 => u32::MAX,
            2 => hash(i, seed) % 5,
            _ => hash(i, seed + 1),
        })
        .collect()
}

fn keys_i32(n: usize, seed: u32) -> Vec<i32> {
    keys_u32(n, seed).into_iter().map(|k| k as i32).collect()
}

fn keys_f32(n: usize, seed: u32) -> Vec<f32> {
    (0..n)
        .map(|i| match hash(i, seed) % 12 {
            0 => f32::NAN,
            1 => -f32::NAN,
            2 => f32::INFINITY,
            3 => f32::NEG_INFINITY,
            4 => 0.0,
            5 => -0.0,
            6 => (hash(i, seed + 2) % 4) as f32 - 2.0,
            _ => f32::from_bits(hash(i, seed + 1) & 0xbfff_ffff),
        })
        .collect()
}

/// The expected order: a stable sort by the ordered bits (the order the
/// module documents); keys compared by their bits, NaN as `f32::NAN`.
fn reference<K: SortKey>(keys: &[K], order: Order) -> (Vec<u32>, Vec<u32>) {
    let flip = if order == Order::Descending { u32::MAX } else { 0 };
    let mut idx: Vec<u32> = (0..keys.len() as u32).collect();
    idx.sort_by_key(|&i| keys[i as usize].to_ordered(flip));
    let bits = idx.iter().map(|&i| K::from_ordered(keys[i as usize].to_ordered(flip), flip)).map(bits_of).collect();
    (bits, idx)
}

fn bits_of<K: SortKey>(k: K) -> u32 {
    bytemuck::cast::<K, u32>(k)
}

/// Sorts keys (and pairs with their indices) at each length, both orders;
/// on the CPU executor with the kernels if `kernels`, else rayon's sorts.
fn check_type<K: SortKey>(device: &Device, make: fn(usize, u32) -> Vec<K>, lengths: &[usize], kernels: bool) {
    let max = lengths.iter().copied().max().unwrap_or(0);
    let mut scratch = SortScratch::<u32>::new(device, max).unwrap();
    let mut keys_scratch = SortScratch::keys_only(device, max).unwrap();
    if kernels {
        scratch = scratch.kernels_on_cpu(device).unwrap();
        keys_scratch = keys_scratch.kernels_on_cpu(device).unwrap();
    }
    for &n in lengths {
        for order in [Order::Ascending, Order::Descending] {
            let keys = make(n, n as u32);
            let (want_bits, want_idx) = reference(&keys, order);
            let kb = Buffer::from_slice(device, &keys).unwrap();
            let ib = Buffer::from_slice(device, &(0..n as u32).collect::<Vec<_>>()).unwrap();
            let mut ko = Buffer::<K>::zeroed(device, n).unwrap();
            let mut io = Buffer::<u32>::zeroed(device, n).unwrap();
            let what = format!("{} n={n} {order:?} on {}", std::any::type_name::<K>(), device.name());
            sort_pairs_into(device, &kb, &ib, &mut ko, &mut io, order, &mut scratch).unwrap();
            let got: Vec<u32> = ko.read().unwrap().into_iter().map(bits_of).collect();
            assert!(got == want_bits, "{what}: keys differ");
            assert!(io.read().unwrap() == want_idx, "{what}: values (stability) differ");
            sort_into(device, &kb, &mut ko, order, &mut keys_scratch).unwrap();
            let got: Vec<u32> = ko.read().unwrap().into_iter().map(bits_of).collect();
            assert!(got == want_bits, "{what}: keys alone differ");
        }
    }
}

#[test]
fn sort_u32_i32_f32_on_the_gpu_at_every_length() {
    let gpu = gpu();
    let mut lengths = LENGTHS.to_vec();
    lengths.push((1 << 16) + 1);
    check_type(&gpu, keys_u32, &lengths, false);
    check_type(&gpu, keys_f32, LENGTHS, false);
    check_type(&gpu, keys_i32, &[0, 1, 2, 33, 257, 2049, 16385], false);
}

#[test]
fn sort_kernels_on_the_cpu_executor() {
    let cpu = Device::cpu();
    // A tile and a bit (two blocks): the kernels run cooperatively there,
    // every ballot a meeting of 32 lane futures (slow).
    check_type(&cpu, keys_f32, &[0, 1, 2, 33, 2049], true);
    check_type(&cpu, keys_i32, &[1, 255], true);
}

#[test]
fn sort_cpu_implementation_at_every_length() {
    let cpu = Device::cpu();
    check_type(&cpu, keys_u32, LENGTHS, false);
    check_type(&cpu, keys_i32, LENGTHS, false);
    check_type(&cpu, keys_f32, LENGTHS, false);
}

/// Many blocks of several tiles each (`tiles_per_block > 1` from 2^21 keys
/// on), keys whose high digits matter.
#[test]
fn sort_many_tiles_per_block_on_the_gpu() {
    let gpu = gpu();
    let n = (1 << 21) + 3;
    let keys: Vec<u32> = (0..n).map(|i| hash(i, 9)).collect();
    let mut b = Buffer::from_slice(&gpu, &keys).unwrap();
    sort(&gpu, &mut b, Order::Ascending).unwrap();
    let mut want = keys;
    want.sort_unstable();
    assert!(b.read().unwrap() == want);
}

/// Equal keys keep their order; in place, both orders, on both devices.
#[test]
fn sort_pairs_is_stable() {
    for device in devices() {
        let n = 5000;
        let keys: Vec<i32> = (0..n).map(|i| (hash(i, 3) % 7) as i32 - 3).collect();
        for order in [Order::Ascending, Order::Descending] {
            let mut kb = Buffer::from_slice(&device, &keys).unwrap();
            let mut vb = Buffer::from_slice(&device, &(0..n as u32).collect::<Vec<_>>()).unwrap();
            sort_pairs(&device, &mut kb, &mut vb, order).unwrap();
            let (k, v) = (kb.read().unwrap(), vb.read().unwrap());
            for w in 0..n - 1 {
                let (a, b) = (k[w], k[w + 1]);
                let sorted = if order == Order::Ascending { a <= b } else { a >= b };
                assert!(sorted, "{order:?} on {}: not sorted at {w}", device.name());
                if a == b {
                    assert!(v[w] < v[w + 1], "{order:?} on {}: equal keys swapped at {w}", device.name());
                }
                assert_eq!(keys[v[w] as usize], a);
            }
        }
    }
}

#[test]
fn sort_errors_name_the_argument() {
    let device = Device::cpu();
    let keys = Buffer::from_slice(&device, &[1u32, 2, 3]).unwrap();
    let mut out = Buffer::<u32>::zeroed(&device, 2).unwrap();
    let mut scratch = SortScratch::keys_only(&device, 3).unwrap();
    let e = sort_into(&device, &keys, &mut out, Order::Ascending, &mut scratch).unwrap_err();
    assert!(matches!(e, LaunchError::InvalidArgument { kernel: "ops::sort", arg: "out", .. }), "{e:?}");
    let mut out = Buffer::<u32>::zeroed(&device, 3).unwrap();
    let mut small = SortScratch::keys_only(&device, 2).unwrap();
    let e = sort_into(&device, &keys, &mut out, Order::Ascending, &mut small).unwrap_err();
    assert!(matches!(e, LaunchError::InvalidArgument { arg: "scratch", .. }), "{e}");
    let gpu = gpu();
    let keys = Buffer::from_slice(&gpu, &[1u32, 2, 3]).unwrap();
    let vals = Buffer::from_slice(&gpu, &[1u32, 2, 3]).unwrap();
    let (mut ko, mut vo) = (Buffer::zeroed(&gpu, 3).unwrap(), Buffer::zeroed(&gpu, 3).unwrap());
    let mut keys_only = SortScratch::keys_only(&gpu, 3).unwrap();
    let e = sort_pairs_into(&gpu, &keys, &vals, &mut ko, &mut vo, Order::Ascending, &mut keys_only).unwrap_err();
    assert!(matches!(e, LaunchError::InvalidArgument { arg: "scratch", .. }), "{e}");
}

/// The key mapping past the 1-D grid fold (2^24 + 3 threads: more blocks
/// than one grid axis holds), checked at both ends and around the fold.
#[test]
fn sort_key_mapping_past_the_grid_fold() {
    use onekernel::ops::sort::kernels::f32_to_ordered_kernel;
    let gpu = gpu();
    let n = (1 << 24) + 3;
    let keys: Vec<f32> = (0..n).map(|i| f32::from_bits(hash(i, 4))).collect();
    let kb = Buffer::from_slice(&gpu, &keys).unwrap();
    let mut out = Buffer::<u32>::zeroed(&gpu, n).unwrap();
    f32_to_ordered_kernel::launch(&gpu, Grid::threads(n), &kb, &mut out, u32::MAX).unwrap();
    let fold = 65535 * 256;
    for range in [0..300, fold - 300..n] {
        let got = out.read_range(range.clone()).unwrap();
        for (i, g) in range.zip(got) {
            assert_eq!(g, keys[i].to_ordered(u32::MAX), "key {i}");
        }
    }
}
