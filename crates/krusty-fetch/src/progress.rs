//! A one-line note on stderr while something is fetched, when stderr is a
//! terminal; credentials in the URL it names are redacted.

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
            let _ = write!(err, "{}", line(what));
            let _ = err.flush();
        }
        Progress { shown: enabled }
    }
}

/// The line shown while `what` is fetched.
fn line(what: &str) -> String {
    format!("\r\x1b[2KFetching {}\u{2026}", crate::redact(what))
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

#[cfg(test)]
mod tests {
    #[test]
    fn the_line_shows_no_credentials() {
        let shown = super::line("https://user:s3cret@h.example/org/repo (main)");
        assert!(
            shown.ends_with("Fetching https://***@h.example/org/repo (main)\u{2026}"),
            "{shown:?}"
        );
    }
}
