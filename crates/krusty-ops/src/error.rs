//! The error type of every operation.

use std::fmt;

use krusty_resource::{ResMapError, ResourceError};
use krusty_schema::error::write_located;
use krusty_schema::SchemaError;
use krusty_yaml::{Pos, YamlError};

/// Why an operation failed. It prints Kustomize's words for the failure,
/// with the context it happened in before it (`context: failure`).
#[derive(Debug, Clone, PartialEq)]
pub enum OpError {
    /// A failure, in the words Kustomize uses for it.
    Message(String),
    /// A resource that is not what the operation needs.
    Resource(ResourceError),
    /// Resources that cannot stand together (two with one id).
    ResMap(Box<ResMapError>),
    /// A YAML text that cannot be read.
    Yaml(Box<YamlError>),
    /// Where the failing entry is written: its file (none: the file
    /// the context names), the entry within it, and its position.
    Located {
        /// The file, when it is not the one the context names.
        file: Option<String>,
        /// The entry, when its position alone does not name it (the
        /// second operation of a JSON patch: `operation 2`).
        item: Option<String>,
        /// 1-based line; 0 when the position is not known.
        line: u32,
        /// 1-based column.
        column: u32,
        /// What went wrong.
        source: Box<OpError>,
    },
    /// What was being done when `source` happened.
    Context {
        /// What was being done (a patch, a transformer, a field).
        context: String,
        /// What went wrong.
        source: Box<OpError>,
    },
}

impl OpError {
    /// An error with this message.
    pub fn new(msg: impl Into<String>) -> OpError {
        OpError::Message(msg.into())
    }

    /// The same error, for an entry written at `pos` of `file` (printed
    /// `error (file, line L, column C)`); unchanged for an entry the build
    /// made (no position).
    pub fn located(self, file: Option<&str>, pos: Pos) -> OpError {
        if pos.line == 0 {
            return self;
        }
        OpError::Located {
            file: file.map(str::to_string),
            item: None,
            line: pos.line,
            column: pos.col,
            source: Box::new(self),
        }
    }

    /// The same error, for `item` (`operation 2`) written at `pos` of the
    /// text being read (printed `error (item, line L, column C)`, without
    /// the position when it is unknown). [`OpError::place`] later says
    /// where that text stands.
    pub fn in_item(self, item: impl Into<String>, pos: Pos) -> OpError {
        OpError::Located {
            file: None,
            item: Some(item.into()),
            line: pos.line,
            column: pos.col,
            source: Box::new(self),
        }
    }

    /// The same error with the position it holds relative to a text (a
    /// patch) translated by `place` into a file and a position in it;
    /// the position is dropped when `place` cannot tell (the entry, if
    /// named, stays). Positions already placed in a file are kept.
    pub fn place(self, place: &dyn Fn(Pos) -> Option<(Option<String>, Pos)>) -> OpError {
        match self {
            OpError::Located {
                file: None,
                item,
                line,
                column,
                source,
            } if line > 0 => {
                let (file, pos) = place(Pos { line, col: column }).unwrap_or_default();
                if pos.line == 0 && item.is_none() {
                    return *source;
                }
                OpError::Located {
                    file,
                    item,
                    line: pos.line,
                    column: pos.col,
                    source,
                }
            }
            OpError::Context { context, source } => OpError::Context {
                context,
                source: Box::new(source.place(place)),
            },
            other => other,
        }
    }

    /// Whether the error says where it happened.
    pub fn has_location(&self) -> bool {
        match self {
            OpError::Located { .. } => true,
            OpError::Context { source, .. } => source.has_location(),
            _ => false,
        }
    }

    /// The same error, in `ctx` (printed `ctx: error`).
    pub fn context(self, ctx: impl fmt::Display) -> OpError {
        OpError::Context {
            context: ctx.to_string(),
            source: Box::new(self),
        }
    }
}

impl fmt::Display for OpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OpError::Message(m) => f.write_str(m),
            OpError::Resource(e) => e.fmt(f),
            OpError::ResMap(e) => e.fmt(f),
            OpError::Yaml(e) => e.fmt(f),
            OpError::Located {
                file,
                item,
                line,
                column,
                source,
            } => write_located(f, source, file.as_deref(), item.as_deref(), *line, *column),
            OpError::Context { context, source } => write!(f, "{context}: {source}"),
        }
    }
}

impl std::error::Error for OpError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            OpError::Message(_) => None,
            OpError::Resource(e) => Some(e),
            OpError::ResMap(e) => Some(e.as_ref()),
            OpError::Yaml(e) => Some(e.as_ref()),
            OpError::Located { source, .. } | OpError::Context { source, .. } => {
                Some(source.as_ref())
            }
        }
    }
}

impl From<ResourceError> for OpError {
    fn from(e: ResourceError) -> OpError {
        OpError::Resource(e)
    }
}

impl From<ResMapError> for OpError {
    fn from(e: ResMapError) -> OpError {
        OpError::ResMap(Box::new(e))
    }
}

impl From<YamlError> for OpError {
    fn from(e: YamlError) -> OpError {
        OpError::Yaml(Box::new(e))
    }
}

impl From<SchemaError> for OpError {
    /// The same error, part for part: a decoder's failure reads the same
    /// when an operation reports it.
    fn from(e: SchemaError) -> OpError {
        match e {
            SchemaError::Message(m) => OpError::Message(m),
            SchemaError::Yaml(e) => OpError::Yaml(e),
            SchemaError::Located {
                file,
                field,
                line,
                column,
                source,
            } => OpError::Located {
                file,
                item: field,
                line,
                column,
                source: Box::new(OpError::from(*source)),
            },
            SchemaError::Context { context, source } => OpError::Context {
                context,
                source: Box::new(OpError::from(*source)),
            },
        }
    }
}

/// Result of an operation.
pub type OpResult<T> = Result<T, OpError>;

pub use krusty_schema::go_quote;
