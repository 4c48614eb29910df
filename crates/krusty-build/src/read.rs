//! Turning resource files into resources.

use std::path::Path;

use krusty_resource::Resource;
use krusty_yaml::Node;

use crate::error::{BuildError, BuildResult};

/// Parses a file of YAML or JSON documents into resources, expanding
/// `List` documents into their items and skipping empty documents.
pub fn resources_from_text(text: &str, path: &Path) -> BuildResult<Vec<Resource>> {
    let docs = krusty_yaml::parse_stream(text).map_err(|e| BuildError::MalformedYaml {
        path: path.to_path_buf(),
        source: Box::new(e),
    })?;
    let mut out = Vec::with_capacity(docs.len());
    for doc in docs {
        let Some(root) = doc.root else { continue };
        // Kustomize's reader skips empty documents: null, `{}` and `[]`.
        let empty_collection = root.as_map().is_some_and(|m| m.is_empty())
            || root.as_seq().is_some_and(|s| s.is_empty());
        if root.is_null() || empty_collection {
            continue;
        }
        push_resource(root, path, &mut out)?;
    }
    Ok(out)
}

fn push_resource(root: Node, path: &Path, out: &mut Vec<Resource>) -> BuildResult<()> {
    let line = root.pos().line;
    let at = |msg: String| BuildError::new(format!("{}:{line}: {msg}", path.display()));
    if root.as_map().is_none() {
        return Err(at(
            "missing Resource metadata (a resource must be a mapping)".into(),
        ));
    }
    let kind = root.get("kind").and_then(Node::as_str).unwrap_or("");
    let is_list = kind.ends_with("List") && root.get("items").is_some_and(|i| i.as_seq().is_some());
    if is_list {
        let mut root = root;
        if let Some(krusty_yaml::Value::Seq(items)) = root.remove("items").map(|n| n.value) {
            for item in items {
                push_resource(item, path, out)?;
            }
        }
        return Ok(());
    }
    if kind.is_empty() {
        return Err(at("missing kind in object".into()));
    }
    let name = root.get_path(&["metadata", "name"]).and_then(Node::as_str);
    if name.is_none_or(str::is_empty) {
        return Err(at(format!(
            "missing metadata.name in object of kind {kind}"
        )));
    }
    let mut root = root;
    let needs_hash = krusty_resource::build_records::strip(&mut root);
    let unusable = take_unusable_annotations(&mut root);
    let mut r = Resource::from_node(root).map_err(|e| at(e.to_string()))?;
    r.meta.needs_hash |= needs_hash;
    if let (Some(annotations), Some(metadata)) = (unusable, r.node.get_mut("metadata")) {
        metadata.set("annotations", annotations);
    }
    out.push(r);
    Ok(())
}

/// A `metadata.annotations` that is neither a mapping nor null (a scalar,
/// a list), taken out. Kustomize keeps it until it records something in
/// that map, which then replaces it; a transformer meeting it before
/// fails. It is never printed.
fn take_unusable_annotations(root: &mut Node) -> Option<Node> {
    let metadata = root.get_mut("metadata")?;
    let annotations = metadata.get("annotations")?;
    if annotations.as_map().is_some() || annotations.is_null() {
        return None;
    }
    metadata.remove("annotations")
}
