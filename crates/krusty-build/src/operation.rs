//! Operations and pipelines. Everything that acts on a build's resources —
//! a builtin generator or transformer, a chain of patches, a KRM function,
//! a Helm chart, the resources of files and folders, an inline
//! Kustomization, a composition — is an [`Operation`] that knows its own
//! [`Role`]; a [`Pipeline`] runs operations in order. A kustomization level
//! plans each of its stages' fields into a pipeline (`target.rs`); a
//! composition is a pipeline of its transformers, and an operation in a
//! Kustomization's pipeline (`composition/run.rs`).

use std::path::PathBuf;

use krusty_ops::absorb::absorb;
use krusty_ops::builtins::metadata_map::reconcile_shared;
use krusty_ops::patch::{chain, PatchEntry};
use krusty_ops::Builtin;
use krusty_resource::{Origin, ResMap};

use crate::error::{BuildError, BuildResult};
use crate::kustomization::Kustomization;
use crate::loader::Loader;
use crate::target::{Accumulator, Context};
use krusty_resource::BuildMeta;
use krusty_runtime::{FunctionCall, Shown};

pub use krusty_runtime::Role;

/// How errors say what an operation in `role` was doing (Kustomize's
/// words).
fn doing(role: Role) -> &'static str {
    match role {
        Role::Generator => "merging from generator",
        Role::Transformer => "running transformer",
        Role::Validator => "running validator",
    }
}

/// How `--timings` names an operation's role.
fn role_name(role: Role) -> &'static str {
    match role {
        Role::Generator => "generator",
        Role::Transformer => "transformer",
        Role::Validator => "validator",
    }
}

/// One operation: what it runs, its role, its name in messages, and the
/// origin recorded on what it makes or changes.
pub struct Operation {
    /// Names the operation in errors.
    label: String,
    /// What it does to the resources.
    role: Role,
    /// What it runs.
    action: Action,
    /// Where it was configured.
    origin: Origin,
    /// Where it reads files and how errors name its file, when not the
    /// pipeline's (the transformers of a composition come from several
    /// files).
    place: Option<(Loader, String)>,
}

/// What an operation runs.
pub(crate) enum Action {
    /// A builtin generator or transformer.
    Builtin(Builtin),
    /// Consecutive `patches:` entries run as one pass over the resources
    /// (`krusty_ops::patch::chain`), each with its origin.
    PatchChain(Vec<(PatchEntry, Origin)>),
    /// A KRM function.
    Function(FunctionCall),
    /// A Helm chart, inflated by the helm program.
    Helm(Box<crate::helm::ChartStep>),
    /// The resources of files and folders (a folder holding a
    /// kustomization or a composition is built), added in order.
    AddResources(Vec<String>),
    /// An inline Kustomization (and the file it is written in): the
    /// resources so far come first in its `resources:`.
    Kustomization(Box<Kustomization>, PathBuf),
    /// The composition in a file, consolidated when its turn comes and run
    /// as a pipeline of its transformers, in this operation's role.
    Composition(PathBuf),
    /// A pipeline, run in this operation's role: as a generator its output
    /// is added, as a transformer it replaces the resources, as a validator
    /// it is dropped.
    Pipeline(Pipeline),
}

/// Operations run in order, each one's output the next one's input.
#[derive(Default)]
pub struct Pipeline {
    operations: Vec<Operation>,
}

impl Operation {
    /// An operation.
    pub(crate) fn new(
        label: impl Into<String>,
        role: Role,
        action: Action,
        origin: Origin,
    ) -> Operation {
        Operation {
            label: label.into(),
            role,
            action,
            origin,
            place: None,
        }
    }

    /// Names the operation in messages.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// What it does to the resources.
    pub fn role(&self) -> Role {
        self.role
    }

    /// Where it was configured.
    pub fn origin(&self) -> &Origin {
        &self.origin
    }

