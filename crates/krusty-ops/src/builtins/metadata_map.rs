//! LabelTransformer and AnnotationsTransformer: add key/value pairs to the
//! mappings that field specs name (labels, selectors, template metadata).

use std::sync::Arc;

use krusty_resource::{Behavior, Origin, ResMap, Resource, SharedValue};
use krusty_yaml::{resolve_input, Node, Value};

use crate::env::Env;
use crate::error::{OpError, OpResult};
use crate::fieldspec::{self, apply, CreateKind, FieldSpec, KindIndex};
use crate::parallel;

/// Adds `pairs` to the mapping at every field in `specs`, in every resource.
#[derive(Debug, Clone, PartialEq)]
pub struct SetMapEntries {
    /// Keys and values, in order.
    pub pairs: Vec<(String, String)>,
    /// Where the mappings are.
    pub specs: Vec<FieldSpec>,
}

impl SetMapEntries {
    /// Applies the pairs. Values one resource gets in several maps are
    /// recorded as shared (see [`SharedValue`]); writing over a shared
    /// value changes it everywhere it is.
    pub fn apply(&self, resources: &mut ResMap, env: &Env<'_>) -> OpResult<()> {
        if self.pairs.is_empty() {
            return Ok(());
        }
        let index = KindIndex::new(self.specs.iter().map(|s| s.gvk.kind.as_str()));
        let paths: Arc<[Box<str>]> = self.specs.iter().map(|s| s.path.as_str().into()).collect();
        parallel::try_each(resources.resources_mut(), |r| {
            let gvk = r.gvk();
            // Per pair, the specs whose maps got the key anew, and how many
            // (on the stack for the usual few pairs).
            let mut small = [(0u128, 0u32); 4];
            let mut large = Vec::new();
            let fresh: &mut [(u128, u32)] = if self.pairs.len() <= small.len() {
                &mut small[..self.pairs.len()]
            } else {
                large.resize(self.pairs.len(), (0, 0));
                &mut large
            };
            for i in index.positions(&gvk.kind) {
                let spec = &self.specs[i];
                if finds_records(spec) && spec.selects(&gvk) && has_records(r, env) {
                    ensure_annotations(r);
                }
                // With build records, Kustomize rebuilds the annotations map
                // after every step: values written there are not shared.
                let shares =
                    (i < 128 && !(env.build_records && finds_records(spec))).then_some(1u128 << i);
                apply(
                    &mut r.node,
                    &gvk,
                    spec,
                    CreateKind::Map,
                    &mut |n: &mut Node| set_entries(n, &self.pairs, shares, fresh),
                )
                .map_err(|e| {
                    let id = r.id();
                    e.context(format!("considering field '{}' of object {id}", spec.path))
                })?;
            }
            reconcile_shared(r);
            self.record_shared(r, &paths, fresh);
            Ok(())
        })
    }

    /// Records the pairs written anew into more than one map of `r`.
    fn record_shared(&self, r: &mut Resource, paths: &Arc<[Box<str>]>, fresh: &[(u128, u32)]) {
        for ((key, value), &(members, count)) in self.pairs.iter().zip(fresh) {
            if count > 1 && members.count_ones() > 0 {
                r.meta.shared.push(SharedValue {
                    key: key.as_str().into(),
                    value: Node::string(value.as_str()),
                    paths: Arc::clone(paths),
                    members,
                });
            }
        }
    }
}

/// Makes every field of each shared value of `r` hold what one of them was
/// changed to in place (the first in spec order), as Kustomize's one node
/// would; values no longer in at least two maps stop being shared.
pub fn reconcile_shared(r: &mut Resource) {
    reconcile(r, None);
}

/// [`reconcile_shared`] after a strategic merge, which replaces lists
/// rather than changing them in place, and maps under `$patch: replace`
/// in `replacing` (the patch, when it has such a directive): a value in
/// them (a StatefulSet's `volumeClaimTemplates`) that differs is a new
/// node, no longer shared.
pub fn reconcile_shared_after_merge(r: &mut Resource, replacing: Option<&Node>) {
    reconcile(r, Some(replacing));
}

fn reconcile(r: &mut Resource, merged: Option<Option<&Node>>) {
    if r.meta.shared.is_empty() {
        return;
    }
    let mut shared = std::mem::take(&mut r.meta.shared);
    shared.retain_mut(|s| reconcile_one(&mut r.node, s, merged));
    r.meta.shared = shared;
}

/// `true` if `patch` holds a `$patch: replace` directive anywhere.
pub fn has_replace_directive(patch: &Node) -> bool {
    match &patch.value {
        Value::Map(entries) => entries.iter().any(|(k, v)| {
            (k.key_str() == Some("$patch") && v.as_str() == Some("replace"))
                || has_replace_directive(v)
        }),
        Value::Seq(items) => items.iter().any(has_replace_directive),
        Value::Scalar(_) => false,
    }
}

