//! KRM functions configured in `generators:`, `transformers:` and
//! `validators:`: resolving what a config declares, and running it over
//! the accumulated resources through the wire format.
//!
//! Each resource goes out with the annotations Kustomize sends (its
//! build records, identity and position: see [`records`]) and comes back
//! without them. As in Kustomize, a transformer's output is matched to
//! the resources it was given by current identity (group, version, kind,
//! name and namespace): matched items keep their place in the list, in the
//! order the resources had, and the rest (new items, and renamed ones)
//! follow in the order the function printed them. The build records an
//! item comes back with are the ones it has from then on.

mod records;

use std::collections::HashMap;
use std::path::PathBuf;

use krusty_fn::{object, FnResult, ResourceList, Severity};
use krusty_ops::absorb::absorb;
use krusty_resource::{Behavior, BuildMeta, Gvk, Origin, ResId, ResMap, Resource};
use krusty_runtime::{Policy, Runtime, StarlarkSource};
use krusty_yaml::{CompactString, Node};

use crate::error::{BuildError, BuildResult};
use crate::loader::Loader;

/// Generated items may ask for a hash suffix and a behavior, as
/// Kustomize's function generators can.
const NEEDS_HASH: &str = "kustomize.config.k8s.io/needs-hash";
const BEHAVIOR: &str = "kustomize.config.k8s.io/behavior";
const LOCAL_CONFIG: &str = "config.kubernetes.io/local-config";

pub use crate::operation::Role;

/// A function ready to run: its runtime (paths resolved), its config and
/// the directory it runs in.
#[derive(Debug, Clone)]
pub(crate) struct FunctionStep {
    runtime: Runtime,
    config: Node,
    dir: PathBuf,
    /// Names the function in messages.
    pub label: String,
}

impl FunctionStep {
    /// The function `config` declares, if it declares one. Exec paths and
    /// Starlark files are resolved against the kustomization's directory;
    /// Starlark files are read under its load restrictions, exec paths are
    /// not subject to them (`--enable-exec` is the user's trust in them).
    pub(crate) fn resolve(
        config: &Resource,
        loader: &Loader,
        policy: &Policy,
    ) -> BuildResult<Option<FunctionStep>> {
        let id = config.id();
        let runtime = match krusty_runtime::runtime_of(&config.node) {
            Ok(Some(r)) => r,
            Ok(None) => return Ok(None),
            Err(e) => return Err(BuildError::new(format!("function config {id}: {e}"))),
        };
        let label = format!("{id} ({} function)", runtime.name());
        let in_config = |e: BuildError| e.context(format!("function config {id}"));
        let runtime = match runtime {
            Runtime::Exec { path, args } => Runtime::Exec {
                path: exec_path(&path, &loader.root).map_err(in_config)?,
                args,
            },
            Runtime::Starlark(StarlarkSource::Path(path)) => {
                let file = loader.file(&path).map_err(in_config)?;
                let program = loader.read(&file, None).map_err(in_config)?;
                Runtime::Starlark(StarlarkSource::Inline(program))
            }
            Runtime::Starlark(StarlarkSource::Url(url)) => {
                // Fetch only what may run.
                policy
                    .permit(&Runtime::Starlark(StarlarkSource::Url(url.clone())))
                    .map_err(|e| in_config(BuildError::new(e)))?;
                Runtime::Starlark(StarlarkSource::Inline(
                    krusty_runtime::starlark::fetch(&url, policy)
                        .map_err(|e| in_config(BuildError::new(e)))?,
                ))
            }
            other => other,
        };
        let mut config = config.node.clone();
        object::set_annotation(&mut config, LOCAL_CONFIG, "true");
        Ok(Some(FunctionStep {
            runtime,
            config,
            dir: loader.root.clone(),
            label,
        }))
    }

