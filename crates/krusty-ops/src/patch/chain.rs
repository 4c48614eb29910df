//! Consecutive `patches:` entries applied in one pass over the resources.
//!
//! Applying entries one after another over every resource gives, for each
//! resource, the entries that select it applied in order to it alone: what
//! an entry does to one resource, and whether it selects it, depends only
//! on that resource as the earlier entries left it. So each resource can
//! run the whole chain on its own, in parallel with the others, and the
//! outcome is the sequential one. What is not per resource is checked
//! after the pass, in entry order:
//! - a patch without `target:` must match exactly one resource (by current
//!   or earlier id);
//! - the error reported is the one the sequential order meets first: the
//!   earliest patch that fails, and for that patch a failed match before a
//!   failed application, and the first resource in order.
//!
//! Before any of that, every entry is read (its file, and whether it is a
//! strategic merge or a JSON patch), as Kustomize configures every patch
//! before applying one: an entry that cannot be read is the error, even
//! when an earlier entry would fail to apply.
//!
//! Entries that may rename resources (`allowNameChange`, `allowKindChange`)
//! make ids collide across resources, so a chain never holds one: they run
//! as chains of their own.

use std::collections::HashMap;

use krusty_resource::{ResId, ResMap, Resource};
use krusty_yaml::Node;
use rayon::prelude::*;

use super::json6902::JsonPatch;
use super::{apply_json, apply_strategic_one, detect, smp, Parsed, PatchEntry, PatchSource, Text};
use crate::env::Env;
use crate::error::{OpError, OpResult};
use crate::parallel;
use crate::selector::{Compile, CompiledSelector};
use crate::version::KustomizeVersion;

/// Whether `entry` can share a chain with its neighbours.
pub fn chainable(entry: &PatchEntry) -> bool {
    !(entry.allow_name_change || entry.allow_kind_change)
}

/// A failure of a chain: which entry (its position in the chain) and why.
#[derive(Debug)]
pub struct ChainError {
    /// The position of the failing entry in the chain.
    pub entry: usize,
    /// What went wrong.
    pub error: OpError,
}

/// Applies `entries` in order over `resources` (see the module's
/// documentation): the outcome, and the first error, are those of applying
/// them one after another, except that every entry is read first, as
/// Kustomize configures every patch (reading its file and deciding what
/// kind of patch it is) before it applies any: an entry that cannot be
/// read fails the chain before any entry applies.
pub fn apply(
    entries: &[&PatchEntry],
    resources: &mut ResMap,
    env: &Env<'_>,
) -> Result<(), ChainError> {
    let mut steps = Vec::new();
    for (position, read) in read_all(entries, env).into_iter().enumerate() {
        let read = read.map_err(|error| ChainError {
            entry: position,
            error,
        })?;
        steps.extend(read.into_iter().map(|kind| Step {
            entry: position,
            kind,
        }));
    }
    // A bad target fails where its entry runs: after the earlier ones
    // (an entry with a target is one step, so they are the steps before).
    let (selectors, bad_target) = compile(&steps);
    run(
        &steps[..selectors.len()],
        &selectors,
        resources,
        entries,
        env,
    )?;
    match bad_target {
        Some(error) => Err(ChainError {
            entry: steps[selectors.len()].entry,
            error,
        }),
        None => Ok(()),
    }
}

/// Chains with fewer entries than this read them one after another.
const READ_IN_PARALLEL_FROM: usize = 4;

/// Every entry read (see [`Step::read`]), in entry order. A long chain's
/// entries, most of them files, are read in parallel: the chain's reading
/// is otherwise a serial stretch of file system calls and parses before
/// its parallel pass (an overlay's per-app patch files, say).
fn read_all<'e>(entries: &[&'e PatchEntry], env: &Env<'_>) -> Vec<OpResult<Vec<StepKind<'e>>>> {
    if entries.len() < READ_IN_PARALLEL_FROM {
        return entries.iter().map(|e| Step::read(e, env)).collect();
    }
    entries.par_iter().map(|e| Step::read(e, env)).collect()
}

/// One patch of a chain (an entry may hold several documents).
struct Step<'e> {
    /// The position of its entry in the chain.
    entry: usize,
    kind: StepKind<'e>,
}

enum StepKind<'e> {
    /// A strategic merge patch for what a target selects, with the patch
    /// node as every target gets it.
    Targeted {
        entry: &'e PatchEntry,
        patch: Resource,
        node: Node,
    },
    /// A strategic merge patch for the one resource with its id.
    ById { patch: Resource, id: ResId },
    /// A JSON patch for what a target selects.
    Json {
        entry: &'e PatchEntry,
        ops: JsonPatch,
    },
}

