//! Small helpers for reading and editing resource nodes in place. Edits
//! keep everything else of the node (key order, comments, styles).

use krusty_yaml::Node;

/// The string at a path of mapping keys, or `""` when it is missing or
/// not a scalar.
pub fn get_str<'a>(node: &'a Node, path: &[&str]) -> &'a str {
    node.get_path(path).and_then(Node::as_str).unwrap_or("")
}

/// Sets the value at a path of mapping keys, creating the mappings on
/// the way (a non-mapping in the way is replaced by a mapping).
pub fn set_path(node: &mut Node, path: &[&str], value: Node) {
    let Some((last, parents)) = path.split_last() else {
        *node = value;
        return;
    };
    let mut at = node;
    for key in parents {
        match at.entry_map(key) {
            Some(next) => at = next,
            None => return,
        }
    }
    at.set(last, value);
}

/// The value of annotation `key`.
pub fn annotation<'a>(item: &'a Node, key: &str) -> Option<&'a str> {
    item.get_path(&["metadata", "annotations", key])
        .and_then(Node::as_str)
}

/// Sets annotation `key` to the string `value`.
pub fn set_annotation(item: &mut Node, key: &str, value: &str) {
    set_path(item, &["metadata", "annotations", key], Node::string(value));
}

/// Removes annotation `key`, and the annotations mapping if it becomes
/// empty. Returns the removed value.
pub fn remove_annotation(item: &mut Node, key: &str) -> Option<Node> {
    let meta = item.get_mut("metadata")?;
    let annotations = meta.get_mut("annotations")?;
    let removed = annotations.remove(key)?;
    if annotations.as_map().is_some_and(|m| m.is_empty()) {
        meta.remove("annotations");
    }
    Some(removed)
}

/// Sets label `key` to the string `value`.
pub fn set_label(item: &mut Node, key: &str, value: &str) {
    set_path(item, &["metadata", "labels", key], Node::string(value));
}

/// A new resource node with `apiVersion`, `kind` and `metadata.name`.
pub fn new_resource(api_version: &str, kind: &str, name: &str) -> Node {
    let mut n = Node::map();
    n.set("apiVersion", Node::string(api_version));
    n.set("kind", Node::string(kind));
    set_path(&mut n, &["metadata", "name"], Node::string(name));
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Node {
        krusty_yaml::parse_stream(text).unwrap()[0]
            .root
            .clone()
            .unwrap()
    }

    #[test]
    fn set_path_creates_and_keeps_order_and_comments() {
        let mut n = parse("kind: A # the kind\nmetadata:\n  name: x\n");
        set_path(&mut n, &["metadata", "labels", "app"], Node::string("web"));
        set_annotation(&mut n, "a", "1");
        let out = krusty_yaml::to_yaml_preserving(&n).unwrap();
        assert_eq!(
            out,
            "kind: A # the kind\nmetadata:\n  name: x\n  labels:\n    app: web\n  annotations:\n    a: \"1\"\n"
        );
        assert_eq!(annotation(&n, "a"), Some("1"));
        assert!(remove_annotation(&mut n, "a").is_some());
        assert!(n.get_path(&["metadata", "annotations"]).is_none());
    }
}
