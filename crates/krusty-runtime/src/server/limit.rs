//! The bound on the function servers one pool runs at once: each running
//! server holds a place; a start needs one. When none is free, the pool
//! stops its least recently used idle server; when every server is busy,
//! the start waits until a call ends (each call is itself bounded by the
//! time limit).

use std::sync::{Condvar, Mutex};
use std::time::Duration;

/// How many servers may run at once unless the policy's `max_servers`
/// says otherwise.
pub const DEFAULT_MAX_SERVERS: usize = 8;

/// How long a start waits before it looks for an idle server again (a
/// server may become idle while its slot is busy).
const RECHECK: Duration = Duration::from_millis(50);

/// The places of one pool's servers.
#[derive(Debug)]
pub(super) struct Places {
    /// The bound (at least one).
    max: usize,
    /// How many places are taken.
    taken: Mutex<usize>,
    /// Signalled when a place is given back or a server becomes idle.
    freed: Condvar,
}

impl Places {
    /// At most `max` servers at once (at least one).
    pub(super) fn new(max: usize) -> Places {
        Places {
            max: max.max(1),
            taken: Mutex::new(0),
            freed: Condvar::new(),
        }
    }

    /// Takes a place for a server about to start. When none is free,
    /// calls `stop_idle`, which stops an idle server (giving its place
    /// back) and says whether it did; when it did not, waits for a place
    /// or an idle server.
    pub(super) fn take(&self, mut stop_idle: impl FnMut() -> bool) {
        loop {
            {
                let mut taken = self.taken.lock().unwrap_or_else(|e| e.into_inner());
                if *taken < self.max {
                    *taken += 1;
                    return;
                }
            }
            if stop_idle() {
                continue;
            }
            let taken = self.taken.lock().unwrap_or_else(|e| e.into_inner());
            if *taken >= self.max {
                let _ = self.freed.wait_timeout(taken, RECHECK);
            }
        }
    }

    /// Gives back the place of a server that has stopped.
    pub(super) fn give_back(&self) {
        let mut taken = self.taken.lock().unwrap_or_else(|e| e.into_inner());
        *taken = taken.saturating_sub(1);
        self.freed.notify_all();
    }

    /// A server has become idle: a start waiting for a place may stop it.
    pub(super) fn idle(&self) {
        let _taken = self.taken.lock().unwrap_or_else(|e| e.into_inner());
        self.freed.notify_all();
    }
}
