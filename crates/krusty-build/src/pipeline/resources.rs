//! The resources of files and folders as an operation.

use krusty_resource::ResMap;

use super::{Apply, Build, Call};
use crate::error::{BuildError, BuildResult};

/// The resources of files and folders (a folder holding a kustomization
/// or a composition is built), added in order.
pub struct ResourcePaths {
    /// The files and folders, as written.
    pub paths: Vec<String>,
}

impl Apply for ResourcePaths {
    fn apply(&self, build: &mut dyn Build, call: &Call, resources: &mut ResMap) -> BuildResult<()> {
        for path in &self.paths {
            let read = build
                .load_resources(call.loader, path)
                .map_err(|e| call.failed(e))?;
            resources.extend_hashed(read).map_err(|e| {
                call.failed(
                    BuildError::from(e).context(format!("accumulating resources from '{path}'")),
                )
            })?;
        }
        Ok(())
    }
}
