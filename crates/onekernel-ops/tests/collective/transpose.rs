//! Transposes and strided copies.

use super::*;
use onekernel::ops::transpose::{self, Layout2d};

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
fn strided_copies() {
    // A 5 × 7 window of a 20 × 30 matrix, into the middle of a 10 × 9 one;
    // a column broadcast (row stride 0); a transpose through strides.
    let src: Vec<u32> = (0..600).collect();
    for (name, d) in devices() {
        let s = Buffer::from_slice(d, &src).unwrap();
        let mut dst = Buffer::<u32>::zeroed(d, 90).unwrap();
        let window = Layout2d { offset: 2 * 30 + 3, row_stride: 30, col_stride: 1 };
        let into = Layout2d { offset: 9 + 1, row_stride: 9, col_stride: 1 };
        transpose::copy_2d(d, &s, window, &mut dst, into, 5, 7).unwrap();
        let mut want = vec![0u32; 90];
        for r in 0..5 {
            for c in 0..7 {
                want[10 + r * 9 + c] = src[63 + r * 30 + c];
            }
        }
        assert_eq!(dst.read().unwrap(), want, "{name}: window");

        let mut b = Buffer::<u32>::zeroed(d, 12).unwrap();
        let row = Layout2d { offset: 5, row_stride: 0, col_stride: 1 };
        transpose::copy_2d(d, &s, row, &mut b, Layout2d::row_major(4), 3, 4).unwrap();
        assert_eq!(b.read().unwrap(), [5, 6, 7, 8, 5, 6, 7, 8, 5, 6, 7, 8], "{name}: broadcast");

        let mut t = Buffer::<u32>::zeroed(d, 600).unwrap();
        transpose::copy_2d(d, &s, Layout2d::row_major(30), &mut t, Layout2d::col_major(20), 20, 30).unwrap();
        assert_eq!(t.read().unwrap(), reference(&src, 20, 30), "{name}: strided transpose");

        let err = transpose::copy_2d(d, &s, window, &mut dst, into, 10, 7).unwrap_err();
        assert!(err.to_string().contains("ops::copy_2d") && err.to_string().contains("dst_layout"), "{err}");
        let err = transpose::transpose(d, &s, 7, 7).unwrap_err();
        assert!(err.to_string().contains("ops::transpose") && err.to_string().contains("`src`"), "{err}");
    }
}

#[test]
fn the_tiled_transpose_has_no_races() {
    let d = Device::cpu_race_checked();
    let a: Vec<i32> = (0..70 * 45).collect();
    let got = transpose::transpose(&d, &Buffer::from_slice(&d, &a).unwrap(), 70, 45).unwrap().read().unwrap();
    assert_eq!(got, reference(&a, 70, 45));
}
