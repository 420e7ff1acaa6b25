//! `sort`: a stable radix sort of keys, or of keys with values.
//!
//! Keys are `u32`, `i32` or `f32` ([`SortKey`]); values `u32`, `i32` or
//! `f32` ([`SortValue`]). Both orders are stable: equal keys keep their
//! order. `f32` keys sort in IEEE total order (`-inf < -0.0 < 0.0 < inf`)
//! with every NaN last, in both orders; a NaN key is written back as
//! [`f32::NAN`] (its sign and payload are not kept: sort key-value pairs
//! with the indices as values to find the original).
//!
//! # How it works
//!
//! Each key is first turned into a `u32` whose unsigned order is the
//! wanted order (`to_ordered`: the sign bit flipped for `i32`, the usual
//! float trick for `f32`, every bit flipped for descending), then sorted by
//! four passes over 8-bit digits, least significant first, and turned back
//! (`from_ordered`). Each pass is three launches, none of which waits on
//! another workgroup (no decoupled look-back: WebGPU promises no forward
//! progress between workgroups, so a block spinning on another's flag may
//! hang; a launch boundary is the only global barrier every backend has):
//!
//! 1. `radix_count`: each block counts the 256 digits over its range of
//!    tiles (2048 keys each) and writes its counts to `hist[digit * blocks
//!    + block]` (digit-major);
//! 2. `radix_spine`: 256 blocks, one a digit, each scan their digit's row
//!    of `hist` (exclusive) and write its total: where each block's keys of
//!    each digit go, past the keys of smaller digits;
//! 3. `radix_scatter`: each block ranks each tile's keys by digit, stably,
//!    with subgroup ballots (eight a key: the lanes with the same digit)
//!    and per-subgroup counters in shared memory, reorders the tile there,
//!    and writes it out: keys of one digit land next to each other
//!    (coalesced). The digits' starts (a scan of the 256 totals) are
//!    computed by every block at its start. The ranking needs subgroups
//!    of 8 lanes or more (a GPU with narrower ones gets an error).
//!
//! On the CPU executor the same `to_ordered`/`from_ordered` run around
//! rayon's `par_sort_unstable` (for pairs, over one `u128` a pair: the
//! ordered key, the index, the value; the index makes it stable), faster
//! there than the kernels (documented as the issue allows); the
//! results are the same bit for bit. [`SortScratch::kernels_on_cpu`]
//! runs the kernels on the CPU executor instead (the tests do).

use crate::prelude::*;
use crate::OpError;
use onekernel_runtime::Element;
use std::any::{Any, TypeId};

/// The kernels of the radix sort (see the [module](self) docs).
#[kernels]
pub mod kernels {
    use onekernel::prelude::*;
    /// Bits of a digit: four passes sort 32-bit keys.
    pub const DIGIT_BITS: u32 = 8;
    /// Digits (buckets) of a pass.
    pub const RADIX: usize = 256;
    /// Keys per tile: the unit a block ranks at a time.
    pub const TILE: usize = 2048;
    /// Threads per block of `radix_scatter`.
    pub const THREADS: usize = 256;
    /// Keys per thread per tile in `radix_scatter` (`TILE / THREADS`).
    pub const KPT: usize = 8;
    /// The narrowest subgroup `radix_scatter` takes.
    pub const MIN_SUBGROUP: usize = 8;
    /// The most subgroups a `radix_scatter` block has.
    pub const MAX_SUBGROUPS: usize = THREADS / MIN_SUBGROUP;
    /// A subgroup's digit counters: 256 16-bit counters, two to a word.
    pub const WORDS: usize = RADIX / 2;
    /// `radix_scatter`'s digit counters, `WORDS` per subgroup (then the
    /// tile's keys in digit order).
    pub const COUNTERS: usize = MAX_SUBGROUPS * WORDS;

    /// The `u32` whose unsigned order is the order of `f32` keys: total
    /// order, every NaN last (as `u32::MAX`); `flip` is `u32::MAX` for
    /// descending (NaN stays last), else 0.
    // ANCHOR: ordered
    #[helper]
    pub fn f32_to_ordered(x: f32, flip: u32) -> u32 {
        if x.is_nan() {
            u32::MAX
        } else {
            let b = x.to_bits();
            let m = if b & 0x8000_0000 != 0 { !b } else { b | 0x8000_0000 };
            m ^ flip
        }
    }
    // ANCHOR_END: ordered

    /// The inverse of [`f32_to_ordered`] (a NaN comes back as `f32::NAN`).
    #[helper]
    pub fn f32_from_ordered(k: u32, flip: u32) -> f32 {
        if k == u32::MAX {
            f32::NAN
        } else {
            let m = k ^ flip;
            let b = if m & 0x8000_0000 != 0 { m & 0x7fff_ffff } else { !m };
            f32::from_bits(b)
        }
    }

    /// The `u32` whose unsigned order is the order of `i32` keys.
    #[helper]
    pub fn i32_to_ordered(x: i32, flip: u32) -> u32 {
        (x as u32 ^ 0x8000_0000) ^ flip
    }

    /// The inverse of [`i32_to_ordered`].
    #[helper]
    pub fn i32_from_ordered(k: u32, flip: u32) -> i32 {
        ((k ^ flip) ^ 0x8000_0000) as i32
    }

