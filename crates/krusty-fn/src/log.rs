//! Messages on stderr. A function's stdout is its `ResourceList`; what
//! it writes on stderr reaches the user (krusty and Kustomize pass it
//! on, kpt shows it under `Stderr:`). Each line starts with the level.
//! `debug` prints only when `KRM_FN_DEBUG` is set in the environment.

use std::fmt::Display;
use std::io::Write;

fn line(level: &str, message: &dyn Display) {
    let _ = writeln!(std::io::stderr().lock(), "[{level}] {message}");
}

/// An informational message.
pub fn info(message: impl Display) {
    line("info", &message);
}

/// A warning.
pub fn warn(message: impl Display) {
    line("warning", &message);
}

/// An error message (it does not fail the function: return an `Err` or
/// an `error` result for that).
pub fn error(message: impl Display) {
    line("error", &message);
}

/// A debug message, printed only when `KRM_FN_DEBUG` is set.
pub fn debug(message: impl Display) {
    if std::env::var_os("KRM_FN_DEBUG").is_some() {
        line("debug", &message);
    }
}
