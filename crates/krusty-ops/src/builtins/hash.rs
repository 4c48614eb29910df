//! HashTransformer: appends a content hash to the names of generated
//! ConfigMaps and Secrets, so a change of content rolls out a new name.

use krusty_resource::{ResMap, Resource};
use krusty_yaml::{to_go_json, write_go_json_string, Node};
use sha2::{Digest, Sha256};

use crate::error::OpResult;
use crate::parallel;

/// Renames every resource marked as needing a hash suffix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AddHashSuffixes;

impl AddHashSuffixes {
    /// Applies the suffixes.
    pub fn apply(&self, resources: &mut ResMap) -> OpResult<()> {
        parallel::map_each(resources.resources_mut(), |r| {
            if r.meta.needs_hash {
                let hash = content_hash(r);
                r.store_previous_id();
                let name = format!("{}-{hash}", r.name());
                r.set_name(&name);
            }
        });
        Ok(())
    }
}

/// The 10-character hash Kustomize appends to a resource's name.
pub fn content_hash(r: &Resource) -> String {
    encode_hash(&hash_input(r))
}

/// The JSON text that is hashed: for ConfigMaps and Secrets only the kind,
/// type and data, plus a `name` that Kustomize always leaves empty (its
/// lookup of `metadata/name` misses, so names never change the hash); for
/// anything else the whole object.
fn hash_input(r: &Resource) -> String {
    let data_or_empty = |field: &str| match r.node.get(field) {
        Some(n) if n.as_map().is_some() => to_go_json(n),
        _ => "\"\"".to_string(),
    };
    let map_only = |field: &str| r.node.get(field).filter(|n| n.as_map().is_some());
    let mut fields: Vec<(&str, String)> = Vec::new();
    let string = |s: &str| {
        let mut out = String::new();
        write_go_json_string(s, &mut out);
        out
    };
    match r.kind() {
        "ConfigMap" => {
            fields.push(("data", data_or_empty("data")));
            if let Some(b) = map_only("binaryData") {
                fields.push(("binaryData", to_go_json(b)));
            }
        }
        "Secret" => {
            fields.push(("data", data_or_empty("data")));
            if let Some(s) = map_only("stringData") {
                fields.push(("stringData", to_go_json(s)));
            }
            let t = r
                .node
                .get("type")
                .and_then(Node::as_str)
                .unwrap_or_default();
            fields.push(("type", string(t)));
        }
        _ => return to_go_json(&r.node),
    }
    fields.push(("kind", string(r.kind())));
    fields.push(("name", string("")));
    fields.sort_by(|a, b| a.0.cmp(b.0));
    let body: Vec<String> = fields
        .into_iter()
        .map(|(k, v)| format!("\"{k}\":{v}"))
        .collect();
    format!("{{{}}}", body.join(","))
}

/// SHA-256, first 10 hex digits, with look-alike characters replaced.
fn encode_hash(text: &str) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let digest = Sha256::digest(text.as_bytes());
    digest[..5]
        .iter()
        .flat_map(|b| [DIGITS[usize::from(b >> 4)], DIGITS[usize::from(b & 0xf)]])
        .map(|c| match c {
            b'0' => 'g',
            b'1' => 'h',
            b'3' => 'k',
            b'a' => 'm',
            b'e' => 't',
            c => char::from(c),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_vectors() {
        assert_eq!(
            encode_hash(r#"{"data":"","kind":"ConfigMap","name":""}"#),
            "6ct58987ht"
        );
        assert_eq!(
            encode_hash(r#"{"data":{"one":""},"kind":"ConfigMap","name":""}"#),
            "9g67k2htb6"
        );
        assert_eq!(
            encode_hash(
                r#"{"binaryData":{"two":""},"data":{"one":""},"kind":"ConfigMap","name":""}"#
            ),
            "698h7c7t9m"
        );
    }

    #[test]
    fn config_map_input_has_kind_name_and_data() {
        let docs = krusty_yaml::parse_stream(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  labels: {a: b}\ndata:\n  one: \"\"\n",
        )
        .unwrap();
        let r = Resource::from_node(docs[0].root.clone().unwrap()).unwrap();
        assert_eq!(
            hash_input(&r),
            r#"{"data":{"one":""},"kind":"ConfigMap","name":""}"#
        );
    }
}