    /// `out[i] = keys[i] ^ flip`.
    #[kernel(workgroup_size = 256)]
    pub fn u32_to_ordered_kernel(keys: &[u32], out: &mut [u32], flip: u32) {
        let i = global_id().x;
        if i < keys.len() {
            out[i] = keys[i] ^ flip;
        }
    }

    /// `out[i] = bits[i] ^ flip`.
    #[kernel(workgroup_size = 256)]
    pub fn u32_from_ordered_kernel(bits: &[u32], out: &mut [u32], flip: u32) {
        let i = global_id().x;
        if i < out.len() {
            out[i] = bits[i] ^ flip;
        }
    }

    /// `out[i] = i32_to_ordered(keys[i], flip)`.
    #[kernel(workgroup_size = 256)]
    pub fn i32_to_ordered_kernel(keys: &[i32], out: &mut [u32], flip: u32) {
        let i = global_id().x;
        if i < keys.len() {
            out[i] = i32_to_ordered(keys[i], flip);
        }
    }

    /// `out[i] = i32_from_ordered(bits[i], flip)`.
    #[kernel(workgroup_size = 256)]
    pub fn i32_from_ordered_kernel(bits: &[u32], out: &mut [i32], flip: u32) {
        let i = global_id().x;
        if i < out.len() {
            out[i] = i32_from_ordered(bits[i], flip);
        }
    }

    /// `out[i] = f32_to_ordered(keys[i], flip)`.
    #[kernel(workgroup_size = 256)]
    pub fn f32_to_ordered_kernel(keys: &[f32], out: &mut [u32], flip: u32) {
        let i = global_id().x;
        if i < keys.len() {
            out[i] = f32_to_ordered(keys[i], flip);
        }
    }

    /// `out[i] = f32_from_ordered(bits[i], flip)`.
    #[kernel(workgroup_size = 256)]
    pub fn f32_from_ordered_kernel(bits: &[u32], out: &mut [f32], flip: u32) {
        let i = global_id().x;
        if i < out.len() {
            out[i] = f32_from_ordered(bits[i], flip);
        }
    }

    /// Pass step 1 (the histograms): block `b` counts the digits
    /// `(key >> shift) & 255` of its tiles `b * tiles_per_block ..` and
    /// writes the count of digit `d` to `hist[d * blocks + b]` (digit-major,
    /// so that one scan of `hist` gives every block its place). Counted in
    /// 8 shared copies (one per 32 threads: less contention on a digit).
    /// Launch with `Grid::blocks([blocks])`.
    // ANCHOR: count
    #[kernel(workgroup_size = 256)]
    pub fn radix_count(keys: &[u32], hist: &mut [u32], n: u32, shift: u32, tiles_per_block: u32, blocks: u32) {
        let counts = shared::<[AtomicU32; 2048]>();
        let t = thread_id().x;
        let b = block_id().x;
        #[unroll]
        for q in 0..8 {
            counts[q * RADIX + t].store(0, Ordering::Relaxed);
        }
        workgroup_barrier();
        let n = n as usize;
        let start = b * tiles_per_block as usize * TILE;
        let end = (start + tiles_per_block as usize * TILE).min(n);
        let copy = (t / 32) * RADIX;
        let mut base = start;
        while base < end {
            // Eight keys a thread, their loads in flight together (an index
            // past the end reads the last key and is not counted).
            let mut k = [0u32; 8];
            #[unroll]
            for j in 0..8 {
                k[j] = keys[(base + j * 256 + t).min(end - 1)];
            }
            #[unroll]
            for j in 0..8 {
                if base + j * 256 + t < end {
                    counts[copy + ((k[j] >> shift) & 255) as usize].fetch_add(1, Ordering::Relaxed);
                }
            }
            base += TILE;
        }
        workgroup_barrier();
        let mut s = 0u32;
        #[unroll]
        for q in 0..8 {
            s += counts[q * RADIX + t].load(Ordering::Relaxed);
        }
        hist[t * blocks as usize + b] = s;
    }
    // ANCHOR_END: count

    /// Pass step 2 (the scan): block `d` scans row `d` of `hist` (the
    /// counts of digit `d` in each of the `blocks` blocks) exclusively, in
    /// place, and writes the row's total to `totals[d]`. Rows are
    /// independent: 256 blocks, no block waits on another.
    /// Launch with `Grid::blocks([RADIX])`.
    // ANCHOR: spine
    #[kernel(workgroup_size = 256)]
    pub fn radix_spine(hist: &mut [u32], totals: &mut [u32], blocks: u32) {
        let sums = shared::<[u32; 256]>();
        let t = thread_id().x;
        let d = block_id().x;
        let lane = subgroup_invocation_id();
        let sg = subgroup_size() as usize;
        let blocks = blocks as usize;
        let row = d * blocks;
        let mut carry = 0u32;
        // 4 consecutive counts a thread, 1024 a round.
        let rounds = (blocks + 1023) / 1024;
        for r in 0..rounds {
            let base = r * 1024 + t * 4;
            let mut v = [0u32; 4];
            let mut total = 0u32;
            #[unroll]
            for q in 0..4 {
                v[q] = if base + q < blocks { hist[row + base + q] } else { 0 };
                total += v[q];
            }
            // Inclusive scan within the subgroup, then over the subgroups.
            let mut x = total;
            #[unroll]
            for k in 0..7 {
                let off = 1u32 << k;
                let y = subgroup_shuffle(x, if lane >= off { lane - off } else { lane });
                if lane >= off {
                    x += y;
                }
            }
            if lane as usize == sg - 1 {
                sums[t / sg] = x;
            }
            workgroup_barrier();
            let mut p = carry + x - total;
            let mut all = 0u32;
            for s in 0..256 / sg {
                let sv = sums[s];
                if s < t / sg {
                    p += sv;
                }
                all += sv;
            }
            #[unroll]
            for q in 0..4 {
                if base + q < blocks {
                    hist[row + base + q] = p;
                }
                p += v[q];
            }
            carry += all;
            // Every thread has read `sums` before the next round writes it.
            workgroup_barrier();
        }
        if t == 0 {
            totals[d] = carry;
        }
    }
    // ANCHOR_END: spine

