//! krusty as a library: build a Kustomize target from Rust and get its
//! resources, or the exact bytes `kustomize build` prints.
//!
//! [`build`] takes the directory of a kustomization and [`Options`] (the
//! Kustomize release to reproduce (v5.8.1 unless told), the load
//! restrictor, the `managed-by` label, what KRM functions may do,
//! how remote bases are fetched: `kustomize build`'s flags) and returns a
//! [`Build`]: the resources in output order, the warnings Kustomize prints
//! on stderr, and [`Build::to_yaml`], the output of `kustomize build` byte
//! for byte.
//!
//! Builds are independent: any number may run at once, on any threads,
//! with no lock between them (unlike Kustomize's Go API, which its callers
//! serialise). A build spreads its own work over rayon's global pool; call
//! it inside [`rayon::ThreadPool::install`] to give it another pool.
//!
//! An [`Engine`] builds many targets under one set of options and shares
//! what outlives a build between them: remotes are fetched once, and a
//! spec v2 function server started by one build serves the next. Dropping
//! the engine stops every function server and container it started;
//! [`build`] makes an engine for one build.
//!
//! The `edit` commands are here too ([`edit`]): the changes `kustomize
//! edit` makes to a kustomization file, keeping its comments and layout.
//! So are the pieces of the build a tool around it needs: the Helm and
//! fetch options, [`catalog`] reading, [`composition`] consolidation and
//! the [`interrupt`] handling that stops what a build started. The file
//! formats themselves (catalogs, compositions) are read by [`schema`]. A
//! [`pipeline`] of builtins and KRM functions of one's own runs over
//! resources in memory through [`Engine::build_context`].
//!
//! ```
//! # fn main() -> Result<(), krusty_api::Error> {
//! # let dir = tempfile::tempdir().unwrap();
//! # let root = dir.path();
//! # std::fs::write(root.join("kustomization.yaml"),
//! #     "namePrefix: dev-\nresources:\n- cm.yaml\n").unwrap();
//! # std::fs::write(root.join("cm.yaml"),
//! #     "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  mode: fast\n").unwrap();
//! // `root` holds kustomization.yaml (namePrefix: dev-, resources: cm.yaml).
//! let build = krusty_api::build(root, &krusty_api::Options::default())?;
//! assert_eq!(build.resources().len(), 1);
//! assert_eq!(build.resources()[0].id().name, "dev-settings");
//! assert_eq!(
//!     build.to_yaml()?,
//!     "apiVersion: v1\ndata:\n  mode: fast\nkind: ConfigMap\nmetadata:\n  name: dev-settings\n"
//! );
//!
//! // Eight targets at once, each on its own thread.
//! let outputs: Vec<String> = std::thread::scope(|s| {
//!     let handles: Vec<_> = (0..8)
//!         .map(|_| s.spawn(|| krusty_api::build_yaml(root, &krusty_api::Options::default())))
//!         .collect();
//!     handles.into_iter().map(|h| h.join().unwrap()).collect::<Result<_, _>>()
//! })?;
//! assert!(outputs.iter().all(|o| *o == build.to_yaml().unwrap()));
//! # Ok(())
//! # }
//! ```

mod edit_checks;

use std::path::Path;

use rayon::prelude::*;

pub use edit_checks::EditChecks;

pub use krusty_build::helm::HelmOptions;
pub use krusty_build::timings::Span as TimedStage;
pub use krusty_build::{
    catalog, composition, parse_size, redact, BaseCache, BuildError, BuildRequest, Cache,
    FetchLimits, FetchOptions, Inputs, KustomizeVersion, LoadRestrictor, Loader, Mount, Policy,
    Timings, VerifyKeys,
};
pub use krusty_build::{pipeline, read};
pub use krusty_edit as edit;
pub use krusty_process::interrupt;
pub use krusty_resource::Resource;
pub use krusty_runtime::server::DEFAULT_MAX_SERVERS;
/// The file name of the Starlark interpreter's program, which krusty runs
/// from beside itself (or from `$KRUSTY_STARLARK`).
pub use krusty_runtime::starlark::PROGRAM as STARLARK_PROGRAM;
pub use krusty_schema as schema;

/// How to build: `kustomize build`'s flags (`Options::default()` is a
/// build with no flags).
pub type Options = krusty_build::BuildOptions;

/// Why a build, or the printing of its result, failed.
#[derive(Debug)]
pub enum Error {
    /// The build failed (the message is Kustomize's).
    Build(BuildError),
    /// A resource cannot be printed as YAML.
    Print(String),
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Build(e) => e.fmt(f),
            Error::Print(message) => f.write_str(message),
        }
    }
}

impl std::error::Error for Error {}

impl From<BuildError> for Error {
    fn from(e: BuildError) -> Error {
        Error::Build(e)
    }
}

/// A built target.
#[derive(Debug)]
pub struct Build {
    output: krusty_build::BuildOutput,
}

/// Documents rendered together into one piece of a [`Stream`]: enough to
/// spread the work over the cores, few enough that each piece's buffer
/// grows a handful of times at most.
const DOCUMENTS_PER_PIECE: usize = 32;

impl Build {
    /// The resources, in output order.
    pub fn resources(&self) -> &[Resource] {
        &self.output.resources
    }

