//! Reading configuration fields with the typing Kustomize's JSON decoding
//! applies: a string field must hold a string (not a number or a boolean),
//! a map of strings must hold only strings, and so on. Errors use Go's
//! wording, `json: cannot unmarshal number into Go struct field
//! Image.images.newTag of type string`, so users can search for them.

use std::borrow::Cow;

use krusty_yaml::{resolve_input, Node, Resolved, Value};

use crate::error::{SchemaError, SchemaResult};

/// Where a value sits, for error messages: the Go struct that declares the
/// field and the JSON path of the field.
#[derive(Debug, Clone, Copy)]
pub struct At<'a> {
    /// Go struct type name, e.g. `Kustomization`.
    pub owner: &'a str,
    /// JSON path, e.g. `images.newTag`.
    pub path: &'a str,
}

/// The JSON type a node decodes to.
pub fn json_type(n: &Node) -> &'static str {
    match &n.value {
        Value::Map(_) => "object",
        Value::Seq(_) => "array",
        Value::Scalar(_) => match resolve_input(n) {
            Resolved::Null => "null",
            Resolved::Bool(_) => "bool",
            Resolved::Int(_) | Resolved::Float(_) => "number",
            Resolved::Str(_) | Resolved::Owned(_) => "string",
        },
    }
}

/// Go's decoding error, followed by where the value stands in its file
/// when it was read from one.
fn mismatch(n: &Node, at: At<'_>, go_type: &str) -> SchemaError {
    SchemaError::new(format!(
        "json: cannot unmarshal {} into Go struct field {}.{} of type {go_type}",
        json_type(n),
        at.owner,
        at.path,
    ))
    .located(None, n.pos())
}

/// ` (line L, column C)` for a node read from a file; empty for one made
/// during the build.
pub fn location(n: &Node) -> String {
    match n.pos() {
        pos if pos.line == 0 => String::new(),
        pos => format!(" (line {}, column {})", pos.line, pos.col),
    }
}

/// A string field (null reads as empty).
pub fn string(n: &Node, at: At<'_>) -> SchemaResult<String> {
    match json_type(n) {
        "null" => Ok(String::new()),
        "string" => Ok(scalar_text(n)),
        _ => Err(mismatch(n, at, "string")),
    }
}

fn scalar_text(n: &Node) -> String {
    match &n.value {
        Value::Scalar(s) => match resolve_input(n) {
            Resolved::Owned(t) => t,
            _ => s.text.to_string(),
        },
        _ => String::new(),
    }
}

/// A boolean field (null reads as false).
pub fn boolean(n: &Node, at: At<'_>) -> SchemaResult<bool> {
    match &n.value {
        Value::Scalar(_) => match resolve_input(n) {
            Resolved::Null => Ok(false),
            Resolved::Bool(b) => Ok(b),
            _ => Err(mismatch(n, at, "bool")),
        },
        _ => Err(mismatch(n, at, "bool")),
    }
}

/// An integer field (null reads as 0). A whole number written as a float
/// (`3.0`, `1e3`) is one: the YAML to JSON step writes it without a
/// fraction.
pub fn integer(n: &Node, at: At<'_>) -> SchemaResult<i64> {
    /// 2^63: floats from here on are out of `i64`'s range.
    const OUT_OF_RANGE: f64 = 9_223_372_036_854_775_808.0;
    match &n.value {
        Value::Scalar(_) => match resolve_input(n) {
            Resolved::Null => Ok(0),
            Resolved::Int(i) => i64::try_from(i).map_err(|_| mismatch(n, at, "int64")),
            Resolved::Float(f)
                if f.fract() == 0.0 && (-OUT_OF_RANGE..OUT_OF_RANGE).contains(&f) =>
            {
                Ok(f as i64)
            }
            _ => Err(mismatch(n, at, "int64")),
        },
        _ => Err(mismatch(n, at, "int64")),
    }
}

/// A list of strings (null reads as empty).
pub fn string_list(n: &Node, at: At<'_>) -> SchemaResult<Vec<String>> {
    match &n.value {
        Value::Seq(items) => items.iter().map(|i| string(i, at)).collect(),
        _ if n.is_null() => Ok(Vec::new()),
        _ => Err(mismatch(n, at, "[]string")),
    }
}

/// A map of strings, in source order (null reads as empty).
pub fn string_map(n: &Node, at: At<'_>) -> SchemaResult<Vec<(String, String)>> {
    match &n.value {
        Value::Map(entries) => entries
            .iter()
            .map(|(k, v)| Ok((k.key_str().unwrap_or_default().to_string(), string(v, at)?)))
            .collect(),
        _ if n.is_null() => Ok(Vec::new()),
        _ => Err(mismatch(n, at, "map[string]string")),
    }
}

