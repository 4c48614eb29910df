//! ValueAddTransformer: writes one value into a field of the selected
//! resources (an "add" in the sense of RFC 6902), either as the whole value
//! or as one more part of a file path held by the field.

use krusty_resource::{ResMap, Resource};
use krusty_yaml::{Node, Resolved, ThinVec, Value};

use super::namespace::{SetNamespace, SubjectsMode};
use crate::error::{OpError, OpResult};
use crate::files::FileSource;
use crate::parallel;
use crate::path::wrong_kind;
use crate::selector::{Compile, Selector};
use crate::typed::{self, Strictness};

/// What a builtin config may consult besides its own fields.
pub struct ConfigSite<'a> {
    /// The base name of the directory of the kustomization naming the
    /// config (ValueAddTransformer's default `value`).
    pub root_name: &'a str,
    /// That kustomization's files (ValueAddTransformer's `targetFilePath`).
    pub files: &'a dyn FileSource,
    /// The Kustomize release whose rules apply.
    pub version: crate::KustomizeVersion,
}

/// One `targets:` entry.
#[derive(Debug, Clone, PartialEq)]
pub struct ValueAddTarget {
    /// The resources to change; all of them when absent.
    pub selector: Option<Selector>,
    /// The field, as a slash-separated path (`\/` is a slash in a name).
    pub field_path: String,
    /// When positive, the value is inserted as the path part at this
    /// position (1 first) of the file path the field holds.
    pub file_path_position: i64,
}

/// The ValueAddTransformer.
#[derive(Debug, Clone, PartialEq)]
pub struct ValueAdd {
    /// The value written.
    pub value: String,
    /// Where it is written, in order.
    pub targets: Vec<ValueAddTarget>,
}

/// The path Kustomize hands to its namespace filter instead.
const NAMESPACE_PATH: &str = "metadata/namespace";

impl ValueAdd {
    /// Reads a config: `value` (trimmed; the kustomization directory's
    /// name when empty), `targets`, and the `targets` of the file named by
    /// `targetFilePath`, appended. Unknown fields are ignored.
    pub fn from_config(config: &Node, site: &ConfigSite<'_>) -> OpResult<ValueAdd> {
        let value = text_field(config.get("value"), "ValueAddTransformerPlugin", "value")?
            .trim()
            .to_string();
        let value = if value.is_empty() {
            site.root_name.to_string()
        } else {
            value
        };
        let mut targets = read_targets(config.get("targets"))?;
        let file = text_field(
            config.get("targetFilePath"),
            "ValueAddTransformerPlugin",
            "targetFilePath",
        )?;
        if !file.is_empty() {
            let bytes = site.files.read_bytes(&file)?;
            let text = String::from_utf8_lossy(&bytes);
            let docs = krusty_yaml::parse_stream(&text)
                .map_err(|e| OpError::new(format!("{file}: {}", e.message)))?;
            let root = docs.into_iter().find_map(|d| d.root);
            targets.extend(read_targets(root.as_ref().and_then(|r| r.get("targets")))?);
        }
        if targets.is_empty() {
            return Err(OpError::new("must specify at least one target"));
        }
        for t in &targets {
            if t.field_path.is_empty() {
                return Err(OpError::new("fieldPath cannot be empty"));
            }
            if t.file_path_position < 0 {
                return Err(OpError::new(format!(
                    "value of FilePathPosition ({}) cannot be negative",
                    t.file_path_position
                )));
            }
        }
        Ok(ValueAdd { value, targets })
    }

    /// Applies the targets in order, each to the resources it selects.
    pub fn apply(&self, resources: &mut ResMap) -> OpResult<()> {
        for t in &self.targets {
            let selector = t
                .selector
                .as_ref()
                .map(Selector::compile_regex)
                .transpose()?;
            let selected = |r: &Resource| selector.as_ref().is_none_or(|s| s.matches(r));
            if t.field_path == NAMESPACE_PATH {
                self.set_namespaces(resources, &selected)?;
                continue;
            }
            let segments = segments(&t.field_path);
            parallel::try_each(resources.resources_mut(), |r| {
                if !selected(r) {
                    return Ok(());
                }
                match lookup_create(&mut r.node, &segments)? {
                    Some(field) => self.set(field, t.file_path_position),
                    // Kustomize crashes here (it reads the missing field's
                    // path); without a position it changes nothing.
                    None if t.file_path_position > 0 => Err(OpError::new(format!(
                        "fieldPath '{}' leads to no field of {} to insert a path part into",
                        t.field_path,
                        r.id()
                    ))),
                    None => Ok(()),
                }
            })?;
        }
        Ok(())
    }

