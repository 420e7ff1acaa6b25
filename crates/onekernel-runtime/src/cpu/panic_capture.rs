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
    /// The last panic captured on this thread: (location, message).
    static CAPTURED: RefCell<Option<(Option<String>, String)>> = const { RefCell::new(None) };
}

static INSTALL_HOOK: Once = Once::new();

fn install_hook() {
    INSTALL_HOOK.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if CAPTURING.with(Cell::get) {
                let location = info.location().map(|l| format!("{}:{}:{}", l.file(), l.line(), l.column()));
                let message = payload_message(info.payload());
                CAPTURED.with(|c| *c.borrow_mut() = Some((location, message)));
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

/// Runs `f`; a panic inside becomes `Err((location, message))`.
pub(crate) fn run_captured<R>(f: impl FnOnce() -> R) -> Result<R, (Option<String>, String)> {
    install_hook();
    let _guard = CapturingGuard(CAPTURING.with(|c| c.replace(true)));
    match panic::catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => Ok(r),
        Err(payload) => Err(CAPTURED
            .with(|c| c.borrow_mut().take())
            // Someone replaced our hook after we installed it: no location.
            .unwrap_or_else(|| (None, payload_message(&*payload)))),
    }
}