    /// Pass step 3 (the scatter): block `b` moves the keys (and, if
    /// `with_values != 0`, the values) of its tiles to their place for
    /// digit `(key >> shift) & 255`, stably. `hist` and `totals` are
    /// `radix_spine`'s output: key `k` of digit `d` of the block goes to
    /// (the keys of smaller digits) + (digit `d`'s keys in earlier blocks)
    /// + (its rank among the block's keys of digit `d`).
    ///
    /// The rank within a tile: subgroup `w` takes the tile's keys
    /// `w * sg * KPT ..` in rounds of one key a lane; in each round, eight
    /// ballots (one per digit bit) give each lane the lanes with its digit
    /// (its peers), the lowest of them adds their number to the subgroup's
    /// counter of the digit and hands the old count to them: the rank is
    /// that count plus the peers in lower lanes. Then the counters are
    /// scanned over subgroups and digits, the tile is reordered in shared
    /// memory and written out (neighbouring threads write neighbouring
    /// keys of one digit). Nothing waits on another block. Needs
    /// subgroups of `MIN_SUBGROUP` lanes or more (at most `MAX_SUBGROUPS`
    /// a block: the counters' room). Launch with `Grid::blocks([blocks])`.
    #[kernel(workgroup_size = 256, max_shared_bytes = 32768, types = [u32, i32, f32])]
    pub fn radix_scatter<V: Num>(
        keys: &[u32],
        keys_out: &mut [u32],
        vals: &[V],
        vals_out: &mut [V],
        hist: &[u32],
        totals: &[u32],
        n: u32,
        shift: u32,
        tiles_per_block: u32,
        blocks: u32,
        with_values: u32,
    ) {
        // Per subgroup, the digit counters (two to a word); then the
        // tile's keys in digit order.
        let stage = shared::<[AtomicU32; COUNTERS]>();
        // The tile's values in digit order.
        let vstage = shared::<[V; TILE]>();
        let sums = shared::<[u32; MAX_SUBGROUPS]>();
        // Where each digit starts in the reordered tile.
        let dstart = shared::<[u32; RADIX]>();
        // Where the current tile's keys of each digit go.
        let gbase = shared::<[u32; RADIX]>();
        let t = thread_id().x;
        let b = block_id().x;
        let lane = subgroup_invocation_id();
        let sg = subgroup_size() as usize;
        let w = t / sg;
        let nsg = THREADS / sg;
        let n = n as usize;
        // Lanes below this one, as a 128-bit mask (a ballot's layout).
        let mut below = [0u32; 4];
        #[unroll]
        for q in 0..4 {
            let lo = q as u32 * 32;
            below[q] = if lane >= lo + 32 {
                u32::MAX
            } else if lane >= lo {
                (1u32 << (lane - lo)) - 1
            } else {
                0
            };
        }
        // The subgroup's lanes.
        let lanes = subgroup_ballot(true);
        // Thread t < WORDS owns counter word t: digits 2t and 2t + 1.
        // Where the digits start over all keys: an exclusive scan of
        // `totals`.
        let owner = t < WORDS;
        let d0 = 2 * t.min(WORDS - 1);
        let t0 = totals[d0];
        let pair = if owner { t0 + totals[d0 + 1] } else { 0 };
        let mut x = pair;
        #[unroll]
        for k in 0..7 {
            let off = 1u32 << k;
            let y = subgroup_shuffle(x, if lane >= off { lane - off } else { lane });
            if lane >= off {
                x += y;
            }
        }
        if lane as usize == sg - 1 {
            sums[w] = x;
        }
        workgroup_barrier();
        let mut ex = x - pair;
        for s in 0..w {
            ex += sums[s];
        }
        if owner {
            gbase[d0] = ex + hist[d0 * blocks as usize + b];
            gbase[d0 + 1] = ex + t0 + hist[(d0 + 1) * blocks as usize + b];
        }
        let tiles = (n + TILE - 1) / TILE;
        let first = b * tiles_per_block as usize;
        let last = (first + tiles_per_block as usize).min(tiles);
        for tile in first..last {
            let base = tile * TILE;
            let mut z = t;
            while z < nsg * WORDS {
                stage[z].store(0, Ordering::Relaxed);
                z += THREADS;
            }
            // ANCHOR: rank
            // This lane's keys: one a round, lanes side by side; past the
            // end, `u32::MAX` (digit 255, ranked after every key).
            let mut k = [0u32; KPT];
            let mut v = [V::ZERO; KPT];
            let mut rank = [0u32; KPT];
            let first_key = base + w * sg * KPT + lane as usize;
            #[unroll]
            for j in 0..KPT {
                let i = first_key + j * sg;
                let key = keys[i.min(n - 1)];
                k[j] = if i < n { key } else { u32::MAX };
            }
            if with_values != 0 {
                #[unroll]
                for j in 0..KPT {
                    v[j] = vals[(first_key + j * sg).min(n - 1)];
                }
            }
            workgroup_barrier();
            #[unroll]
            for j in 0..KPT {
                let d = (k[j] >> shift) & 255;
                // The lanes whose digit is this lane's.
                let mut m = [lanes.x, lanes.y, lanes.z, lanes.w];
                #[unroll]
                for bit in 0..8 {
                    let on = (d >> bit) & 1;
                    let ballot = subgroup_ballot(on != 0);
                    let f = (on ^ 1) * u32::MAX;
                    m[0] &= ballot.x ^ f;
                    m[1] &= ballot.y ^ f;
                    m[2] &= ballot.z ^ f;
                    m[3] &= ballot.w ^ f;
                }
                let mut lower = 0u32;
                let mut peers = 0u32;
                #[unroll]
                for q in 0..4 {
                    lower += (m[q] & below[q]).count_ones();
                    peers += m[q].count_ones();
                }
                let leader = if m[0] != 0 {
                    m[0].trailing_zeros()
                } else if m[1] != 0 {
                    32 + m[1].trailing_zeros()
                } else if m[2] != 0 {
                    64 + m[2].trailing_zeros()
                } else {
                    96 + m[3].trailing_zeros()
                };
                let sh = (d & 1) * 16;
                let mut old = 0u32;
                if lower == 0 {
                    old = stage[w * WORDS + (d >> 1) as usize].fetch_add(peers << sh, Ordering::Relaxed);
                }
                let counted = subgroup_shuffle(old, leader);
                rank[j] = ((counted >> sh) & 0xffff) + lower;
            }
            // ANCHOR_END: rank
            workgroup_barrier();
            // Scan the counters over the subgroups (per digit), then over
            // the digits: thread t's word holds digits 2t and 2t + 1.
            let mut run = 0u32;
            if owner {
                for q in 0..nsg {
                    let c = stage[q * WORDS + t].load(Ordering::Relaxed);
                    stage[q * WORDS + t].store(run, Ordering::Relaxed);
                    run += c;
                }
            }
            let lo = run & 0xffff;
            let pair = lo + (run >> 16);
            let mut x = pair;
            #[unroll]
            for s in 0..7 {
                let off = 1u32 << s;
                let y = subgroup_shuffle(x, if lane >= off { lane - off } else { lane });
                if lane >= off {
                    x += y;
                }
            }
            if lane as usize == sg - 1 {
                sums[w] = x;
            }
            workgroup_barrier();
            let mut ex = x - pair;
            for s in 0..w {
                ex += sums[s];
            }
            if owner {
                dstart[d0] = ex;
                dstart[d0 + 1] = ex + lo;
            }
            workgroup_barrier();
            #[unroll]
            for j in 0..KPT {
                let d = (k[j] >> shift) & 255;
                let c = stage[w * WORDS + (d >> 1) as usize].load(Ordering::Relaxed);
                rank[j] += dstart[d as usize] + ((c >> ((d & 1) * 16)) & 0xffff);
            }
            workgroup_barrier();
            #[unroll]
            for j in 0..KPT {
                stage[rank[j] as usize].store(k[j], Ordering::Relaxed);
            }
            if with_values != 0 {
                #[unroll]
                for j in 0..KPT {
                    vstage[rank[j] as usize] = v[j];
                }
            }
            workgroup_barrier();
            // Write the reordered tile: neighbouring threads, neighbouring
            // keys of one digit, neighbouring addresses.
            // ANCHOR: write
            let valid = (n - base).min(TILE);
            #[unroll]
            for j in 0..KPT {
                let i = j * THREADS + t;
                if i < valid {
                    let key = stage[i].load(Ordering::Relaxed);
                    let d = ((key >> shift) & 255) as usize;
                    let dest = (gbase[d] + i as u32 - dstart[d]) as usize;
                    keys_out[dest] = key;
                    if with_values != 0 {
                        vals_out[dest] = vstage[i];
                    }
                }
            }
            // ANCHOR_END: write
            workgroup_barrier();
            if owner {
                let end = if t == WORDS - 1 { TILE as u32 } else { dstart[d0 + 2] };
                gbase[d0] += dstart[d0 + 1] - dstart[d0];
                gbase[d0 + 1] += end - dstart[d0 + 1];
            }
            workgroup_barrier();
        }
    }
}

