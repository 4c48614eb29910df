//! Build errors: the failure, in Kustomize's words, with the context that
//! led to it kept as data and printed before it (`context: failure`).

use krusty_fetch::FetchError;
use krusty_ops::OpError;
use krusty_resource::{ResMapError, ResourceError};
use krusty_yaml::YamlError;

/// A failed build, with a message meant for the person running it. Its
/// `Display` (written below, not derived) redacts the credentials of every
/// URL the message names.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BuildError {
    /// A failure of the build itself, in Kustomize's words.
    Message(String),
    /// An operation (a generator, transformer or patch) failed.
    Op(#[from] OpError),
    /// A document is not a resource.
    Resource(#[from] ResourceError),
    /// Resources that cannot stand together (two with one id).
    ResMap(#[source] Box<ResMapError>),
    /// A YAML text cannot be read.
    Yaml(#[source] Box<YamlError>),
    /// A file of resources is not valid YAML (Kustomize's
    /// `MalformedYAMLError`, which names its place).
    MalformedYaml {
        /// The file.
        path: std::path::PathBuf,
        /// What is wrong, and where.
        source: Box<YamlError>,
    },
    /// A remote base or file cannot be fetched.
    Fetch(#[from] FetchError),
    /// Where in a file the entry that failed is written.
    Located {
        /// The file.
        file: String,
        /// 1-based line.
        line: u32,
        /// 1-based column.
        column: u32,
        /// What went wrong.
        source: Box<BuildError>,
    },
    /// The kustomization of a folder could not be read (printed
    /// `couldn't make target for path 'DIR': error`).
    NoTarget {
        /// The folder.
        dir: std::path::PathBuf,
        /// What went wrong.
        source: Box<BuildError>,
    },
    /// What was being done when `source` happened.
    Context {
        /// What was being done (a file, a field, a step).
        context: String,
        /// What went wrong.
        source: Box<BuildError>,
    },
}

impl BuildError {
    /// An error with this message.
    pub fn new(msg: impl Into<String>) -> BuildError {
        BuildError::Message(msg.into())
    }

    /// The same error, in `ctx` (printed `ctx: error`).
    pub fn context(self, ctx: impl std::fmt::Display) -> BuildError {
        BuildError::Context {
            context: ctx.to_string(),
            source: Box::new(self),
        }
    }

    /// The same error, as the reason the kustomization of `dir` could not
    /// be read.
    pub(crate) fn no_target(self, dir: &std::path::Path) -> BuildError {
        BuildError::NoTarget {
            dir: dir.to_path_buf(),
            source: Box::new(self),
        }
    }

    /// Whether the kustomization of a folder could not be read.
    pub(crate) fn is_no_target(&self) -> bool {
        matches!(self, BuildError::NoTarget { .. })
    }

    /// The same error, for the entry written at `pos` of `file` (printed
    /// after the message: `error (file, line L, column C)`); unchanged when
    /// it already says where it happened, or the position is unknown.
    pub fn located(self, file: &std::path::Path, pos: krusty_yaml::Pos) -> BuildError {
        if pos.line == 0 || self.has_location() {
            return self;
        }
        BuildError::Located {
            file: file.display().to_string(),
            line: pos.line,
            column: pos.col,
            source: Box::new(self),
        }
    }

    /// Whether the error says where in a file it happened.
    pub fn has_location(&self) -> bool {
        match self {
            BuildError::Located { .. } | BuildError::Yaml(_) => true,
            // A file of resources that does not read names its place.
            BuildError::MalformedYaml { .. } => true,
            BuildError::Op(e) => e.has_location(),
            BuildError::Context { source, .. } | BuildError::NoTarget { source, .. } => {
                source.has_location()
            }
            _ => false,
        }
    }

    /// What went wrong, without the context it happened in.
    pub fn root_cause(&self) -> &BuildError {
        match self {
            BuildError::Context { source, .. }
            | BuildError::NoTarget { source, .. }
            | BuildError::Located { source, .. } => source.root_cause(),
            other => other,
        }
    }

    /// Whether a git command ran out of time.
    pub fn is_timeout(&self) -> bool {
        matches!(self.root_cause(), BuildError::Fetch(e) if e.is_timeout())
    }

    /// Whether a file of resources is not valid YAML.
    pub fn is_malformed_yaml(&self) -> bool {
        matches!(
            self.root_cause(),
            BuildError::Yaml(_) | BuildError::MalformedYaml { .. }
        )
    }
}

impl std::fmt::Display for BuildError {
    /// The message, with the user information of every URL in it
    /// redacted (`https://***@host/...`), whatever part of it names one.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&krusty_fetch::redact(&Unredacted(self).to_string()))
    }
}

/// A build error's message as its parts give it.
struct Unredacted<'a>(&'a BuildError);

impl std::fmt::Display for Unredacted<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            BuildError::Message(m) => f.write_str(m),
            BuildError::Op(e) => e.fmt(f),
            BuildError::Resource(e) => e.fmt(f),
            BuildError::ResMap(e) => e.fmt(f),
            BuildError::Yaml(e) => e.fmt(f),
            BuildError::Fetch(e) => e.fmt(f),
            BuildError::MalformedYaml { path, source } => write!(
                f,
                "MalformedYAMLError: {}:{}:{}: {}",
                path.display(),
                source.pos.line,
                source.pos.col,
                source.message
            ),
            BuildError::Located {
                file,
                line,
                column,
                source,
            } => krusty_schema::error::write_located(f, source, Some(file), None, *line, *column),
            BuildError::NoTarget { dir, source } => write!(
                f,
                "couldn't make target for path '{}': {source}",
                dir.display()
            ),
            BuildError::Context { context, source } => write!(f, "{context}: {source}"),
        }
    }
}

