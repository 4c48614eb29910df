//! Consecutive `patches:` entries run as one pass over the resources
//! (`krusty_ops::patch::chain`), and the planning pass that fuses them.

use krusty_ops::patch::{chain, PatchEntry};
use krusty_resource::ResMap;

use super::{Apply, Build, Call, Operation, Role};
use crate::error::{BuildError, BuildResult};

/// Patch operations run as one pass over the resources, each recording
/// its own origin.
pub struct PatchChain {
    /// The patch operations, in order (each one's action a patch, see
    /// [`Apply::as_patch`]).
    links: Vec<Operation>,
}

impl Apply for PatchChain {
    fn apply(&self, build: &mut dyn Build, call: &Call, resources: &mut ResMap) -> BuildResult<()> {
        let _timer = call.timer(build);
        let env = build.env(call.loader);
        let patches: Vec<&PatchEntry> = self
            .links
            .iter()
            .filter_map(|op| op.action().as_patch())
            .collect();
        chain::apply(&patches, resources, &env)
            .map_err(|e| call.failed(BuildError::from(e.error)))?;
        if env.record_transformations {
            for r in resources.resources_mut() {
                r.meta
                    .transformations
                    .extend(self.links.iter().map(|op| op.origin().clone()));
            }
        }
        Ok(())
    }
}

/// `operations` with each run of two or more consecutive patch
/// transformers that can share one pass over the resources made one
/// [`PatchChain`]. Not with build records (`fuse` false): a JSON patch may
/// then erase a resource's records at any entry, and what later entries
/// record depends on it.
pub(crate) fn fuse_patch_chains(operations: Vec<Operation>, fuse: bool) -> Vec<Operation> {
    if !fuse {
        return operations;
    }
    let chainable = |op: &Operation| {
        op.role() == Role::Transformer
            && !op.is_placed()
            && op.action().as_patch().is_some_and(chain::chainable)
    };
    let mut out: Vec<Operation> = Vec::with_capacity(operations.len());
    let mut run: Vec<Operation> = Vec::new();
    let flush = |run: &mut Vec<Operation>, out: &mut Vec<Operation>| {
        if run.len() < 2 {
            out.append(run);
            return;
        }
        let first = &run[0];
        let (label, origin) = (first.label().to_string(), first.origin().clone());
        let links = std::mem::take(run);
        out.push(Operation::new(
            label,
            Role::Transformer,
            PatchChain { links },
            origin,
        ));
    };
    for op in operations {
        if chainable(&op) {
            run.push(op);
        } else {
            flush(&mut run, &mut out);
            out.push(op);
        }
    }
    flush(&mut run, &mut out);
    out
}