use kernels::*;

/// The order of a sort.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Order {
    /// Smallest first.
    #[default]
    Ascending,
    /// Largest first (still stable: equal keys keep their order; `f32`
    /// NaNs still last).
    Descending,
}

impl Order {
    fn flip(self) -> u32 {
        match self {
            Order::Ascending => 0,
            Order::Descending => u32::MAX,
        }
    }
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for u32 {}
    impl Sealed for i32 {}
    impl Sealed for f32 {}
}

/// A key type [`sort`] takes: `u32`, `i32`, `f32` (sealed).
pub trait SortKey: Element + sealed::Sealed {
    /// The `u32` whose unsigned order is this key's order (`flip` is
    /// `u32::MAX` for descending); the same function the kernels run.
    fn to_ordered(self, flip: u32) -> u32;
    /// The inverse of [`to_ordered`](SortKey::to_ordered).
    fn from_ordered(bits: u32, flip: u32) -> Self;
    /// Launches the kernel of `to_ordered` over `keys` into `out`.
    #[doc(hidden)]
    fn launch_to_ordered(
        device: &Device,
        keys: &Buffer<Self>,
        out: &mut Buffer<u32>,
        flip: u32,
    ) -> Result<(), LaunchError>;
    /// Launches the kernel of `from_ordered` over `bits` into `out`.
    #[doc(hidden)]
    fn launch_from_ordered(
        device: &Device,
        bits: &Buffer<u32>,
        out: &mut Buffer<Self>,
        flip: u32,
    ) -> Result<(), LaunchError>;
}

