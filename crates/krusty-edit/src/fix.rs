//! `edit fix`: deprecated fields to their current forms, as Kustomize
//! rewrites them: `bases` into `resources`, `imageTags` into `images`,
//! a generator's `env` into its `envs`, `patchesJson6902` and
//! `patchesStrategicMerge` into `patches` (a strategic merge entry naming
//! a readable file becomes `path:`, any other `patch:`), and
//! `commonLabels` into a `labels` entry that includes selectors.

use std::path::Path;

use krusty_yaml::Node;

use crate::error::{EditError, EditResult};
use crate::file::KustomizationFile;
use crate::node::items;

/// Rewrites the deprecated fields of `k` (paths read from `dir`).
pub fn fix(dir: &Path, k: &mut KustomizationFile) -> EditResult<()> {
    move_items(k, "bases", "resources");
    move_items(k, "imageTags", "images");
    for generator in ["configMapGenerator", "secretGenerator"] {
        fix_env_sources(k, generator);
    }
    move_items(k, "patchesJson6902", "patches");
    strategic_merge_to_patches(dir, k);
    common_labels_to_labels(k)
}

/// Appends the items of `from` to `to` and removes `from`.
fn move_items(k: &mut KustomizationFile, from: &str, to: &str) {
    let moved = items(k.get(from));
    if k.get(from).is_none() {
        return;
    }
    if !moved.is_empty() {
        let mut list = items(k.get(to));
        list.extend(moved);
        k.set(to, Node::seq_of(list));
    }
    k.remove(from);
}

/// Each generator's `envSource` joins its `envSources`.
fn fix_env_sources(k: &mut KustomizationFile, field: &str) {
    let mut list = items(k.get(field));
    let mut changed = false;
    for entry in &mut list {
        let Some(source) = entry.get("env").and_then(Node::as_str).map(str::to_string) else {
            continue;
        };
        entry.remove("env");
        changed = true;
        if source.is_empty() {
            continue;
        }
        let mut sources = items(entry.get("envs"));
        sources.push(Node::string(source.as_str()));
        entry.set("envs", Node::seq_of(sources));
    }
    if changed {
        k.set(field, Node::seq_of(list));
    }
}

/// `patchesStrategicMerge` entries join `patches`.
fn strategic_merge_to_patches(dir: &Path, k: &mut KustomizationFile) {
    if k.get("patchesStrategicMerge").is_none() {
        return;
    }
    let mut list = items(k.get("patches"));
    for entry in items(k.get("patchesStrategicMerge")) {
        let Some(text) = entry.as_str() else { continue };
        let key = if std::fs::read(dir.join(text)).is_ok() {
            "path"
        } else {
            "patch"
        };
        list.push(Node::map_of([(Node::plain(key), Node::string(text))]));
    }
    k.set_or_remove("patches", Node::seq_of(list));
    k.remove("patchesStrategicMerge");
}

/// `commonLabels` becomes a `labels` entry with `includeSelectors: true`;
/// a key in both fails.
fn common_labels_to_labels(k: &mut KustomizationFile) -> EditResult<()> {
    let Some(common) = k.get("commonLabels").cloned() else {
        return Ok(());
    };
    let Some(pairs) = common.as_map().filter(|m| !m.is_empty()) else {
        k.remove("commonLabels");
        return Ok(());
    };
    let mut labels = items(k.get("labels"));
    for entry in &labels {
        if let Some(existing) = entry.get("pairs").and_then(Node::as_map) {
            if let Some((key, _)) = pairs
                .iter()
                .find(|(key, _)| existing.iter().any(|(e, _)| e.as_str() == key.as_str()))
            {
                return Err(EditError::new(format!(
                    "label name '{}' exists in both commonLabels and labels",
                    key.as_str().unwrap_or_default()
                )));
            }
        }
    }
    let mut entry = Node::map();
    entry.set("includeSelectors", Node::plain("true"));
    entry.set("pairs", common.clone());
    labels.push(entry);
    k.set("labels", Node::seq_of(labels));
    k.remove("commonLabels");
    Ok(())
}
