//! What a build is asked, and what it gives: the options every build of
//! an engine shares, the request of one build, and its output.

use std::path::Path;
use std::sync::Arc;

use krusty_fetch::FetchOptions;
use krusty_ops::KustomizeVersion;
use krusty_resource::Resource;
use krusty_runtime::Policy;

use crate::loader::LoadRestrictor;

/// Options for a build.
#[derive(Debug, Clone, Default)]
pub struct BuildOptions {
    /// Which files kustomizations may read.
    pub load_restrictor: LoadRestrictor,
    /// Add the `app.kubernetes.io/managed-by` label to every resource.
    pub managed_by_label: bool,
    /// The Helm flags (`--enable-helm`, `--helm-command`, ...).
    pub helm: crate::helm::HelmOptions,
    /// What KRM functions may do (by default: nothing runs).
    pub functions: Policy,
    /// How remote bases and files are fetched (`--offline`, the cache).
    pub fetch: FetchOptions,
    /// The Kustomize release whose behaviour the build reproduces.
    pub kustomize_version: KustomizeVersion,
    /// Refuse remote bases (git repositories), as Flux's
    /// `--no-remote-bases` does; files named by URL are still read.
    pub refuse_remote_bases: bool,
    /// Leave resources in the order the build made them unless a
    /// kustomization's `sortOptions` orders them (Flux's builds; `kustomize
    /// build --reorder none`), instead of Kustomize's legacy order.
    pub keep_build_order: bool,
}

/// The result of a build: resources in output order, and warnings for stderr.
#[derive(Debug, Default)]
pub struct BuildOutput {
    /// Resources in output order.
    pub resources: Vec<Resource>,
    /// Warnings (deprecations) to print on stderr.
    pub warnings: Vec<String>,
}

/// How to build one folder, beyond the engine's options.
#[derive(Debug, Clone, Default)]
pub struct BuildRequest {
    /// The text to build the folder's kustomization from, in place of its
    /// kustomization file (which need not exist). A kustomization made
    /// for one build (as Flux and Argo CD make them) is so never written
    /// into the tree. It is read as `kustomization.yaml` in the folder.
    pub kustomization: Option<Arc<str>>,
    /// Record the local files the build reads (see [`crate::inputs`]).
    pub record_inputs: bool,
    /// The folder every local file and base of the build must lie in,
    /// whatever the load restrictor (Flux confines a build to its
    /// source).
    pub confine_to: Option<Arc<Path>>,
    /// Bases built by earlier builds of the same files, and where this
    /// build keeps those it builds (see [`crate::base_cache`]): give one
    /// cache to the builds of one revision of a tree.
    pub base_cache: Option<Arc<crate::BaseCache>>,
    /// Where to record the time each stage of the build takes (see
    /// [`crate::timings`]); several builds may share one.
    pub timings: Option<Arc<crate::Timings>>,
}
