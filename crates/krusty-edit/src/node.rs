//! Small helpers over YAML nodes for the edit commands.

use krusty_yaml::keyorder::natural_less;
use krusty_yaml::{Node, ScalarStyle, Value};

/// The text of the string field `key` of a mapping node ("" if absent or
/// not text).
pub fn text<'a>(node: &'a Node, key: &str) -> &'a str {
    node.get(key).and_then(Node::as_str).unwrap_or("")
}

/// The items of a sequence node (none for anything else).
pub fn items(node: Option<&Node>) -> Vec<Node> {
    match node.map(|n| &n.value) {
        Some(Value::Seq(items)) => items.iter().cloned().collect(),
        _ => Vec::new(),
    }
}

/// The texts of a sequence of strings (other items skipped).
pub fn strings(node: Option<&Node>) -> Vec<String> {
    items(node)
        .iter()
        .filter_map(|n| n.as_str().map(str::to_string))
        .collect()
}

/// A mapping of the non-empty `(key, text)` pairs, in the given order.
pub fn map_of_texts<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Node {
    Node::map_of(
        pairs
            .into_iter()
            .filter(|(_, v)| !v.is_empty())
            .map(|(k, v)| (Node::plain(k), Node::string(v))),
    )
}

/// A string scalar `text` to replace `old` with, keeping what can be kept
/// of how `old` was written: its quotes (single or double) and the comment
/// after it. A plain `old` gives a new scalar, quoted only where needed.
pub fn replacing(old: Option<&Node>, text: &str) -> Node {
    let Some(old) = old.filter(|o| o.as_scalar().is_some()) else {
        return Node::string(text);
    };
    let mut new = match old.style() {
        ScalarStyle::SingleQuoted | ScalarStyle::DoubleQuoted => {
            let mut n = Node::scalar(text, old.style());
            n.set_pos(old.pos());
            n
        }
        _ => Node::string(text),
    };
    if let Some(line) = old.extras.as_ref().and_then(|e| e.line.clone()) {
        new.extras.get_or_insert_with(Default::default).line = Some(line);
    }
    new
}

/// Sets `key` (a scalar node) in a mapping node: in place when the mapping
/// has it, else before the first key that sorts after it in go-yaml's
/// order. Kustomize's writer sorts every mapping's keys that way, so a
/// mapping it wrote comes out as it writes it; the entries there keep
/// their order.
pub fn put_sorted(map: &mut Node, key: Node, value: Node) {
    let Some(name) = key.key_str().map(str::to_string) else {
        return;
    };
    if let Some(slot) = map.get_mut(&name) {
        *slot = value;
        return;
    }
    if let Some(entries) = map.as_map_mut() {
        let at = entries
            .iter()
            .position(|(k, _)| k.key_str().is_some_and(|k| natural_less(&name, k)))
            .unwrap_or(entries.len());
        entries.insert(at, (key, value));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(map: &Node) -> Vec<String> {
        map.as_map()
            .map(|m| {
                m.iter()
                    .filter_map(|(k, _)| k.key_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    }

    #[test]
    fn new_keys_go_where_go_yaml_sorts_them() {
        let mut map = Node::map();
        for key in ["tier", "b10", "app", "b9"] {
            put_sorted(&mut map, Node::string(key), Node::string("x"));
        }
        assert_eq!(keys(&map), ["app", "b9", "b10", "tier"]);
    }

    #[test]
    fn entries_there_keep_their_order() {
        let mut map = Node::map_of(["zone", "app"].map(|k| (Node::plain(k), Node::plain("1"))));
        put_sorted(&mut map, Node::string("team"), Node::string("x"));
        put_sorted(&mut map, Node::string("app"), Node::string("2"));
        assert_eq!(keys(&map), ["team", "zone", "app"]);
        assert_eq!(map.get("app").and_then(Node::as_str), Some("2"));
    }
}
