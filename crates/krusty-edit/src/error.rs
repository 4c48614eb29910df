//! The error of an edit: a message worded as Kustomize's `edit` words it.

/// Why an edit or `create` did not happen. The text is Kustomize's where
/// Kustomize has one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EditError(pub String);

impl EditError {
    /// An error with this message.
    pub fn new(message: impl Into<String>) -> EditError {
        EditError(message.into())
    }
}

impl std::fmt::Display for EditError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for EditError {}

/// The result of an edit.
pub type EditResult<T> = Result<T, EditError>;
