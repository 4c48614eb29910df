//! Dotted field paths as replacements and vars write them:
//! `spec.template.spec.containers.[name=web].image`, `args.0`,
//! `metadata.annotations.[example.com/key]`, `spec.ports[0].port`.

use krusty_yaml::{Node, Value};

use crate::error::{OpError, OpResult};

/// Splits a path at dots outside square brackets and not escaped by a
/// backslash. A bracketed part without
/// `=` is a map key that may hold dots (`[app.kubernetes.io/name]`): it
/// loses its brackets, as Kustomize's path splitter drops them; a list
/// selector (`[name=a.b]`) keeps them.
pub fn split(path: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut current = String::new();
    let mut depth = 0usize;
    let mut chars = path.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            // `\.` is a dot inside a name (`app\.kubernetes\.io/name`).
            '\\' if chars.peek() == Some(&'.') => {
                current.push('.');
                chars.next();
            }
            '[' => {
                depth += 1;
                current.push(c);
            }
            ']' => {
                depth = depth.saturating_sub(1);
                current.push(c);
            }
            '.' if depth == 0 => parts.push(std::mem::take(&mut current)),
            _ => current.push(c),
        }
    }
    parts.push(current);
    for part in &mut parts {
        if let Some(key) = part.strip_prefix('[').and_then(|p| p.strip_suffix(']')) {
            if !key.contains('=') {
                *part = key.to_string();
            }
        }
    }
    parts
}

/// Splits a replacement's field path as Kustomize does: at dots, a dot
/// after a backslash staying in its part (`a\.b`), and a leading dot
/// ignored. A bracketed part that spans dots is one part: it keeps its
/// brackets when it holds `=` (`[name=a.b]`, a list selector) and loses
/// them otherwise (`[app.kubernetes.io/name]`, a map key). A bracketed part
/// without dots keeps its brackets either way (`[key]` is then a list
/// selector without `=`, an error where it is used).
pub fn split_replacement(path: &str) -> Vec<String> {
    let mut raw_parts: Vec<&str> = path.split('.').collect();
    if raw_parts.len() > 1 && raw_parts[0].is_empty() {
        raw_parts.remove(0);
    }
    let mut joined: Vec<String> = Vec::with_capacity(raw_parts.len());
    for part in raw_parts {
        match joined.last_mut() {
            Some(last) if last.ends_with('\\') => {
                last.pop();
                last.push('.');
                last.push_str(part);
            }
            _ => joined.push(part.to_string()),
        }
    }
    let mut parts = Vec::with_capacity(joined.len());
    let mut iter = joined.into_iter();
    while let Some(part) = iter.next() {
        if !part.starts_with('[') || part.ends_with(']') {
            parts.push(part);
            continue;
        }
        let mut bracketed = part;
        for next in iter.by_ref() {
            bracketed.push('.');
            bracketed.push_str(&next);
            if next.ends_with(']') {
                break;
            }
        }
        if bracketed.contains('=') {
            parts.push(bracketed);
        } else {
            parts.push(bracketed.trim_matches(|c| c == '[' || c == ']').to_string());
        }
    }
    parts
}

/// Whether a path part is bracketed (`[...]`): a list selector.
pub fn is_bracketed(part: &str) -> bool {
    part.starts_with('[') && part.ends_with(']')
}

/// Kustomize's error for a bracketed part without `=`.
pub fn selector_without_equals() -> OpError {
    OpError::new("list path element must contain fieldName=fieldValue for element to match")
}

/// Splits a vars-style path, where list indices are written `ports[0]`
/// (map keys holding dots as in [`split`]: `[app.kubernetes.io/name]`,
/// `app\.kubernetes\.io/name`).
pub fn split_with_indices(path: &str) -> Vec<String> {
    let mut parts = Vec::new();
    for part in split(path) {
        match part.find('[') {
            Some(open) if part.ends_with(']') && open > 0 => {
                parts.push(part[..open].to_string());
                parts.push(part[open + 1..part.len() - 1].to_string());
            }
            _ => parts.push(part),
        }
    }
    parts
}

/// A `[key=value]` part: the key (empty for a list of scalars) and value.
pub fn list_selector(part: &str) -> Option<(&str, &str)> {
    part.strip_prefix('[')?.strip_suffix(']')?.split_once('=')
}

/// The text a node is compared by: a scalar's value, empty for collections.
pub fn raw(node: &Node) -> &str {
    match &node.value {
        Value::Scalar(s) => &s.text,
        _ => "",
    }
}

/// The YAML node kind's name, as Kustomize's messages print it.
pub fn kind_name(node: &Node) -> &'static str {
    match node.value {
        Value::Scalar(_) => "ScalarNode",
        Value::Map(_) => "MappingNode",
        Value::Seq(_) => "SequenceNode",
    }
}

/// Kustomize's error for a node of the wrong kind (`expected` is a kind
/// name such as `MappingNode`), quoting the node.
pub fn wrong_kind(expected: &str, node: &Node) -> OpError {
    OpError::new(format!(
        "wrong node kind: expected {expected} but got {}: node contents:\n{}",
        kind_name(node),
        krusty_yaml::to_kustomize_yaml(node)
            .unwrap_or_default()
            .trim_end()
    ))
}

/// Finds the node at `parts` (no wildcards, nothing created) as
/// Kustomize's path getter does: a field name, a list index (`-` for the
/// last), or `[key=value]` for the first match; parts are trimmed and
/// empty ones skipped. A null is missing (so is anything under it); a
/// field of a list or of a scalar, or an element of a map or of a scalar,
/// is an error (`wrong node kind`), as are `*` and a negative index.
pub fn lookup<'a>(node: &'a Node, parts: &[String]) -> OpResult<Option<&'a Node>> {
    Ok(locate(node, parts)?.and_then(|at| follow(node, &at)))
}

