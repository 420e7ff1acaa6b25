//! A kernel's modules: one [`ModuleKey`] names a shader variant everywhere
//! (the compiler lowers by it, the macro writes the table of them, the
//! runtime's pipeline cache is keyed by it), and
//! [`KernelInfo::modules`](crate::KernelInfo::modules) is the table.

use alloc::borrow::Cow;
use core::fmt;

/// Which of a kernel's modules: the one name of a shader variant. A new
/// dimension (a debug-print module, say) is one more field here; see
/// "Add a module variant" in `docs/architecture.md`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ModuleKey {
    /// For 1-D grids of more workgroups than one dispatch dimension
    /// allows: the logical ids are rebuilt from the folded dispatch and the
    /// launch block (see the crate docs).
    pub folded: bool,
    /// Every buffer, shared-memory and array index and every integer
    /// division is checked, the first failure recorded in a report buffer
    /// (see [`report`](crate::report)); loops count against the
    /// `override` loop budget of id [`report::LOOP_BUDGET_ID`](crate::report::LOOP_BUDGET_ID).
    pub checked: bool,
}

impl ModuleKey {
    /// The module a learner reads (`name::WGSL`) and ordinary launches run.
    pub const PLAIN: ModuleKey = ModuleKey { folded: false, checked: false };
    /// The plain module for folded grids.
    pub const FOLDED: ModuleKey = ModuleKey { folded: true, ..ModuleKey::PLAIN };
    /// The module of checked launches.
    pub const CHECKED: ModuleKey = ModuleKey { checked: true, ..ModuleKey::PLAIN };
    /// The module of checked launches on folded grids.
    pub const CHECKED_FOLDED: ModuleKey = ModuleKey { folded: true, checked: true };
}

/// `plain`, or the key's set flags (`checked folded`), for messages.
impl fmt::Display for ModuleKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ModuleKey { folded, checked } = *self;
        let words = [(checked, "checked"), (folded, "folded")];
        let mut first = true;
        for (_, word) in words.iter().filter(|(set, _)| *set) {
            if !first {
                f.write_str(" ")?;
            }
            f.write_str(word)?;
            first = false;
        }
        if first {
            f.write_str("plain")?;
        }
        Ok(())
    }
}

/// One of a kernel's modules.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Module {
    /// Which variant it is.
    pub key: ModuleKey,
    /// Its WGSL (validated, and re-parsed by naga's front end), which the
    /// runtime compiles.
    pub wgsl: Cow<'static, str>,
    /// Its SPIR-V (validated by naga; `spirv-val` in the tests), where it
    /// was written: the compiler writes the plain module's only
    /// (`name::SPIRV`, `inspect::spirv`), the one a program reads.
    pub spirv: Option<Cow<'static, [u32]>>,
}
