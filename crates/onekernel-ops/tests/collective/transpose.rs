//! Transposes and strided copies.

use super::*;
use onekernel::ops::transpose;

fn reference<T: Copy>(a: &[T], rows: usize, cols: usize) -> Vec<T> {
    (0..cols * rows).map(|i| a[(i % rows) * cols + i / rows]).collect()
}

#[test]
fn transposes_against_plain_rust() {
    for (rows, cols) in [(0, 5), (1, 1), (1, 33), (33, 1), (31, 32), (32, 33), (257, 255), (1000, 777)] {
        let a: Vec<f32> = (0..rows * cols).map(|i| hash(i, 41) as f32).collect();
        let h: Vec<f16> = (0..rows * cols).map(|i| f16::from_bits(hash(i, 42) as u16)).collect();
        let w: Vec<u64> = (0..rows * cols).map(|i| (hash(i, 43) as u64) << 32 | i as u64).collect();
        for (name, d) in devices_for(rows * cols) {
            let what = format!("{name}: {rows}x{cols}");
            let got = transpose::transpose(d, &Buffer::from_slice(d, &a).unwrap(), rows, cols).unwrap().read().unwrap();
            assert!(got.iter().zip(reference(&a, rows, cols)).all(|(x, y)| x.to_bits() == y.to_bits()), "{what} f32");
            // f16 bit patterns, NaNs included, move unchanged.
            let got = transpose::transpose(d, &Buffer::from_slice(d, &h).unwrap(), rows, cols).unwrap().read().unwrap();
            assert!(got.iter().zip(reference(&h, rows, cols)).all(|(x, y)| x.to_bits() == y.to_bits()), "{what} f16");
            let got = transpose::transpose(d, &Buffer::from_slice(d, &w).unwrap(), rows, cols).unwrap().read().unwrap();
            assert_eq!(got, reference(&w, rows, cols), "{what} u64");
        }
    }
}

#[test]
fn copies_of_views() {
    // A 5 × 7 window of a 20 × 30 matrix, into the middle of a 10 × 9 one;
    // one column into a buffer of one column.
    let src: Vec<u32> = (0..600).collect();
    for (name, d) in devices() {
        let s = Buffer::from_slice(d, &src).unwrap();
        let mut dst = Buffer::<u32>::zeroed(d, 90).unwrap();
        let window = s.view_2d(20, 30).unwrap().slice_rows(2..7).unwrap().slice_cols(3..10).unwrap();
        {
            let mut into = dst.view_2d_mut(10, 9).unwrap().slice_rows(1..6).unwrap().slice_cols(1..8).unwrap();
            transpose::copy_2d(d, window, &mut into).unwrap();
        }
        let mut want = vec![0u32; 90];
        for r in 0..5 {
            for c in 0..7 {
                want[10 + r * 9 + c] = src[63 + r * 30 + c];
            }
        }
        assert_eq!(dst.read().unwrap(), want, "{name}: window");

        let mut col = Buffer::<u32>::zeroed(d, 20).unwrap();
        transpose::copy_2d(d, s.view_2d(20, 30).unwrap().col(4).unwrap(), &mut col.view_2d_mut(20, 1).unwrap())
            .unwrap();
        assert_eq!(col.read().unwrap(), (0..20).map(|r| r * 30 + 4).collect::<Vec<u32>>(), "{name}: column");

        let mut small = dst.view_2d_mut(10, 9).unwrap().slice_rows(..2).unwrap();
        let err = transpose::copy_2d(d, window, &mut small).unwrap_err();
        assert!(err.to_string().contains("ops::copy_2d") && err.to_string().contains("`dst`"), "{err}");
        let err = transpose::transpose(d, &s, 7, 7).unwrap_err();
        assert!(err.to_string().contains("ops::transpose") && err.to_string().contains("`src`"), "{err}");
    }
}

