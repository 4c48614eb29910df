//! The error type of every operation.

use std::fmt;

/// Why an operation failed; the text is what the user sees.
#[derive(Debug, Clone, PartialEq)]
pub struct OpError(pub String);

impl OpError {
    /// An error with this message.
    pub fn new(msg: impl Into<String>) -> OpError {
        OpError(msg.into())
    }

    /// Prefixes the message with `ctx: `.
    pub fn context(self, ctx: impl fmt::Display) -> OpError {
        OpError(format!("{ctx}: {}", self.0))
    }
}

impl fmt::Display for OpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for OpError {}

/// Result of an operation.
pub type OpResult<T> = Result<T, OpError>;

/// Go's `%q` of a string, as Kustomize's messages quote names and paths
/// (JSON escaping, which agrees for the text they hold).
pub fn go_quote(s: &str) -> String {
    let mut out = String::new();
    krusty_yaml::write_go_json_string(s, &mut out);
    out
}
