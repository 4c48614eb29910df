//! An inline Kustomization as an operation.

use std::path::PathBuf;

use krusty_resource::ResMap;

use super::{Apply, Build, Call};
use crate::error::BuildResult;
use crate::kustomization::Kustomization;

/// A Kustomization written inline (in a composition): the resources so
/// far come first among its `resources:`.
pub struct InlineKustomization {
    /// The Kustomization.
    pub kustomization: Kustomization,
    /// The file it is written in.
    pub file: PathBuf,
}

impl Apply for InlineKustomization {
    fn apply(&self, build: &mut dyn Build, call: &Call, resources: &mut ResMap) -> BuildResult<()> {
        build
            .run_kustomization(call.loader, &self.kustomization, &self.file, resources)
            .map_err(|e| call.failed(e))
    }
}
