//! The single-pass scan: decoupled look-back over a window of predecessors
//! at a time, with a fallback (Merrill and Garland's look-back; Smith and
//! Levien's "decoupled fallback", as in b0nes164/GPUPrefixSums' WebGPU
//! scans).
//!
//! Reduce-then-scan ([`super::scan_sum_uvec4`] after a reduction pass)
//! reads the input twice; this reads it once, in one launch of (with
//! `AHEAD` 0) one workgroup a tile of `U * 1024` elements (`U` 2, 4 or 8):
//!
//! 1. The tile is the workgroup's own index `t` (not one taken from an
//!    atomic counter, as in Merrill and Garland: no atomic round trip
//!    before the loads; on the H200, 2026-12-05, 25-33% faster together
//!    with the wide window of step 3). A predecessor whose workgroup has
//!    not started is waited for `max_spin` reads like any other, then
//!    reduced from its input, so no tile waits unboundedly.
//! 2. The tile is loaded (`UVec4`s, coalesced) and scanned as the
//!    subgroup scan's step: lanes in registers, thread totals by shuffles,
//!    subgroup totals in shared memory. Thread 0 publishes the tile's
//!    total: `AGGREGATE`, or `PREFIX` (everything up to and including it)
//!    for tile 0.
//! 3. The look-back, a window of `W` = min(subgroup size, 32) tiles a
//!    subgroup: lane `l` of subgroup `s` reads the words of tile
//!    `top - s W - l` (`W` times the subgroup count a step: 256 tiles
//!    with subgroups of 32, so the prefix moves up to 256 tiles a step;
//!    one subgroup's 32 bounded 2^24 at ~0.1 ms on the H200). In each
//!    window two ballots find the nearest `PREFIX` and the nearest tile
//!    not yet published. When every tile up to the nearest `PREFIX` is
//!    published, their sum (a shuffle butterfly) completes the prefix;
//!    when the whole window holds aggregates, it is added and the next
//!    window is looked at; otherwise the published ones before the waiting
//!    tile are added and the look starts again at it. Thread 0 adds the subgroups' windows in order up
//!    to the first that stops, through shared memory, and writes the step;
//!    every thread reads it with `workgroup_uniform_load`, so every thread
//!    takes the same path. After `max_spin` reads in a row with the same
//!    tile unpublished, the workgroup reduces that tile's input itself (the
//!    fallback) and goes on past it. No workgroup waits on another for
//!    more than `max_spin` reads, so nothing needs a forward-progress
//!    guarantee between workgroups (WebGPU gives none): on a device that
//!    never runs two workgroups at once the scan is slow, not stuck.
//! 4. Thread 0 publishes the tile's `PREFIX`; every thread writes its
//!    outputs from it.
//!
//! With `AHEAD` 1 a workgroup keeps two tiles in flight: launched with
//! fewer workgroups than tiles, each takes tile after tile from an atomic
//! counter (`state[0]`), the next one's index while it scans the current
//! one and the next one's loads before the current one's look-back, so
//! those loads are in flight while it waits on its predecessors and
//! stores. A counter (not `t + grid size`) because a tile is then only
//! taken by a running workgroup: every tile before it was taken before it
//! by a running one, so no workgroup waits on one that has not started,
//! however many of them the device holds at once (those past what it
//! holds start at the end and find no tile left). The last workgroup to
//! finish (`state[1]` counts them) sets both counters back to 0.
//!
//! A tile's word pair holds its value as two 16-bit halves, each beside an
//! 18-bit tag (`epoch << 2 | flag`): a word is written and read whole, so
//! a reader that finds both tags equal has both halves of one published
//! value, without ordering two atomics (WGSL's are relaxed). `epoch` (1 to
//! 16383) is the call's, counted by the scratch: a word left by an earlier
//! call carries another epoch and reads as not published, so the words need
//! no clearing between calls.
//!
//! Integer sums only (`i32`, `u32`: two's-complement sums wrap to the same
//! bits): which tiles a prefix adds up from depends on timing, so a float
//! sum's rounding would change from run to run; an integer sum does not.

use crate::prelude::*;

