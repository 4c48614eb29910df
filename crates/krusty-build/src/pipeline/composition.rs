//! The composition in a file as an operation.

use std::path::PathBuf;

use krusty_resource::ResMap;

use super::{Apply, Build, Call};
use crate::error::{BuildError, BuildResult};

/// The composition in a file, consolidated when its turn comes and run as
/// the pipeline of its transformers, in the operation's role.
pub struct CompositionFile {
    /// The composition file.
    pub file: PathBuf,
}

impl Apply for CompositionFile {
    fn apply(&self, build: &mut dyn Build, call: &Call, resources: &mut ResMap) -> BuildResult<()> {
        let in_composition = |e: BuildError| {
            e.context(format!("running {}", call.label))
                .context(call.site)
        };
        let pipeline = build
            .plan_composition(&self.file, call.loader.restrictor)
            .map_err(in_composition)?;
        pipeline
            .apply(build, call, resources)
            .map_err(in_composition)
    }
}
