//! Clean-up when the process is interrupted.
//!
//! Whatever krusty leaves in the world while it works (function
//! containers, half-written output) registers a clean-up here. On SIGINT,
//! SIGTERM or SIGHUP one thread runs every registered clean-up, then ends
//! the process as the signal would have (exit status 128 + the signal).
//! Steps that must not be cut in the middle (swapping a finished output
//! into place) hold a [`Critical`] guard: the clean-up waits for them.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Once, RwLock};

type Cleanup = Arc<dyn Fn() + Send + Sync>;

/// Registered clean-ups by registration number.
static CLEANUPS: Mutex<BTreeMap<u64, Cleanup>> = Mutex::new(BTreeMap::new());
static NEXT: AtomicU64 = AtomicU64::new(0);
static HANDLER: Once = Once::new();
/// Held for reading by critical steps, for writing by the clean-up.
static CRITICAL: RwLock<()> = RwLock::new(());
/// Set once a signal has arrived and the clean-up has begun.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// A registered clean-up; dropping it unregisters it (the work it would
/// undo is finished or already undone).
#[must_use = "the clean-up is unregistered when this is dropped"]
pub struct Registration(u64);

impl Drop for Registration {
    fn drop(&mut self) {
        if let Ok(mut cleanups) = CLEANUPS.lock() {
            cleanups.remove(&self.0);
        }
    }
}

/// Runs `cleanup` if the process is interrupted before the returned
/// registration is dropped.
pub fn on_interrupt(cleanup: impl Fn() + Send + Sync + 'static) -> Registration {
    HANDLER.call_once(install_handler);
    let id = NEXT.fetch_add(1, Ordering::Relaxed);
    if let Ok(mut cleanups) = CLEANUPS.lock() {
        cleanups.insert(id, Arc::new(cleanup));
    }
    Registration(id)
}

/// Whether an interrupt is being handled (the process is about to end).
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// A step that an interrupt must not cut in two: while a guard lives, the
/// clean-up (and so the end of the process) waits.
pub struct Critical {
    _guard: std::sync::RwLockReadGuard<'static, ()>,
}

/// Enters a critical step; see [`Critical`].
pub fn critical() -> Critical {
    HANDLER.call_once(install_handler);
    Critical {
        _guard: CRITICAL.read().unwrap_or_else(|e| e.into_inner()),
    }
}

/// Starts the thread that waits for SIGINT, SIGTERM and SIGHUP.
fn install_handler() {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
        return;
    };
    std::thread::spawn(move || {
        if let Some(signal) = signals.forever().next() {
            INTERRUPTED.store(true, Ordering::SeqCst);
            let _no_critical_step = CRITICAL.write().unwrap_or_else(|e| e.into_inner());
            let cleanups: Vec<Cleanup> = CLEANUPS
                .lock()
                .map(|c| c.values().cloned().collect())
                .unwrap_or_default();
            for cleanup in cleanups {
                cleanup();
            }
            std::process::exit(128 + signal);
        }
    });
}
