//! What an operation may consult besides the resources it works on.

use crate::files::{FileSource, NoFiles};
use crate::schema::Schema;

/// The environment of an operation: where it reads files, and the schema
/// strategic merges use.
#[derive(Clone, Copy)]
pub struct Env<'a> {
    /// Files, read through the kustomization's loader.
    pub files: &'a dyn FileSource,
    /// The OpenAPI schema for strategic merges.
    pub schema: &'a Schema,
    /// Record each transformation on the resources it ran over (only
    /// needed when the build writes transformation annotations).
    pub record_transformations: bool,
}

impl Env<'static> {
    /// No files and the built-in Kubernetes schema.
    pub fn detached() -> Env<'static> {
        Env {
            files: &NoFiles,
            schema: Schema::kubernetes(),
            record_transformations: true,
        }
    }
}

impl<'a> Env<'a> {
    /// Files from `files`, with the built-in Kubernetes schema.
    pub fn with_files(files: &'a dyn FileSource) -> Env<'a> {
        Env {
            files,
            schema: Schema::kubernetes(),
            record_transformations: true,
        }
    }
}
