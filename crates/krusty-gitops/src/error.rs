//! Why a GitOps command failed.

use std::path::PathBuf;

use krusty_yaml::YamlError;

/// Why a GitOps command failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file or folder could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// A git command failed.
    #[error("git {command}: {message}")]
    Git {
        /// The command, as `git` subcommand and arguments.
        command: String,
        /// What git said, or why it could not run.
        message: String,
    },
    /// A revision, or a range of two, is not one git can read.
    #[error("'{0}' is not a revision: {1}")]
    Revision(String, String),
    /// A YAML file does not parse.
    #[error("{}: {message}", path.display())]
    Yaml {
        /// The file.
        path: PathBuf,
        /// What is wrong, with line and column.
        message: String,
    },
    /// An object (Flux Kustomization, Argo CD Application) is not one
    /// krusty can render.
    #[error("{kind} '{name}' in {}: {message}", file.display())]
    Object {
        /// The object's kind.
        kind: &'static str,
        /// Its namespace/name.
        name: String,
        /// The file it was read from.
        file: PathBuf,
        /// What is wrong with it, naming the field.
        message: String,
    },
    /// A target could not be built.
    #[error("{target}: {message}")]
    Build {
        /// The target, as listed.
        target: String,
        /// The build's error.
        message: String,
    },
    /// Output could not be produced.
    #[error("{0}")]
    Output(String),
}

impl Error {
    /// An I/O error on `path`.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Error {
        Error::Io {
            path: path.into(),
            source,
        }
    }
}

/// A GitOps command's result.
pub type Result<T> = std::result::Result<T, Error>;

/// A file or folder of a tree that cannot be read, or a file that is not
/// YAML, as Flux and Argo CD report them: the path, then what is wrong.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    /// A file or folder (as shown) cannot be read.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// A file (as shown) is not YAML.
    #[error("{}: {source}", path.display())]
    Yaml {
        /// The file.
        path: PathBuf,
        /// What is wrong, with line and column.
        source: YamlError,
    },
}