impl SortKey for u32 {
    fn to_ordered(self, flip: u32) -> u32 {
        self ^ flip
    }
    fn from_ordered(bits: u32, flip: u32) -> Self {
        bits ^ flip
    }
    fn launch_to_ordered(
        device: &Device,
        keys: &Buffer<u32>,
        out: &mut Buffer<u32>,
        flip: u32,
    ) -> Result<(), LaunchError> {
        u32_to_ordered_kernel::launch(device, Grid::threads(keys.len()), keys, out, flip)
    }
    fn launch_from_ordered(
        device: &Device,
        bits: &Buffer<u32>,
        out: &mut Buffer<u32>,
        flip: u32,
    ) -> Result<(), LaunchError> {
        u32_from_ordered_kernel::launch(device, Grid::threads(out.len()), bits, out, flip)
    }
}

impl SortKey for i32 {
    fn to_ordered(self, flip: u32) -> u32 {
        i32_to_ordered(self, flip)
    }
    fn from_ordered(bits: u32, flip: u32) -> Self {
        i32_from_ordered(bits, flip)
    }
    fn launch_to_ordered(
        device: &Device,
        keys: &Buffer<i32>,
        out: &mut Buffer<u32>,
        flip: u32,
    ) -> Result<(), LaunchError> {
        i32_to_ordered_kernel::launch(device, Grid::threads(keys.len()), keys, out, flip)
    }
    fn launch_from_ordered(
        device: &Device,
        bits: &Buffer<u32>,
        out: &mut Buffer<i32>,
        flip: u32,
    ) -> Result<(), LaunchError> {
        i32_from_ordered_kernel::launch(device, Grid::threads(out.len()), bits, out, flip)
    }
}

impl SortKey for f32 {
    fn to_ordered(self, flip: u32) -> u32 {
        f32_to_ordered(self, flip)
    }
    fn from_ordered(bits: u32, flip: u32) -> Self {
        f32_from_ordered(bits, flip)
    }
    fn launch_to_ordered(
        device: &Device,
        keys: &Buffer<f32>,
        out: &mut Buffer<u32>,
        flip: u32,
    ) -> Result<(), LaunchError> {
        f32_to_ordered_kernel::launch(device, Grid::threads(keys.len()), keys, out, flip)
    }
    fn launch_from_ordered(
        device: &Device,
        bits: &Buffer<u32>,
        out: &mut Buffer<f32>,
        flip: u32,
    ) -> Result<(), LaunchError> {
        f32_from_ordered_kernel::launch(device, Grid::threads(out.len()), bits, out, flip)
    }
}

/// A value type [`sort_pairs`] carries along: `u32`, `i32`, `f32` (sealed).
pub trait SortValue: radix_scatter::Instance + Element + sealed::Sealed {}
impl SortValue for u32 {}
impl SortValue for i32 {}
impl SortValue for f32 {}

/// The scratch space of a sort of up to `capacity` keys (with values of
/// type `V`): made once, reused by every [`sort_into`] /
/// [`sort_pairs_into`] call, so a loop of sorts allocates nothing.
pub struct SortScratch<V: SortValue = u32> {
    capacity: usize,
    with_values: bool,
    kernels_on_cpu: bool,
    keys_a: Buffer<u32>,
    keys_b: Buffer<u32>,
    vals_a: Buffer<V>,
    vals_b: Buffer<V>,
    hist: Buffer<u32>,
    /// Each digit's count over all keys (`radix_spine`'s output).
    totals: Buffer<u32>,
    /// Empty buffers: the values of a sort of keys alone.
    no_vals: Buffer<V>,
    no_vals_out: Buffer<V>,
}

/// How a sort of `n` keys is cut: `(tiles_per_block, blocks)`.
fn plan(n: usize) -> (usize, usize) {
    let tiles = n.div_ceil(TILE).max(1);
    // About 1024 blocks at most: enough to fill a large GPU (8 blocks of
    // 256 threads on each of the H200's 132 SMs), and few enough that the
    // 256 rows of `hist` stay short for `radix_spine`.
    let per_block = tiles.div_ceil(1024);
    (per_block, tiles.div_ceil(per_block))
}

impl<V: SortValue> SortScratch<V> {
    /// Scratch for sorts of up to `capacity` keys with values of type `V`
    /// (for keys alone, [`SortScratch::keys_only`]).
    pub fn new(device: &Device, capacity: usize) -> Result<Self, OpError> {
        Self::make(device, capacity, true, false)
    }

