//! What an operation may ask of the build running it.

use std::path::Path;
use std::sync::Arc;

use krusty_ops::{Env, KustomizeVersion};
use krusty_resource::{Hashed, Origin, ResMap, Resource};
use krusty_runtime::{FunctionCall, Role, RunError};

use super::Pipeline;
use crate::error::BuildResult;
use crate::kustomization::Kustomization;
use crate::loader::{LoadRestrictor, Loader};
use crate::timings::Timings;

/// The build as operations see it: the services they may use, and
/// nothing of how the build is put together.
pub trait Build {
    /// The Kustomize release whose rules apply.
    fn version(&self) -> KustomizeVersion;

    /// The environment builtins run in, reading files through `loader`.
    fn env<'a>(&'a self, loader: &'a Loader) -> Env<'a>;

    /// Where the time of each operation is recorded, when asked for.
    fn timings(&self) -> Option<&Arc<Timings>>;

    /// Runs the KRM function `call` in `role` over `resources`, each
    /// change recording `origin`; the function sees the build records as
    /// annotations, and its results become the build's warnings. Returns
    /// what a generator made, to be added.
    fn run_function(
        &mut self,
        call: &FunctionCall,
        role: Role,
        resources: &mut ResMap,
        origin: &Origin,
    ) -> Result<Vec<Resource>, RunError>;

    /// The resources `path` names, read through `loader`: a file of
    /// documents, a folder holding a kustomization or a composition
    /// (which is built), or a remote file or folder.
    fn load_resources(&mut self, loader: &Loader, path: &str) -> BuildResult<Hashed>;

    /// Runs the kustomization `k`, written in `file`, over `resources`
    /// (which come first among its resources).
    fn run_kustomization(
        &mut self,
        loader: &Loader,
        k: &Kustomization,
        file: &Path,
        resources: &mut ResMap,
    ) -> BuildResult<()>;

    /// The pipeline of the composition in `file`: consolidated, and each
    /// of its transformers planned into an operation in its own folder.
    fn plan_composition(
        &mut self,
        file: &Path,
        restrictor: LoadRestrictor,
    ) -> BuildResult<Pipeline>;
}