    /// The resources, taken out of the build.
    pub fn into_resources(self) -> Vec<Resource> {
        self.output.resources
    }

    /// What Kustomize prints on stderr for this target (deprecated fields).
    pub fn warnings(&self) -> &[String] {
        &self.output.warnings
    }

    /// The YAML stream `kustomize build` prints for this target, documents
    /// separated by `---` (printed in parallel).
    pub fn to_yaml(&self) -> Result<String, Error> {
        Stream::render(&self.output.resources).map(Stream::into_string)
    }
}

/// Resources rendered as one YAML stream, documents separated by `---` as
/// Kustomize prints them; held as consecutive pieces, each rendered on its
/// own thread, to be written without joining them first.
#[derive(Debug, Clone, Default)]
pub struct Stream(Vec<String>);

impl Stream {
    /// Renders every resource (in parallel): a stream is made only when
    /// all of them render.
    pub fn render(resources: &[Resource]) -> Result<Stream, Error> {
        resources
            .par_chunks(DOCUMENTS_PER_PIECE)
            .enumerate()
            .map(|(piece, chunk)| {
                let mut text = String::with_capacity(chunk.len() * 2048);
                for (i, r) in chunk.iter().enumerate() {
                    if piece > 0 || i > 0 {
                        text.push_str("---\n");
                    }
                    krusty_yaml::emit_document(&r.node, &mut text).map_err(|e| {
                        Error::Print(format!("cannot print resource {}: {e}", r.id()))
                    })?;
                }
                Ok(text)
            })
            .collect::<Result<_, Error>>()
            .map(Stream)
    }

    /// The stream's length in bytes.
    pub fn len(&self) -> usize {
        self.0.iter().map(String::len).sum()
    }

    /// Whether it holds no document.
    pub fn is_empty(&self) -> bool {
        self.0.iter().all(String::is_empty)
    }

    /// Writes the stream, then flushes `out`.
    pub fn write_to(&self, out: &mut impl std::io::Write) -> std::io::Result<()> {
        for piece in &self.0 {
            out.write_all(piece.as_bytes())?;
        }
        out.flush()
    }

    /// The pieces, in order: written one after another, they are the
    /// stream.
    pub fn pieces(&self) -> &[String] {
        &self.0
    }

    /// The stream as one string.
    pub fn into_string(self) -> String {
        self.0.concat()
    }
}

/// Builds targets under one set of options, sharing the fetcher and the
/// function servers between builds; dropping it stops every function
/// server and container its builds started. Builds may run at once on
/// any threads.
#[derive(Debug)]
pub struct Engine {
    engine: krusty_build::Engine,
}

impl Engine {
    /// An engine building as `kustomize build` does with the flags
    /// `options` stands for.
    pub fn new(options: Options) -> Engine {
        Engine {
            engine: krusty_build::Engine::new(options),
        }
    }

    /// Builds the kustomization in `root` (a directory holding
    /// `kustomization.yaml`, `kustomization.yml` or `Kustomization`, or a
    /// composition), or the remote target `root` names.
    pub fn build(&self, root: impl AsRef<Path>) -> Result<Build, Error> {
        let output = self.engine.build(root.as_ref())?;
        Ok(Build { output })
    }

    /// Builds the folder `root` as `request` says: with a kustomization
    /// given as text in place of its file, confined to a folder, with a
    /// cache of bases shared with other builds of the same files, and
    /// recording its inputs or not (the files it read or looked for and
    /// the folders it read whole, such as a Helm chart; empty unless asked
    /// for): a change that touches none of them leaves the build as it
    /// was, and a failed build reports what it read up to the failure.
    pub fn build_with(
        &self,
        root: impl AsRef<Path>,
        request: &BuildRequest,
    ) -> (Result<Build, Error>, Inputs) {
        let (built, inputs) = self.engine.build_with(root.as_ref(), request);
        (
            built.map(|output| Build { output }).map_err(Error::from),
            inputs,
        )
    }

    /// An engine reproducing Kustomize release `version` with the same
    /// options, sharing this one's fetcher and function servers.
    pub fn for_release(&self, version: KustomizeVersion) -> Engine {
        Engine {
            engine: self.engine.for_release(version),
        }
    }

    /// The options its builds use.
    pub fn options(&self) -> &Options {
        self.engine.options()
    }

    /// A build of no folder with the engine's services, through which a
    /// [`pipeline::Pipeline`] of one's own runs over resources in memory
    /// (see [`pipeline`]).
    pub fn build_context(&self) -> impl pipeline::Build {
        self.engine.build_context()
    }

    /// How many function servers run now.
    pub fn servers_running(&self) -> usize {
        self.engine.servers_running()
    }
}

/// Builds the kustomization in `root` (a directory holding
/// `kustomization.yaml`, `kustomization.yml` or `Kustomization`), as
/// `kustomize build root` does with the flags `options` stands for, with
/// an [`Engine`] of its own.
pub fn build(root: impl AsRef<Path>, options: &Options) -> Result<Build, Error> {
    Engine::new(options.clone()).build(root)
}

/// Builds the kustomization in `root` and prints it: the bytes `kustomize
/// build root` writes on stdout.
pub fn build_yaml(root: impl AsRef<Path>, options: &Options) -> Result<String, Error> {
    build(root, options)?.to_yaml()
}