/// A string field of a builtin plugin config. These are read leniently, as
/// Kustomize reads them: a number or boolean becomes its text in Go's form
/// (`-01` reads as `-1`, `1.50` as `1.5`).
pub fn lenient_string(n: &Node) -> String {
    lenient_str(n).into_owned()
}

/// [`lenient_string`], borrowing the node's text when it is a string.
pub fn lenient_str(n: &Node) -> Cow<'_, str> {
    match &n.value {
        Value::Scalar(_) => match resolve_input(n) {
            Resolved::Null => Cow::Borrowed(""),
            Resolved::Bool(b) => Cow::Owned(b.to_string()),
            Resolved::Int(i) => Cow::Owned(i.to_string()),
            Resolved::Float(f) => Cow::Owned(krusty_yaml::go_json_float(f)),
            Resolved::Str(t) => Cow::Borrowed(t),
            Resolved::Owned(t) => Cow::Owned(t),
        },
        _ => Cow::Borrowed(""),
    }
}

/// A map of strings in a builtin plugin config, read leniently.
pub fn lenient_string_map(n: &Node) -> Vec<(String, String)> {
    n.as_map()
        .map(|entries| {
            entries
                .iter()
                .map(|(k, v)| {
                    (
                        k.key_str().unwrap_or_default().to_string(),
                        lenient_string(v),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The entries of a mapping (null reads as none).
pub fn object<'n>(n: &'n Node, at: At<'_>, go_type: &str) -> SchemaResult<&'n [(Node, Node)]> {
    match &n.value {
        Value::Map(entries) => Ok(entries),
        _ if n.is_null() => Ok(&[]),
        _ => Err(mismatch(n, at, go_type)),
    }
}

/// The items of a sequence (null reads as none).
pub fn array<'n>(n: &'n Node, at: At<'_>, go_type: &str) -> SchemaResult<&'n [Node]> {
    match &n.value {
        Value::Seq(items) => Ok(items),
        _ if n.is_null() => Ok(&[]),
        _ => Err(mismatch(n, at, go_type)),
    }
}

/// How unknown field names are treated: inline kustomization fields reject
/// them (Kustomize decodes strictly); files and builtin configs ignore them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Strictness {
    /// Unknown fields are errors.
    Strict,
    /// Unknown fields are ignored.
    Lenient,
}

/// The fields of a mapping under their canonical names from `known`,
/// matched without regard to case as Go's JSON decoding does.
pub fn fields<'n>(
    node: &'n Node,
    known: &[&'static str],
    owner: &'static str,
    strictness: Strictness,
) -> SchemaResult<Vec<(&'static str, &'n Node)>> {
    let mut out = Vec::new();
    for (key, value) in object(node, At { owner, path: "" }, owner)? {
        let name = key.key_str().unwrap_or_default();
        match known.iter().find(|k| k.eq_ignore_ascii_case(name)) {
            Some(k) => out.push((*k, value)),
            None if strictness == Strictness::Strict => return Err(unknown_field(key)),
            None => {}
        }
    }
    Ok(out)
}

/// The name a struct field is known by, for a name written in YAML: Go's
/// JSON decoding matches field names without regard to case (an exact
/// match first). A name matching none comes back as written.
pub fn canonical_field<'a>(written: &'a str, known: &[&'static str]) -> &'a str {
    if known.contains(&written) {
        return written;
    }
    known
        .iter()
        .find(|k| k.eq_ignore_ascii_case(written))
        .copied()
        .unwrap_or(written)
}

/// The error for a field the struct does not have.
pub fn unknown_field(key: &Node) -> SchemaError {
    SchemaError::new(format!(
        "json: unknown field \"{}\" (line {})",
        key.key_str().unwrap_or_default(),
        key.pos().line
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(text: &str) -> Node {
        krusty_yaml::first_root(text).unwrap().unwrap()
    }

    #[test]
    fn go_typing_errors() {
        let at = At {
            owner: "Image",
            path: "images.newTag",
        };
        assert_eq!(string(&node("'1.0'"), at).unwrap(), "1.0");
        assert_eq!(
            string(&node("1.0"), at).unwrap_err().to_string(),
            "json: cannot unmarshal number into Go struct field Image.images.newTag of type string (line 1, column 1)"
        );
        assert_eq!(
            location(&Node::plain("made")),
            "",
            "no place for a value the build made"
        );
        assert!(string_map(&node("{a: true}"), at).is_err());
        assert_eq!(integer(&node("3"), at).unwrap(), 3);
        assert!(integer(&node("'3'"), at).is_err());
    }
}
