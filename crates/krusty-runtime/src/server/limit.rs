//! The bound on the function servers running at once in this process:
//! each running server holds a place; a start needs one. When none is
//! free, the pool stops its least recently used idle server; when every
//! server is busy, the start waits until a call ends (each call is itself
//! bounded by the time limit).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

/// How many servers may run at once unless [`set_max_servers`] says
/// otherwise.
pub const DEFAULT_MAX_SERVERS: usize = 8;

/// The bound.
static MAX: AtomicUsize = AtomicUsize::new(DEFAULT_MAX_SERVERS);

/// How many places are taken.
static TAKEN: Mutex<usize> = Mutex::new(0);

/// Signalled when a place is given back or a server becomes idle.
static FREED: Condvar = Condvar::new();

/// How long a start waits before it looks for an idle server again (a
/// server may become idle while its slot is busy).
const RECHECK: Duration = Duration::from_millis(50);

/// Sets how many function servers may run at once in this process (at
/// least one); krusty's `--max-function-servers`. Servers already running
/// are not stopped.
pub fn set_max_servers(n: usize) {
    MAX.store(n.max(1), Ordering::SeqCst);
}

/// The bound in force.
pub fn max_servers() -> usize {
    MAX.load(Ordering::SeqCst)
}

/// Takes a place for a server about to start. When none is free, calls
/// `stop_idle`, which stops an idle server (giving its place back) and
/// says whether it did; when it did not, waits for a place or an idle
/// server.
pub(super) fn take(mut stop_idle: impl FnMut() -> bool) {
    loop {
        {
            let mut taken = TAKEN.lock().unwrap_or_else(|e| e.into_inner());
            if *taken < max_servers() {
                *taken += 1;
                return;
            }
        }
        if stop_idle() {
            continue;
        }
        let taken = TAKEN.lock().unwrap_or_else(|e| e.into_inner());
        if *taken >= max_servers() {
            let _ = FREED.wait_timeout(taken, RECHECK);
        }
    }
}

/// Gives back the place of a server that has stopped.
pub(super) fn give_back() {
    let mut taken = TAKEN.lock().unwrap_or_else(|e| e.into_inner());
    *taken = taken.saturating_sub(1);
    FREED.notify_all();
}

/// A server has become idle: a start waiting for a place may stop it.
pub(super) fn idle() {
    let _taken = TAKEN.lock().unwrap_or_else(|e| e.into_inner());
    FREED.notify_all();
}
