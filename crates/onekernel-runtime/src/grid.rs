//! Launch geometry: [`Dim3`], [`Grid`] and the per-invocation builtins
//! ([`Invocation`]).

use onekernel_abi::{Builtin, BuiltinType, KernelInfo};

/// A size or an index in up to three dimensions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, bytemuck::Zeroable)]
pub struct Dim3 {
    /// The x component.
    pub x: usize,
    /// The y component.
    pub y: usize,
    /// The z component.
    pub z: usize,
}

impl Dim3 {
    /// A `Dim3` from its three components.
    pub const fn new(x: usize, y: usize, z: usize) -> Dim3 {
        Dim3 { x, y, z }
    }

    /// `x * y * z`, or `None` on overflow.
    pub fn checked_volume(self) -> Option<usize> {
        self.x.checked_mul(self.y)?.checked_mul(self.z)
    }

    /// Whether any component is zero (the size describes no work at all).
    pub fn is_empty(self) -> bool {
        self.x == 0 || self.y == 0 || self.z == 0
    }
}

impl From<usize> for Dim3 {
    fn from(x: usize) -> Dim3 {
        Dim3::new(x, 1, 1)
    }
}

impl From<[usize; 1]> for Dim3 {
    fn from([x]: [usize; 1]) -> Dim3 {
        Dim3::new(x, 1, 1)
    }
}

impl From<[usize; 2]> for Dim3 {
    fn from([x, y]: [usize; 2]) -> Dim3 {
        Dim3::new(x, y, 1)
    }
}

impl From<[usize; 3]> for Dim3 {
    fn from([x, y, z]: [usize; 3]) -> Dim3 {
        Dim3::new(x, y, z)
    }
}

impl From<(usize, usize)> for Dim3 {
    fn from((x, y): (usize, usize)) -> Dim3 {
        Dim3::new(x, y, 1)
    }
}

impl From<(usize, usize, usize)> for Dim3 {
    fn from((x, y, z): (usize, usize, usize)) -> Dim3 {
        Dim3::new(x, y, z)
    }
}

impl std::fmt::Display for Dim3 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} x {} x {}", self.x, self.y, self.z)
    }
}

/// Builtin values of one invocation, exactly what the GPU would give (all
/// logical, i.e. after unfolding a folded 1-D grid).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Invocation {
    /// `block_id * block_dim + thread_id`, per axis.
    pub global_id: Dim3,
    /// The local invocation id within the workgroup.
    pub thread_id: Dim3,
    /// The workgroup id.
    pub block_id: Dim3,
    /// The workgroup size.
    pub block_dim: Dim3,
    /// The number of workgroups.
    pub grid_dim: Dim3,
}

impl Invocation {
    /// The invocation's index in its workgroup, x fastest: WGSL's
    /// `local_invocation_index`.
    pub fn local_index(&self) -> usize {
        let (t, d) = (self.thread_id, self.block_dim);
        t.x + d.x * (t.y + d.y * t.z)
    }

    /// The value of the builtin `b` (`global_id()`, `subgroup_size()`,
    /// ...) for this invocation on the CPU executor: what the CPU body
    /// reads for each call. One exhaustive `match` over the ABI's
    /// [`Builtin`], so a builtin the compiler knows and the runtime does not
    /// is a compile error here.
    #[inline(always)]
    pub fn get(&self, b: Builtin) -> BuiltinValue {
        let size = crate::cpu::CPU_SUBGROUP_SIZE;
        match b {
            Builtin::GlobalId => BuiltinValue::Axes(self.global_id),
            Builtin::ThreadId => BuiltinValue::Axes(self.thread_id),
            Builtin::BlockId => BuiltinValue::Axes(self.block_id),
            Builtin::BlockDim => BuiltinValue::Axes(self.block_dim),
            Builtin::GridDim => BuiltinValue::Axes(self.grid_dim),
            Builtin::SubgroupSize => BuiltinValue::U32(size),
            Builtin::SubgroupInvocationId => BuiltinValue::U32(self.subgroup_invocation_id()),
            // Subgroups are consecutive runs of `size` invocations in
            // `local_index` order; the last may be partial.
            Builtin::SubgroupId => BuiltinValue::U32((self.local_index() / size as usize) as u32),
            Builtin::NumSubgroups => {
                let d = self.block_dim;
                BuiltinValue::U32((d.x * d.y * d.z).div_ceil(size as usize) as u32)
            }
        }
    }

    /// The invocation `(x, y, z)` of the same workgroup, from `self`, its
    /// invocation `(0, 0, 0)`: how the phase executor (`cpu/phased.rs`)
    /// makes each invocation's builtins inside a phase loop.
    #[inline(always)]
    pub fn thread(&self, x: usize, y: usize, z: usize) -> Invocation {
        let g = self.global_id;
        Invocation { thread_id: Dim3::new(x, y, z), global_id: Dim3::new(g.x + x, g.y + y, g.z + z), ..*self }
    }

    /// `subgroup_invocation_id()` on the CPU executor: the lane in the
    /// invocation's subgroup of [`CPU_SUBGROUP_SIZE`](crate::cpu::CPU_SUBGROUP_SIZE)
    /// consecutive invocations.
    pub fn subgroup_invocation_id(&self) -> u32 {
        (self.local_index() % crate::cpu::CPU_SUBGROUP_SIZE as usize) as u32
    }