/// `true` if the maps on `path` in `patch` (down to the first list) hold
/// `$patch: replace`.
fn replaced_along(patch: &Node, path: &str) -> bool {
    let replaces = |n: &Node| n.get("$patch").and_then(Node::as_str) == Some("replace");
    let mut node = patch;
    for segment in path.split('/') {
        if replaces(node) {
            return true;
        }
        match node.get(segment) {
            Some(next) if !segment.ends_with("[]") => node = next,
            _ => return false,
        }
    }
    replaces(node)
}

/// Reconciles one shared value; `false` once it is in fewer than two maps.
/// `merged` is `Some` after a strategic merge (with the patch when it
/// replaces maps).
fn reconcile_one(root: &mut Node, s: &mut SharedValue, merged: Option<Option<&Node>>) -> bool {
    let mut held = 0;
    let mut changed: Option<Node> = None;
    // Members still holding the value (a deleted one, even if written
    // again later, is a new node).
    let mut kept = 0u128;
    for (bit, path) in member_paths(s) {
        // A map under `$patch: replace` is new; a list a merge replaced
        // shows as changed values in it.
        let (replaced_map, in_list) = match merged {
            None => (false, false),
            Some(patch) => (
                patch.is_some_and(|p| replaced_along(p, path)),
                path.contains("[]"),
            ),
        };
        if replaced_map {
            continue;
        }
        // A path that no longer leads to a map is simply not visited.
        let _ = fieldspec::visit(root, path, &mut |map: &mut Node| {
            if let Some(v) = map.get(&s.key).filter(|v| v.as_scalar().is_some()) {
                if !differs(v, &s.value) {
                    held += 1;
                    kept |= bit;
                } else if !in_list {
                    held += 1;
                    kept |= bit;
                    changed.get_or_insert_with(|| v.clone());
                }
            }
            Ok(())
        });
    }
    s.members &= kept;
    if let Some(new) = changed {
        for (_, path) in member_paths(s) {
            let _ = fieldspec::visit(root, path, &mut |map: &mut Node| {
                if let Some(v) = map.get_mut(&s.key).filter(|v| v.as_scalar().is_some()) {
                    v.replace_keeping_pos(new.clone());
                }
                Ok(())
            });
        }
        s.value = new;
    }
    held > 1
}

/// The paths of the maps a shared value is in, with their bits.
fn member_paths(s: &SharedValue) -> impl Iterator<Item = (u128, &str)> + '_ {
    s.paths
        .iter()
        .take(128)
        .enumerate()
        .map(|(i, p)| (1u128 << i, &**p))
        .filter(move |(bit, _)| s.members & bit != 0)
}

/// `true` when `v` is no longer the shared value: other text, or the same
/// text read as another type.
fn differs(v: &Node, shared: &Node) -> bool {
    v.as_scalar().map(|s| &s.text) != shared.as_scalar().map(|s| &s.text)
        || resolve_input(v) != resolve_input(shared)
}

/// `true` for a spec that names `metadata/annotations`: in Kustomize it
/// finds the map of build records there (even without `create`), which
/// replaced annotations that were not a mapping.
fn finds_records(spec: &FieldSpec) -> bool {
    spec.path == "metadata/annotations"
}

/// `true` when Kustomize would hold build records in the resource's
/// `metadata.annotations` at this point: it was renamed, moved to a
/// namespace, prefixed or suffixed, generated, or the top kustomization has
/// `buildMetadata`.
fn has_records(r: &Resource, env: &Env<'_>) -> bool {
    env.build_records
        || !r.meta.previous.is_empty()
        || !r.meta.prefixes.is_empty()
        || !r.meta.suffixes.is_empty()
        || r.meta.needs_hash
        || is_generated_anew(r)
}

/// `true` for a resource a generator made that did not merge into or
/// replace an existing one (which keeps the existing one's records).
fn is_generated_anew(r: &Resource) -> bool {
    matches!(
        r.meta.origin.as_deref().map(Origin::local),
        Some(Origin::Configured { .. })
    ) && !matches!(r.meta.behavior, Behavior::Merge | Behavior::Replace)
}

/// Gives the resource the (empty) annotations map its records would be in,
/// in place of a missing, null or other value; left empty, it disappears
/// on output.
fn ensure_annotations(r: &mut Resource) {
    if let Some(metadata) = r.node.get_mut("metadata").filter(|m| m.as_map().is_some()) {
        if metadata
            .get("annotations")
            .is_none_or(|a| a.as_map().is_none())
        {
            metadata.set("annotations", Node::map());
        }
    }
}

