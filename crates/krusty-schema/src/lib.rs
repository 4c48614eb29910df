//! The file formats krusty reads, and the one strict way they are decoded.
//!
//! Every format is read from a YAML node (never from re-serialised text)
//! with Go's JSON typing (see [`typed`]), and every failure is a
//! [`SchemaError`] that names the file, line, column and field. This crate
//! sits right above `krusty-yaml`: resources, operations and the
//! orchestrator build on the types here, and tools that only read or edit
//! kustomizations (`krusty edit`, `krusty view catalog`) need nothing
//! above it.

pub mod catalog;
pub mod composition;
pub mod decode;
pub mod error;
pub mod fieldspec;
pub mod function;
pub mod generator;
pub mod helm;
pub mod id;
pub mod image;
pub mod kustomization;
pub mod patch;
pub mod path;
pub mod replacement;
pub mod scope;
pub mod selector;
pub mod typed;
pub mod var;
pub mod version;

pub use error::{go_quote, SchemaError, SchemaResult};
pub use id::{Gvk, ResId};
pub use kustomization::{Kustomization, FILE_NAMES};
pub use typed::{At, Strictness};
pub use version::KustomizeVersion;
