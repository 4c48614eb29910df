//! What an edit asks of the rest of krusty. Kustomize's `edit` builds,
//! fetches and generates to check what it writes: `edit fix` compares the
//! build before and after, `edit add resource` clones a remote target,
//! `edit add|set configmap` generates the object, `create --autodetect`
//! reads files as resources. This crate reads and writes kustomization
//! files only; the caller supplies those checks (`krusty-api` implements
//! them with the build engine).

use std::path::Path;

use krusty_schema::generator::GeneratedKind;
use krusty_yaml::Node;

/// Why a check failed, in the words of the part of krusty that made it.
pub type CheckError = Box<dyn std::error::Error + Send + Sync>;

/// The checks an edit makes through the build engine.
pub trait Checks {
    /// The output of `kustomize build dir`, or why it fails.
    fn build(&self, dir: &Path) -> Result<String, CheckError>;

    /// For a target Kustomize's loader reads as a remote git reference:
    /// whether its folder is a directory of its repository (fetched as a
    /// build fetches it). `None` for a target that is no remote reference.
    fn remote_target(&self, target: &str) -> Option<Result<(), CheckError>>;

    /// Generates the object a `configMapGenerator` or `secretGenerator`
    /// entry stands for, reading its files as a build of `dir` would.
    fn generate(&self, dir: &Path, kind: GeneratedKind, entry: &Node) -> Result<(), CheckError>;

    /// Whether `text`, the content of the file at `path`, reads as
    /// Kubernetes resources.
    fn reads_as_resources(&self, text: &str, path: &Path) -> bool;
}
