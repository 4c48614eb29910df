//! Operations on resource maps: Kustomize's built-in generators and
//! transformers, each usable on its own (from a kustomization's fields, from
//! an `apiVersion: builtin` config, or from a Composition pipeline).

pub mod absorb;
pub mod builtins;
pub mod config;
pub mod crds;
pub mod env;
pub mod error;
pub mod fieldspec;
pub mod files;
pub mod parallel;
pub mod patch;
pub mod path;
pub mod replacement;
pub mod schema;
pub mod selector;
mod structured;
mod target_path;
pub mod vars;

#[cfg(test)]
mod test_support;

pub use builtins::Builtin;
pub use config::{NameBackRef, TransformerConfig};
pub use env::Env;
pub use error::{OpError, OpResult};
pub use fieldspec::FieldSpec;
pub use files::FileSource;
pub use krusty_schema::{typed, version, KustomizeVersion};
