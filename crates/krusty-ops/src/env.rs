//! What an operation may consult besides the resources it works on.

use std::sync::atomic::{AtomicBool, Ordering};

use crate::files::{FileSource, NoFiles};
use crate::schema::Schema;
use crate::version::KustomizeVersion;

/// The environment of an operation: where it reads files, and the schema
/// strategic merges use.
#[derive(Clone, Copy)]
pub struct Env<'a> {
    /// Files, read through the kustomization's loader.
    pub files: &'a dyn FileSource,
    /// The OpenAPI schema for strategic merges chosen by an `openapi:`
    /// field; `None`: the built-in Kubernetes schema (see [`Env::schema`]).
    pub custom_schema: Option<&'a Schema>,
    /// Set when a strategic merge reads the built-in Kubernetes schema
    /// (where a custom schema chosen later stands beside it depends on
    /// that: see [`crate::schema::KubernetesLayer`]).
    pub builtin_schema_read: Option<&'a AtomicBool>,
    /// Record each transformation on the resources it ran over (only
    /// needed when the build writes transformation annotations).
    pub record_transformations: bool,
    /// The top kustomization has `buildMetadata` (any option): Kustomize
    /// then keeps build records in every resource's `metadata.annotations`
    /// from the start, so a field spec for that map finds it.
    pub build_records: bool,
    /// The Kustomize release whose rules apply.
    pub version: KustomizeVersion,
}

impl Env<'static> {
    /// No files and the built-in Kubernetes schema.
    pub fn detached() -> Env<'static> {
        Env {
            files: &NoFiles,
            custom_schema: None,
            builtin_schema_read: None,
            record_transformations: true,
            build_records: false,
            version: KustomizeVersion::default(),
        }
    }
}

impl<'a> Env<'a> {
    /// Files from `files`, with the built-in Kubernetes schema.
    pub fn with_files(files: &'a dyn FileSource) -> Env<'a> {
        Env {
            files,
            custom_schema: None,
            builtin_schema_read: None,
            record_transformations: true,
            build_records: false,
            version: KustomizeVersion::default(),
        }
    }

    /// The schema strategic merges use: the chosen one, else the built-in
    /// Kubernetes schema, which is built from its table the first time a
    /// merge asks for it (a build without strategic merges never pays for
    /// it).
    pub fn schema(&self) -> &'a Schema {
        match self.custom_schema {
            Some(schema) => schema,
            None => {
                if let Some(read) = self.builtin_schema_read {
                    read.store(true, Ordering::Relaxed);
                }
                Schema::kubernetes()
            }
        }
    }
}