impl From<ResMapError> for BuildError {
    fn from(e: ResMapError) -> BuildError {
        BuildError::ResMap(Box::new(e))
    }
}

impl From<krusty_schema::SchemaError> for BuildError {
    /// A file that cannot be read: its message, its YAML error, or (with
    /// where it happened) the error of the operation that reads it.
    fn from(e: krusty_schema::SchemaError) -> BuildError {
        match e {
            krusty_schema::SchemaError::Message(m) => BuildError::Message(m),
            krusty_schema::SchemaError::Yaml(e) => BuildError::Yaml(e),
            located => BuildError::Op(OpError::from(located)),
        }
    }
}

impl From<YamlError> for BuildError {
    fn from(e: YamlError) -> BuildError {
        BuildError::Yaml(Box::new(e))
    }
}

/// Result of a build step.
pub type BuildResult<T> = Result<T, BuildError>;

/// `text` as Go's `fmt` prints it when it is used as a format string with
/// no arguments: `%%` is `%`, a verb is `%!v(MISSING)`, a `%` that ends
/// the text is `%!(NOVERB)`.
pub(crate) fn go_format_without_arguments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        // Flags, width and precision, then the verb.
        while chars
            .peek()
            .is_some_and(|c| matches!(c, '+' | '-' | '#' | ' ' | '0'..='9' | '.'))
        {
            chars.next();
        }
        match chars.next() {
            Some('%') => out.push('%'),
            Some(verb) => out.push_str(&format!("%!{verb}(MISSING)")),
            None => out.push_str("%!(NOVERB)"),
        }
    }
    out
}

#[cfg(test)]
mod go_format_tests {
    use super::go_format_without_arguments;

    #[test]
    fn verbs_without_arguments_print_as_go_prints_them() {
        assert_eq!(
            go_format_without_arguments("comp%d-100%%.yaml"),
            "comp%!d(MISSING)-100%.yaml"
        );
        assert_eq!(
            go_format_without_arguments("a%5.2fb%"),
            "a%!f(MISSING)b%!(NOVERB)"
        );
        assert_eq!(go_format_without_arguments("plain"), "plain");
    }
}
