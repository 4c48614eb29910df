//! JSON text of a document read from a string, as Kustomize v5.8.1 writes
//! it back: the document is printed as YAML, read into Go values by
//! go-yaml (a scalar's type comes from its tag, else from its text), and
//! written by Go's `encoding/json`: keys sorted bytewise, `<`, `>`, `&`,
//! U+2028 and U+2029 escaped, floats in Go's shortest form.

use std::collections::BTreeMap;

use krusty_yaml::resolve::{check_tagged_scalar, resolve_input, resolve_plain_v3, TagError};
use krusty_yaml::{Node, Resolved, ScalarStyle, Tag, Value};

/// Why Go's round trip of a document through JSON fails, in its words.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub(super) enum JsonError {
    /// A mapping with two keys that decode to the same string.
    #[error("yaml: mapping key {key:?} already defined")]
    DuplicateKey {
        /// The key, as decoded.
        key: String,
    },
    /// A mapping key that does not decode to a string.
    #[error("json: unsupported type: map[interface {{}}]interface {{}}")]
    NonStringKey,
    /// A tagged scalar whose text does not suit its tag.
    #[error("yaml: {0}")]
    Tag(#[from] TagError),
    /// A number JSON cannot hold (an infinity or NaN).
    #[error("{}", krusty_yaml::json_unsupported_float(*.0).unwrap_or_default())]
    UnsupportedFloat(f64),
}

/// A value as go-yaml decodes it into a Go `interface{}`.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Json {
    /// `nil`.
    Null,
    /// A `bool`.
    Bool(bool),
    /// An `int`, `int64` or `uint64`.
    Int(i128),
    /// A `float64`.
    Float(f64),
    /// A `string`.
    Str(String),
    /// A `[]interface{}`.
    Array(Vec<Json>),
    /// A `map[string]interface{}`.
    Object(BTreeMap<String, Json>),
}

/// The JSON text of `doc` (`pretty`: Go's `MarshalIndent` with two
/// spaces, else `Marshal`); the error says why Go's round trip fails.
pub(super) fn serialize(doc: &Node, pretty: bool) -> Result<String, JsonError> {
    let value = decode(doc)?;
    let mut out = String::new();
    if pretty {
        write_pretty(&value, 0, &mut out);
    } else {
        write_compact(&value, &mut out);
    }
    Ok(out)
}

/// `node` decoded as go-yaml decodes its YAML text into Go values.
pub(super) fn decode(node: &Node) -> Result<Json, JsonError> {
    match &node.value {
        Value::Scalar(_) => decode_scalar(node),
        Value::Seq(items) => items
            .iter()
            .map(decode)
            .collect::<Result<_, _>>()
            .map(Json::Array),
        Value::Map(entries) => {
            let mut object = BTreeMap::new();
            for (k, v) in entries.iter() {
                let key = decode_key(k)?;
                if object.insert(key.clone(), decode(v)?).is_some() {
                    return Err(JsonError::DuplicateKey { key });
                }
            }
            Ok(Json::Object(object))
        }
    }
}

/// A mapping key, which JSON needs to be a string.
fn decode_key(key: &Node) -> Result<String, JsonError> {
    match key.as_scalar().map(|_| decode_scalar(key)) {
        Some(Ok(Json::Str(s))) => Ok(s),
        Some(Err(e)) => Err(e),
        _ => Err(JsonError::NonStringKey),
    }
}

/// A scalar in a flow collection (JSON's own syntax) decoded: quoted text
/// and empty plain text (which go-yaml writes `''` there) are strings,
/// other plain text has the type its text reads as, and tagged text needs
/// to suit its tag.
fn decode_scalar(node: &Node) -> Result<Json, JsonError> {
    let text = crate::path::raw(node);
    match node.tag() {
        Tag::None
            if node.style() != ScalarStyle::Plain || text.is_empty() || text.contains('\n') =>
        {
            Ok(Json::Str(text.to_string()))
        }
        Tag::None => resolved(resolve_plain_v3(text)),
        Tag::Other => Ok(Json::Str(text.to_string())),
        tag => {
            check_tagged_scalar(text, tag)?;
            resolved(resolve_input(node))
        }
    }
}

/// A resolved scalar as a Go value; JSON holds no infinity or NaN.
fn resolved(r: Resolved<'_>) -> Result<Json, JsonError> {
    Ok(match r {
        Resolved::Null => Json::Null,
        Resolved::Bool(b) => Json::Bool(b),
        Resolved::Int(i) => Json::Int(i),
        Resolved::Float(f) if krusty_yaml::json_unsupported_float(f).is_some() => {
            return Err(JsonError::UnsupportedFloat(f))
        }
        Resolved::Float(f) => Json::Float(f),
        Resolved::Str(t) => Json::Str(t.to_string()),
        Resolved::Owned(t) => Json::Str(t),
    })
}

/// A scalar's JSON text.
fn write_scalar(value: &Json, out: &mut String) {
    match value {
        Json::Null => out.push_str("null"),
        Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Json::Int(i) => out.push_str(&i.to_string()),
        Json::Float(f) => out.push_str(&krusty_yaml::go_json_float(*f)),
        Json::Str(s) => krusty_yaml::write_go_json_string(s, out),
        Json::Array(_) | Json::Object(_) => {}
    }
}

/// Go's `json.Marshal` text.
pub(super) fn write_compact(value: &Json, out: &mut String) {
    match value {
        Json::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_compact(item, out);
            }
            out.push(']');
        }
        Json::Object(entries) => {
            out.push('{');
            for (i, (k, v)) in entries.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                krusty_yaml::write_go_json_string(k, out);
                out.push(':');
                write_compact(v, out);
            }
            out.push('}');
        }
        scalar => write_scalar(scalar, out),
    }
}

/// Go's `json.MarshalIndent(v, "", "  ")` text, for a value at nesting
/// `depth`: one entry or element a line, empty collections inline.
pub(super) fn write_pretty(value: &Json, depth: usize, out: &mut String) {
    match value {
        Json::Array(items) if !items.is_empty() => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                next_line(i, depth + 1, out);
                write_pretty(item, depth + 1, out);
            }
            end_line(depth, out);
            out.push(']');
        }
        Json::Object(entries) if !entries.is_empty() => {
            out.push('{');
            for (i, (k, v)) in entries.iter().enumerate() {
                next_line(i, depth + 1, out);
                krusty_yaml::write_go_json_string(k, out);
                out.push_str(": ");
                write_pretty(v, depth + 1, out);
            }
            end_line(depth, out);
            out.push('}');
        }
        Json::Array(_) => out.push_str("[]"),
        Json::Object(_) => out.push_str("{}"),
        scalar => write_scalar(scalar, out),
    }
}

/// Starts entry `i` of a collection, indented for `depth`.
fn next_line(i: usize, depth: usize, out: &mut String) {
    if i > 0 {
        out.push(',');
    }
    end_line(depth, out);
}

/// A line break and the indentation of `depth`.
fn end_line(depth: usize, out: &mut String) {
    out.push('\n');
    for _ in 0..depth {
        out.push_str("  ");
    }
}
