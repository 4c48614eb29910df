//! The services builds share. An [`Engine`] owns what outlives one build:
//! the fetcher (with its cache, `--offline` and download bounds) and the
//! function host (with its spec v2 server pool). Each build made through
//! it reads its own files, Helm state and catalogs; remotes are fetched
//! once for the engine, and a function server started by one build
//! serves the next. Dropping the engine stops every server and container
//! it started.

use std::path::Path;
use std::sync::Arc;

use krusty_fetch::Fetcher;
use krusty_runtime::Host;

use crate::error::BuildResult;
use crate::inputs::{InputLog, Inputs};
use crate::request::{BuildOptions, BuildOutput, BuildRequest};
use crate::services::Services;

/// Builds kustomizations under one set of options, sharing the fetcher
/// and the function servers between them. Builds may run at once on any
/// threads (`Engine` is `Sync`).
///
/// ```
/// # fn main() -> Result<(), krusty_build::BuildError> {
/// # let dir = tempfile::tempdir().unwrap();
/// # let root = dir.path();
/// # std::fs::write(root.join("kustomization.yaml"), "namePrefix: dev-\nresources:\n- cm.yaml\n").unwrap();
/// # std::fs::write(root.join("cm.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n").unwrap();
/// let engine = krusty_build::Engine::new(krusty_build::BuildOptions::default());
/// let first = engine.build(root)?;
/// let second = engine.build(root)?;
/// assert_eq!(first.resources, second.resources);
/// assert_eq!(first.resources[0].id().name, "dev-settings");
/// drop(engine); // stops the function servers the builds started
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct Engine {
    services: Services,
}

impl Engine {
    /// An engine building with `options`.
    pub fn new(options: BuildOptions) -> Engine {
        let services = Services {
            host: Arc::new(
                Host::new(options.functions.clone())
                    .with_result_cache(options.fetch.function_cache()),
            ),
            fetcher: Arc::new(Fetcher::new(options.fetch.clone())),
            reads: Arc::default(),
            options,
        };
        Engine { services }
    }

    /// An engine reproducing Kustomize release `version` with the same
    /// options, sharing this one's fetcher and function host (a remote
    /// both build is fetched once, a function server started once).
    pub fn for_release(&self, version: krusty_ops::KustomizeVersion) -> Engine {
        let services = Services {
            options: BuildOptions {
                kustomize_version: version,
                ..self.services.options.clone()
            },
            fetcher: Arc::clone(&self.services.fetcher),
            host: Arc::clone(&self.services.host),
            reads: Arc::clone(&self.services.reads),
        };
        Engine { services }
    }

    /// Builds the kustomization (or composition) in `dir`, or the remote
    /// target `dir` names.
    pub fn build(&self, dir: &Path) -> BuildResult<BuildOutput> {
        self.build_with(dir, &BuildRequest::default()).0
    }

    /// Builds the folder `dir` as `request` says; the inputs (see
    /// [`crate::inputs`]) are empty unless it asks for them. A build that
    /// fails has read what it read up to the failure: the same inputs
    /// fail it the same way.
    pub fn build_with(
        &self,
        dir: &Path,
        request: &BuildRequest,
    ) -> (BuildResult<BuildOutput>, Inputs) {
        let log = request.record_inputs.then(|| Arc::new(InputLog::default()));
        let built = crate::target::build(dir, &self.services, request, log.clone());
        (built, log.map(|log| log.take()).unwrap_or_default())
    }

    /// The options every build of the engine uses.
    pub fn options(&self) -> &BuildOptions {
        &self.services.options
    }

    /// The fetcher of remote bases, files, catalogs and programs.
    pub fn fetcher(&self) -> &Arc<Fetcher> {
        &self.services.fetcher
    }

    /// The host that runs the builds' KRM functions and owns their
    /// servers.
    pub fn host(&self) -> &Arc<Host> {
        &self.services.host
    }

    /// A build of no folder, with the engine's services: what a
    /// [`crate::pipeline::Pipeline`] of one's own runs through, over
    /// resources held in memory (see [`crate::pipeline`]).
    pub fn build_context(&self) -> impl crate::pipeline::Build {
        crate::context::Context::new(&self.services, &BuildRequest::default(), None)
    }

    /// How many function servers run now.
    pub fn servers_running(&self) -> usize {
        self.services.host.servers().running()
    }
}

/// Builds the kustomization in `dir` with an engine of its own (its
/// function servers stop when it returns).
pub fn build(dir: &Path, options: &BuildOptions) -> BuildResult<BuildOutput> {
    Engine::new(options.clone()).build(dir)
}
