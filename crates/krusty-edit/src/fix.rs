//! Deprecated fields to their current forms, as Kustomize rewrites them.
//!
//! Every edit reads the file as Kustomize's `edit` reads it (its
//! `FixKustomization` step): `bases` join `resources`, `imageTags` join
//! `images`, a generator's `env` joins its `envs`, and
//! `helmChartInflationGenerator` entries join `helmCharts` (and
//! `helmGlobals`) ([`fold_deprecated`]). `edit fix` also moves
//! `patchesJson6902` and `patchesStrategicMerge` into `patches` (a
//! strategic merge entry naming a readable file becomes `path:`, any other
//! `patch:`), and `commonLabels` into a `labels` entry that includes
//! selectors ([`fix`]).

use std::path::Path;

use krusty_yaml::{Node, Value};

use crate::error::{EditError, EditResult};
use crate::file::KustomizationFile;
use crate::node::{items, put_sorted};

/// Rewrites the deprecated fields of `k` as `edit fix` does (paths read
/// from `dir`).
pub fn fix(dir: &Path, k: &mut KustomizationFile) -> EditResult<()> {
    fold_deprecated(k);
    move_items(k, "patchesJson6902", "patches");
    strategic_merge_to_patches(dir, k);
    common_labels_to_labels(k)
}

/// Folds the deprecated fields Kustomize's `edit` folds on every read, so
/// that the edit sees, and writes, what a build reads: `bases` after
/// `resources`, `imageTags` after `images`, a generator's `env` after its
/// `envs`, `helmChartInflationGenerator` after `helmCharts`.
pub fn fold_deprecated(k: &mut KustomizationFile) {
    move_items(k, "bases", "resources");
    move_items(k, "imageTags", "images");
    for generator in ["configMapGenerator", "secretGenerator"] {
        fix_env_sources(k, generator);
    }
    helm_inflation_to_charts(k);
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

/// The `helmCharts` fields the deprecated entries' fields become, in the
/// order Kustomize writes them.
const CHART_FIELDS: [(&str, &str); 7] = [
    ("chartName", "name"),
    ("releaseName", "releaseName"),
    ("chartRepoUrl", "repo"),
    ("values", "valuesFile"),
    ("valuesLocal", "valuesInline"),
    ("valuesMerge", "valuesMerge"),
    ("chartVersion", "version"),
];

/// `helmChartInflationGenerator` entries join `helmCharts` (their other
/// fields go, as builds ignore them); the last `chartHome` and `helmHome`
/// they set become `helmGlobals` when that field is absent.
fn helm_inflation_to_charts(k: &mut KustomizationFile) {
    if k.get("helmChartInflationGenerator").is_none() {
        k.remove("helmChartInflationGenerator");
        return;
    }
    let mut charts = items(k.get("helmCharts"));
    let (mut chart_home, mut config_home) = (None, None);
    for entry in items(k.get("helmChartInflationGenerator")) {
        let field = |name: &str| {
            entry.as_map().and_then(|m| {
                m.iter()
                    .find(|(key, _)| key.key_str().is_some_and(|k| k.eq_ignore_ascii_case(name)))
                    .map(|(_, value)| value.clone())
            })
        };
        let set = |node: &Option<Node>| match node.as_ref().map(|n| &n.value) {
            Some(Value::Map(m)) => !m.is_empty(),
            Some(_) => node
                .as_ref()
                .and_then(Node::as_str)
                .is_some_and(|t| !t.is_empty()),
            None => false,
        };
        let chart = CHART_FIELDS.iter().filter_map(|(old, new)| {
            let value = field(old);
            set(&value).then(|| (Node::plain(*new), value.unwrap_or_else(Node::map)))
        });
        charts.push(Node::map_of(chart));
        if let Some(home) = field("chartHome").filter(|h| set(&Some(h.clone()))) {
            chart_home = Some(home);
        }
        if let Some(home) = field("helmHome").filter(|h| set(&Some(h.clone()))) {
            config_home = Some(home);
        }
    }
    if k.get("helmGlobals").is_none() && (chart_home.is_some() || config_home.is_some()) {
        let globals = [("chartHome", chart_home), ("configHome", config_home)]
            .into_iter()
            .filter_map(|(key, value)| Some((Node::plain(key), value?)));
        k.set("helmGlobals", Node::map_of(globals));
    }
    if !charts.is_empty() {
        k.set("helmCharts", Node::seq_of(charts));
    }
    k.remove("helmChartInflationGenerator");
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
        put_sorted(entry, Node::plain("envs"), Node::seq_of(sources));
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
