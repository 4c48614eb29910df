//! KRM functions configured in `generators:`, `transformers:` and
//! `validators:`: resolving what a config declares, and running it over
//! the accumulated resources through the wire format.
//!
//! Each resource goes out with the internal annotations of the
//! specification (`internal.config.kubernetes.io/path`, `/index`, their
//! legacy `config.kubernetes.io/` forms, and an id) and comes back without
//! them. The id ties an output item to the resource it was, so what the
//! build knows about it (earlier names, hash suffix, origin) survives the
//! trip; items without one are new.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use krusty_fn::wire::annotations::{ID, INDEX, INTERNAL_PREFIX, PATH};
use krusty_fn::{object, FnResult, ResourceList, Severity};
use krusty_ops::absorb::absorb;
use krusty_resource::{Behavior, BuildMeta, Origin, ResMap, Resource};
use krusty_runtime::{Policy, Runtime, StarlarkSource};
use krusty_yaml::Node;

use crate::error::{BuildError, BuildResult};
use crate::loader::Loader;

/// Generated items may ask for a hash suffix and a behavior, as
/// Kustomize's function generators can.
const NEEDS_HASH: &str = "kustomize.config.k8s.io/needs-hash";
const BEHAVIOR: &str = "kustomize.config.k8s.io/behavior";
const LOCAL_CONFIG: &str = "config.kubernetes.io/local-config";

/// What a function does to the resources.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    /// Gets an empty list; what it returns is added.
    Generator,
    /// Gets every resource; what it returns replaces them.
    Transformer,
    /// Gets every resource; may report results but not change them.
    Validator,
}

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
    /// Starlark files are resolved against the kustomization's directory,
    /// under its load restrictions.
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
            Runtime::Exec { path, args } => {
                let resolved = loader.file(&path).map_err(|e| {
                    in_config(BuildError::new(format!(
                        "exec path '{path}' (relative to {}): {}",
                        loader.root.display(),
                        e.0
                    )))
                })?;
                if resolved.is_dir() {
                    return Err(in_config(BuildError::new(format!(
                        "exec path '{}' is a directory, not an executable",
                        resolved.display()
                    ))));
                }
                Runtime::Exec {
                    path: resolved.to_string_lossy().into_owned(),
                    args,
                }
            }
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
                let (nodes, metas): (Vec<Node>, Vec<BuildMeta>) =
                    taken.into_iter().map(|r| (r.node, r.meta)).unzip();
                let items = annotate(nodes.into_iter().zip(metas.iter()));
                let output = self.call(items, policy, notes)?;
                return self.replace(resources, output, metas, origin);
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

    /// A transformer's output replaces the resources.
    fn replace(
        &self,
        resources: &mut ResMap,
        items: Vec<Node>,
        metas: Vec<BuildMeta>,
        origin: &Origin,
    ) -> BuildResult<()> {
        let mut metas: Vec<Option<BuildMeta>> = metas.into_iter().map(Some).collect();
        let mut out = Vec::with_capacity(items.len());
        for (i, mut node) in items.into_iter().enumerate() {
            let id = strip_internal(&mut node);
            let mut r = self.resource(node, i)?;
            match id.and_then(|id| metas.get_mut(id)).and_then(Option::take) {
                Some(meta) => r.meta = meta,
                None => r.meta.origin = Some(Box::new(origin.clone())),
            }
            out.push(r);
        }
        *resources = ResMap::from_vec(out).map_err(|e| {
            BuildError::new(format!(
                "function {} returned duplicate resources: {e}",
                self.label
            ))
        })?;
        Ok(())
    }

    /// A generator's output is added, merging or replacing as each item's
    /// behavior annotation asks.
    fn add(&self, resources: &mut ResMap, items: Vec<Node>, origin: &Origin) -> BuildResult<()> {
        for (i, mut node) in items.into_iter().enumerate() {
            strip_internal(&mut node);
            let needs_hash = object::remove_annotation(&mut node, NEEDS_HASH);
            let behavior = object::remove_annotation(&mut node, BEHAVIOR);
            let mut r = self.resource(node, i)?;
            r.meta.needs_hash = needs_hash.as_ref().and_then(Node::as_str) == Some("true");
            if let Some(b) = behavior.as_ref().and_then(Node::as_str) {
                r.meta.behavior = Behavior::parse(b);
            }
            r.meta.origin = Some(Box::new(origin.clone()));
            absorb(resources, r)
                .map_err(|e| BuildError::new(format!("function {}: {}", self.label, e.0)))?;
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
        for mut node in items {
            let Some(i) = strip_internal(&mut node).filter(|&i| i < seen.len() && !seen[i]) else {
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
                self.label, e.0
            ))
        })
    }
}

/// Adds the internal annotations: a path (the file the resource came
/// from, or a made-up one for generated resources), its index in that
/// path, and an id (its position in the list).
fn annotate<'m>(resources: impl Iterator<Item = (Node, &'m BuildMeta)>) -> Vec<Node> {
    let mut per_path: HashMap<String, usize> = HashMap::new();
    resources
        .enumerate()
        .map(|(i, (mut node, meta))| {
            let path = match meta.origin.as_deref() {
                Some(Origin::File(p)) => file_name_of(p),
                _ => "generated.yaml".to_string(),
            };
            let index = per_path.entry(path.clone()).or_default();
            let index_text = index.to_string();
            *index += 1;
            let id = i.to_string();
            if let Some(annotations) = node
                .entry_map("metadata")
                .and_then(|m| m.entry_map("annotations"))
            {
                for key in PATH {
                    annotations.set(key, Node::string(&path));
                }
                for key in INDEX {
                    annotations.set(key, Node::string(&index_text));
                }
                annotations.set(ID[1], Node::string(&id));
            }
            node
        })
        .collect()
}

/// The slash-separated path recorded for a resource read from `path`.
fn file_name_of(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "resource.yaml".into())
}

/// Removes the orchestrator's annotations from an item; returns its id.
fn strip_internal(node: &mut Node) -> Option<usize> {
    let annotations = node.get_mut("metadata")?.get_mut("annotations")?;
    let id = ID
        .iter()
        .find_map(|k| annotations.get(k).and_then(Node::as_str))
        .and_then(|s| s.parse().ok());
    if let Some(entries) = annotations.as_map_mut() {
        entries.retain(|(k, _)| {
            let key = k.key_str().unwrap_or_default();
            !(key.starts_with(INTERNAL_PREFIX)
                || PATH.contains(&key)
                || INDEX.contains(&key)
                || ID.contains(&key))
        });
        if entries.is_empty() {
            if let Some(meta) = node.get_mut("metadata") {
                meta.remove("annotations");
            }
        }
    }
    id
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