    /// `metadata/namespace` as Kustomize's namespace filter sets it on its
    /// own: namespaced resources and binding subjects named `default`,
    /// without recording the previous namespace.
    fn set_namespaces(
        &self,
        resources: &mut ResMap,
        selected: &(dyn Fn(&Resource) -> bool + Sync),
    ) -> OpResult<()> {
        let op = SetNamespace {
            namespace: self.value.clone(),
            specs: Vec::new(),
            unset_only: false,
            subjects: SubjectsMode::DefaultOnly,
        };
        parallel::try_each(resources.resources_mut(), |r| {
            if selected(r) {
                op.apply_to(r)
            } else {
                Ok(())
            }
        })
    }

    /// Writes the value into `field` (a scalar, else an error), keeping
    /// the field's quoting style: a plain field's new text is typed from
    /// the text (`123` is a number), a quoted or block one stays a string.
    fn set(&self, field: &mut Node, file_path_position: i64) -> OpResult<()> {
        let Value::Scalar(old) = &field.value else {
            return Err(wrong_kind("ScalarNode", field));
        };
        let text = if file_path_position > 0 {
            insert_path_part(&old.text, file_path_position - 1, &self.value)
        } else {
            self.value.clone()
        };
        let style = field.style();
        field.replace_keeping_pos(Node::scalar(text, style));
        Ok(())
    }
}

/// Reads a `targets:` list (absent or null: none).
fn read_targets(node: Option<&Node>) -> OpResult<Vec<ValueAddTarget>> {
    let Some(node) = node.filter(|n| !n.is_null()) else {
        return Ok(Vec::new());
    };
    let Some(items) = node.as_seq() else {
        return Err(decode_error(
            node,
            "ValueAddTransformerPlugin.targets",
            "[]builtins.Target",
        ));
    };
    items.iter().map(read_target).collect()
}

fn read_target(node: &Node) -> OpResult<ValueAddTarget> {
    if node.as_map().is_none() && !node.is_null() {
        return Err(decode_error(
            node,
            "ValueAddTransformerPlugin.targets",
            "builtins.Target",
        ));
    }
    let selector = match node.get("selector") {
        Some(s) if !s.is_null() => Some(Selector::from_node(
            s,
            "types.Selector",
            Strictness::Lenient,
        )?),
        _ => None,
    };
    Ok(ValueAddTarget {
        selector,
        field_path: text_field(node.get("fieldPath"), "Target", "targets.fieldPath")?,
        file_path_position: int_field(node.get("filePathPosition"))?,
    })
}

/// A string field: a scalar's text in Go's form (`123`, `true`), empty
/// when absent or null; a list or map is an error.
fn text_field(node: Option<&Node>, owner: &str, path: &str) -> OpResult<String> {
    match node {
        Some(n) if n.as_scalar().is_none() => {
            Err(decode_error(n, &format!("{owner}.{path}"), "string"))
        }
        Some(n) => Ok(typed::lenient_string(n)),
        None => Ok(String::new()),
    }
}

/// `filePathPosition`: an integer (a whole float is one), 0 when absent.
fn int_field(node: Option<&Node>) -> OpResult<i64> {
    const FIELD: &str = "Target.targets.filePathPosition";
    let Some(n) = node.filter(|n| !n.is_null()) else {
        return Ok(0);
    };
    match n.as_scalar().map(|_| krusty_yaml::resolve_input(n)) {
        Some(Resolved::Int(i)) => i64::try_from(i).map_err(|_| decode_error(n, FIELD, "int")),
        Some(Resolved::Float(f)) if f.fract() == 0.0 && f.abs() < 9.2e18 => Ok(f as i64),
        Some(Resolved::Float(f)) => Err(OpError::new(format!(
            "{DECODING}json: cannot unmarshal number {} into Go struct field {FIELD} of type int",
            krusty_yaml::go_json_float(f)
        ))),
        _ => Err(decode_error(n, FIELD, "int")),
    }
}

