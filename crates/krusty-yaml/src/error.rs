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
}

impl YamlError {
    /// An error at `pos`.
    pub fn new(pos: Pos, message: impl Into<String>) -> YamlError {
        YamlError {
            message: message.into(),
            pos,
        }
    }
}