    /// The same operation, reading files through `loader` and named in
    /// errors by `site` (`composition file ...`), whatever pipeline runs it.
    pub(crate) fn placed(mut self, loader: Loader, site: String) -> Operation {
        self.place = Some((loader, site));
        self
    }

    /// Runs the operation over `resmap`; files are read through `loader`
    /// and errors name `site`, the file configuring it (unless it is
    /// placed).
    pub(crate) fn apply(
        &self,
        ctx: &mut Context,
        loader: &Loader,
        resmap: &mut ResMap,
        site: &str,
    ) -> BuildResult<()> {
        let (loader, site) = match &self.place {
            Some((loader, site)) => (loader, site.as_str()),
            None => (loader, site),
        };
        let _timer = match &self.action {
            Action::Builtin(_) | Action::PatchChain(_) | Action::Helm(_) | Action::Function(_) => {
                crate::Timings::start(ctx.timings.as_ref(), &loader.root, || {
                    format!("{} {}", role_name(self.role), self.label)
                })
            }
            _ => None,
        };
        let what = doing(self.role);
        let in_op = |e: BuildError| e.context(format!("{what} {}", self.label)).context(site);
        match &self.action {
            Action::Builtin(b) if self.role == Role::Validator => {
                let mut copy = resmap.clone();
                b.apply(&mut copy, &ctx.env(loader), &self.origin)
                    .map_err(|e| BuildError::from(e).context(format!("{what} {}", self.label)))?;
                let changed = copy.len() != resmap.len()
                    || copy
                        .iter()
                        .zip(resmap.iter())
                        .any(|(a, b)| a.node != b.node);
                if changed {
                    return Err(BuildError::new(format!(
                        "validator {} changed resources; validators must not modify resources",
                        self.label
                    )));
                }
            }
            Action::Builtin(b) => {
                b.apply(resmap, &ctx.env(loader), &self.origin)
                    .map_err(|e| in_op(BuildError::from(e)))?;
                if matches!(b, Builtin::Replacements(_) | Builtin::ValueAdd(_)) {
                    // They write in place, as Kustomize's do.
                    krusty_ops::parallel::map_each(
                        resmap.resources_mut_keeping_identity(),
                        reconcile_shared,
                    );
                }
            }
            Action::PatchChain(entries) => {
                let env = ctx.env(loader);
                let patches: Vec<&PatchEntry> = entries.iter().map(|(p, _)| p).collect();
                chain::apply(&patches, resmap, &env)
                    .map_err(|e| in_op(BuildError::from(e.error)))?;
                if env.record_transformations {
                    for r in resmap.resources_mut() {
                        r.meta
                            .transformations
                            .extend(entries.iter().map(|(_, origin)| origin.clone()));
                    }
                }
            }
            // Kustomize reports a chart's failure as it is.
            Action::Helm(chart) => chart.generate(resmap, &self.origin)?,
            Action::Function(f) => {
                let mut notes = Vec::new();
                let host = ctx.host();
                let (records, root) = ctx.records().clone();
                let annotations = |meta: &BuildMeta| records.annotations(meta, &root);
                let shown = Shown {
                    annotations: &annotations,
                    transformations: records.transformations,
                };
                let ran = host.run(f, self.role, resmap, &self.origin, &shown, &mut notes);
                ctx.add_warnings(notes);
                // A generator's output is added as Kustomize adds it.
                for made in ran.map_err(|e| in_op(BuildError::new(e.to_string())))? {
                    absorb(resmap, made, ctx.version).map_err(|e| {
                        in_op(BuildError::new(format!("function {}: {e}", f.label)))
                    })?;
                }
                // What a function returns is read anew: nothing is shared.
                for r in resmap.resources_mut_keeping_identity() {
                    r.meta.shared.clear();
                }
            }
            Action::AddResources(paths) => {
                for path in paths {
                    let (resources, _) = ctx.resources_at(loader, path).map_err(in_op)?;
                    resmap.extend_hashed(resources).map_err(|e| {
                        in_op(
                            BuildError::from(e)
                                .context(format!("accumulating resources from '{path}'")),
                        )
                    })?;
                }
            }
            Action::Kustomization(k, file) => {
                let mut acc = Accumulator::with_resources(std::mem::take(resmap));
                let ran = ctx.accumulate_into(loader, k, file, &mut acc);
                *resmap = acc.into_resources();
                ran.map_err(in_op)?;
            }
            Action::Composition(file) => {
                let in_composition =
                    |e: BuildError| e.context(format!("running {}", self.label)).context(site);
                let restrictor = loader.restrictor;
                let list =
                    crate::composition::consolidate(file, restrictor).map_err(in_composition)?;
                let pipeline =
                    crate::composition::pipeline(ctx, &list, restrictor).map_err(in_composition)?;
                // The composition is a pipeline, run in this operation's role.
                let op = Operation::new(
                    self.label.clone(),
                    self.role,
                    Action::Pipeline(pipeline),
                    self.origin.clone(),
                );
                op.apply(ctx, loader, resmap, site)
                    .map_err(in_composition)?;
            }
            Action::Pipeline(pipeline) => {
                run_pipeline(pipeline, self.role, ctx, loader, resmap, site)?
            }
        }
        Ok(())
    }
}