/// How Kustomize's JSON decoding of the config words its errors.
const DECODING: &str = "error unmarshaling JSON: while decoding JSON: ";

/// Go's error for a value of the wrong JSON type in `field` (`Type.path`).
fn decode_error(n: &Node, field: &str, go_type: &str) -> OpError {
    OpError::new(format!(
        "{DECODING}json: cannot unmarshal {} into Go struct field {field} of type {go_type}",
        typed::json_type(n)
    ))
}

/// Splits a field path at slashes, `\/` standing for a slash within a
/// name; empty parts are dropped.
fn segments(path: &str) -> Vec<String> {
    let mut parts: Vec<String> = Vec::new();
    for piece in path.split('/') {
        match parts.last_mut() {
            Some(last) if last.ends_with('\\') => {
                last.pop();
                last.push('/');
                last.push_str(piece);
            }
            _ => parts.push(piece.to_string()),
        }
    }
    parts.retain(|p| !p.is_empty());
    parts
}

/// `[key=value]` (or `[=value]` for a list of scalars).
fn is_list_selector(segment: &str) -> bool {
    segment.starts_with('[') && segment.ends_with(']')
}

/// What a missing field on the way is created as: a list before a list
/// selector or an index, a map before a name, a scalar at the end.
fn new_node_before(next: Option<&String>) -> Node {
    match next {
        None => Node::plain(""),
        Some(s) if is_list_selector(s) || s.parse::<i64>().is_ok() => Node::seq_of([]),
        Some(_) => Node::map(),
    }
}

/// Finds the field at `segments`, creating what is missing on the way
/// (maps, lists, list items matching a `[key=value]`). `None` when the walk
/// ends without a field: a null on the way, an index past the end, `-` in
/// an empty list.
fn lookup_create<'a>(root: &'a mut Node, segments: &[String]) -> OpResult<Option<&'a mut Node>> {
    let mut current = root;
    for (i, segment) in segments.iter().enumerate() {
        let is_last = i + 1 == segments.len();
        let next = match step(current, segment, segments.get(i + 1))? {
            Some(n) => n,
            None => return Ok(None),
        };
        if !is_last && next.is_null() {
            return Ok(None);
        }
        current = next;
    }
    Ok(Some(current))
}

/// One step of [`lookup_create`].
fn step<'a>(
    current: &'a mut Node,
    segment: &str,
    after: Option<&String>,
) -> OpResult<Option<&'a mut Node>> {
    if is_list_selector(segment) {
        return list_item(current, segment);
    }
    if segment == "-" {
        return Ok(seq_mut(current)?.last_mut());
    }
    if let Ok(index) = segment.parse::<i64>() {
        if index < 0 {
            return Err(OpError::new(format!(
                "array index {index} cannot be negative"
            )));
        }
        let items = seq_mut(current)?;
        return Ok(usize::try_from(index).ok().and_then(|i| items.get_mut(i)));
    }
    if current.as_map().is_none() {
        return Err(wrong_kind("MappingNode", current));
    }
    let entries = current
        .as_map_mut()
        .ok_or_else(|| OpError::new("not a mapping"))?;
    let at = match entries
        .iter()
        .position(|(k, _)| k.key_str() == Some(segment))
    {
        Some(at) => at,
        None => {
            entries.push((Node::plain(segment), new_node_before(after)));
            entries.len() - 1
        }
    };
    Ok(Some(&mut entries[at].1))
}

/// The items of a list, or Kustomize's error for another node.
fn seq_mut(node: &mut Node) -> OpResult<&mut ThinVec<Node>> {
    if node.as_seq().is_none() {
        return Err(wrong_kind("SequenceNode", node));
    }
    node.as_seq_mut()
        .ok_or_else(|| OpError::new("not a sequence"))
}

/// The first item of a list matching `[key=value]`, appended when none does.
fn list_item<'a>(current: &'a mut Node, segment: &str) -> OpResult<Option<&'a mut Node>> {
    let Some((key, value)) = crate::path::list_selector(segment) else {
        return Err(OpError::new(
            "list path element must contain fieldName=fieldValue for element to match",
        ));
    };
    let items = seq_mut(current)?;
    let text = |n: &Node| match &n.value {
        Value::Scalar(s) => Some(s.text.as_str() == value),
        _ => None,
    };
    let found = items.iter().position(|item| {
        if key.is_empty() {
            text(item) == Some(true)
        } else {
            item.get(key).and_then(text) == Some(true)
        }
    });
    let at = match found {
        Some(at) => at,
        None => {
            let item = if key.is_empty() {
                Node::plain(value)
            } else {
                Node::map_of([(Node::plain(key), Node::plain(value))])
            };
            items.push(item);
            items.len() - 1
        }
    };
    Ok(Some(&mut items[at]))
}

