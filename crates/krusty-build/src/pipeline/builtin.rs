//! A builtin generator or transformer as an operation.

use krusty_ops::builtins::metadata_map::reconcile_shared;
use krusty_ops::patch::PatchEntry;
use krusty_ops::Builtin;
use krusty_resource::ResMap;

use super::{Apply, Build, Call, Role};
use crate::error::{BuildError, BuildResult};

impl Apply for Builtin {
    fn apply(&self, build: &mut dyn Build, call: &Call, resources: &mut ResMap) -> BuildResult<()> {
        let _timer = call.timer(build);
        let env = build.env(call.loader);
        if call.role == Role::Validator {
            let mut copy = resources.clone();
            Builtin::apply(self, &mut copy, &env, call.origin)
                .map_err(|e| call.doing(BuildError::from(e)))?;
            let changed = copy.len() != resources.len()
                || copy
                    .iter()
                    .zip(resources.iter())
                    .any(|(a, b)| a.node != b.node);
            if changed {
                return Err(BuildError::new(format!(
                    "validator {} changed resources; validators must not modify resources",
                    call.label
                )));
            }
            return Ok(());
        }
        Builtin::apply(self, resources, &env, call.origin)
            .map_err(|e| call.failed(BuildError::from(e)))?;
        if matches!(self, Builtin::Replacements(_) | Builtin::ValueAdd(_)) {
            // They write in place, as Kustomize's do.
            krusty_ops::parallel::map_each(
                resources.resources_mut_keeping_identity(),
                reconcile_shared,
            );
        }
        Ok(())
    }

    fn as_patch(&self) -> Option<&PatchEntry> {
        match self {
            Builtin::Patch(entry) => Some(entry),
            _ => None,
        }
    }
}
