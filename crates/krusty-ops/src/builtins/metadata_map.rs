//! LabelTransformer and AnnotationsTransformer: add key/value pairs to the
//! mappings that field specs name (labels, selectors, template metadata).

use krusty_resource::{Behavior, Origin, ResMap, Resource};
use krusty_yaml::{Node, Value};

use crate::env::Env;
use crate::error::{OpError, OpResult};
use crate::fieldspec::{apply, CreateKind, FieldSpec, KindIndex};
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
    /// Applies the pairs.
    pub fn apply(&self, resources: &mut ResMap, env: &Env<'_>) -> OpResult<()> {
        if self.pairs.is_empty() {
            return Ok(());
        }
        let index = KindIndex::new(self.specs.iter().map(|s| s.gvk.kind.as_str()));
        parallel::try_each(resources.resources_mut(), |r| {
            let gvk = r.gvk();
            for spec in index.positions(&gvk.kind).map(|i| &self.specs[i]) {
                if finds_records(spec) && spec.selects(&gvk) && has_records(r, env) {
                    ensure_annotations(r);
                }
                apply(
                    &mut r.node,
                    &gvk,
                    spec,
                    CreateKind::Map,
                    &mut |n: &mut Node| set_entries(n, &self.pairs),
                )
                .map_err(|e| {
                    let id = r.id();
                    e.context(format!("considering field '{}' of object {id}", spec.path))
                })?;
            }
            Ok(())
        })
    }
}

/// `true` for a spec that names `metadata/annotations` without `create`:
/// in Kustomize it still finds that map on a resource holding build
/// records there.
fn finds_records(spec: &FieldSpec) -> bool {
    !spec.create && spec.path == "metadata/annotations"
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
    matches!(r.meta.origin.as_deref(), Some(Origin::Configured { .. }))
        && !matches!(r.meta.behavior, Behavior::Merge | Behavior::Replace)
}

/// Gives the resource the (empty) annotations map its records would be in;
/// left empty, it disappears on output.
fn ensure_annotations(r: &mut Resource) {
    if let Some(metadata) = r.node.get_mut("metadata").filter(|m| m.as_map().is_some()) {
        if metadata.get("annotations").is_none_or(Node::is_null) {
            metadata.set("annotations", Node::map());
        }
    }
}

fn set_entries(node: &mut Node, pairs: &[(String, String)]) -> OpResult<()> {
    if node.is_null() {
        *node = Node::map();
    }
    if !matches!(node.value, Value::Map(_)) {
        return Err(OpError::new(
            "wrong node kind: expected a mapping to add entries to",
        ));
    }
    if let Some(map) = node.as_map_mut() {
        // Room for exactly the new keys (pushing would double the list).
        let new = pairs
            .iter()
            .filter(|(k, _)| !map.iter().any(|(e, _)| e.key_str() == Some(k)))
            .count();
        map.reserve_exact(new);
    }
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
            specs: crate::config::TransformerConfig::defaults()
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
}
