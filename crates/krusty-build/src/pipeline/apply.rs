//! The one interface of everything that acts on a build's resources.

use krusty_ops::patch::PatchEntry;
use krusty_resource::{Origin, ResMap};

use super::{Build, Role};
use crate::error::{BuildError, BuildResult};
use crate::loader::Loader;
use crate::timings::{Timer, Timings};

/// Something that acts on a build's resources: a builtin, a patch chain,
/// a KRM function, a Helm chart, resources to add, an inline
/// Kustomization, a composition, a pipeline.
pub trait Apply: Send + Sync {
    /// Runs over `resources` as `call` says (its role, origin, loader and
    /// names in messages), reaching the build through `build`.
    fn apply(&self, build: &mut dyn Build, call: &Call, resources: &mut ResMap) -> BuildResult<()>;

    /// The `patches:` entry this is, which may share one pass over the
    /// resources with its neighbours (see [`krusty_ops::patch::chain`]).
    fn as_patch(&self) -> Option<&PatchEntry> {
        None
    }
}

/// How one operation runs: what it is named and does, and where.
pub struct Call<'a> {
    /// Names the operation in errors.
    pub label: &'a str,
    /// What it does to the resources.
    pub role: Role,
    /// Recorded on what it makes or changes.
    pub origin: &'a Origin,
    /// Where it reads files.
    pub loader: &'a Loader,
    /// Names the file configuring it in errors.
    pub site: &'a str,
}

impl Call<'_> {
    /// `e`, saying what the operation was doing (Kustomize's words).
    pub fn doing(&self, e: BuildError) -> BuildError {
        let doing = match self.role {
            Role::Generator => "merging from generator",
            Role::Transformer => "running transformer",
            Role::Validator => "running validator",
        };
        e.context(format!("{doing} {}", self.label))
    }

    /// `e`, saying what the operation was doing and in which file.
    pub fn failed(&self, e: BuildError) -> BuildError {
        self.doing(e).context(self.site)
    }

    /// Measures the operation until the timer is dropped, when the build
    /// records timings.
    pub fn timer(&self, build: &dyn Build) -> Option<Timer> {
        Timings::start(build.timings(), &self.loader.root, || {
            let role = match self.role {
                Role::Generator => "generator",
                Role::Transformer => "transformer",
                Role::Validator => "validator",
            };
            format!("{role} {}", self.label)
        })
    }
}