    fn make(device: &Device, capacity: usize, with_values: bool, kernels_on_cpu: bool) -> Result<Self, OpError> {
        // The CPU implementation needs no scratch.
        let kernels = device.is_gpu() || kernels_on_cpu;
        let (_, blocks) = plan(capacity);
        let nk = if kernels { capacity } else { 0 };
        let nv = if with_values { nk } else { 0 };
        Ok(SortScratch {
            capacity,
            with_values,
            kernels_on_cpu,
            keys_a: Buffer::zeroed(device, nk)?,
            keys_b: Buffer::zeroed(device, nk)?,
            vals_a: Buffer::zeroed(device, nv)?,
            vals_b: Buffer::zeroed(device, nv)?,
            hist: Buffer::zeroed(device, if kernels { RADIX * blocks } else { 0 })?,
            totals: Buffer::zeroed(device, if kernels { RADIX } else { 0 })?,
            no_vals: Buffer::zeroed(device, 0)?,
            no_vals_out: Buffer::zeroed(device, 0)?,
        })
    }

    /// The largest number of keys this scratch sorts.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// On the CPU executor, runs the radix-sort kernels (as on a GPU)
    /// instead of rayon's sorts: slower there, for tests that check the
    /// kernels on the CPU executor. Makes the buffers again for `device`.
    pub fn kernels_on_cpu(self, device: &Device) -> Result<Self, OpError> {
        Self::make(device, self.capacity, self.with_values, true)
    }
}

impl SortScratch<u32> {
    /// Scratch for sorts of up to `capacity` keys alone.
    pub fn keys_only(device: &Device, capacity: usize) -> Result<Self, OpError> {
        Self::make(device, capacity, false, false)
    }
}

fn arg_error(arg: &'static str, problem: String) -> LaunchError {
    LaunchError::InvalidArgument { kernel: "ops::sort", arg, problem }
}

fn check_len(arg: &'static str, len: usize, want: usize) -> Result<(), LaunchError> {
    if len == want {
        Ok(())
    } else {
        Err(arg_error(arg, format!("has {len} elements where the keys have {want}")))
    }
}

fn check_capacity<V: SortValue>(scratch: &SortScratch<V>, n: usize) -> Result<(), LaunchError> {
    if n > scratch.capacity {
        return Err(arg_error("scratch", format!("holds {} keys, fewer than the {n} to sort", scratch.capacity)));
    }
    Ok(())
}

/// Sorts `keys` in place.
///
/// ```
/// use onekernel::prelude::*;
/// use onekernel::ops::sort::{sort, Order};
/// let device = Device::cpu();
/// let mut keys = Buffer::from_slice(&device, &[3.5f32, -1.0, f32::NAN, 0.0, -0.0])?;
/// sort(&device, &mut keys, Order::Ascending)?;
/// let got = keys.read()?;
/// assert_eq!(&got[..4], &[-1.0, -0.0, 0.0, 3.5]);
/// assert!(got[1].is_sign_negative() && got[4].is_nan());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn sort<K: SortKey>(device: &Device, keys: &mut Buffer<K>, order: Order) -> Result<(), OpError> {
    let n = keys.len();
    if !device.is_gpu() {
        return Ok(cpu_sort_keys::<K, u32>(keys, None, order)?);
    }
    if n == 0 {
        return Ok(());
    }
    let mut scratch = SortScratch::keys_only(device, n)?;
    let flip = order.flip();
    K::launch_to_ordered(device, keys, &mut scratch.keys_a, flip)?;
    radix_passes::<u32>(device, n, &mut scratch, None, None)?;
    K::launch_from_ordered(device, &scratch.keys_a, keys, flip)?;
    Ok(())
}

/// Sorts `keys` into `out` (the same length), with the caller's scratch
/// (made once for the largest length, reused): no allocation on a GPU.
///
/// ```
/// use onekernel::prelude::*;
/// use onekernel::ops::sort::{sort_into, Order, SortScratch};
/// let device = Device::cpu();
/// let mut scratch = SortScratch::keys_only(&device, 1000)?;
/// let mut out = Buffer::<i32>::zeroed(&device, 4)?;
/// for round in 0..3 {
///     let keys = Buffer::from_slice(&device, &[round, -5, 7, 0])?;
///     sort_into(&device, &keys, &mut out, Order::Descending, &mut scratch)?;
///     assert_eq!(out.read()?[0], 7);
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// `LaunchError::InvalidArgument` naming `ops::sort` and `out` (another
/// length), `scratch` (too small) or `device` (a GPU whose subgroups may
/// have fewer than 8 lanes); a launch's error.
pub fn sort_into<K: SortKey>(
    device: &Device,
    keys: &Buffer<K>,
    out: &mut Buffer<K>,
    order: Order,
    scratch: &mut SortScratch<u32>,
) -> Result<(), LaunchError> {
    let n = keys.len();
    check_len("out", out.len(), n)?;
    check_capacity(scratch, n)?;
    let flip = order.flip();
    if !device.is_gpu() && !scratch.kernels_on_cpu {
        let mut v = read(keys)?;
        cpu_sort_in_place(&mut v, flip);
        return write(out, &v);
    }
    if n == 0 {
        return Ok(());
    }
    if let (Some(input), 0) = (as_u32(keys), flip) {
        let output = as_u32_mut(out).expect("K is u32");
        return radix_passes::<u32>(device, n, scratch, Some((input, output)), None);
    }
    K::launch_to_ordered(device, keys, &mut scratch.keys_a, flip)?;
    radix_passes::<u32>(device, n, scratch, None, None)?;
    K::launch_from_ordered(device, &scratch.keys_a, out, flip)
}

