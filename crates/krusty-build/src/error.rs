//! Build errors: a message with the chain of context that led to it.

/// A failed build, with a message meant for the person running it.
#[derive(Debug, Clone, PartialEq)]
pub struct BuildError(pub String);

impl BuildError {
    /// An error with this message.
    pub fn new(msg: impl Into<String>) -> BuildError {
        BuildError(msg.into())
    }

    /// Prefixes the message with context, as `context: message`.
    pub fn context(self, ctx: impl std::fmt::Display) -> BuildError {
        BuildError(format!("{ctx}: {}", self.0))
    }
}

impl std::fmt::Display for BuildError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BuildError {}

/// Result of a build step.
pub type BuildResult<T> = Result<T, BuildError>;
