//! Subgroup operations on the CPU executor.
//!
//! The CPU's subgroups are fixed: [`CPU_SUBGROUP_SIZE`] (32, a warp on
//! NVIDIA GPUs) consecutive invocations of a workgroup, by linear index
//! (WGSL's `local_invocation_index`, x fastest). A workgroup whose size is
//! not a multiple of 32 ends with a partial subgroup: its collectives
//! combine the invocations that exist, as a GPU's do for inactive lanes.
//!
//! A collective (`subgroup_add(v)`, a shuffle, a ballot) is a meeting of
//! the subgroup's invocations, like a barrier scoped to the subgroup: each
//! invocation's future stores its value (and its lane, mask or distance)
//! in its slot and waits; the last to arrive computes every member's
//! result at once, and each takes its own on its next poll. Results are
//! computed into separate slots, so an invocation that runs ahead to the
//! next collective cannot overwrite a value another has yet to read: its
//! slot's next result is only written once every member has arrived again,
//! that is, after every member took the previous one.
//!
//! The results are exact and documented (docs/semantics.md): sums in lane
//! order (floats rounded after each addition, integers wrapping, as the
//! GPU's 32-bit arithmetic), a lane outside the subgroup gives the
//! invocation its own value (as CUDA's shuffles do).

use crate::grid::Invocation;
// The collectives are the ABI's: the compiler names the same variants in
// the CPU bodies it generates.
pub use onekernel_abi::SubgroupCollective;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::task::{Context, Poll};

/// Invocations per subgroup on the CPU executor (`subgroup_size()` there).
pub const CPU_SUBGROUP_SIZE: u32 = 32;

const LANES: usize = CPU_SUBGROUP_SIZE as usize;

/// No call site recorded.
const NO_SITE: u64 = u64::MAX;

/// How a value's 32 bits combine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValueKind {
    /// `f32`.
    Float,
    /// `i32`.
    Signed,
    /// `u32`, `usize` (32 bits on the GPU), `bool`.
    Unsigned,
}

/// A value a subgroup operation exchanges, as 32 bits (its GPU form).
pub trait SubgroupValue: Copy {
    /// How values combine.
    const KIND: ValueKind;
    /// The value's 32 bits.
    fn to_bits(self) -> u32;
    /// The value from its 32 bits.
    fn from_bits(bits: u32) -> Self;
}

impl SubgroupValue for f32 {
    const KIND: ValueKind = ValueKind::Float;
    fn to_bits(self) -> u32 {
        f32::to_bits(self)
    }
    fn from_bits(bits: u32) -> f32 {
        f32::from_bits(bits)
    }
}

impl SubgroupValue for i32 {
    const KIND: ValueKind = ValueKind::Signed;
    fn to_bits(self) -> u32 {
        self as u32
    }
    fn from_bits(bits: u32) -> i32 {
        bits as i32
    }
}

impl SubgroupValue for u32 {
    const KIND: ValueKind = ValueKind::Unsigned;
    fn to_bits(self) -> u32 {
        self
    }
    fn from_bits(bits: u32) -> u32 {
        bits
    }
}

/// `usize` is `u32` on the GPU: it is exchanged as its low 32 bits.
impl SubgroupValue for usize {
    const KIND: ValueKind = ValueKind::Unsigned;
    fn to_bits(self) -> u32 {
        self as u32
    }
    fn from_bits(bits: u32) -> usize {
        bits as usize
    }
}

impl SubgroupValue for bool {
    const KIND: ValueKind = ValueKind::Unsigned;
    fn to_bits(self) -> u32 {
        u32::from(self)
    }
    fn from_bits(bits: u32) -> bool {
        bits != 0
    }
}

/// The subgroup state of one workgroup. Atomics only so that a
/// `WorkgroupPool` can be shared by the executor's threads: a workgroup's
/// invocations run on one thread, so every access is relaxed.
pub(crate) struct Subgroups {
    /// Each invocation's value.
    values: Box<[AtomicU32]>,
    /// Each invocation's lane, mask or distance.
    operands: Box<[AtomicU32]>,
    /// Each invocation's result of the last meeting.
    results: Box<[AtomicU32]>,
    /// Per subgroup: invocations waiting at the current meeting.
    arrived: Box<[AtomicUsize]>,
    /// Per subgroup: meetings completed.
    generation: Box<[AtomicU64]>,
    /// Per subgroup: the call site of the current meeting.
    site: Box<[AtomicU64]>,
    /// Invocations of the whole workgroup waiting at a meeting.
    waiting: AtomicUsize,
    /// Set (to `a << 32 | b`) when a subgroup's invocations wait at two
    /// different call sites.
    diverged: AtomicU64,
}