/// Sorts `keys` in place and moves `values` (the same length) with them:
/// stable, so with the indices `0..n` as values, an argsort.
///
/// ```
/// use onekernel::prelude::*;
/// use onekernel::ops::sort::{sort_pairs, Order};
/// let device = Device::cpu();
/// let mut keys = Buffer::from_slice(&device, &[2u32, 1, 2, 0])?;
/// let mut values = Buffer::from_slice(&device, &[0u32, 1, 2, 3])?;
/// sort_pairs(&device, &mut keys, &mut values, Order::Descending)?;
/// assert_eq!(keys.read()?, [2, 2, 1, 0]);
/// assert_eq!(values.read()?, [0, 2, 1, 3]); // equal keys keep their order
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn sort_pairs<K: SortKey, V: SortValue>(
    device: &Device,
    keys: &mut Buffer<K>,
    values: &mut Buffer<V>,
    order: Order,
) -> Result<(), OpError> {
    let n = keys.len();
    check_len("values", values.len(), n)?;
    if !device.is_gpu() {
        return Ok(cpu_sort_keys(keys, Some(values), order)?);
    }
    if n == 0 {
        return Ok(());
    }
    let mut scratch = SortScratch::<V>::new(device, n)?;
    // The values' input, so that the last pass may write `values`.
    let mut input = Buffer::<V>::zeroed(device, n)?;
    input.copy_from(values)?;
    let flip = order.flip();
    K::launch_to_ordered(device, keys, &mut scratch.keys_a, flip)?;
    radix_passes(device, n, &mut scratch, None, Some((&input, values)))?;
    K::launch_from_ordered(device, &scratch.keys_a, keys, flip)?;
    Ok(())
}

/// Sorts `keys` into `keys_out` and moves `values` with them into
/// `values_out` (all the same length), with the caller's scratch: no
/// allocation on a GPU.
///
/// ```
/// use onekernel::prelude::*;
/// use onekernel::ops::sort::{sort_pairs_into, Order, SortScratch};
/// let device = Device::cpu();
/// let keys = Buffer::from_slice(&device, &[0.5f32, -2.0, 0.5, 1.0])?;
/// let index = Buffer::from_slice(&device, &[0u32, 1, 2, 3])?;
/// let mut scratch = SortScratch::<u32>::new(&device, 4)?;
/// let (mut sorted, mut order) = (Buffer::zeroed(&device, 4)?, Buffer::zeroed(&device, 4)?);
/// sort_pairs_into(&device, &keys, &index, &mut sorted, &mut order, Order::Ascending, &mut scratch)?;
/// assert_eq!(sorted.read()?, [-2.0, 0.5, 0.5, 1.0]);
/// assert_eq!(order.read()?, [1, 0, 2, 3]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// `LaunchError::InvalidArgument` naming `ops::sort` and the argument
/// whose length differs from the keys', `scratch` (too small, or made
/// by `keys_only`) or `device` (as [`sort_into`]); a launch's error.
pub fn sort_pairs_into<K: SortKey, V: SortValue>(
    device: &Device,
    keys: &Buffer<K>,
    values: &Buffer<V>,
    keys_out: &mut Buffer<K>,
    values_out: &mut Buffer<V>,
    order: Order,
    scratch: &mut SortScratch<V>,
) -> Result<(), LaunchError> {
    let n = keys.len();
    check_len("values", values.len(), n)?;
    check_len("keys_out", keys_out.len(), n)?;
    check_len("values_out", values_out.len(), n)?;
    check_capacity(scratch, n)?;
    let flip = order.flip();
    if !device.is_gpu() && !scratch.kernels_on_cpu {
        let (k, v) = cpu_sorted_pairs(read(keys)?, read(values)?, flip);
        write(keys_out, &k)?;
        return write(values_out, &v);
    }
    if n == 0 {
        return Ok(());
    }
    if !scratch.with_values {
        return Err(arg_error("scratch", "was made for keys alone (`keys_only`), not for pairs".into()));
    }
    if let (Some(input), 0) = (as_u32(keys), flip) {
        let output = as_u32_mut(keys_out).expect("K is u32");
        return radix_passes(device, n, scratch, Some((input, output)), Some((values, values_out)));
    }
    K::launch_to_ordered(device, keys, &mut scratch.keys_a, flip)?;
    radix_passes(device, n, scratch, None, Some((values, values_out)))?;
    K::launch_from_ordered(device, &scratch.keys_a, keys_out, flip)
}

/// `keys` as `u32`s, if they are.
fn as_u32<K: SortKey>(keys: &Buffer<K>) -> Option<&Buffer<u32>> {
    (keys as &dyn Any).downcast_ref()
}

/// `keys` as `u32`s, if they are.
fn as_u32_mut<K: SortKey>(keys: &mut Buffer<K>) -> Option<&mut Buffer<u32>> {
    (keys as &mut dyn Any).downcast_mut()
}

fn read<T: Element>(b: &Buffer<T>) -> Result<Vec<T>, LaunchError> {
    b.read().map_err(|e| LaunchError::Gpu { kernel: "ops::sort", message: e.to_string() })
}

fn write<T: Element>(b: &mut Buffer<T>, data: &[T]) -> Result<(), LaunchError> {
    b.write(data).map_err(|e| LaunchError::Gpu { kernel: "ops::sort", message: e.to_string() })
}