/// Inserts `part` into the file path `path` as its part number `pos` (0
/// first; clamped to the path's parts, so large positions append). An
/// absolute path stays absolute: its leading `/` is not a position. The
/// result is joined and cleaned as Go's `filepath.Join` does.
fn insert_path_part(path: &str, pos: i64, part: &str) -> String {
    let mut parts = path_split(path);
    let len = parts.len();
    let mut at = usize::try_from(pos).unwrap_or(0).min(len);
    if len > 0 && parts[0].is_empty() && at < len {
        at += 1;
    }
    parts.insert(at, part);
    match parts.split_first() {
        None => String::new(),
        Some((&"", rest)) => format!("/{}", join(rest)),
        Some(_) => join(&parts),
    }
}

/// A path's parts, split as Go's `filepath.Split` does repeatedly: an
/// absolute path's first part is empty.
fn path_split(path: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut rest = path;
    while !rest.is_empty() {
        let (dir, file) = match rest.rfind('/') {
            Some(i) => (&rest[..=i], &rest[i + 1..]),
            None => ("", rest),
        };
        if dir == "/" {
            if !file.is_empty() {
                parts.push(file);
            }
            parts.push("");
            break;
        }
        parts.push(file);
        rest = dir.strip_suffix('/').unwrap_or(dir);
    }
    parts.reverse();
    parts
}

/// Go's `filepath.Join`: the non-empty parts joined by `/` and cleaned;
/// empty when all are empty.
fn join(parts: &[&str]) -> String {
    let joined: Vec<&str> = parts.iter().copied().filter(|p| !p.is_empty()).collect();
    if joined.is_empty() {
        return String::new();
    }
    clean(&joined.join("/"))
}

/// Go's `path.Clean`: one slash between names, no `.`, `..` resolved
/// where it can be.
fn clean(path: &str) -> String {
    let rooted = path.starts_with('/');
    let mut out: Vec<&str> = Vec::new();
    for name in path.split('/') {
        match name {
            "" | "." => {}
            ".." => match out.last() {
                Some(&last) if last != ".." => {
                    out.pop();
                }
                _ if rooted => {}
                _ => out.push(".."),
            },
            _ => out.push(name),
        }
    }
    let body = out.join("/");
    match (rooted, body.is_empty()) {
        (true, _) => format!("/{body}"),
        (false, true) => ".".to_string(),
        (false, false) => body,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_parts_are_inserted_as_documented() {
        let cases = [
            ("", 0, "PEACH"),
            ("/", 0, "/PEACH"),
            ("pie", 0, "PEACH/pie"),
            ("/pie", 0, "/PEACH/pie"),
            ("raw", 1, "raw/PEACH"),
            ("/raw", 1, "/raw/PEACH"),
            ("a/nice/warm/pie", 3, "a/nice/warm/PEACH/pie"),
            ("/a/nice/warm/pie", 3, "/a/nice/warm/PEACH/pie"),
            ("a/b", 9999, "a/b/PEACH"),
            ("a//b/./c", 1, "a/PEACH/b/c"),
            ("a/../b", 0, "PEACH/b"),
        ];
        for (path, pos, want) in cases {
            assert_eq!(
                insert_path_part(path, pos, "PEACH"),
                want,
                "{path} at {pos}"
            );
        }
    }

    #[test]
    fn path_split_keeps_empty_parts_as_go_does() {
        assert_eq!(path_split("a//b"), ["a", "", "b"]);
        assert_eq!(path_split("/"), [""]);
        assert_eq!(path_split("//a"), ["", "a"]);
        assert_eq!(path_split("a/"), ["a", ""]);
    }

    #[test]
    fn field_paths_split_at_unescaped_slashes() {
        assert_eq!(segments("/a//b\\/c/"), ["a", "b/c"]);
    }
}
