//! Operations and pipelines. Everything that acts on a build's resources —
//! a builtin generator or transformer, a chain of patches, a KRM function,
//! a Helm chart, the resources of files and folders, an inline
//! Kustomization, a composition, a pipeline — implements [`Apply`], and
//! reaches the build only through the narrow [`Build`] view. An
//! [`Operation`] is one of them with its label, [`Role`] and origin; a
//! [`Pipeline`] runs operations in order. A kustomization level plans each
//! of its stages' fields into a pipeline (`target.rs`); a composition is a
//! pipeline of its transformers, and an operation in a Kustomization's
//! pipeline (`composition/run.rs`).
//!
//! A library can run a pipeline of its own over resources held in memory,
//! here two builtins and a KRM function (an exec function, `cat`, which
//! gives back what it is given):
//!
//! ```
//! # fn main() -> Result<(), krusty_build::BuildError> {
//! use std::path::Path;
//! use krusty_build::pipeline::{Builtin, ConfigSite, Operation, Origin, Pipeline, ResMap, Role};
//! use krusty_build::read::resources_from_text;
//! use krusty_build::{functions, BuildOptions, Engine, LoadRestrictor, Loader, Policy};
//!
//! let mut options = BuildOptions::default();
//! options.functions = Policy { enable_alpha_plugins: true, enable_exec: true, ..Policy::default() };
//! let engine = Engine::new(options);
//! let mut build = engine.build_context();
//! // No file is read: the loader only says where files would be.
//! let loader = Loader::new(Path::new("/"), LoadRestrictor::RootOnly)?;
//! let site = ConfigSite {
//!     root_name: "app",
//!     files: &loader,
//!     version: engine.options().kustomize_version,
//! };
//! let configs = "\
//! apiVersion: builtin
//! kind: NamespaceTransformer
//! metadata: {name: ns, namespace: prod}
//! fieldSpecs: [{path: metadata/namespace, create: true}]
//! ---
//! apiVersion: builtin
//! kind: PrefixSuffixTransformer
//! metadata: {name: affix}
//! prefix: prod-
//! fieldSpecs: [{path: metadata/name}]
//! ---
//! apiVersion: example.com/v1
//! kind: Echo
//! metadata:
//!   name: echo
//!   annotations:
//!     config.kubernetes.io/function: '{exec: {path: /bin/cat}}'
//! ";
//! let mut operations = Vec::new();
//! for config in resources_from_text(configs, Path::new("configs.yaml"))? {
//!     let origin = Origin::File("configs.yaml".into());
//!     let version = engine.options().kustomize_version;
//!     let op = match functions::resolve(&config, &loader, &engine.options().functions, engine.fetcher(), version)? {
//!         Some(function) => Operation::new(function.label.clone(), Role::Transformer, function, origin),
//!         None => {
//!             let builtin = Builtin::from_config(&config.node, &config.id(), &site)?;
//!             Operation::new(config.id().to_string(), Role::Transformer, builtin, origin)
//!         }
//!     };
//!     operations.push(op);
//! }
//! let pipeline = Pipeline::new(operations);
//!
//! let input = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\n";
//! let mut resources = ResMap::from_vec(resources_from_text(input, Path::new("in.yaml"))?)?;
//! pipeline.run(&mut build, &loader, "my pipeline", &mut resources)?;
//! let id = resources.at(0).id();
//! assert_eq!((id.name.as_str(), id.namespace.as_str()), ("prod-settings", "prod"));
//! # Ok(())
//! # }
//! ```

mod apply;
mod build;
mod builtin;
mod composition;
mod function;
mod inline;
mod operation;
mod patch_chain;
mod resources;
mod run;

pub use apply::{Apply, Call};
pub use build::Build;
pub use composition::CompositionFile;
pub use inline::InlineKustomization;
pub use krusty_ops::builtins::value_add::ConfigSite;
pub use krusty_ops::Builtin;
pub use krusty_resource::{Origin, ResMap};
pub use krusty_runtime::{FunctionCall, Role};
pub use operation::Operation;
pub(crate) use patch_chain::fuse_patch_chains;
pub use patch_chain::PatchChain;
pub use resources::ResourcePaths;
pub use run::Pipeline;
