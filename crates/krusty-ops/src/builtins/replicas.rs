//! ReplicaCountTransformer: sets the replica count of named workloads.

use std::collections::HashMap;

use krusty_resource::{ResMap, Resource};
use krusty_yaml::{Node, Pos};

use crate::error::{OpError, OpResult};
use crate::fieldspec::{apply, CreateKind, FieldSpec};
use crate::parallel;

/// Sets `count` replicas on resources named `name` (current or earlier name).
#[derive(Debug, Clone, PartialEq)]
pub struct SetReplicas {
    /// Resource name.
    pub name: String,
    /// Replica count.
    pub count: i64,
    /// Which kinds and fields.
    pub specs: Vec<FieldSpec>,
    /// Where the setting is written in its kustomization (nowhere when
    /// unknown), for messages.
    pub written_at: Pos,
}

impl SetReplicas {
    /// Applies the count; it is an error if no resource matches.
    pub fn apply(&self, resources: &mut ResMap) -> OpResult<()> {
        apply_all(std::slice::from_ref(self), resources)
    }

    /// Kustomize's error, listing the kinds as it sorts field specs: by
    /// the legacy order of their kinds, then by their text.
    fn not_found(&self) -> OpError {
        let order = krusty_resource::LegacyOrder::default();
        let mut gvks: Vec<(i64, String)> = self
            .specs
            .iter()
            .map(|s| (order.rank(&s.gvk.kind), s.gvk.to_string()))
            .collect();
        gvks.sort();
        let gvks: Vec<String> = gvks.into_iter().map(|(_, text)| text).collect();
        OpError::new(format!(
            "resource with name {} does not match a config with the following GVK [{}]",
            self.name,
            gvks.join(" ")
        ))
        .located(None, self.written_at)
    }
}

/// Applies several replica settings in one pass over the resources (in
/// parallel; each resource is looked up by name instead of scanning per
/// setting); the result and the errors are those of applying them one
/// after another.
pub fn apply_all(ops: &[SetReplicas], resources: &mut ResMap) -> OpResult<()> {
    let mut by_name: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, op) in ops.iter().enumerate() {
        by_name.entry(op.name.as_str()).or_default().push(i);
    }
    let outcomes = parallel::map_each(resources.resources_mut(), |r| {
        apply_matching(ops, &by_name, r)
    });
    let mut found = vec![false; ops.len()];
    for outcome in outcomes {
        for i in outcome? {
            found[i] = true;
        }
    }
    match found.iter().position(|f| !f) {
        Some(i) => Err(ops[i].not_found()),
        None => Ok(()),
    }
}

/// Applies to `r` the settings named by its current or an earlier name;
/// which of them found a field to set.
fn apply_matching(
    ops: &[SetReplicas],
    by_name: &HashMap<&str, Vec<usize>>,
    r: &mut Resource,
) -> OpResult<Vec<usize>> {
    let mut hits: Vec<usize> = std::iter::once(r.name())
        .chain(r.meta.previous.iter().map(|p| p.name.as_str()))
        .filter_map(|n| by_name.get(n))
        .flatten()
        .copied()
        .collect();
    if hits.is_empty() {
        return Ok(hits);
    }
    hits.sort_unstable();
    hits.dedup();
    let gvk = r.gvk();
    let mut found = Vec::new();
    for i in hits {
        let op = &ops[i];
        for spec in &op.specs {
            if !r.any_id(|id| id.name == op.name && id.gvk.is_selected_by(&spec.gvk)) {
                continue;
            }
            found.push(i);
            // A list or map where the count goes is an error naming the
            // field and the object, as in Kustomize.
            let mut reached_a_collection = false;
            apply(
                &mut r.node,
                &gvk,
                spec,
                CreateKind::Scalar,
                &mut |n: &mut Node| {
                    if n.as_map().is_some() || n.as_seq().is_some() {
                        reached_a_collection = true;
                        return Err(crate::path::wrong_kind("ScalarNode", n));
                    }
                    n.replace_keeping_pos(Node::plain(op.count.to_string()));
                    Ok(())
                },
            )
            .map_err(|e| match reached_a_collection {
                true => e.context(format!(
                    "considering field '{}' of object {}",
                    spec.path,
                    r.id()
                )),
                false => e,
            })?;
        }
    }
    Ok(found)
}