impl Subgroups {
    pub(crate) fn new(invocations: usize) -> Subgroups {
        let words = |n: usize| (0..n).map(|_| AtomicU32::new(0)).collect::<Box<[_]>>();
        let groups = invocations.div_ceil(LANES);
        Subgroups {
            values: words(invocations),
            operands: words(invocations),
            results: words(invocations),
            arrived: (0..groups).map(|_| AtomicUsize::new(0)).collect(),
            generation: (0..groups).map(|_| AtomicU64::new(0)).collect(),
            site: (0..groups).map(|_| AtomicU64::new(NO_SITE)).collect(),
            waiting: AtomicUsize::new(0),
            diverged: AtomicU64::new(NO_SITE),
        }
    }

    /// Forgets meetings a panic left open.
    pub(crate) fn reset(&self) {
        for a in self.arrived.iter() {
            a.store(0, Ordering::Relaxed);
        }
        for s in self.site.iter() {
            s.store(NO_SITE, Ordering::Relaxed);
        }
        self.waiting.store(0, Ordering::Relaxed);
        self.diverged.store(NO_SITE, Ordering::Relaxed);
    }

    /// Invocations waiting at a meeting now.
    pub(crate) fn waiting(&self) -> usize {
        self.waiting.load(Ordering::Relaxed)
    }

    /// The two call sites, when invocations of one subgroup wait at
    /// different ones.
    pub(crate) fn diverged(&self) -> Option<(u32, u32)> {
        let d = self.diverged.load(Ordering::Relaxed);
        (d != NO_SITE).then_some(((d >> 32) as u32, d as u32))
    }

    /// The members of the subgroup that invocation `index` belongs to.
    fn members(&self, index: usize) -> std::ops::Range<usize> {
        let first = index / LANES * LANES;
        first..(first + LANES).min(self.values.len())
    }

    /// Every member's result, once all have arrived.
    fn complete(&self, members: std::ops::Range<usize>, op: SubgroupCollective, kind: ValueKind) {
        let value = |i: usize| self.values[i].load(Ordering::Relaxed);
        let all = members.clone().map(value);
        let combined = match op {
            SubgroupCollective::Add => all.reduce(|a, b| match kind {
                ValueKind::Float => (f32::from_bits(a) + f32::from_bits(b)).to_bits(),
                ValueKind::Signed | ValueKind::Unsigned => a.wrapping_add(b),
            }),
            SubgroupCollective::Min => all.reduce(|a, b| match kind {
                ValueKind::Float => f32::from_bits(a).min(f32::from_bits(b)).to_bits(),
                ValueKind::Signed => (a as i32).min(b as i32) as u32,
                ValueKind::Unsigned => a.min(b),
            }),
            SubgroupCollective::Max => all.reduce(|a, b| match kind {
                ValueKind::Float => f32::from_bits(a).max(f32::from_bits(b)).to_bits(),
                ValueKind::Signed => (a as i32).max(b as i32) as u32,
                ValueKind::Unsigned => a.max(b),
            }),
            SubgroupCollective::Ballot => {
                Some(all.enumerate().fold(0, |mask, (lane, v)| if v != 0 { mask | 1 << lane } else { mask }))
            }
            SubgroupCollective::Broadcast
            | SubgroupCollective::Shuffle
            | SubgroupCollective::ShuffleXor
            | SubgroupCollective::ShuffleDown => None,
        };
        for i in members.clone() {
            let result = combined.unwrap_or_else(|| {
                let lane = (i - members.start) as u64;
                let operand = u64::from(self.operands[i].load(Ordering::Relaxed));
                let source = match op {
                    SubgroupCollective::ShuffleXor => lane ^ operand,
                    SubgroupCollective::ShuffleDown => lane + operand,
                    _ => operand,
                };
                // A lane outside the subgroup (or past a partial one's
                // end): the invocation's own value.
                match usize::try_from(source).ok().map(|s| members.start + s).filter(|s| members.contains(s)) {
                    Some(s) => value(s),
                    None => value(i),
                }
            });
            self.results[i].store(result, Ordering::Relaxed);
        }
    }
}

