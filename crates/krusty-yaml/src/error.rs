//! Errors from reading YAML, with the position they were found at.

use crate::node::Pos;

/// A YAML syntax or limit error at a source position.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("line {}, column {}: {message}", .pos.line, .pos.col)]
pub struct YamlError {
    /// What went wrong.
    pub message: String,
    /// Where it went wrong.
    pub pos: Pos,
    /// What sort of problem it is, for readers that treat some sorts
    /// differently.
    pub kind: YamlErrorKind,
}

/// The sort of problem a [`YamlError`] reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum YamlErrorKind {
    /// Text that is not YAML, or that goes past a limit.
    #[default]
    Syntax,
    /// A mapping key written twice (where that is an error).
    DuplicateKey,
    /// A scalar whose text does not suit its explicit core tag
    /// ([`crate::resolve::TagError`]).
    TagMismatch,
}

impl YamlError {
    /// A syntax error at `pos`.
    pub fn new(pos: Pos, message: impl Into<String>) -> YamlError {
        YamlError {
            message: message.into(),
            pos,
            kind: YamlErrorKind::Syntax,
        }
    }

    /// The same error, of sort `kind`.
    pub fn of_kind(self, kind: YamlErrorKind) -> YamlError {
        YamlError { kind, ..self }
    }
}