/// Sets the pairs in the map `node`; for each pair the map did not hold,
/// marks the spec's bit `shares` (if it may share) in `fresh` and counts
/// the map.
fn set_entries(
    node: &mut Node,
    pairs: &[(String, String)],
    shares: Option<u128>,
    fresh: &mut [(u128, u32)],
) -> OpResult<()> {
    if node.is_null() {
        *node = Node::map();
    }
    let kind = match node.value {
        Value::Map(_) => "MappingNode",
        Value::Seq(_) => "SequenceNode",
        Value::Scalar(_) => "ScalarNode",
    };
    let Some(map) = node.as_map_mut() else {
        return Err(OpError::new(format!(
            "wrong node kind: expected MappingNode but got {kind}"
        )));
    };
    let mut new = 0;
    for ((k, _), f) in pairs.iter().zip(fresh.iter_mut()) {
        if !map.iter().any(|(e, _)| e.key_str() == Some(k)) {
            new += 1;
            if let Some(bit) = shares {
                f.0 |= bit;
                f.1 += 1;
            }
        }
    }
    // Room for exactly the new keys (pushing would double the list).
    map.reserve_exact(new);
    for (k, v) in pairs {
        node.set(k, Node::string(v.as_str()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resmap(text: &str) -> ResMap {
        let mut m = ResMap::new();
        for d in krusty_yaml::parse_stream(text).unwrap() {
            m.append(Resource::from_node(d.root.unwrap()).unwrap())
                .unwrap();
        }
        m
    }

    #[test]
    fn labels_reach_selectors_only_where_specs_say() {
        let mut m = resmap(
            "apiVersion: v1\nkind: Service\nmetadata:\n  name: s\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n",
        );
        let op = SetMapEntries {
            pairs: vec![("app".into(), "true".into())],
            specs: crate::config::TransformerConfig::defaults(crate::KustomizeVersion::default())
                .common_labels
                .clone(),
        };
        op.apply(&mut m, &Env::detached()).unwrap();
        let out: Vec<String> = m
            .iter()
            .map(|r| krusty_yaml::to_kustomize_yaml(&r.node).unwrap())
            .collect();
        assert_eq!(
            out[0],
            "apiVersion: v1\nkind: Service\nmetadata:\n  labels:\n    app: \"true\"\n  name: s\nspec:\n  selector:\n    app: \"true\"\n"
        );
        assert_eq!(
            out[1],
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  labels:\n    app: \"true\"\n  name: c\n"
        );
    }

    fn label_at<'a>(r: &'a Resource, path: &[&str]) -> Option<&'a str> {
        r.node.get_path(path).and_then(Node::as_str)
    }

    #[test]
    fn a_shared_value_changed_in_one_place_changes_everywhere() {
        let mut m =
            resmap("apiVersion: v1\nkind: Service\nmetadata:\n  name: s\n  labels:\n    keep: k\n");
        let common = SetMapEntries {
            pairs: vec![("app".into(), "web".into()), ("keep".into(), "x".into())],
            specs: crate::config::TransformerConfig::defaults(crate::KustomizeVersion::default())
                .common_labels
                .clone(),
        };
        common.apply(&mut m, &Env::detached()).unwrap();
        // `app` was new in both maps; `keep` existed in metadata.labels.
        assert_eq!(m.at(0).meta.shared.len(), 1);
        let r = &mut m.resources_mut()[0];
        r.node
            .get_mut("spec")
            .and_then(|s| s.get_mut("selector"))
            .unwrap()
            .set("app", Node::string("api"));
        reconcile_shared(r);
        assert_eq!(label_at(r, &["metadata", "labels", "app"]), Some("api"));
        // A removed copy leaves one: nothing is shared any more.
        r.node.get_mut("spec").unwrap().remove("selector");
        reconcile_shared(r);
        assert!(r.meta.shared.is_empty());
    }

    #[test]
    fn replaced_list_items_stop_sharing_after_a_merge() {
        let mut m = resmap(
            "apiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: s\nspec:\n  volumeClaimTemplates:\n  - metadata:\n      name: a\n",
        );
        let common = SetMapEntries {
            pairs: vec![("app".into(), "web".into())],
            specs: crate::config::TransformerConfig::defaults(crate::KustomizeVersion::default())
                .common_labels
                .clone(),
        };
        common.apply(&mut m, &Env::detached()).unwrap();
        let r = &mut m.resources_mut()[0];
        let item = r
            .node
            .get_path(&["spec", "volumeClaimTemplates"])
            .and_then(Node::as_seq)
            .map(|items| items[0].clone());
        let mut item = item.unwrap();
        item.entry_map("metadata")
            .and_then(|m| m.entry_map("labels"))
            .unwrap()
            .set("app", Node::string("vct"));
        r.node
            .get_mut("spec")
            .unwrap()
            .set("volumeClaimTemplates", Node::seq_of([item]));
        reconcile_shared_after_merge(r, None);
        assert_eq!(label_at(r, &["metadata", "labels", "app"]), Some("web"));
        assert_eq!(
            label_at(r, &["spec", "template", "metadata", "labels", "app"]),
            Some("web")
        );
    }
}