/// Tags cycle through epochs 1..=`MAX_EPOCH` (14 bits); the scratch clears
/// its words when the cycle starts again.
pub(crate) const MAX_EPOCH: u32 = (1 << 14) - 1;

/// How many reads in a row a tile waits for a predecessor before reducing
/// that predecessor's input itself. A running predecessor publishes within
/// its own load and scan, so this bounds a wait that on a GPU is short,
/// and only matters where workgroups starve.
pub(crate) const DEFAULT_SPIN: u32 = 256;

/// The single-pass inclusive or exclusive sum of `n4` `UVec4`s (the lanes
/// of an `i32` or `u32` buffer; sums wrap) of `x4` from `x_offset4` into
/// `out4` from `out_offset4`, in one launch of `n4.div_ceil(U * 256)`
/// workgroups (`AHEAD` 0) or of any number (`AHEAD` 1; see the module).
/// `state` holds `2 + 2 * tiles` words, `state[0]` and `state[1]` 0
/// before the launch (and again after it); `epoch` (1 to 16383) differs
/// from the epoch of the launch that last wrote the other words;
/// `max_spin`: reads of a waiting predecessor before reducing its input
/// (0: every predecessor is reduced from the input, which the tests use to
/// run the fallback). Needs subgroups of 8 lanes or more that divide 256.
#[kernel(workgroup_size = 256)]
#[allow(clippy::too_many_arguments)]
pub fn lookback_sum_uvec4<const U: usize, const AHEAD: usize>(
    x4: &[UVec4],
    out4: &mut [UVec4],
    state: &[AtomicU32],
    x_offset4: u32,
    out_offset4: u32,
    n4: u32,
    inclusive: u32,
    epoch: u32,
    max_spin: u32,
) {
    // `U` (at most 8) chunks of at most 32 subgroup totals.
    let sums = shared::<[u32; 256]>();
    // A fallback reduction's subgroup totals.
    let red = shared::<[u32; 32]>();
    // The look-back's step, the tile's exclusive prefix, the next tile.
    let info = shared::<[u32; 3]>();
    // The subgroups' windows' steps, takes and sums.
    let look = shared::<[u32; 96]>();
    let tid = thread_id().x;
    let lane = subgroup_invocation_id();
    let sg = subgroup_size() as usize;
    let wid = tid / sg;
    let nsg = 256 / sg;
    let window = sg.min(32);
    let vt = U * 256;
    let xo = x_offset4 as usize;
    let oo = out_offset4 as usize;
    // `n4` is at least 1 (an empty scan launches nothing).
    let tiles = (n4 as usize - 1) / vt + 1;
    // With `AHEAD`: the counters of tiles taken and of workgroups finished
    // (the first two words, where a scratch of any length keeps them; tile
    // `t`'s words follow at `2 + 2 t`).
    let (taken_at, finished_at) = (0usize, 1usize);
    let mut t = block_id().x;
    if AHEAD != 0 {
        if tid == 0 {
            info[2] = state[taken_at].fetch_add(1, Ordering::Relaxed);
        }
        t = workgroup_uniform_load(&info[2]) as usize;
    }
    let mut v = [UVec4::ZERO; U];
    #[unroll]
    for u in 0..U {
        let j = t * vt + u * 256 + tid;
        if j < n4 as usize {
            v[u] = x4[xo + j];
        }
    }
    // Without `AHEAD` one tile (the grid has one workgroup a tile).
    let mut going = t < tiles;
    while going {
        let start = t * vt;
        let end = (start + vt).min(n4 as usize);
        if AHEAD != 0 && tid == 0 {
            // The next tile, taken now: its index is read after the barrier
            // below, its loads issued before this tile's look-back.
            info[2] = state[taken_at].fetch_add(1, Ordering::Relaxed);
        }
        // Each thread's totals of its 4 lanes, scanned in the subgroup
        // (inclusive, then shifted by one lane); the lanes' own prefixes are
        // added again at the stores (fewer registers held across the
        // look-back: more workgroups a multiprocessor).
        let mut inc = [0u32; U];
        #[unroll]
        for u in 0..U {
            let w = v[u];
            inc[u] = w.x.wrapping_add(w.y).wrapping_add(w.z.wrapping_add(w.w));
        }
        let mut off = 1u32;
        while (off as usize) < sg {
            #[unroll]
            for u in 0..U {
                let y = subgroup_shuffle(inc[u], if lane >= off { lane - off } else { lane });
                if lane >= off {
                    inc[u] = y.wrapping_add(inc[u]);
                }
            }
            off *= 2;
        }
        let mut exc = [0u32; U];
        #[unroll]
        for u in 0..U {
            let y = subgroup_shuffle(inc[u], if lane > 0 { lane - 1 } else { 0 });
            exc[u] = if lane > 0 { y } else { 0 };
        }
        if lane as usize == sg - 1 {
            #[unroll]
            for u in 0..U {
                sums[u * 32 + wid] = inc[u];
            }
        }
        // The barrier after the subgroup totals (with `AHEAD`, the uniform
        // load's), and the next tile's loads.
        let mut nt = tiles;
        if AHEAD != 0 {
            nt = workgroup_uniform_load(&info[2]) as usize;
        } else {
            workgroup_barrier();
        }
        let mut nv = [UVec4::ZERO; U];
        if AHEAD != 0 {
            #[unroll]
            for u in 0..U {
                let j = nt * vt + u * 256 + tid;
                if j < n4 as usize {
                    nv[u] = x4[xo + j];
                }
            }
        }
        // Where each of this thread's chunks starts within the tile, and the
        // tile's total.
        let mut within = [0u32; U];
        let mut aggregate = 0u32;
        #[unroll]
        for u in 0..U {
            let mut before = 0u32;
            let mut all = 0u32;
            for s in 0..nsg {
                let sv = sums[u * 32 + s];
                if s < wid {
                    before = before.wrapping_add(sv);
                }
                all = all.wrapping_add(sv);
            }
            within[u] = aggregate.wrapping_add(before).wrapping_add(exc[u]);
            aggregate = aggregate.wrapping_add(all);
        }
        let tag = epoch << 18;
        if tid == 0 {
            // Flag 1: AGGREGATE; 2: PREFIX (tile 0's total is its prefix).
            let flag: u32 = if t == 0 { 2 } else { 1 };
            state[2 + 2 * t].store(tag | flag << 16 | (aggregate & 0xFFFF), Ordering::Relaxed);
            state[3 + 2 * t].store(tag | flag << 16 | aggregate >> 16, Ordering::Relaxed);
        }
        // The sum of every tile before this one, kept by thread 0 (lane 0 of
        // subgroup 0, whose view decides).
        let mut excl = 0u32;
        if t > 0 {
            // The nearest tile of the look; lane `l` of subgroup `s` reads
            // tile `top - s W - l`.
            let mut top = t - 1;
            let mut spins = 0u32;
            let mut more = true;
            while more {
                // Lanes past tile 0 read an empty PREFIX; lanes past the window
                // (subgroups over 32 lanes) an empty AGGREGATE.
                let mut flag = 1u32;
                let mut val = 0u32;
                // This lane's tile, back from `top`.
                let back = wid * window + lane as usize;
                if (lane as usize) < window {
                    if back <= top {
                        let j = top - back;
                        let lo = state[2 + 2 * j].load(Ordering::Relaxed);
                        let hi = state[3 + 2 * j].load(Ordering::Relaxed);
                        let seen = lo >> 16;
                        flag = 0;
                        if max_spin > 0 && seen == hi >> 16 && seen >> 2 == epoch {
                            flag = seen & 3;
                        }
                        val = hi << 16 | (lo & 0xFFFF);
                    } else {
                        flag = 2;
                    }
                }
                let prefixes = subgroup_ballot(flag == 2).x;
                let waiting = subgroup_ballot(flag == 0).x;
                let p = if prefixes != 0 { prefixes.trailing_zeros() } else { 32 };
                let q = if waiting != 0 { waiting.trailing_zeros() } else { 32 };
                // Step 0: every tile up to the nearest PREFIX is published
                // (lanes 0..=p); 1: the window holds aggregates only; 2: lane
                // `q` waits (lanes 0..q are published).
                let mut step = 2u32;
                let mut take = q;
                if q > p {
                    step = 0;
                    take = p + 1;
                } else if q == 32 {
                    step = 1;
                    take = window as u32;
                }
                let mut s = if lane < take { val } else { 0 };
                let mut off = 1u32;
                while (off as usize) < sg {
                    s = s.wrapping_add(subgroup_shuffle_xor(s, off));
                    off *= 2;
                }
                // The subgroups' windows in order: whole ones are added until
                // the first that stops (a PREFIX or a waiting tile).
                if lane == 0 {
                    look[3 * wid] = step;
                    look[3 * wid + 1] = take;
                    look[3 * wid + 2] = s;
                }
                workgroup_barrier();
                if tid == 0 {
                    let mut all = 1u32;
                    let mut taken = 0u32;
                    let mut going = true;
                    for w in 0..nsg {
                        if going {
                            excl = excl.wrapping_add(look[3 * w + 2]);
                            taken += look[3 * w + 1];
                            if look[3 * w] != 1 {
                                all = look[3 * w];
                                going = false;
                            }
                        }
                    }
                    info[0] = all | taken << 2;
                }
                // The same for every thread from here.
                let decided = workgroup_uniform_load(&info[0]);
                let done = (decided & 3) == 0;
                let whole = (decided & 3) == 1;
                let taken = (decided >> 2) as usize;
                if done {
                    more = false;
                } else {
                    top -= taken;
                    // `spins` counts reads in a row with the same tile
                    // unpublished: progress starts it again.
                    if taken > 0 {
                        spins = 0;
                    }
                    if !whole {
                        spins += 1;
                    }
                    if !whole && spins >= max_spin {
                        // The fallback: tile `top`'s total from its input.
                        let fs = top * vt;
                        let fe = (fs + vt).min(n4 as usize);
                        let mut acc = 0u32;
                        #[unroll]
                        for u in 0..U {
                            let j = fs + u * 256 + tid;
                            if j < fe {
                                let w = x4[xo + j];
                                acc = acc.wrapping_add(w.x.wrapping_add(w.y).wrapping_add(w.z.wrapping_add(w.w)));
                            }
                        }
                        let mut off = 1u32;
                        while (off as usize) < sg {
                            acc = acc.wrapping_add(subgroup_shuffle_xor(acc, off));
                            off *= 2;
                        }
                        if lane == 0 {
                            red[wid] = acc;
                        }
                        workgroup_barrier();
                        if tid == 0 {
                            for s in 0..nsg {
                                excl = excl.wrapping_add(red[s]);
                            }
                        }
                        // `red` is written again only after the next step's
                        // `workgroup_uniform_load`, a barrier.
                        spins = 0;
                        if top == 0 {
                            more = false;
                        } else {
                            top -= 1;
                        }
                    }
                }
            }
            if tid == 0 {
                let prefix = excl.wrapping_add(aggregate);
                state[2 + 2 * t].store(tag | 2 << 16 | (prefix & 0xFFFF), Ordering::Relaxed);
                state[3 + 2 * t].store(tag | 2 << 16 | prefix >> 16, Ordering::Relaxed);
            }
        }
        if tid == 0 {
            info[1] = excl;
        }
        let carry = workgroup_uniform_load(&info[1]);
        #[unroll]
        for u in 0..U {
            let pre = carry.wrapping_add(within[u]);
            let w = v[u];
            let s0 = pre.wrapping_add(w.x);
            let s1 = s0.wrapping_add(w.y);
            let s2 = s1.wrapping_add(w.z);
            let r =
                if inclusive != 0 { UVec4::new(s0, s1, s2, s2.wrapping_add(w.w)) } else { UVec4::new(pre, s0, s1, s2) };
            let j = start + u * 256 + tid;
            if j < end {
                out4[oo + j] = r;
            }
        }
        #[unroll]
        for u in 0..U {
            v[u] = nv[u];
        }
        t = nt;
        going = AHEAD != 0 && t < tiles;
    }
    // The counters' reset, by the last workgroup to finish (every
    // workgroup has taken its last index before it counts itself).
    if AHEAD != 0 && tid == 0 {
        let done = state[finished_at].fetch_add(1, Ordering::AcqRel);
        if done as usize + 1 == grid_dim().x {
            state[taken_at].store(0, Ordering::Relaxed);
            state[finished_at].store(0, Ordering::Relaxed);
        }
    }
}
