//! The one error type of every decoder in this crate.

use std::fmt;

use krusty_yaml::{Pos, YamlError};

/// Why a file, or a field of one, cannot be read. It prints Kustomize's
/// words for the failure, with where it is written after it
/// (`failure (file, line L, column C)`) and what was being read before it
/// (`field: failure`).
#[derive(Debug, Clone, PartialEq)]
pub enum SchemaError {
    /// A failure, in the words Kustomize uses for it.
    Message(String),
    /// A YAML text that cannot be read.
    Yaml(Box<YamlError>),
    /// Where the failing value is written: its file (none: the file the
    /// context names), the field or entry within it, and its position.
    Located {
        /// The file, when it is not the one the context names.
        file: Option<String>,
        /// The field or entry, when its position alone does not name it.
        field: Option<String>,
        /// 1-based line; 0 when the position is not known.
        line: u32,
        /// 1-based column.
        column: u32,
        /// What went wrong.
        source: Box<SchemaError>,
    },
    /// What was being read when `source` happened.
    Context {
        /// What was being read (a file, a field).
        context: String,
        /// What went wrong.
        source: Box<SchemaError>,
    },
}

/// The result of a decoder.
pub type SchemaResult<T> = Result<T, SchemaError>;

impl SchemaError {
    /// An error with this message.
    pub fn new(msg: impl Into<String>) -> SchemaError {
        SchemaError::Message(msg.into())
    }

    /// The same error, for a value written at `pos` of `file` (printed
    /// `error (file, line L, column C)`); unchanged for a value the build
    /// made (no position).
    pub fn located(self, file: Option<&str>, pos: Pos) -> SchemaError {
        if pos.line == 0 {
            return self;
        }
        SchemaError::Located {
            file: file.map(str::to_string),
            field: None,
            line: pos.line,
            column: pos.col,
            source: Box::new(self),
        }
    }

    /// The same error, for `field` (`operation 2`) written at `pos`
    /// (printed `error (field, line L, column C)`, without the position
    /// when it is unknown).
    pub fn in_field(self, field: impl Into<String>, pos: Pos) -> SchemaError {
        SchemaError::Located {
            file: None,
            field: Some(field.into()),
            line: pos.line,
            column: pos.col,
            source: Box::new(self),
        }
    }

    /// The same error, in `ctx` (printed `ctx: error`).
    pub fn context(self, ctx: impl fmt::Display) -> SchemaError {
        SchemaError::Context {
            context: ctx.to_string(),
            source: Box::new(self),
        }
    }

    /// The same error with every position that is relative to no file
    /// (one read from a text) placed in `file`.
    pub fn in_file(self, file: &str) -> SchemaError {
        match self {
            SchemaError::Located {
                file: None,
                field,
                line,
                column,
                source,
            } if line > 0 => SchemaError::Located {
                file: Some(file.to_string()),
                field,
                line,
                column,
                source,
            },
            SchemaError::Context { context, source } => SchemaError::Context {
                context,
                source: Box::new(source.in_file(file)),
            },
            other => other,
        }
    }

    /// The error as compilers print theirs, with where it is written
    /// first: `file:line:column: context: field 'f': failure`. The file is
    /// the one the error names, else `file`; the line and column are left
    /// out when the position is unknown, and `field 'f': ` when the error
    /// names no field. An error that says nowhere reads `file: error`.
    pub fn place_first(&self, file: &str) -> String {
        let mut contexts = Vec::new();
        let mut at = self;
        loop {
            match at {
                SchemaError::Context { context, source } => {
                    contexts.push(context.as_str());
                    at = source;
                }
                SchemaError::Located {
                    file: own,
                    field,
                    line,
                    column,
                    source,
                } => {
                    let mut out = own.as_deref().unwrap_or(file).to_string();
                    if *line > 0 {
                        out.push_str(&format!(":{line}:{column}"));
                    }
                    for context in contexts {
                        out.push_str(&format!(": {context}"));
                    }
                    if let Some(field) = field {
                        out.push_str(&format!(": field '{field}'"));
                    }
                    out.push_str(&format!(": {source}"));
                    return out;
                }
                SchemaError::Message(_) | SchemaError::Yaml(_) => return format!("{file}: {self}"),
            }
        }
    }

    /// Whether the error says where it happened.
    pub fn has_location(&self) -> bool {
        match self {
            SchemaError::Located { .. } => true,
            SchemaError::Context { source, .. } => source.has_location(),
            _ => false,
        }
    }
}

impl fmt::Display for SchemaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SchemaError::Message(m) => f.write_str(m),
            SchemaError::Yaml(e) => e.fmt(f),
            SchemaError::Located {
                file,
                field,
                line,
                column,
                source,
            } => write_located(f, source, file.as_deref(), field.as_deref(), *line, *column),
            SchemaError::Context { context, source } => write!(f, "{context}: {source}"),
        }
    }
}

/// `source` followed by where it happened: its file, field and position,
/// on the same line, or on a line of its own after a message of several
/// lines (one that ends with a node's contents). Every located error of
/// krusty prints through this, so they all read alike.
pub fn write_located(
    f: &mut fmt::Formatter<'_>,
    source: &dyn fmt::Display,
    file: Option<&str>,
    field: Option<&str>,
    line: u32,
    column: u32,
) -> fmt::Result {
    let mut at: Vec<String> = file.iter().chain(&field).map(|s| s.to_string()).collect();
    if line > 0 {
        at.push(format!("line {line}, column {column}"));
    }
    if at.is_empty() {
        return source.fmt(f);
    }
    let at = at.join(", ");
    let text = source.to_string();
    if text.contains('\n') {
        write!(f, "{}\n({at})", text.trim_end_matches('\n'))
    } else {
        write!(f, "{text} ({at})")
    }
}

impl std::error::Error for SchemaError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SchemaError::Message(_) => None,
            SchemaError::Yaml(e) => Some(e.as_ref()),
            SchemaError::Located { source, .. } | SchemaError::Context { source, .. } => {
                Some(source.as_ref())
            }
        }
    }
}

impl From<YamlError> for SchemaError {
    fn from(e: YamlError) -> SchemaError {
        SchemaError::Yaml(Box::new(e))
    }
}

/// Go's `%q` of a string, as Kustomize's messages quote names and paths
/// (JSON escaping, which agrees for the text they hold).
pub fn go_quote(s: &str) -> String {
    let mut out = String::new();
    krusty_yaml::write_go_json_string(s, &mut out);
    out
}
