//! A KRM function as an operation.

use krusty_ops::absorb::absorb;
use krusty_resource::ResMap;
use krusty_runtime::FunctionCall;

use super::{Apply, Build, Call};
use crate::error::{BuildError, BuildResult};

impl Apply for FunctionCall {
    fn apply(&self, build: &mut dyn Build, call: &Call, resources: &mut ResMap) -> BuildResult<()> {
        let _timer = call.timer(build);
        let ran = build.run_function(self, call.role, resources, call.origin);
        // A generator's output is added as Kustomize adds it.
        for made in ran.map_err(|e| call.failed(BuildError::new(e.to_string())))? {
            absorb(resources, made, build.version()).map_err(|e| {
                call.failed(BuildError::new(format!("function {}: {e}", self.label)))
            })?;
        }
        // What a function returns is read anew: nothing is shared.
        for r in resources.resources_mut_keeping_identity() {
            r.meta.shared.clear();
        }
        Ok(())
    }
}
