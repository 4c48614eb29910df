//! A one-line note on stderr while something is fetched, when stderr is a
//! terminal.

use std::io::Write;

/// Shows `Fetching WHAT…` until dropped.
pub struct Progress {
    shown: bool,
}

impl Progress {
    /// Shows the line if `enabled`.
    pub fn start(enabled: bool, what: &str) -> Progress {
        if enabled {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r\x1b[2KFetching {what}\u{2026}");
            let _ = err.flush();
        }
        Progress { shown: enabled }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if self.shown {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r\x1b[2K");
            let _ = err.flush();
        }
    }
}