/// Runs `pipeline` in `role` over `resmap` (see [`Action::Pipeline`]).
fn run_pipeline(
    pipeline: &Pipeline,
    role: Role,
    ctx: &mut Context,
    loader: &Loader,
    resmap: &mut ResMap,
    site: &str,
) -> BuildResult<()> {
    match role {
        Role::Generator => {
            let mut out = ResMap::default();
            pipeline.run(ctx, loader, &mut out, site)?;
            resmap
                .extend_hashed(out.into_hashed())
                .map_err(BuildError::from)
        }
        Role::Transformer => pipeline.run(ctx, loader, resmap, site),
        Role::Validator => pipeline.run(ctx, loader, &mut resmap.clone(), site),
    }
}

impl Pipeline {
    /// A pipeline of `operations`.
    pub(crate) fn new(operations: Vec<Operation>) -> Pipeline {
        Pipeline { operations }
    }

    /// The operations, in order.
    pub fn operations(&self) -> &[Operation] {
        &self.operations
    }

    /// Runs the operations in order over `resmap` (see
    /// [`Operation::apply`]).
    pub(crate) fn run(
        &self,
        ctx: &mut Context,
        loader: &Loader,
        resmap: &mut ResMap,
        site: &str,
    ) -> BuildResult<()> {
        for op in &self.operations {
            op.apply(ctx, loader, resmap, site)?;
        }
        Ok(())
    }
}

/// `operations` with each run of two or more consecutive `patches:`
/// entries that can share one pass over the resources made one
/// [`Action::PatchChain`]. Not with build records (`fuse` false): a JSON
/// patch may then erase a resource's records at any entry, and what later
/// entries record depends on it.
pub(crate) fn fuse_patch_chains(operations: Vec<Operation>, fuse: bool) -> Vec<Operation> {
    if !fuse {
        return operations;
    }
    let chainable = |op: &Operation| {
        op.role == Role::Transformer
            && op.place.is_none()
            && matches!(&op.action, Action::Builtin(Builtin::Patch(entry)) if chain::chainable(entry))
    };
    let mut out: Vec<Operation> = Vec::with_capacity(operations.len());
    let mut run: Vec<Operation> = Vec::new();
    let flush = |run: &mut Vec<Operation>, out: &mut Vec<Operation>| {
        if run.len() < 2 {
            out.append(run);
            return;
        }
        let first = &run[0];
        let (label, origin) = (first.label.clone(), first.origin.clone());
        let entries = run
            .drain(..)
            .filter_map(|op| match op.action {
                Action::Builtin(Builtin::Patch(entry)) => Some((entry, op.origin)),
                _ => None,
            })
            .collect();
        out.push(Operation::new(
            label,
            Role::Transformer,
            Action::PatchChain(entries),
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
