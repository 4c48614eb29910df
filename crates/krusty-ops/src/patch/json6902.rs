//! JSON patches (RFC 6902) applied to a resource, with the semantics and
//! error texts of the library Kustomize v5.5.0 uses: `add`, `remove`,
//! `replace`, `move`, `copy` and `test`; JSON pointers with `~0`/`~1`
//! escapes; `-` to append; negative indices counted from the end.

use krusty_yaml::{Node, Pos, Value};

use crate::error::{OpError, OpResult};
use crate::typed::json_type;

/// One decoded operation.
#[derive(Debug, Clone)]
pub struct Operation {
    /// The `op` field; `unknown` when it is missing, as Kustomize's
    /// library names it.
    op: String,
    /// The `op` field is missing (or null).
    op_missing: bool,
    path: Option<String>,
    from: Option<String>,
    value: Option<Node>,
    /// Where the operation is written in its text.
    pos: Pos,
}

/// A decoded list of operations.
#[derive(Debug, Clone, Default)]
pub struct JsonPatch(Vec<Operation>);

impl JsonPatch {
    /// Decodes an op list given as a YAML or JSON sequence of mappings.
    pub fn from_node(node: &Node) -> OpResult<JsonPatch> {
        let Some(items) = node.as_seq() else {
            let what = match node.value {
                Value::Map(_) => "object",
                Value::Scalar(_) if node.is_null() => return Ok(JsonPatch::default()),
                Value::Scalar(_) => json_type(node),
                Value::Seq(_) => "array",
            };
            return Err(OpError::new(format!(
                "json: cannot unmarshal {what} into Go value of type jsonpatch.Patch"
            ))
            .located(None, node.pos()));
        };
        let mut ops = Vec::with_capacity(items.len());
        for (index, item) in items.iter().enumerate() {
            let Some(map) = item.as_map() else {
                return Err(OpError::new(format!(
                    "json: cannot unmarshal {} into Go value of type jsonpatch.Operation",
                    match item.value {
                        Value::Seq(_) => "array",
                        _ => json_type(item),
                    }
                ))
                .in_item(operation(index), item.pos()));
            };
            let text = |key: &str| -> OpResult<Option<String>> {
                match map.iter().find(|(k, _)| k.key_str() == Some(key)) {
                    None => Ok(None),
                    Some((_, v)) if v.is_null() => Ok(None),
                    Some((_, v)) => match v.as_scalar() {
                        Some(s) if json_type(v) == "string" => Ok(Some(s.text.to_string())),
                        _ => Err(OpError::new(format!(
                            "json: cannot unmarshal {} into Go value of type string",
                            json_type(v)
                        ))
                        .in_item(format!("{} field '{key}'", operation(index)), v.pos())),
                    },
                }
            };
            let op = text("op")?;
            let op_missing = op.is_none();
            let op = op.unwrap_or_else(|| "unknown".to_string());
            let path = text("path")?;
            let from = text("from")?;
            let value = item.get("value").cloned();
            ops.push(Operation {
                op,
                op_missing,
                path,
                from,
                value,
                pos: item.pos(),
            });
        }
        Ok(JsonPatch(ops))
    }

    /// Number of operations.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// `true` when there are no operations.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// `true` when an operation replaces or removes `/metadata` or
    /// `/metadata/annotations` as a whole (where Kustomize keeps its
    /// origin and transformation records).
    pub fn replaces_annotations(&self) -> bool {
        let whole = |p: &Option<String>| {
            matches!(p.as_deref(), Some("/metadata" | "/metadata/annotations"))
        };
        self.0.iter().any(|op| match op.op.as_str() {
            "add" | "replace" | "remove" | "copy" => whole(&op.path),
            "move" => whole(&op.path) || whole(&op.from),
            _ => false,
        })
    }

    /// `true` when an operation reads `metadata.annotations` whole or in
    /// part (a `copy` or `move` from it, a `test` of it, or of the
    /// document or `/metadata` that holds it), where Kustomize's own build
    /// bookkeeping is visible while it applies the patch.
    pub fn reads_annotations(&self) -> bool {
        let covers = |p: &Option<String>| {
            p.as_deref().is_some_and(|p| {
                matches!(p, "" | "/metadata" | "/metadata/annotations")
                    || p.starts_with("/metadata/annotations/")
            })
        };
        self.0.iter().any(|op| match op.op.as_str() {
            "copy" | "move" => covers(&op.from),
            "test" => covers(&op.path),
            _ => false,
        })
    }

    /// Applies the operations in order to `doc`. An error names the
    /// failing operation and where it is written in its text.
    pub fn apply(&self, doc: &mut Node) -> OpResult<()> {
        for (index, op) in self.0.iter().enumerate() {
            apply_one(doc, op).map_err(|e| e.in_item(operation(index), op.pos))?;
        }
        Ok(())
    }
}

