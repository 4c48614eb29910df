//! The state of one build: the services it uses (fetching, functions,
//! Helm, catalogs, read-ahead) and what it has gathered so far (warnings,
//! build records, the merge schema, the chain of folders being built).
//! The build's steps live in [`crate::target`]; planning and the
//! compositions see the build through this state and through
//! [`crate::pipeline::Build`].

use std::path::PathBuf;
use std::sync::Arc;

use krusty_fetch::Fetcher;
use krusty_ops::KustomizeVersion;
use krusty_runtime::Policy;

use crate::base_cache::BaseCache;
use crate::build_metadata::Records;
use crate::inputs::InputLog;
use crate::loader::DiskReads;
use crate::readahead::ReadAhead;
use crate::remote::Remotes;
use crate::schema_choice::SchemaChoice;
use crate::timings::Timings;

/// One build's services and state.
pub(crate) struct Context {
    /// The Kustomize release whose rules apply.
    pub(crate) version: KustomizeVersion,
    /// The namespace the kustomizations above this one pass down to its
    /// Helm charts (Kustomize v5.8.1's `helmRootNamespace`): the nearest
    /// one's `namespace` that is set.
    pub(crate) helm_root_namespace: String,
    /// Kustomization roots being built, outermost first (for cycle detection).
    pub(crate) chain: Vec<PathBuf>,
    /// Warnings for stderr.
    pub(crate) warnings: Vec<String>,
    /// The merge schema chosen by an `openapi:` field: the top
    /// kustomization's, else the first one met while loading bases.
    pub(crate) schema: SchemaChoice,
    /// The top kustomization asks for transformation annotations.
    pub(crate) record_transformations: bool,
    /// The build records the top kustomization asks for, and its folder
    /// (functions see the records as annotations, paths from there).
    pub(crate) records: (Records, PathBuf),
    /// The top kustomization has `buildMetadata` (see `Env::build_records`).
    pub(crate) build_records: bool,
    /// What KRM functions may do.
    pub(crate) policy: Policy,
    /// Runs the build's functions.
    pub(crate) host: Arc<krusty_runtime::Host>,
    /// Helm for this build: the flags, and the binary's version.
    pub(crate) helm: Arc<crate::helm::Helm>,
    /// Reads ahead for the whole build when its files come from disk.
    pub(crate) read_ahead: Arc<ReadAhead>,
    /// How the engine's file reads fare in the page cache.
    pub(crate) reads: Arc<DiskReads>,
    /// Remote bases: the fetcher, and the remote references being built.
    pub(crate) remotes: Remotes,
    /// The function catalogs of the build, each fetched when first needed.
    pub(crate) catalogs: Arc<crate::catalog::Store>,
    /// Where the files the build reads are recorded, when asked for.
    pub(crate) inputs: Option<Arc<InputLog>>,
    /// The text the top folder's kustomization is read from instead of
    /// its file, until it has been read.
    pub(crate) top_kustomization: Option<Arc<str>>,
    /// Bases built by earlier builds of the same files.
    pub(crate) bases: Option<Arc<BaseCache>>,
    /// Where the time of each stage is recorded, when asked for.
    pub(crate) timings: Option<Arc<Timings>>,
}

impl Context {
    /// The build records functions see (see `krusty_runtime::Shown`) and
    /// the folder their paths are shown from.
    pub(crate) fn records(&self) -> &(Records, PathBuf) {
        &self.records
    }

    /// The build's fetcher (remote bases, files by URL, catalogs).
    pub(crate) fn fetcher(&self) -> Arc<Fetcher> {
        Arc::clone(&self.remotes.fetcher)
    }
}