/// Where [`lookup`] finds a node: the position of each entry or element
/// on the way (see [`follow`] and [`follow_mut`]).
pub fn locate(node: &Node, parts: &[String]) -> OpResult<Option<Vec<usize>>> {
    let mut current = node;
    let mut at = Vec::new();
    for part in parts.iter().map(|p| p.trim()).filter(|p| !p.is_empty()) {
        let Some((i, next)) =
            lookup_step(current, part)?.and_then(|i| Some((i, child(current, i)?)))
        else {
            return Ok(None);
        };
        current = next;
        at.push(i);
    }
    Ok(Some(at))
}

/// The node at positions `at` (as [`locate`] gives them) under `node`.
pub fn follow<'a>(node: &'a Node, at: &[usize]) -> Option<&'a Node> {
    at.iter().try_fold(node, |n, &i| child(n, i))
}

/// The node at positions `at` (as [`locate`] gives them) under `node`,
/// mutably.
pub fn follow_mut<'a>(node: &'a mut Node, at: &[usize]) -> Option<&'a mut Node> {
    at.iter().try_fold(node, |n, &i| match &mut n.value {
        Value::Seq(items) => items.get_mut(i),
        Value::Map(entries) => entries.get_mut(i).map(|(_, v)| v),
        Value::Scalar(_) => None,
    })
}

/// Entry or element `i` of a collection.
fn child(node: &Node, i: usize) -> Option<&Node> {
    match &node.value {
        Value::Seq(items) => items.get(i),
        Value::Map(entries) => entries.get(i).map(|(_, v)| v),
        Value::Scalar(_) => None,
    }
}

/// One step of [`locate`]: the position of the entry or element `part`
/// names in `node`.
fn lookup_step(node: &Node, part: &str) -> OpResult<Option<usize>> {
    if let Ok(idx) = part.parse::<i64>() {
        if idx < 0 {
            return Err(OpError::new(format!(
                "array index {idx} cannot be negative"
            )));
        }
        let n = elements(node)?.len();
        return Ok((idx < n as i64).then_some(idx as usize));
    }
    if part == "-" {
        return Ok(elements(node)?.len().checked_sub(1));
    }
    if part == "*" {
        return Err(OpError::new("wildcard is not supported in PathGetter"));
    }
    if is_bracketed(part) {
        let Some((key, value)) = list_selector(part) else {
            return Err(selector_without_equals());
        };
        return Ok(elements(node)?.iter().position(|item| {
            if key.is_empty() {
                raw(item) == value
            } else {
                item.get(key).is_some_and(|f| raw(f) == value)
            }
        }));
    }
    if node.is_null() {
        return Ok(None);
    }
    let Some(entries) = node.as_map() else {
        return Err(wrong_kind("MappingNode", node));
    };
    Ok(entries.iter().position(|(k, _)| k.key_str() == Some(part)))
}

/// A list's elements (none for a null); an error for anything else.
fn elements(node: &Node) -> OpResult<&[Node]> {
    match &node.value {
        Value::Seq(items) => Ok(items),
        _ if node.is_null() => Ok(&[]),
        _ => Err(wrong_kind("SequenceNode", node)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_split_outside_brackets() {
        assert_eq!(
            split("spec.containers.[name=a.b].image"),
            ["spec", "containers", "[name=a.b]", "image"]
        );
        assert_eq!(
            split("metadata.labels.[app.kubernetes.io/version]"),
            ["metadata", "labels", "app.kubernetes.io/version"]
        );
        assert_eq!(
            split("metadata.labels.app\\.kubernetes\\.io/name"),
            ["metadata", "labels", "app.kubernetes.io/name"]
        );
        assert_eq!(
            split_with_indices("metadata.labels.[app.kubernetes.io/name]"),
            ["metadata", "labels", "app.kubernetes.io/name"]
        );
        assert_eq!(
            split_with_indices("spec.ports[0].port"),
            ["spec", "ports", "0", "port"]
        );
    }

    #[test]
    fn replacement_paths_split_as_kustomize_splits_them() {
        assert_eq!(
            split_replacement("spec.containers.[name=a.b].image"),
            ["spec", "containers", "[name=a.b]", "image"]
        );
        assert_eq!(
            split_replacement("metadata.labels.[app.kubernetes.io/version]"),
            ["metadata", "labels", "app.kubernetes.io/version"]
        );
        assert_eq!(split_replacement("data.[v]"), ["data", "[v]"]);
        assert_eq!(split_replacement(".a.b\\.c"), ["a", "b.c"]);
    }

    #[test]
    fn lookup_follows_fields_indices_and_selectors() {
        let doc =
            &krusty_yaml::parse_stream("a: {l: [{name: x, v: 1}, {name: y, v: 2}], s: [p, q]}")
                .unwrap()[0];
        let root = doc.root.as_ref().unwrap();
        let find = |p: &str| lookup(root, &split(p)).unwrap().map(|n| raw(n).to_string());
        assert_eq!(find("a.l.[name=y].v").as_deref(), Some("2"));
        assert_eq!(find("a.l.0.v").as_deref(), Some("1"));
        assert_eq!(find("a.s.-").as_deref(), Some("q"));
        assert_eq!(find("a.s.[=p]").as_deref(), Some("p"));
        assert_eq!(find("a.missing"), None);
    }
}