/// How messages name the operation at `index` of a list (counted from 1).
fn operation(index: usize) -> String {
    format!("operation {}", index + 1)
}

fn missing(msg: String) -> OpError {
    OpError::new(format!("{msg}: missing value"))
}

/// Why a key does not name a list position, in the JSON patch library's
/// words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum IndexError {
    /// A key that is not a number.
    #[error(
        "value was not a proper array index: '{key}': strconv.Atoi: parsing {key:?}: invalid syntax"
    )]
    NotANumber {
        /// The key as written.
        key: String,
    },
    /// A position past either end of the list.
    #[error("Unable to access invalid index: {0}: invalid index referenced")]
    OutOfRange(i64),
}

impl From<IndexError> for OpError {
    fn from(e: IndexError) -> OpError {
        OpError::new(e.to_string())
    }
}

fn decode_key(part: &str) -> String {
    part.replace("~1", "/").replace("~0", "~")
}

/// Finds the container holding the last segment of `path`, and that
/// segment (decoded). `None` when any parent is missing.
fn find_container<'a>(doc: &'a mut Node, path: &str) -> Option<(&'a mut Node, String)> {
    let split: Vec<&str> = path.split('/').collect();
    if split.len() < 2 {
        return None;
    }
    let mut node = doc;
    for part in &split[1..split.len() - 1] {
        let key = decode_key(part);
        let next = match &mut node.value {
            Value::Map(entries) => entries
                .iter_mut()
                .find(|(k, _)| k.key_str() == Some(key.as_str()))
                .map(|(_, v)| v)?,
            Value::Seq(items) => {
                let idx = key.parse::<i64>().ok()?;
                let len = items.len() as i64;
                let idx = if idx < 0 { idx + len } else { idx };
                items.get_mut(usize::try_from(idx).ok()?)?
            }
            Value::Scalar(_) => return None,
        };
        if next.as_map().is_none() && next.as_seq().is_none() {
            return None;
        }
        node = next;
    }
    Some((node, decode_key(split[split.len() - 1])))
}

fn parse_index(key: &str) -> Result<i64, IndexError> {
    key.parse::<i64>().map_err(|_| IndexError::NotANumber {
        key: key.to_string(),
    })
}

/// Adds `value` at `key` of a container (inserting into a list).
fn container_add(container: &mut Node, key: &str, value: Node) -> OpResult<()> {
    match &mut container.value {
        Value::Seq(items) => {
            if key == "-" {
                items.push(value);
                return Ok(());
            }
            let idx = parse_index(key)?;
            let size = items.len() as i64 + 1;
            if idx >= size || idx < -size {
                return Err(IndexError::OutOfRange(idx).into());
            }
            let idx = if idx < 0 { idx + size } else { idx };
            items.insert(idx as usize, value);
            Ok(())
        }
        _ => {
            container.set(key, value);
            Ok(())
        }
    }
}

/// The value at `key` of a container (negative list indices count from
/// the end): `None` for a map key it lacks, an error for a key that names
/// no position of a list.
fn container_get(container: &Node, key: &str) -> Result<Option<Node>, IndexError> {
    match &container.value {
        Value::Seq(items) => {
            let idx = list_index(key, items.len())?;
            Ok(Some(items[idx].clone()))
        }
        _ => Ok(container.get(key).cloned()),
    }
}

/// Removes `key` from a container.
fn container_remove(container: &mut Node, key: &str) -> OpResult<Node> {
    match &mut container.value {
        Value::Seq(items) => {
            let idx = list_index(key, items.len())?;
            Ok(items.remove(idx))
        }
        _ => container
            .remove(key)
            .ok_or_else(|| missing(format!("Unable to remove nonexistent key: {key}"))),
    }
}

/// An existing list position: `key` as an index, negative from the end.
fn list_index(key: &str, len: usize) -> Result<usize, IndexError> {
    let idx = parse_index(key)?;
    let len = len as i64;
    if idx >= len || idx < -len {
        return Err(IndexError::OutOfRange(idx));
    }
    Ok((if idx < 0 { idx + len } else { idx }) as usize)
}

/// Sets `key` of a container (replacing a list item).
fn container_set(container: &mut Node, key: &str, value: Node) -> OpResult<()> {
    match &mut container.value {
        Value::Seq(items) => {
            let idx = list_index(key, items.len())?;
            items[idx] = value;
            Ok(())
        }
        _ => {
            container.set(key, value);
            Ok(())
        }
    }
}