impl<'e> Step<'e> {
    /// Whether this is a strategic merge patch allowed to change names or
    /// kinds.
    fn renames(&self) -> bool {
        match &self.kind {
            StepKind::Targeted { patch, .. } | StepKind::ById { patch, .. } => {
                patch.meta.allow_name_change || patch.meta.allow_kind_change
            }
            StepKind::Json { .. } => false,
        }
    }

    /// Reads an entry's patch text into its steps, with the checks
    /// Kustomize makes before applying it.
    fn read(entry: &'e PatchEntry, env: &Env<'_>) -> OpResult<Vec<StepKind<'e>>> {
        Step::read_unlocated(entry, env).map_err(|e| match e.has_location() {
            true => e,
            false => e.located(None, entry.written_at),
        })
    }

    /// [`Step::read`], its errors not yet located at the entry.
    fn read_unlocated(entry: &'e PatchEntry, env: &Env<'_>) -> OpResult<Vec<StepKind<'e>>> {
        let text = entry.source.text(env)?;
        match detect(&text, &entry.source, entry.text_at, env.version)? {
            Parsed::Strategic(mut patches) => {
                for p in &mut patches {
                    p.meta.allow_name_change = entry.allow_name_change;
                    p.meta.allow_kind_change = entry.allow_kind_change;
                    // Kustomize records these options in the patch's own
                    // annotations, rewriting them as strings: an
                    // annotation the patch sets to null is then the
                    // string "null", not a deletion.
                    if entry.allow_name_change || entry.allow_kind_change {
                        p.normalize_annotations();
                    }
                }
                if entry.target.is_none() {
                    if env.version < KustomizeVersion::V5_8_1 {
                        check_no_patch_after_delete(&patches, &entry.source)?;
                    }
                    return Ok(patches
                        .into_iter()
                        .map(|patch| {
                            let id = patch.id();
                            StepKind::ById { patch, id }
                        })
                        .collect());
                }
                if patches.len() > 1 {
                    return Err(OpError::new(format!(
                        "Multiple Strategic-Merge Patches in one `patches` entry is not allowed to set `patches.target` field: {}",
                        entry.source.describe()
                    )));
                }
                Ok(patches
                    .into_iter()
                    .map(|patch| {
                        let mut node = patch.node.clone();
                        smp::stringify_metadata_maps(&mut node);
                        StepKind::Targeted { entry, patch, node }
                    })
                    .collect())
            }
            Parsed::Json(ops) => {
                if entry.target.is_none() {
                    // An empty text reads as a JSON patch of no operations.
                    let why = match &ops {
                        Ok(ops) if ops.is_empty() => "; the patch holds no operations",
                        _ => "",
                    };
                    return Err(OpError::new(format!(
                        "must specify a target for JSON patch {}{why}",
                        entry.source.describe()
                    )));
                }
                let ops = ops?;
                Ok(vec![StepKind::Json { entry, ops }])
            }
        }
    }
}

/// Kustomize v5.5.0 fails on a strategic merge patch file in which a
/// document follows one that deletes a resource (the next lookup meets the
/// emptied resource: a nil pointer dereference); v5.8.1 skips emptied
/// resources.
fn check_no_patch_after_delete(patches: &[Resource], source: &PatchSource) -> OpResult<()> {
    let deletes = |p: &Resource| p.node.get("$patch").and_then(Node::as_str) == Some("delete");
    match patches.iter().position(deletes) {
        Some(i) if i + 1 < patches.len() => Err(OpError::new(format!(
            "strategic merge patch {} has a document after one that deletes a resource, which Kustomize v5.5.0 cannot apply (runtime error: invalid memory address or nil pointer dereference); Kustomize v5.8.1 can",
            source.describe()
        ))
        .located(None, patches[i + 1].node.pos())),
        _ => Ok(()),
    }
}

/// The compiled target of each step (`None` for patches by id), up to
/// the first target that does not compile, and why that one does not.
fn compile<'e>(steps: &[Step<'e>]) -> (Vec<Option<CompiledSelector>>, Option<OpError>) {
    let mut selectors = Vec::with_capacity(steps.len());
    for step in steps {
        let target = match &step.kind {
            StepKind::Targeted { entry, .. } | StepKind::Json { entry, .. } => {
                entry.target.as_ref()
            }
            StepKind::ById { .. } => None,
        };
        match target.map(|t| t.compile_regex()).transpose() {
            Ok(selector) => selectors.push(selector),
            Err(e) => return (selectors, Some(e)),
        }
    }
    (selectors, None)
}