    /// Runs the function over `resources` in `role`. Warning and info
    /// results go to `notes`; error results fail the build.
    pub(crate) fn run(
        &self,
        role: Role,
        resources: &mut ResMap,
        policy: &Policy,
        origin: &Origin,
        notes: &mut Vec<String>,
    ) -> BuildResult<()> {
        let items = match role {
            Role::Generator => Vec::new(),
            Role::Validator => annotate(resources.iter().map(|r| (r.node.clone(), &r.meta))),
            Role::Transformer => {
                let taken = std::mem::take(resources).into_vec();
                let ids: Vec<ResId> = taken.iter().map(Resource::id).collect();
                let (nodes, metas): (Vec<Node>, Vec<BuildMeta>) =
                    taken.into_iter().map(|r| (r.node, r.meta)).unzip();
                let items = annotate(nodes.into_iter().zip(metas.iter()));
                let output = self.call(items, policy, notes)?;
                return self.replace(resources, output, &ids, metas, origin);
            }
        };
        let output = self.call(items, policy, notes)?;
        match role {
            Role::Generator => self.add(resources, output, origin),
            _ => self.check_unchanged(resources, output),
        }
    }

    /// Sends `items` through the function; returns the items it printed.
    fn call(
        &self,
        items: Vec<Node>,
        policy: &Policy,
        notes: &mut Vec<String>,
    ) -> BuildResult<Vec<Node>> {
        let input = ResourceList {
            items,
            function_config: Some(self.config.clone()),
            results: Vec::new(),
        };
        let output =
            krusty_runtime::invoke(&self.runtime, &self.dir, input, policy).map_err(|f| {
                if f.results.iter().any(|r| r.severity == Severity::Error) {
                    BuildError::new(format!(
                        "the function reported errors ({}):{}",
                        f.message.split(';').next().unwrap_or_default(),
                        results_text(&f.results)
                    ))
                } else {
                    BuildError::new(format!(
                        "the function failed: {}{}",
                        f.message,
                        results_text(&f.results)
                    ))
                }
            })?;
        if output.has_errors() {
            return Err(BuildError::new(format!(
                "the function reported errors:{}",
                results_text(&output.results)
            )));
        }
        notes.extend(
            output
                .results
                .iter()
                .map(|r| format!("function {}: {r}", self.label)),
        );
        Ok(output.items)
    }

    /// A transformer's output replaces the resources: items matching one
    /// of them (by current id, `ids`) take its place and keep what the
    /// build knows about it (`metas`) beyond the records they came back
    /// with; the other items follow as new ones.
    fn replace(
        &self,
        resources: &mut ResMap,
        items: Vec<Node>,
        ids: &[ResId],
        metas: Vec<BuildMeta>,
        origin: &Origin,
    ) -> BuildResult<()> {
        let mut place: HashMap<ResId, usize> = HashMap::with_capacity(ids.len());
        for (i, id) in ids.iter().enumerate().rev() {
            place.insert(comparable(id), i);
        }
        let mut metas: Vec<Option<BuildMeta>> = metas.into_iter().map(Some).collect();
        let mut kept: Vec<Option<Resource>> = vec![None; ids.len()];
        let mut added = Vec::new();
        for (i, mut node) in items.into_iter().enumerate() {
            let returned = self.take_records(&mut node, i)?;
            let mut r = self.resource(node, i)?;
            let matched = place
                .get(&comparable(&r.id()))
                .copied()
                .filter(|&at| kept[at].is_none());
            match matched.and_then(|at| Some((at, metas[at].take()?))) {
                Some((at, meta)) => {
                    r.meta = meta;
                    returned.apply_to(&mut r.meta);
                    kept[at] = Some(r);
                }
                None => {
                    r.meta.origin = Some(Box::new(origin.clone()));
                    returned.apply_to(&mut r.meta);
                    added.push(r);
                }
            }
        }
        let out: Vec<Resource> = kept.into_iter().flatten().chain(added).collect();
        *resources = ResMap::from_vec(out).map_err(|e| {
            BuildError::new(format!(
                "function {} returned duplicate resources: {e}",
                self.label
            ))
        })?;
        Ok(())
    }

    /// Removes the orchestrator's annotations from returned item `i`;
    /// returns the build records they held.
    fn take_records(&self, node: &mut Node, i: usize) -> BuildResult<records::Returned> {
        records::take(node).map_err(|e| {
            BuildError::new(format!(
                "function {} returned an invalid item {i}: {e}",
                self.label
            ))
        })
    }