/// The future of one invocation's subgroup collective; its output is the
/// invocation's result.
pub struct SubgroupCall<'a, R> {
    subgroups: &'a Subgroups,
    index: usize,
    site: u32,
    op: SubgroupCollective,
    kind: ValueKind,
    value: u32,
    operand: u32,
    generation: Option<u64>,
    // `fn() -> R`: the future is `Unpin` whatever `R` is.
    _result: std::marker::PhantomData<fn() -> R>,
}

impl<'a, R> SubgroupCall<'a, R> {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        subgroups: &'a Subgroups,
        invocation: &Invocation,
        site: u32,
        op: SubgroupCollective,
        kind: ValueKind,
        value: u32,
        operand: u32,
    ) -> Self {
        let index = invocation.local_index();
        SubgroupCall {
            subgroups,
            index,
            site,
            op,
            kind,
            value,
            operand,
            generation: None,
            _result: std::marker::PhantomData,
        }
    }
}

impl<R: SubgroupValue> Future for SubgroupCall<'_, R> {
    type Output = R;
    fn poll(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<R> {
        let sg = self.subgroups;
        let (index, group) = (self.index, self.index / LANES);
        let done = |sg: &Subgroups| Poll::Ready(R::from_bits(sg.results[index].load(Ordering::Relaxed)));
        match self.generation {
            // Arriving: leave the value, and complete the meeting if last.
            None => {
                sg.values[index].store(self.value, Ordering::Relaxed);
                sg.operands[index].store(self.operand, Ordering::Relaxed);
                let site = u64::from(self.site);
                match sg.site[group].load(Ordering::Relaxed) {
                    NO_SITE => sg.site[group].store(site, Ordering::Relaxed),
                    s if s != site => sg.diverged.store(s << 32 | site, Ordering::Relaxed),
                    _ => {}
                }
                let generation = sg.generation[group].load(Ordering::Relaxed);
                self.generation = Some(generation);
                let members = sg.members(index);
                let arrived = sg.arrived[group].fetch_add(1, Ordering::Relaxed) + 1;
                if arrived < members.len() {
                    sg.waiting.fetch_add(1, Ordering::Relaxed);
                    return Poll::Pending;
                }
                if sg.diverged().is_some() {
                    // The executor reports it; never complete a meeting of
                    // different operations.
                    sg.waiting.fetch_add(1, Ordering::Relaxed);
                    return Poll::Pending;
                }
                sg.complete(members.clone(), self.op, self.kind);
                sg.arrived[group].store(0, Ordering::Relaxed);
                sg.site[group].store(NO_SITE, Ordering::Relaxed);
                sg.waiting.fetch_sub(members.len() - 1, Ordering::Relaxed);
                sg.generation[group].store(generation + 1, Ordering::Relaxed);
                done(sg)
            }
            Some(g) if sg.generation[group].load(Ordering::Relaxed) > g => done(sg),
            Some(_) => Poll::Pending,
        }
    }
}

/// The future of one invocation's `subgroup_ballot(p)`: the lanes' mask
/// as WGSL's `vec4<u32>`, lane `i` at bit `i % 32` of word `i / 32`. The
/// CPU's subgroups have [`CPU_SUBGROUP_SIZE`] (32) lanes, so the mask is
/// all in `x` and `y`, `z`, `w` are 0.
pub struct SubgroupBallot<'a>(SubgroupCall<'a, u32>);

impl<'a> SubgroupBallot<'a> {
    pub(crate) fn new(call: SubgroupCall<'a, u32>) -> Self {
        SubgroupBallot(call)
    }
}