/// Every plan the tuner may choose on the GPU (`f16` as `u32` pairs,
/// `f32` as words, the tiles) at the edges of their tiles.
#[test]
fn every_plan_on_the_gpu() {
    let d = gpu();
    let shapes = [(1, 1), (2, 2), (1, 33), (33, 1), (31, 32), (32, 33), (2, 64), (64, 2), (62, 66), (64, 64)];
    let shapes = shapes.into_iter().chain([(66, 130), (130, 126), (128, 128), (200, 8), (1000, 778), (1000, 777)]);
    // The register blocks: one block, partial workgroups each way, whole ones.
    let shapes = shapes.chain([(4, 4), (8, 8), (4, 12), (68, 8), (136, 264), (256, 128), (1000, 776), (16, 200)]);
    for (rows, cols) in shapes {
        let h: Vec<f16> = (0..rows * cols).map(|i| f16::from_bits(hash(i, 44) as u16)).collect();
        let a: Vec<f32> = (0..rows * cols).map(|i| hash(i, 45) as f32).collect();
        let (bh, ba) = (Buffer::from_slice(d, &h).unwrap(), Buffer::from_slice(d, &a).unwrap());
        let multiple = |k: usize| rows % k == 0 && cols % k == 0;
        let plans = transpose::candidates::<f16>(d, rows, cols);
        assert_eq!(plans.contains(&transpose::TransposePlan::Pairs), multiple(2), "{rows}x{cols}: {plans:?}");
        assert_eq!(plans.contains(&transpose::TransposePlan::Octets), multiple(8), "{rows}x{cols}: {plans:?}");
        assert_eq!(plans.contains(&transpose::TransposePlan::Octets2), multiple(8), "{rows}x{cols}: {plans:?}");
        assert!(plans.contains(&transpose::TransposePlan::Tiles), "{rows}x{cols}: {plans:?}");
        for plan in plans {
            let mut out = Buffer::<f16>::zeroed(d, rows * cols).unwrap();
            transpose::transpose_with_plan(d, &bh, rows, cols, &mut out, plan).unwrap();
            let got = out.read().unwrap();
            assert!(
                got.iter().zip(reference(&h, rows, cols)).all(|(x, y)| x.to_bits() == y.to_bits()),
                "{rows}x{cols} f16 {plan:?}"
            );
        }
        // 8-byte elements: the tiles, and the duos where both are even.
        let w: Vec<u64> = (0..rows * cols).map(|i| (hash(i, 49) as u64) << 32 | hash(i, 50) as u64).collect();
        let bw = Buffer::from_slice(d, &w).unwrap();
        let plans = transpose::candidates::<u64>(d, rows, cols);
        let duos = multiple(2).then_some(transpose::TransposePlan::Duos);
        let want: Vec<_> = [Some(transpose::TransposePlan::Tiles), duos].into_iter().flatten().collect();
        assert_eq!(plans, want, "{rows}x{cols} u64");
        for plan in plans {
            let mut out = Buffer::<u64>::zeroed(d, rows * cols).unwrap();
            transpose::transpose_with_plan(d, &bw, rows, cols, &mut out, plan).unwrap();
            assert_eq!(out.read().unwrap(), reference(&w, rows, cols), "{rows}x{cols} u64 {plan:?}");
        }
        let plans = transpose::candidates::<f32>(d, rows, cols);
        let quads = multiple(4).then_some(transpose::TransposePlan::Quads);
        let quads2 = multiple(4).then_some(transpose::TransposePlan::Quads2);
        let want: Vec<_> =
            [Some(transpose::TransposePlan::Words), quads, quads2, Some(transpose::TransposePlan::Tiles)]
                .into_iter()
                .flatten()
                .collect();
        assert_eq!(plans, want, "{rows}x{cols}");
        for plan in plans {
            let mut out = Buffer::<f32>::zeroed(d, rows * cols).unwrap();
            transpose::transpose_with_plan(d, &ba, rows, cols, &mut out, plan).unwrap();
            let got = out.read().unwrap();
            assert!(
                got.iter().zip(reference(&a, rows, cols)).all(|(x, y)| x.to_bits() == y.to_bits()),
                "{rows}x{cols} f32 {plan:?}"
            );
        }
    }
}

