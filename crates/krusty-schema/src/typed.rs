//! Reading configuration fields with the typing Kustomize's JSON decoding
//! applies: a string field must hold a string (not a number or a boolean),
//! a map of strings must hold only strings, and so on. Errors use Go's
//! wording, `json: cannot unmarshal number into Go struct field
//! Image.images.newTag of type string`, so users can search for them.

use std::borrow::Cow;

use krusty_yaml::{resolve_input, Node, Pos, Resolved, Value};

pub use crate::decode::Strictness;
use crate::decode::{Decode, Dialect, Kind, Problem};
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

/// Go's JSON decoding as a [`Dialect`]: field names match without regard
/// to case, null reads as an empty value, and a failure reads `json:
/// cannot unmarshal number into Go struct field Image.images.newTag of
/// type string`, followed by where the value stands in its file when it
/// was read from one. It holds the Go struct that declares the field and
/// the Go type of the mapping or sequence read (`[]string`).
struct GoJson<'a>(&'a str, &'a str);

impl Dialect for GoJson<'_> {
    fn error(&self, pos: Pos, field: &str, problem: Problem<'_>) -> SchemaError {
        match problem {
            Problem::Mismatch(want, found) => {
                let go_type = match want {
                    Kind::String => "string",
                    Kind::Bool => "bool",
                    Kind::Integer => "int64",
                    Kind::Mapping | Kind::Sequence => self.1,
                };
                SchemaError::new(format!(
                    "json: cannot unmarshal {} into Go struct field {}.{field} of type {go_type}",
                    json_type(found),
                    self.0,
                ))
                .located(None, pos)
            }
            Problem::Unknown(name) => SchemaError::new(format!(
                "json: unknown field \"{name}\" (line {})",
                pos.line
            )),
            other => SchemaError::new(other.to_string()).located(None, pos),
        }
    }

    fn null_is_empty(&self, _: Kind) -> bool {
        true
    }

    fn ignores_case(&self) -> bool {
        true
    }

    fn entry_path(&self, field: &str, _key: &str) -> String {
        field.to_string()
    }
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
    GoJson(at.owner, "").string(n, at.path)
}

/// A boolean field (null reads as false).
pub fn boolean(n: &Node, at: At<'_>) -> SchemaResult<bool> {
    GoJson(at.owner, "").boolean(n, at.path)
}

/// An integer field (null reads as 0). A whole number written as a float
/// (`3.0`, `1e3`) is one: the YAML to JSON step writes it without a
/// fraction.
pub fn integer(n: &Node, at: At<'_>) -> SchemaResult<i64> {
    GoJson(at.owner, "").integer(n, at.path)
}

/// A list of strings (null reads as empty).
pub fn string_list(n: &Node, at: At<'_>) -> SchemaResult<Vec<String>> {
    GoJson(at.owner, "[]string").strings(n, at.path)
}

/// A map of strings, in source order (null reads as empty).
pub fn string_map(n: &Node, at: At<'_>) -> SchemaResult<Vec<(String, String)>> {
    GoJson(at.owner, "map[string]string").string_map(n, at.path)
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
    GoJson(at.owner, go_type).mapping(n, at.path)
}

/// The items of a sequence (null reads as none).
pub fn array<'n>(n: &'n Node, at: At<'_>, go_type: &str) -> SchemaResult<&'n [Node]> {
    GoJson(at.owner, go_type).sequence(n, at.path)
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
    GoJson(owner, owner).each(node, "", known, strictness, |e| {
        out.push((e.name, e.value));
        Ok(())
    })?;
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
    let unknown = Problem::Unknown(key.key_str().unwrap_or_default());
    GoJson("", "").error(key.pos(), "", unknown)
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