/// What the chain did to one resource.
#[derive(Default)]
struct Outcome {
    /// The patches by id (step positions) that matched it.
    matched: Vec<usize>,
    /// The step that failed on it, and why.
    failed: Option<(usize, OpError)>,
    /// A patch deleted it.
    deleted: bool,
}

/// Runs the steps over every resource, then checks what the sequential
/// order would have checked between them.
fn run(
    steps: &[Step<'_>],
    selectors: &[Option<CompiledSelector>],
    resources: &mut ResMap,
    entries: &[&PatchEntry],
    env: &Env<'_>,
) -> Result<(), ChainError> {
    if steps.is_empty() {
        return Ok(());
    }
    let index = StepIndex::new(steps);
    let outcomes = parallel::map_each(resources.resources_mut(), |r| {
        let mut outcome = Outcome::default();
        // The steps that may apply, in order. Only a JSON patch can rename
        // a resource or change its kind within a chain (strategic merges
        // that may are chains of their own), and it records the earlier id
        // first: a new earlier id is when others may come into view.
        let mut candidates = index.candidates(r, 0);
        let mut earlier_ids = r.meta.previous.len();
        let mut next = 0;
        while let Some(&i) = candidates.get(next) {
            next += 1;
            let (step, selector) = (&steps[i], &selectors[i]);
            let applied = match &step.kind {
                StepKind::ById { patch, id } => {
                    if !r.any_id(|rid| rid.equals(id)) {
                        continue;
                    }
                    outcome.matched.push(i);
                    apply_strategic_one(r, with_api_version(&patch.node, r), patch, env.schema())
                }
                StepKind::Targeted { patch, node, .. } => {
                    if !selector.as_ref().is_some_and(|s| s.matches(r)) {
                        continue;
                    }
                    let patch_node = with_api_version(node, r);
                    super::apply_strategic_one(r, patch_node, patch, env.schema()).inspect(|_| {
                        super::null_api_version_if_missing(r);
                        super::untype_renamed(r, patch);
                    })
                }
                StepKind::Json { ops, .. } => {
                    if !selector.as_ref().is_some_and(|s| s.matches(r)) {
                        continue;
                    }
                    r.store_previous_id();
                    apply_json(r, ops).map(|()| true)
                }
            };
            match applied {
                Ok(true) => {
                    if r.meta.previous.len() != earlier_ids {
                        earlier_ids = r.meta.previous.len();
                        candidates = index.candidates(r, i + 1);
                        next = 0;
                    }
                }
                Ok(false) => {
                    outcome.deleted = true;
                    break;
                }
                Err(e) => {
                    outcome.failed = Some((i, e));
                    break;
                }
            }
        }
        outcome
    });
    if let Some((step, error)) = first_error(steps, &outcomes, entries) {
        return Err(ChainError {
            entry: steps[step].entry,
            error,
        });
    }
    for index in (0..outcomes.len()).rev() {
        if outcomes[index].deleted {
            resources.remove_at(index);
        }
    }
    // A strategic merge patch allowed to rename may make two ids collide
    // (such an entry is always a chain of its own).
    if let Some(renaming) = steps.iter().find(|s| s.renames()) {
        resources.check_unique().map_err(|e| ChainError {
            entry: renaming.entry,
            error: OpError::from(e).context(format!(
                "patch {}",
                entries[renaming.entry].source.describe()
            )),
        })?;
    }
    Ok(())
}

/// The steps of a chain by what they can select: a patch by id applies
/// only to a resource that has, or had, the name it looks for, so each
/// resource looks at the patches by id for its names (found by name) and
/// at the targeted steps, not at every patch of the chain (trees with a
/// patch per application have as many patches as applications).
struct StepIndex<'s> {
    /// Patches by id (step positions, in order) by the name they look for.
    by_name: HashMap<&'s str, Vec<usize>>,
    /// The other steps (targeted ones), in order, with the kind their
    /// target asks for (empty for any).
    targeted: Vec<(usize, &'s str)>,
}

impl<'s> StepIndex<'s> {
    fn new(steps: &'s [Step<'_>]) -> StepIndex<'s> {
        let mut by_name: HashMap<&str, Vec<usize>> = HashMap::new();
        let mut targeted = Vec::new();
        for (i, step) in steps.iter().enumerate() {
            match &step.kind {
                StepKind::ById { id, .. } => by_name.entry(id.name.as_str()).or_default().push(i),
                StepKind::Targeted { entry, .. } | StepKind::Json { entry, .. } => {
                    // A kind given as a regular expression may select any.
                    let kind = entry
                        .target
                        .as_ref()
                        .map(|t| t.gvk.kind.as_str())
                        .filter(|k| krusty_match::selector::is_literal(k))
                        .unwrap_or("");
                    targeted.push((i, kind));
                }
            }
        }
        StepIndex { by_name, targeted }
    }

    /// The positions from `from` on of the steps that may apply to `r`, in
    /// order: the targeted steps for its kind (or for any kind), and the
    /// patches by id for its current and earlier names.
    fn candidates(&self, r: &Resource, from: usize) -> Vec<usize> {
        let names =
            std::iter::once(r.name()).chain(r.meta.previous.iter().map(|p| p.name.as_str()));
        let kind = r.kind();
        let mut out: Vec<usize> = self
            .targeted
            .iter()
            .filter(|&&(i, k)| i >= from && (k.is_empty() || k == kind))
            .map(|&(i, _)| i)
            .collect();
        let sorted_len = out.len();
        for name in names {
            if let Some(steps) = self.by_name.get(name) {
                out.extend(steps.iter().copied().filter(|&i| i >= from));
            }
        }
        if out.len() > sorted_len {
            out.sort_unstable();
            out.dedup();
        }
        out
    }
}

