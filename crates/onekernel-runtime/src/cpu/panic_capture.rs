//! Turning a panic inside a kernel body into a `LaunchError::CpuPanic` that
//! says where it happened.
//!
//! `catch_unwind` gives only the payload; the location is known only to the
//! panic hook. So the runtime installs (once) a hook that wraps the previous
//! one: on a thread that is running a kernel chunk it records location and
//! message (and prints nothing — the error carries them); everywhere else it
//! defers to the previous hook unchanged.

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::panic::{self, AssertUnwindSafe};
use std::sync::Once;

thread_local! {
    /// Whether this thread is running a kernel body right now.
    static CAPTURING: Cell<bool> = const { Cell::new(false) };
    /// The last panic captured on this thread.
    static CAPTURED: RefCell<Option<Captured>> = const { RefCell::new(None) };
}

static INSTALL_HOOK: Once = Once::new();

fn install_hook() {
    INSTALL_HOOK.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if CAPTURING.with(Cell::get) {
                let location = info.location().map(|l| (l.file().to_string(), l.line(), l.column()));
                let message = payload_message(info.payload());
                let site = crate::debug::panic_site();
                CAPTURED.with(|c| *c.borrow_mut() = Some(Captured { location, message, site }));
            } else {
                previous(info);
            }
        }));
    });
}

/// The text of a panic payload (`panic!` gives `&str` or `String`).
fn payload_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "Box<dyn Any>".to_owned()
    }
}

/// Restores the thread's capturing flag even if `f` unwinds.
struct CapturingGuard(bool);

impl Drop for CapturingGuard {
    fn drop(&mut self) {
        CAPTURING.with(|c| c.set(self.0));
    }
}

/// A panic of a kernel body.
#[derive(Debug)]
pub(crate) struct Captured {
    /// File, line and column, when the hook saw it.
    location: Option<(String, u32, u32)>,
    message: String,
    /// The invocation, when the panic is one of the kernel's `panic!`s or
    /// failed `assert!`s (see `crate::debug::PanicSite`).
    site: Option<[u32; 3]>,
}

impl Captured {
    /// The launch's error: `KernelPanic` for the kernel's own panics,
    /// `CpuPanic` for any other.
    pub(crate) fn into_error(self, kernel: &'static onekernel_abi::KernelInfo) -> crate::error::LaunchError {
        use crate::error::LaunchError;
        crate::debug::flush_pending();
        match (self.site, self.location) {
            (Some([x, y, z]), Some((file, line, column))) => LaunchError::KernelPanic {
                kernel: &kernel.name,
                file,
                line,
                column,
                message: self.message,
                invocation: crate::grid::Dim3::new(x as usize, y as usize, z as usize),
                panics: 1,
            },
            (_, location) => LaunchError::CpuPanic {
                kernel: &kernel.name,
                location: location.map(|(f, l, c)| format!("{f}:{l}:{c}")),
                message: self.message,
            },
        }
    }
}

/// Runs `f`; a panic inside becomes `Err`.
pub(crate) fn run_captured<R>(f: impl FnOnce() -> R) -> Result<R, Captured> {
    install_hook();
    let _guard = CapturingGuard(CAPTURING.with(|c| c.replace(true)));
    match panic::catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => Ok(r),
        Err(payload) => Err(CAPTURED
            .with(|c| c.borrow_mut().take())
            // Someone replaced our hook after we installed it: no location.
            .unwrap_or_else(|| Captured { location: None, message: payload_message(&*payload), site: None })),
    }
}