/// Pairs sorted by key, stably, on the CPU.
///
/// Each pair becomes one `u128`: the key's ordered bits, its index (so no
/// two are equal, and rayon's unstable sort gives the stable order), the
/// value's bits (carried along: no gather afterwards).
fn cpu_sorted_pairs<K: SortKey, V: SortValue>(keys: Vec<K>, values: Vec<V>, flip: u32) -> (Vec<K>, Vec<V>) {
    let mut order: Vec<u128> = keys
        .par_iter()
        .zip(values.par_iter())
        .enumerate()
        .map(|(i, (k, v))| {
            u128::from(k.to_ordered(flip)) << 64 | (i as u128) << 32 | u128::from(bytemuck::cast::<V, u32>(*v))
        })
        .collect();
    order.par_sort_unstable();
    order.par_iter().map(|&o| (K::from_ordered((o >> 64) as u32, flip), bytemuck::cast::<u32, V>(o as u32))).unzip()
}

/// Sorts keys on the CPU: mapped to their ordered bits in place, sorted,
/// mapped back (equal bits are equal keys: no stability needed).
// ANCHOR: cpu
fn cpu_sort_in_place<K: SortKey>(v: &mut [K], flip: u32) {
    let bits: &mut [u32] = bytemuck::cast_slice_mut(v);
    if TypeId::of::<K>() == TypeId::of::<u32>() && flip == 0 {
        bits.par_sort_unstable();
        return;
    }
    bits.par_iter_mut().for_each(|b| *b = bytemuck::cast::<u32, K>(*b).to_ordered(flip));
    bits.par_sort_unstable();
    bits.par_iter_mut().for_each(|b| *b = bytemuck::cast(K::from_ordered(*b, flip)));
}
// ANCHOR_END: cpu

/// The CPU executor's in-place sorts.
fn cpu_sort_keys<K: SortKey, V: SortValue>(
    keys: &mut Buffer<K>,
    values: Option<&mut Buffer<V>>,
    order: Order,
) -> Result<(), LaunchError> {
    let flip = order.flip();
    match values {
        None => {
            let mut v = read(keys)?;
            cpu_sort_in_place(&mut v, flip);
            write(keys, &v)
        }
        Some(values) => {
            let (k, v) = cpu_sorted_pairs(read(keys)?, read(values)?, flip);
            write(keys, &k)?;
            write(values, &v)
        }
    }
}

use rayon::iter::{IndexedParallelIterator, IntoParallelRefIterator, IntoParallelRefMutIterator, ParallelIterator};
use rayon::slice::ParallelSliceMut;

/// The four digit passes over `scratch.keys_a` (ordered bits; the result
/// ends there too), moving `values.0` into `values.1` if given.
/// With `keys` (`u32` keys sorted ascending: their own ordered bits), the
/// first pass reads `keys.0` and the last writes `keys.1` instead: no
/// mapping launches.
fn radix_passes<V: SortValue>(
    device: &Device,
    n: usize,
    scratch: &mut SortScratch<V>,
    mut keys: Option<(&Buffer<u32>, &mut Buffer<u32>)>,
    values: Option<(&Buffer<V>, &mut Buffer<V>)>,
) -> Result<(), LaunchError> {
    if let Some((narrowest, _)) = device.subgroup_sizes()
        && (narrowest as usize) < MIN_SUBGROUP
    {
        let problem =
            format!("has subgroups of {narrowest} lanes; the sort ranks keys in subgroups of {MIN_SUBGROUP} or more");
        return Err(arg_error("device", problem));
    }
    let (per_block, blocks) = plan(n);
    let grid = Grid::blocks([blocks]);
    let (n32, pb, bl) = (n as u32, per_block as u32, blocks as u32);
    let SortScratch { keys_a, keys_b, vals_a, vals_b, hist, totals, no_vals, no_vals_out, .. } = scratch;
    let (with, (vin, vout)) = match values {
        Some(v) => (1, v),
        None => (0, (&*no_vals, no_vals_out)),
    };
    // ANCHOR: passes
    const LAST: u32 = 32 / DIGIT_BITS - 1;
    for pass in 0..=LAST {
        let shift = pass * DIGIT_BITS;
        // Keys: a → b → a ... → a, or input → b → a ... → b → output.
        let (src, dst): (&Buffer<u32>, &mut Buffer<u32>) = match (pass, &mut keys) {
            (0, Some((input, _))) => (*input, &mut *keys_b),
            (LAST, Some((_, output))) => (&*keys_b, &mut **output),
            (p, _) if p % 2 == 1 => (&*keys_b, &mut *keys_a),
            _ => (&*keys_a, &mut *keys_b),
        };
        radix_count::launch(device, grid, src, hist, n32, shift, pb, bl)?;
        radix_spine::launch(device, Grid::blocks([RADIX]), hist, totals, bl)?;
        // Values: input → a → b → a ... → out.
        let (vs, vd): (&Buffer<V>, &mut Buffer<V>) = if with == 0 {
            (&*no_vals, &mut *vout)
        } else {
            match pass {
                0 => (vin, &mut *vals_a),
                LAST => (&*vals_a, &mut *vout),
                p if p % 2 == 1 => (&*vals_a, &mut *vals_b),
                _ => (&*vals_b, &mut *vals_a),
            }
        };
        radix_scatter::launch::<V>(device, grid, src, dst, vs, vd, hist, totals, n32, shift, pb, bl, with)?;
    }
    // ANCHOR_END: passes
    Ok(())
}
