//! Plain-Rust references: each kernel body as an ordinary sequential loop
//! over the thread index `i` with ordinary slices. Where that is the
//! kernel's own body, it is generated from the kernel's tokens
//! (`kernels_with_references!` in `kernels.rs`, re-exported here); the
//! functions below are the references written another way (kernels that
//! are not a loop over `i`, or that compute on the GPU what Rust computes
//! differently on the host).
#![allow(clippy::all, unused_parens, unused_mut)]

pub use crate::kernels::generated_reference::*;
use crate::kernels::{collatz_steps, smoothstep};
use onekernel::prelude::*;

pub fn helpers_and_scalars(
    count: usize,
    a: &[f32],
    out: &mut [f32],
    steps: &mut [u32],
    lo: f32,
    hi: f32,
    offset: i32,
    scale: u32,
) {
    for i in 0..count {
        let lo = lo;
        let hi = hi;
        let offset = offset;
        let mut scale = scale;
        (|| {
            if i < a.len() {
                scale += 1;
                out[i] = smoothstep(lo, hi, a[i]) * scale as f32 + offset as f32;
                steps[i] = collatz_steps(i as u32 + 1);
            }
        })();
    }
}

pub fn unrolled(count: usize, a: &[f32], out: &mut [f32]) {
    for i in 0..count {
        const T: usize = 4;
        let mut tile = [[0.0f32; T]; T];
        for r in 0..T {
            for c in 0..=3 {
                tile[r][c] = a[i] * (r * T + c) as f32;
            }
        }
        let mut s = 0.0f32;
        for k in (0..T).rev() {
            s = s * 0.5 + tile[k][k];
        }
        for mut k in (1..8).step_by(3) {
            k += 1;
            s += tile[k % T][(k + 1) % T];
        }
        out[i] = s;
    }
}

pub fn unrolled_in_helper(count: usize, a: &[f32], out: &mut [f32]) {
    for i in 0..count {
        let x = a[i];
        out[i] = ((x + 3.0) * x + 5.0) * x + 7.0;
    }
}

pub fn split_arrays(count: usize, a: &[f32], out: &mut [f32]) {
    for i in 0..count {
        let x = a[i];
        let mut p = [1.5f32; 4];
        let mut v = [Vec2::ZERO; 3];
        let mut m = [[0.0f32; 2]; 2];
        let mut l = [x, 2.0 * x, -x];
        for j in 0..4 {
            p[j] = p[j] * x + j as f32;
        }
        for j in 0..3 {
            v[j] = Vec2::new(p[j], l[2 - j]);
            v[j].y += p[j + 1];
            l[j] -= 0.25;
        }
        for r in 0..2 {
            for c in 0..2 {
                m[r][c] = v[r + c].x - v[c].y;
            }
        }
        // `p` is read whole by the copy: it stays an array, `q` splits.
        let mut q = p;
        q[0] += m[1][1];
        out[i * 3] = q[0] + q[3] * l[1];
        let mut g = [[x, 1.0f32], [2.0, 0.5 * x]];
        g[1][0] += m[0][0];
        out[i * 3 + 1] = m[0][1] * v[2].y + g[0][0] * g[1][1] + g[1][0] - g[0][1];
        out[i * 3 + 2] = p[2] + l[0] + l[2];
    }
}

use onekernel::half::f16;

pub fn wide_shared(a: &[f64], q: &[i64], h: &[f16], out: &mut [f64], qout: &mut [i64], hout: &mut [f16]) {
    for i in 0..a.len() {
        let (t, block) = (i % 64, i / 64);
        let j = block * 64 + 63 - t;
        if j < a.len() {
            out[i] = a[j] * 2.0;
            qout[i] = q[j] - 1;
            hout[i] = h[j] + f16::ONE;
        }
    }
}

/// `kernels::generic_num`, generic over the same bound.
pub fn generic_num<T: Num>(a: &[T], b: &[T], s: T) -> Vec<T> {
    let mut out = Vec::new();
    for (&x, &y) in a.iter().zip(b) {
        out.push(x * s + y - x.min(y));
        out.push(if x < y { y - x } else { x - y } + T::ONE);
        out.push(x.max(y).clamp(T::ZERO, s * s) + x % y);
        out.push(if x == y { T::MIN } else { T::MAX });
    }
    out
}

