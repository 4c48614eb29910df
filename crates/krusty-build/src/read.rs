//! Turning resource files into resources.

use std::path::Path;

use krusty_resource::Resource;
use krusty_yaml::Node;

use crate::error::{BuildError, BuildResult};

/// Parses a file of YAML or JSON documents into resources, expanding
/// `List` documents into their items and skipping empty documents.
pub fn resources_from_text(text: &str, path: &Path) -> BuildResult<Vec<Resource>> {
    let docs = krusty_yaml::parse_stream(text).map_err(|e| {
        BuildError::new(format!(
            "MalformedYAMLError: {}:{}:{}: {}",
            path.display(),
            e.pos.line,
            e.pos.col,
            e.message
        ))
    })?;
    let mut out = Vec::with_capacity(docs.len());
    for doc in docs {
        let Some(root) = doc.root else { continue };
        if root.is_null() {
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
    let r = Resource::from_node(root).map_err(|e| at(e.0))?;
    out.push(r);
    Ok(())
}