/// The word, pair, quad, octet and duo kernels on the CPU executor
/// (serial, and race-checked at one shape of two tiles and a partial one
/// each way) against plain Rust, at the edges of their tiles: `f32` bits as
/// words and `UVec4`s, `f16` bits as `u32` pairs and `UVec4`s, pairs of
/// words as 8-byte elements (`rows / 2` of them a column).
#[test]
fn word_and_pair_plans_on_the_cpu_executor() {
    let race = Device::cpu_race_checked();
    let shapes = [(1, 1), (2, 2), (1, 33), (33, 1), (31, 32), (32, 33), (62, 66), (130, 70), (600, 6)];
    let shapes = shapes.into_iter().chain([(4, 4), (8, 16), (72, 136), (136, 72), (8, 200)]);
    for (rows, cols) in shapes {
        let a: Vec<u32> = (0..rows * cols).map(|i| hash(i, 46)).collect();
        let want = reference(&a, rows, cols);
        let h: Vec<u16> = (0..rows * cols).map(|i| hash(i, 47) as u16).collect();
        let hwant = reference(&h, rows, cols);
        let (r, c) = (rows as u32, cols as u32);
        let race_here = (rows, cols) == (130, 70) || (rows, cols) == (136, 72);
        let devices: Vec<&Device> = if race_here { vec![serial(), &race] } else { vec![serial()] };
        for d in devices {
            let src = Buffer::from_slice(d, &a).unwrap();
            let mut out = Buffer::<u32>::zeroed(d, rows * cols).unwrap();
            transpose::words_plan(d, &src, &mut out, r, c).unwrap();
            assert_eq!(out.read().unwrap(), want, "{rows}x{cols} words");
            if rows % 2 == 0 && cols % 2 == 0 {
                let words: Vec<u32> = h.chunks(2).map(|p| p[0] as u32 | (p[1] as u32) << 16).collect();
                let src = Buffer::from_slice(d, &words).unwrap();
                let mut out = Buffer::<u32>::zeroed(d, rows * cols / 2).unwrap();
                transpose::pairs_plan(d, &src, &mut out, r, c).unwrap();
                let got: Vec<u16> = out.read().unwrap().iter().flat_map(|w| [*w as u16, (w >> 16) as u16]).collect();
                assert_eq!(got, hwant, "{rows}x{cols} pairs");
            }
            for blocks in [1, 2].into_iter().filter(|_| rows % 4 == 0 && cols % 4 == 0) {
                let quads: Vec<UVec4> = a.chunks(4).map(UVec4::from_slice).collect();
                let src = Buffer::from_slice(d, &quads).unwrap();
                let mut out = Buffer::<UVec4>::zeroed(d, rows * cols / 4).unwrap();
                transpose::blocks_plan(d, 4, blocks, &src, &mut out, r, c).unwrap();
                let got: Vec<u32> = out.read().unwrap().iter().flat_map(|v| v.to_array()).collect();
                assert_eq!(got, want, "{rows}x{cols} quads, {blocks} a thread");
            }
            if rows % 4 == 0 && cols % 2 == 0 {
                // 8-byte elements: each pair of words of `a` one element, a
                // `rows / 2 × cols` matrix of them (both even).
                let duos: Vec<UVec4> = a.chunks(4).map(UVec4::from_slice).collect();
                let src = Buffer::from_slice(d, &duos).unwrap();
                let mut out = Buffer::<UVec4>::zeroed(d, rows * cols / 4).unwrap();
                transpose::blocks_plan(d, 2, 1, &src, &mut out, r / 2, c).unwrap();
                let pairs: Vec<[u32; 2]> = a.chunks(2).map(|p| [p[0], p[1]]).collect();
                let got: Vec<u32> = out.read().unwrap().iter().flat_map(|v| v.to_array()).collect();
                let want: Vec<u32> = reference(&pairs, rows / 2, cols).concat();
                assert_eq!(got, want, "{rows}/2 x {cols} duos");
            }
            for blocks in [1, 2].into_iter().filter(|_| rows % 8 == 0 && cols % 8 == 0) {
                let word = |p: &[u16]| p[0] as u32 | (p[1] as u32) << 16;
                let octets: Vec<UVec4> = h
                    .chunks(8)
                    .map(|o| UVec4::new(word(&o[0..]), word(&o[2..]), word(&o[4..]), word(&o[6..])))
                    .collect();
                let src = Buffer::from_slice(d, &octets).unwrap();
                let mut out = Buffer::<UVec4>::zeroed(d, rows * cols / 8).unwrap();
                transpose::blocks_plan(d, 8, blocks, &src, &mut out, r, c).unwrap();
                let got: Vec<u16> = out
                    .read()
                    .unwrap()
                    .iter()
                    .flat_map(|v| v.to_array())
                    .flat_map(|w| [w as u16, (w >> 16) as u16])
                    .collect();
                assert_eq!(got, hwant, "{rows}x{cols} octets, {blocks} a thread");
            }
        }
    }
}

#[test]
fn register_blocks_are_2_4_or_8_a_side_1_or_2_a_thread() {
    let d = serial();
    let src = Buffer::from_slice(d, &[UVec4::splat(1); 9]).unwrap();
    let mut out = Buffer::<UVec4>::zeroed(d, 9).unwrap();
    let err = transpose::blocks_plan(d, 3, 1, &src, &mut out, 6, 6).unwrap_err().to_string();
    assert!(err.contains("ops::transpose") && err.contains("`side`"), "{err}");
    for (side, blocks) in [(4, 0), (8, 3), (2, 2)] {
        let err = transpose::blocks_plan(d, side, blocks, &src, &mut out, 4, 8).unwrap_err().to_string();
        assert!(err.contains("ops::transpose") && err.contains("`blocks`"), "{side} {blocks}: {err}");
    }
}

#[test]
fn the_tiled_transpose_has_no_races() {
    let d = Device::cpu_race_checked();
    let a: Vec<i32> = (0..70 * 45).collect();
    let got = transpose::transpose(&d, &Buffer::from_slice(&d, &a).unwrap(), 70, 45).unwrap().read().unwrap();
    assert_eq!(got, reference(&a, 70, 45));
}
