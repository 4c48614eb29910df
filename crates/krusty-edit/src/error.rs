//! The error of an edit: a message worded as Kustomize's `edit` words it.

/// Why an edit or `create` did not happen. The text is Kustomize's where
/// Kustomize has one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct EditError(pub String);

impl EditError {
    /// An error with this message.
    pub fn new(message: impl Into<String>) -> EditError {
        EditError(message.into())
    }
}

/// The result of an edit.
pub type EditResult<T> = Result<T, EditError>;