    /// A generator's output is added, merging or replacing as each item's
    /// behavior annotation asks.
    fn add(&self, resources: &mut ResMap, items: Vec<Node>, origin: &Origin) -> BuildResult<()> {
        for (i, mut node) in items.into_iter().enumerate() {
            let returned = self.take_records(&mut node, i)?;
            let needs_hash = object::remove_annotation(&mut node, NEEDS_HASH);
            let behavior = object::remove_annotation(&mut node, BEHAVIOR);
            let mut r = self.resource(node, i)?;
            returned.apply_to(&mut r.meta);
            r.meta.needs_hash |= needs_hash.as_ref().and_then(Node::as_str) == Some("true");
            if let Some(b) = behavior.as_ref().and_then(Node::as_str) {
                r.meta.behavior = Behavior::parse(b);
            }
            r.meta.origin = Some(Box::new(origin.clone()));
            absorb(resources, r)
                .map_err(|e| BuildError::new(format!("function {}: {}", self.label, e)))?;
        }
        Ok(())
    }

    /// A validator must return the resources it was given, unchanged
    /// (order aside).
    fn check_unchanged(&self, resources: &ResMap, items: Vec<Node>) -> BuildResult<()> {
        let changed = |what: String| {
            BuildError::new(format!(
                "validator {} changed resources ({what}); validators must not modify resources",
                self.label
            ))
        };
        if items.len() != resources.len() {
            return Err(changed(format!(
                "{} in, {} out",
                resources.len(),
                items.len()
            )));
        }
        let mut seen = vec![false; resources.len()];
        for (i, mut node) in items.into_iter().enumerate() {
            let returned = self.take_records(&mut node, i)?;
            let sent = returned.id.and_then(|id| id.checked_sub(1));
            let Some(i) = sent.filter(|&i| i < seen.len() && !seen[i]) else {
                return Err(changed(
                    "an item was added or its id annotation was changed".into(),
                ));
            };
            seen[i] = true;
            let before = resources.at(i);
            if node != before.node
                && krusty_yaml::to_go_json(&node) != krusty_yaml::to_go_json(&before.node)
            {
                return Err(changed(format!("{} was modified", before.id())));
            }
        }
        Ok(())
    }

    fn resource(&self, node: Node, i: usize) -> BuildResult<Resource> {
        Resource::from_node(node).map_err(|e| {
            BuildError::new(format!(
                "function {} returned an invalid item {i}: {}",
                self.label, e
            ))
        })
    }
}

/// The executable an exec function's `path` names: an absolute path as
/// it is, a relative one against the kustomization's directory `root`.
fn exec_path(path: &str, root: &std::path::Path) -> BuildResult<String> {
    let resolved = root.join(path);
    let problem = match std::fs::metadata(&resolved) {
        Ok(m) if m.is_dir() => "is a directory, not an executable".to_string(),
        Ok(_) => return Ok(resolved.to_string_lossy().into_owned()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => "no such file or directory".into(),
        Err(e) => e.to_string(),
    };
    Err(BuildError::new(format!(
        "exec path '{path}' (relative to {}): {problem}",
        root.display()
    )))
}

/// Adds Kustomize's annotations to each resource sent.
fn annotate<'m>(resources: impl Iterator<Item = (Node, &'m BuildMeta)>) -> Vec<Node> {
    resources
        .enumerate()
        .map(|(i, (mut node, meta))| {
            records::annotate(&mut node, meta, i);
            node
        })
        .collect()
}

/// `id` in a form that compares as Kustomize compares ids (an unset
/// namespace is `default`).
fn comparable(id: &ResId) -> ResId {
    ResId {
        gvk: Gvk::clone(&id.gvk),
        name: id.name.clone(),
        namespace: CompactString::from(id.effective_namespace()),
    }
}

/// Results, one per line, for an error message.
fn results_text(results: &[FnResult]) -> String {
    let mut text = String::new();
    for r in results {
        text.push_str("\n  ");
        text.push_str(&r.to_string());
    }
    text
}