/// A copy of a strategic merge patch for `r`: the patch takes the target's
/// apiVersion, keeping its own kind.
fn with_api_version(patch: &Node, r: &Resource) -> Node {
    let mut node = patch.clone();
    super::take_api_version(&mut node, r);
    node
}

/// The error applying the steps one after another meets first: the
/// earliest failing step; for a patch by id, a count other than one before
/// any failure to apply it; otherwise the first resource that failed.
fn first_error(
    steps: &[Step<'_>],
    outcomes: &[Outcome],
    entries: &[&PatchEntry],
) -> Option<(usize, OpError)> {
    let mut matches = vec![0usize; steps.len()];
    for o in outcomes {
        for &i in &o.matched {
            matches[i] += 1;
        }
    }
    let failed_apply = outcomes
        .iter()
        .filter_map(|o| o.failed.as_ref())
        .min_by_key(|(i, _)| *i);
    let bad_count = steps
        .iter()
        .enumerate()
        .find(|(i, s)| matches!(s.kind, StepKind::ById { .. }) && matches[*i] != 1);
    if let Some((i, StepKind::ById { id, .. })) = bad_count.map(|(i, s)| (i, &s.kind)) {
        if failed_apply.is_none_or(|(f, _)| i <= *f) {
            let what = if matches[i] == 0 {
                "no matches"
            } else {
                "multiple matches"
            };
            let entry = entries[steps[i].entry];
            let error = OpError::new(format!(
                "{what} for Id {id}; failed to find unique target for patch {id}"
            ));
            let error = match &steps[i].kind {
                StepKind::ById { patch, .. } => error.located(None, patch.node.pos()),
                _ => error,
            };
            let error = entry.source.place(error, entry.text_at).context(format!(
                "no resource matches strategic merge patch \"{id}\""
            ));
            return Some((i, error));
        }
    }
    failed_apply.map(|(i, e)| {
        let entry = entries[steps[*i].entry];
        let error = entry.source.place(e.clone(), entry.text_at);
        (
            *i,
            error.context(format!("patch {}", entry.source.describe())),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::patch::{Patch, PatchSource};
    use crate::selector::Selector;

    const RESOURCES: &str = "
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, labels: {tier: web}}
spec: {replicas: 1, template: {spec: {containers: [{name: app, image: a}]}}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: worker, labels: {tier: worker}}
spec: {replicas: 2, template: {spec: {containers: [{name: app, image: b}]}}}
---
apiVersion: v1
kind: Service
metadata: {name: web, labels: {tier: web}}
spec: {ports: [{port: 80}]}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
data: {a: '1'}
";

    fn resmap() -> ResMap {
        let docs = krusty_yaml::parse_stream(RESOURCES).expect("valid YAML");
        let mut m = ResMap::new();
        for d in docs {
            let r = Resource::from_node(d.root.expect("a document")).expect("a resource");
            m.append(r).expect("distinct ids");
        }
        m
    }

    fn targeted(patch: &str, kind: &str, labels: &str) -> PatchEntry {
        PatchEntry {
            source: PatchSource::Inline(patch.trim().to_string()),
            target: Some(Selector {
                gvk: krusty_resource::Gvk {
                    kind: kind.into(),
                    ..Default::default()
                },
                label_selector: labels.into(),
                ..Default::default()
            }),
            allow_name_change: false,
            allow_kind_change: false,
            text_at: None,
            written_at: Default::default(),
        }
    }

    fn by_id(patch: &str) -> PatchEntry {
        PatchEntry {
            source: PatchSource::Inline(patch.trim().to_string()),
            target: None,
            allow_name_change: false,
            allow_kind_change: false,
            text_at: None,
            written_at: Default::default(),
        }
    }

    /// Patches that select, relabel (so later selections change), rename,
    /// change a kind, delete, fail, match nothing or match twice.
    fn pool() -> Vec<PatchEntry> {
        vec![
            targeted(
                "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: any}\nspec: {replicas: 5}",
                "Deployment",
                "",
            ),
            targeted(
                "- op: add\n  path: /metadata/labels/tier\n  value: worker",
                "",
                "tier=web",
            ),
            targeted(
                "- op: replace\n  path: /spec/replicas\n  value: 9",
                "Deployment",
                "tier=worker",
            ),
            targeted("- op: replace\n  path: /spec/missing/x\n  value: 1", "Service", ""),
            by_id("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {b: '2'}"),
            by_id("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: absent}\ndata: {b: '2'}"),
            by_id("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n$patch: delete"),
            by_id(
                "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: worker}\nspec: {paused: true}\n---\napiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec: {type: NodePort}",
            ),
            targeted("- op: test\n  path: /data/a\n  value: '2'", "ConfigMap", ""),
            targeted("not: [valid", "", ""),
            // A target whose name does not compile.
            PatchEntry {
                target: Some(Selector {
                    name: "(".into(),
                    ..Default::default()
                }),
                ..targeted("- op: replace\n  path: /data/a\n  value: '3'", "", "")
            },
            targeted("- op: add\n  path: /metadata/annotations\n  value: {seen: 'yes'}", "", "tier in (web,worker)"),
            // A rename, and a patch by the new name (the one by the old
            // name above still finds the renamed resource).
            targeted("- op: replace\n  path: /metadata/name\n  value: renamed", "ConfigMap", ""),
            by_id("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: renamed}\ndata: {c: '3'}"),
            // A change of kind, and a target for the new kind.
            targeted("- op: replace\n  path: /kind\n  value: Secret", "ConfigMap", ""),
            targeted("- op: add\n  path: /metadata/annotations\n  value: {secret: 'yes'}", "Secret", ""),
        ]
    }

    fn rendered(m: &ResMap) -> Vec<String> {
        m.iter()
            .map(|r| {
                let mut text = String::new();
                krusty_yaml::emit_document(&r.node, &mut text).expect("printable");
                text
            })
            .collect()
    }

    /// Every list of up to three entries from the pool (with repeats), and
    /// longer ones (whose entries are read in parallel) stepping through
    /// the pool from every start by every stride, as one chain and one
    /// entry at a time: same resources, same first error.
    #[test]
    fn a_chain_applies_like_its_entries_one_after_another() {
        let pool = pool();
        let env = Env::detached();
        let n = pool.len();
        let mut lists: Vec<Vec<usize>> = (0..n).map(|a| vec![a]).collect();
        for a in 0..n {
            for b in 0..n {
                lists.push(vec![a, b]);
                for c in 0..n {
                    lists.push(vec![a, b, c]);
                }
            }
        }
        for start in 0..n {
            for stride in 1..n {
                for len in READ_IN_PARALLEL_FROM..READ_IN_PARALLEL_FROM + 3 {
                    lists.push((0..len).map(|k| (start + k * stride) % n).collect());
                }
            }
        }
        for list in lists {
            let entries: Vec<&PatchEntry> = list.iter().map(|&i| &pool[i]).collect();
            let mut chained = resmap();
            let chain_result =
                apply(&entries, &mut chained, &env).map_err(|e| (e.entry, e.error.to_string()));
            let mut sequential = resmap();
            // Every entry is read before any applies.
            let mut seq_result = entries
                .iter()
                .enumerate()
                .find_map(|(position, e)| {
                    Step::read(e, &env).err().map(|e| (position, e.to_string()))
                })
                .map_or(Ok(()), Err);
            for (position, entry) in entries.iter().enumerate() {
                if seq_result.is_err() {
                    break;
                }
                if let Err(e) = entry.apply(&mut sequential, &env) {
                    seq_result = Err((position, e.to_string()));
                }
            }
            assert_eq!(chain_result, seq_result, "entries {list:?}");
            if seq_result.is_ok() {
                assert_eq!(
                    rendered(&chained),
                    rendered(&sequential),
                    "entries {list:?}"
                );
            }
        }
    }
}