    /// The number of invocations in this invocation's subgroup on the CPU
    /// executor: [`CPU_SUBGROUP_SIZE`](crate::cpu::CPU_SUBGROUP_SIZE), or
    /// fewer in the last subgroup of a workgroup whose size is not a
    /// multiple of it (how a tile's store is shared among the lanes).
    pub fn subgroup_lanes(&self) -> usize {
        let size = crate::cpu::CPU_SUBGROUP_SIZE as usize;
        let first = self.local_index() / size * size;
        let volume = self.block_dim.x * self.block_dim.y * self.block_dim.z;
        (volume - first).min(size)
    }
}

/// A builtin's value on the CPU executor ([`Invocation::get`]), of the
/// type [`Builtin::ty`] gives it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BuiltinValue {
    /// A [`BuiltinType::Axes`] builtin's value.
    Axes(Dim3),
    /// A [`BuiltinType::U32`] builtin's value.
    U32(u32),
}

impl BuiltinValue {
    /// Its type.
    pub fn ty(self) -> BuiltinType {
        match self {
            BuiltinValue::Axes(_) => BuiltinType::Axes,
            BuiltinValue::U32(_) => BuiltinType::U32,
        }
    }
}

/// The Rust types of builtins: how the CPU body takes the value of the
/// type the user's builtin function returns out of a [`BuiltinValue`].
pub trait FromBuiltin: Sized {
    /// The value, or `None` if it is of another type.
    fn from_builtin(value: BuiltinValue) -> Option<Self>;
}

impl FromBuiltin for Dim3 {
    #[inline(always)]
    fn from_builtin(value: BuiltinValue) -> Option<Dim3> {
        match value {
            BuiltinValue::Axes(d) => Some(d),
            BuiltinValue::U32(_) => None,
        }
    }
}

impl FromBuiltin for u32 {
    #[inline(always)]
    fn from_builtin(value: BuiltinValue) -> Option<u32> {
        match value {
            BuiltinValue::U32(v) => Some(v),
            BuiltinValue::Axes(_) => None,
        }
    }
}

/// How much work a launch does.
///
/// `Threads` are rounded up to whole workgroups per axis, so the kernel must
/// guard against indices past its data. A grid with a zero in any axis is a
/// no-op launch (it succeeds and runs nothing).
///
/// ```
/// use onekernel_runtime::{Dim3, Grid};
///
/// // What `launch(&device, 1000, ..)` means: 1000 threads in x.
/// assert_eq!(Grid::from(1000), Grid::threads(1000));
/// // A 2-D grid of 640 × 480 threads, e.g. one per pixel.
/// let pixels = Grid::threads((640, 480));
/// // Exactly 4 × 4 workgroups, whatever their size.
/// let tiles = Grid::blocks([4, 4]);
/// assert_ne!(pixels, tiles);
/// assert_eq!(Dim3::from((640, 480)), Dim3::new(640, 480, 1));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Grid {
    /// At least this many invocations per axis.
    Threads(Dim3),
    /// Exactly this many workgroups per axis.
    Blocks(Dim3),
}

impl Grid {
    /// At least `n` invocations per axis (rounded up to whole workgroups).
    pub fn threads(n: impl Into<Dim3>) -> Grid {
        Grid::Threads(n.into())
    }

    /// Exactly `n` workgroups per axis.
    pub fn blocks(n: impl Into<Dim3>) -> Grid {
        Grid::Blocks(n.into())
    }

    /// The logical number of workgroups this grid launches for `kernel`.
    pub fn groups(self, kernel: &KernelInfo) -> Dim3 {
        match self {
            Grid::Blocks(b) => b,
            Grid::Threads(t) => {
                // A zero workgroup axis is rejected by the limit checks before
                // any launch; `max(1)` only keeps this function total.
                let [wx, wy, wz] = kernel.workgroup_size.map(|w| (w as usize).max(1));
                Dim3::new(t.x.div_ceil(wx), t.y.div_ceil(wy), t.z.div_ceil(wz))
            }
        }
    }
}

impl From<usize> for Grid {
    /// `n` threads in x.
    fn from(n: usize) -> Grid {
        Grid::threads(n)
    }
}

impl From<Dim3> for Grid {
    /// Threads, like `Grid::threads`.
    fn from(n: Dim3) -> Grid {
        Grid::Threads(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every builtin's value on the CPU is of the type the ABI (and so the
    /// compiler's type check) gives it, and the subgroup values describe
    /// one partition of the workgroup.
    #[test]
    fn every_builtin_value_has_its_abi_type() {
        let first = Invocation {
            global_id: Dim3::new(48, 0, 0),
            thread_id: Dim3::new(0, 0, 0),
            block_id: Dim3::new(1, 0, 0),
            block_dim: Dim3::new(48, 1, 1),
            grid_dim: Dim3::new(3, 1, 1),
        };
        for b in Builtin::ALL {
            assert_eq!(first.get(b).ty(), b.ty(), "{b:?}");
        }
        let u32_of = |inv: &Invocation, b| match inv.get(b) {
            BuiltinValue::U32(v) => v,
            BuiltinValue::Axes(d) => panic!("{b:?} is {d:?}"),
        };
        let size = crate::cpu::CPU_SUBGROUP_SIZE;
        for t in 0..48 {
            let inv = first.thread(t, 0, 0);
            let (id, lane) = (u32_of(&inv, Builtin::SubgroupId), u32_of(&inv, Builtin::SubgroupInvocationId));
            assert_eq!(id * size + lane, t as u32);
            assert_eq!(u32_of(&inv, Builtin::NumSubgroups), 2, "48 invocations in subgroups of {size}");
            assert_eq!(inv.get(Builtin::GlobalId), BuiltinValue::Axes(Dim3::new(48 + t, 0, 0)));
        }
    }
}