/// `kernels::generic_float`.
pub fn generic_float<T: Float>(a: &[T]) -> (Vec<T>, Vec<u32>) {
    let mut out = Vec::new();
    let two = T::ONE + T::ONE;
    for &x in a {
        out.push(-x.abs().sqrt() + x.floor() + x.ceil() * two + x.round() + x.trunc());
        out.push(x.mul_add(x, T::ONE).recip() + x.signum() + x.fract());
        out.push(x.max(-T::ONE).min(T::ONE));
    }
    let flags = a.iter().map(|x| x.is_nan() as u32 + x.is_finite() as u32 * 2 + x.is_infinite() as u32 * 4);
    (out, flags.collect())
}

/// `kernels::generic_int`.
pub fn generic_int<T: Int>(a: &[T], b: &[T]) -> Vec<T> {
    let mut out = Vec::new();
    for (&x, &y) in a.iter().zip(b) {
        out.push((x & y) | (x ^ !y));
        out.push((x << 3u32) >> 1u32);
        out.push(x.wrapping_mul(y).wrapping_add(T::MAX).wrapping_sub(y));
        out.push(if y != T::ZERO { x / y + x % y } else { T::MIN });
    }
    out
}

/// `kernels::generic_reverse`: each workgroup of 64 reversed, the missing
/// elements of the last one read as zero.
pub fn generic_reverse<T: Num>(a: &[T]) -> Vec<T> {
    (0..a.len()).map(|g| a.get(g - g % 64 + 63 - g % 64).copied().unwrap_or(T::ZERO)).collect()
}

/// `kernels::own_elements` over `invocations` invocations (the grid's,
/// whole workgroups).
pub fn own_elements(invocations: usize, a: &[f32], b: &[u32], s: f32, out: &mut [f32], flags: &mut [u32]) {
    for i in 0..invocations.min(out.len()) {
        out[i] += a[i] * (s * 2.0) + i as f32;
        if b[i] % 3 == 0 {
            flags[i] = b[i] + flags.len() as u32;
        } else {
            flags[i] ^= 1;
        }
    }
}

/// The `f16_vectors` kernel on the host's `F16Vec4`/`F16Vec2`, block by
/// block (`y` is the next element of the block's tile, zero past the end).
#[allow(clippy::too_many_arguments)]
pub fn f16_vectors(
    a: &[F16Vec4],
    b: &[F16Vec2],
    s: f16,
    k: F16Vec4,
    out: &mut [F16Vec4],
    out2: &mut [F16Vec2],
    wide: &mut [Vec4],
    dots: &mut [f16],
) {
    for i in 0..a.len() {
        let x = a[i];
        let next = i / 64 * 64 + (i % 64 + 1) % 64;
        let y = a.get(next).copied().unwrap_or(F16Vec4::ZERO);
        let o = i * 4;
        let mut v = x + y * s - F16Vec4::ONE;
        v.x = v.y * s;
        v[3] = -v[3] + x[i % 4];
        v += k;
        v /= s;
        out[o] = v;
        out[o + 1] = (x * y - k) / F16Vec4::splat(s) + s * x;
        out[o + 2] = x.min(y).max(F16Vec4::ZERO) + F16Vec4::new(x.w, x.z, x.y, x.x) - s / (x * x + F16Vec4::ONE);
        out[o + 3] = F16Vec4::from_vec4(x.to_vec4() * 0.3 + Vec4::new(0.1, 0.2, 0.3, 0.4));
        let p = b[i];
        let q = F16Vec2::new(p.y, p.x);
        out2[i * 2] = p * p - F16Vec2::splat(s) + q;
        out2[i * 2 + 1] = F16Vec2::from_vec2(p.to_vec2() * 1.5).min(p).max(-p) - F16Vec2::new(s, s * s);
        wide[i] = x.to_vec4() + y.to_vec4() * 0.5;
        let (xr, yr) = (F16Vec4::from_vec4(x.to_vec4().round()), F16Vec4::from_vec4(y.to_vec4().round()));
        let pr = F16Vec2::from_vec2(p.to_vec2().round());
        dots[i] = xr.dot(yr) - pr.dot(pr) + if x == y || p != q { f16::ONE } else { f16::ZERO };
    }
}

/// `subgroup_ids` on `count` threads for subgroups of `size` lanes.
pub fn subgroup_ids(count: usize, size: u32) -> Vec<u32> {
    (0..count)
        .flat_map(|i| {
            let t = (i % 48) as u32;
            [7, t / size + 1000 * 48u32.div_ceil(size), size]
        })
        .collect()
}