/// An operation's value. Op lists written in YAML are converted to JSON
/// with go-yaml v2's typing: `yes`, `on`, `off`... become booleans, and
/// timestamps stay as written.
fn op_value(op: &Operation) -> Node {
    match op.value.clone() {
        Some(mut value) => {
            krusty_yaml::retype_as_go_yaml_v2(&mut value);
            value
        }
        None => Node::null(),
    }
}

fn apply_one(doc: &mut Node, op: &Operation) -> OpResult<()> {
    let path = || {
        op.path
            .clone()
            .ok_or_else(|| missing("operation missing path field".to_string()))
    };
    let from = || {
        op.from
            .clone()
            .ok_or_else(|| missing("operation missing from field".to_string()))
    };
    match op.op.as_str() {
        "add" => {
            let path = path()?;
            let (container, key) = find_container(doc, &path).ok_or_else(|| {
                missing(format!(
                    "add operation does not apply: doc is missing path: \"{path}\""
                ))
            })?;
            container_add(container, &key, op_value(op))
                .map_err(|e| e.context(format!("error in add for path: '{path}'")))
        }
        "remove" => {
            let path = path()?;
            let (container, key) = find_container(doc, &path).ok_or_else(|| {
                missing(format!(
                    "remove operation does not apply: doc is missing path: \"{path}\""
                ))
            })?;
            container_remove(container, &key)
                .map(|_| ())
                .map_err(|e| e.context(format!("error in remove for path: '{path}'")))
        }
        "replace" => {
            let path = path()?;
            let (container, key) = find_container(doc, &path).ok_or_else(|| {
                missing(format!(
                    "replace operation does not apply: doc is missing path: {path}"
                ))
            })?;
            // A missing map key is added; a missing list index fails.
            if container_get(container, &key).is_err() {
                return Err(missing(format!(
                    "replace operation does not apply: doc is missing key: {path}"
                )));
            }
            container_set(container, &key, op_value(op))
                .map_err(|e| e.context(format!("error in remove for path: '{path}'")))
        }
        "move" => {
            let from = from().map_err(|e| e.context("move operation failed to decode from"))?;
            let (container, key) = find_container(doc, &from).ok_or_else(|| {
                missing(format!(
                    "move operation does not apply: doc is missing from path: {from}"
                ))
            })?;
            container_get(container, &key).map_err(|e| {
                OpError::from(e).context(format!("error in move for path: '{key}'"))
            })?;
            let value = container_remove(container, &key)
                .map_err(|e| e.context(format!("error in move for path: '{key}'")))?;
            let path = path()?;
            let (container, key) = find_container(doc, &path).ok_or_else(|| {
                missing(format!(
                    "move operation does not apply: doc is missing destination path: {path}"
                ))
            })?;
            container_add(container, &key, value)
        }
        "copy" => {
            let from = from().map_err(|e| e.context("copy operation failed to decode from"))?;
            let (container, key) = find_container(doc, &from).ok_or_else(|| {
                missing(format!(
                    "copy operation does not apply: doc is missing from path: {from}"
                ))
            })?;
            let value = container_get(container, &key)
                .map_err(|e| OpError::from(e).context(format!("error in copy for from: '{from}'")))?
                .unwrap_or_else(Node::null);
            let path = path()?;
            let (container, key) = find_container(doc, &path).ok_or_else(|| {
                missing(format!(
                    "copy operation does not apply: doc is missing destination path: {path}"
                ))
            })?;
            container_add(container, &key, value)
                .map_err(|e| e.context("error while adding value during copy"))
        }
        "test" => {
            let path = path()?;
            let failed = || OpError::new(format!("testing value {path} failed: test failed"));
            let (container, key) = find_container(doc, &path).ok_or_else(|| {
                missing(format!(
                    "test operation does not apply: is missing path: {path}"
                ))
            })?;
            // A missing map key reads as `None`; only a key that names no
            // list position fails.
            let actual = container_get(container, &key)?;
            match (actual, op.value.as_ref()) {
                // A missing value tests equal to null.
                (None, None) => Ok(()),
                (None, Some(v)) if v.is_null() => Ok(()),
                (Some(a), Some(_)) if same_json(&a, &op_value(op)) => Ok(()),
                _ => Err(failed()),
            }
        }
        _ if op.op_missing => Err(OpError::new(
            "Unexpected kind: unknown; the operation has no 'op' field",
        )),
        other => Err(OpError::new(format!(
            "Unexpected kind: {other}; op must be one of add, remove, replace, move, copy, test"
        ))),
    }
}

/// JSON equality of two values.
fn same_json(a: &Node, b: &Node) -> bool {
    krusty_yaml::to_go_json(a) == krusty_yaml::to_go_json(b)
}
