//! Adding generated resources to a map: create, or merge into / replace an
//! existing resource of the same id, per the generator's `behavior`.

use krusty_resource::{Behavior, ResMap, Resource};
use krusty_yaml::Node;

use crate::error::{OpError, OpResult};
use crate::version::KustomizeVersion;

/// Adds `generated` to `resources` according to its behavior; a failure
/// is worded as Kustomize release `version` words it.
pub fn absorb(
    resources: &mut ResMap,
    mut generated: Resource,
    version: KustomizeVersion,
) -> OpResult<()> {
    let id = generated.id();
    let matches: Vec<usize> = resources
        .iter()
        .enumerate()
        // The name test is cheap and rules out nearly every resource
        // before ids are built.
        .filter(|(_, r)| r.has_had_name(&id.name) && r.any_id(|other| other.equals(&id)))
        .map(|(i, _)| i)
        .collect();
    match matches.as_slice() {
        [] => match generated.meta.behavior {
            Behavior::Merge | Behavior::Replace => Err(OpError::new(format!(
                "id {} does not exist; cannot merge or replace",
                id.go_debug()
            ))),
            _ => resources.append(generated).map_err(OpError::from),
        },
        [index] => {
            let old = resources
                .iter()
                .nth(*index)
                .cloned()
                .ok_or_else(|| OpError::new("id lookup failure"))?;
            match generated.meta.behavior {
                Behavior::Replace => {
                    let origin = generated.meta.origin.take();
                    copy_metadata_from(&mut generated, &old);
                    generated.meta.origin = origin;
                }
                Behavior::Merge => {
                    copy_metadata_from(&mut generated, &old);
                    merge_map_field(&mut generated, &old, "data");
                    merge_map_field(&mut generated, &old, "binaryData");
                }
                Behavior::Create if version >= KustomizeVersion::V5_8_1 => {
                    return Err(exists(&id, "create"))
                }
                _ if version >= KustomizeVersion::V5_8_1 => return Err(exists(&id, "unspecified")),
                _ => {
                    return Err(OpError::new(format!(
                        "id {} exists; behavior must be merge or replace",
                        id.go_debug()
                    )))
                }
            }
            resources.replace_at(*index, generated);
            Ok(())
        }
        many => {
            let ids: Vec<String> = many
                .iter()
                .filter_map(|&i| resources.iter().nth(i).map(|r| r.id().to_string()))
                .collect();
            Err(OpError::new(format!(
                "found multiple objects [{}] that could accept merge of {id}",
                ids.join(" ")
            )))
        }
    }
}

/// Kustomize v5.8.1's error for a generated resource whose id exists and
/// whose behavior (`create` or `unspecified`) is neither merge nor replace.
fn exists(id: &krusty_resource::ResId, behavior: &str) -> OpError {
    OpError::new(format!(
        "id {} exists; can not use behavior: '{behavior}', behavior must be merge or replace",
        id.go_debug()
    ))
}

/// Kustomize's `CopyMergeMetaDataFieldsFrom`: labels and annotations are
/// merged (the new ones win), name and namespace and build history come from
/// the existing resource, and the hash suffix survives only if both want it.
fn copy_metadata_from(new: &mut Resource, old: &Resource) {
    for field in ["labels", "annotations"] {
        let merged = merged_string_map(
            old.node.get_path(&["metadata", field]),
            new.node.get_path(&["metadata", field]),
        );
        if let Some(meta) = new.node.entry_map("metadata") {
            match merged {
                Some(m) => meta.set(field, m),
                None => {
                    meta.remove(field);
                }
            }
        }
    }
    new.set_name(old.name());
    new.set_namespace(old.namespace());
    let needs_hash = new.meta.needs_hash && old.meta.needs_hash;
    new.meta = old.meta.clone();
    new.meta.needs_hash = needs_hash;
}

/// `field` becomes the old map overlaid with the new one; an empty result
/// removes it (a merged Secret with no data has no `data: {}`).
fn merge_map_field(new: &mut Resource, old: &Resource, field: &str) {
    match merged_string_map(old.node.get(field), new.node.get(field)) {
        Some(merged) => new.node.set(field, merged),
        None => {
            new.node.remove(field);
        }
    }
}

/// The two maps overlaid, as Kustomize merges them: through Go's
/// `map[string]string`, so a value that is not a string becomes its text
/// as a string (`8079` becomes `"8079"`), and a mapping or list becomes
/// `""`.
fn merged_string_map(base: Option<&Node>, over: Option<&Node>) -> Option<Node> {
    let mut out = Node::map();
    let mut any = false;
    for src in [base, over].into_iter().flatten() {
        if let Some(entries) = src.as_map() {
            for (k, v) in entries {
                out.set(k.key_str().unwrap_or_default(), as_string(v));
                any = true;
            }
        }
    }
    any.then_some(out)
}

/// `value` as a Go string map holds it: a string as it is, another scalar
/// as a string of its text, a mapping or list as `""`.
fn as_string(value: &Node) -> Node {
    let string = matches!(
        krusty_yaml::resolve_input(value),
        krusty_yaml::Resolved::Str(_) | krusty_yaml::Resolved::Owned(_)
    );
    match value.as_scalar() {
        Some(_) if string && !value.is_null() => value.clone(),
        Some(s) => Node::string(s.text.as_str()),
        None => Node::string(""),
    }
}