impl Future for SubgroupBallot<'_> {
    type Output = glam::UVec4;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<glam::UVec4> {
        Pin::new(&mut self.0).poll(cx).map(|low| glam::UVec4::new(low, 0, 0, 0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::Dim3;
    use std::task::Waker;

    fn invocation(t: usize, n: usize) -> Invocation {
        let d = Dim3::new(n, 1, 1);
        Invocation {
            global_id: Dim3::new(t, 0, 0),
            thread_id: Dim3::new(t, 0, 0),
            block_id: Dim3::new(0, 0, 0),
            block_dim: d,
            grid_dim: Dim3::new(1, 1, 1),
        }
    }

    /// Runs one collective over `n` invocations: `value(t)`, `operand(t)`.
    fn meet<R: SubgroupValue>(
        n: usize,
        op: SubgroupCollective,
        kind: ValueKind,
        value: impl Fn(usize) -> u32,
        operand: impl Fn(usize) -> u32,
    ) -> Vec<R> {
        let sg = Subgroups::new(n);
        let mut calls: Vec<_> = (0..n)
            .map(|t| Box::pin(SubgroupCall::<R>::new(&sg, &invocation(t, n), 0, op, kind, value(t), operand(t))))
            .collect();
        let mut cx = Context::from_waker(Waker::noop());
        let mut out: Vec<Option<R>> = vec![None; n];
        for _ in 0..2 {
            for (t, c) in calls.iter_mut().enumerate() {
                if out[t].is_none()
                    && let Poll::Ready(r) = c.as_mut().poll(&mut cx)
                {
                    out[t] = Some(r);
                }
            }
        }
        assert_eq!(sg.waiting(), 0);
        out.into_iter().map(|r| r.expect("every member completes")).collect()
    }

    #[test]
    fn sums_per_subgroup_including_a_partial_one() {
        // 40 invocations: a full subgroup of 32 and a partial one of 8.
        let sums: Vec<u32> = meet(40, SubgroupCollective::Add, ValueKind::Unsigned, |t| t as u32, |_| 0);
        assert_eq!(sums[0], (0..32).sum::<u32>());
        assert_eq!(sums[31], sums[0]);
        assert_eq!(sums[39], (32..40).sum::<u32>());
        let mins: Vec<i32> = meet(33, SubgroupCollective::Min, ValueKind::Signed, |t| (10 - t as i32) as u32, |_| 0);
        assert_eq!((mins[0], mins[32]), (10 - 31, 10 - 32));
    }

    #[test]
    fn shuffles_and_ballots() {
        let xor: Vec<u32> = meet(32, SubgroupCollective::ShuffleXor, ValueKind::Unsigned, |t| t as u32 * 10, |_| 1);
        assert_eq!(&xor[..4], &[10, 0, 30, 20]);
        // Past the end of the subgroup: the invocation's own value.
        let down: Vec<u32> = meet(32, SubgroupCollective::ShuffleDown, ValueKind::Unsigned, |t| t as u32, |_| 4);
        assert_eq!((down[0], down[27], down[28], down[31]), (4, 31, 28, 31));
        let ballot: Vec<u32> =
            meet(36, SubgroupCollective::Ballot, ValueKind::Unsigned, |t| u32::from(t % 2 == 1), |_| 0);
        assert_eq!((ballot[0], ballot[35]), (0xAAAA_AAAA, 0b1010));
        let bcast: Vec<f32> =
            meet(32, SubgroupCollective::Broadcast, ValueKind::Float, |t| (t as f32).to_bits(), |_| 5);
        assert!(bcast.iter().all(|&v| v == 5.0));
    }

    #[test]
    fn ballots_are_uvec4_masks_in_x() {
        // 40 invocations: even lanes vote, in a subgroup of 32 and one of 8.
        let n = 40;
        let sg = Subgroups::new(n);
        let ballot = |t: usize| {
            let call = SubgroupCall::new(
                &sg,
                &invocation(t, n),
                0,
                SubgroupCollective::Ballot,
                ValueKind::Unsigned,
                u32::from(t % 2 == 0),
                0,
            );
            Box::pin(SubgroupBallot::new(call))
        };
        let mut calls: Vec<_> = (0..n).map(ballot).collect();
        let mut cx = Context::from_waker(Waker::noop());
        let mut out = vec![None; n];
        for _ in 0..2 {
            for (t, c) in calls.iter_mut().enumerate() {
                if out[t].is_none()
                    && let Poll::Ready(r) = c.as_mut().poll(&mut cx)
                {
                    out[t] = Some(r);
                }
            }
        }
        assert_eq!(out[0], Some(glam::UVec4::new(0x5555_5555, 0, 0, 0)));
        assert_eq!(out[31], out[0]);
        assert_eq!(out[39], Some(glam::UVec4::new(0x55, 0, 0, 0)));
    }
}
