//! The one strict decoder every format shares: a file's text to its
//! document, a mapping's fields checked against the names the format
//! knows, and typed values. Where the formats differ is a [`Dialect`]:
//! the words of a failure (Go's `json: cannot unmarshal …` for the
//! Kustomization, krusty's own for catalogs and compositions), whether
//! null reads as an empty value, and whether field names match without
//! regard to case. The rules themselves are written once, here.

use std::fmt;

use krusty_yaml::{resolve_input, Node, Pos, Resolved, Value};

use crate::error::{SchemaError, SchemaResult};

/// What a value must be, for the words of a mismatch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A mapping.
    Mapping,
    /// A sequence.
    Sequence,
    /// A string.
    String,
    /// A boolean.
    Bool,
    /// A whole number.
    Integer,
}

/// What is wrong, for a [`Dialect`] to put in its words (printed: in
/// krusty's plain words, `must be a list`).
#[derive(Debug, Clone)]
pub enum Problem<'a> {
    /// The text is not YAML (the parser's message).
    Yaml(&'a str),
    /// No document of the file has content.
    EmptyFile,
    /// A document follows the one a file may hold.
    SecondDocument,
    /// A field the format does not have, as written.
    Unknown(&'a str),
    /// A value (the node) of another type than the field's.
    Mismatch(Kind, &'a Node),
    /// A field that must be given is not (with what it may hold).
    Required(Option<&'a str>),
    /// A string that must not be empty is.
    EmptyValue,
    /// Any other failure, in the format's words.
    Invalid(String),
}

impl fmt::Display for Problem<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Problem::Yaml(message) => return write!(f, "not valid YAML: {message}"),
            Problem::Required(Some(hint)) => return write!(f, "required ({hint})"),
            Problem::Invalid(message) => message,
            Problem::EmptyFile => "the file is empty",
            Problem::SecondDocument => "the file holds one YAML document; a second one starts here",
            Problem::Unknown(_) => "unknown field",
            Problem::Mismatch(Kind::Mapping, _) => "must be a mapping",
            Problem::Mismatch(Kind::Sequence, _) => "must be a list",
            Problem::Mismatch(Kind::String, _) => "must be a string",
            Problem::Mismatch(Kind::Bool, _) => "must be true or false",
            Problem::Mismatch(Kind::Integer, _) => "must be a whole number",
            Problem::Required(None) => "required",
            Problem::EmptyValue => "must not be empty",
        })
    }
}

/// How a format words its failures and reads what the rules leave open.
/// The rules are [`Decode`]'s, the same for every dialect.
pub trait Dialect {
    /// The error for `problem` with the value at `pos`, in the field
    /// `field` (a dotted path; empty: the document).
    fn error(&self, pos: Pos, field: &str, problem: Problem<'_>) -> SchemaError;

    /// Whether a null reads as the empty value of `kind` (else it is a
    /// mismatch).
    fn null_is_empty(&self, kind: Kind) -> bool;

    /// Whether field names match the known ones without regard to case,
    /// as Go's JSON decoding matches them (else exactly).
    fn ignores_case(&self) -> bool {
        false
    }

    /// The field an entry `key` of the mapping in `field` is named by in
    /// messages.
    fn entry_path(&self, field: &str, key: &str) -> String {
        child_field(field, key)
    }

    /// The field item `index` of the sequence in `field` is named by in
    /// messages.
    fn item_path(&self, field: &str, _index: usize) -> String {
        field.to_string()
    }
}

/// The dotted path, for messages, of the key `name` under `field` (the
/// empty path is the document).
pub fn child_field(field: &str, name: &str) -> String {
    if field.is_empty() {
        name.to_string()
    } else {
        format!("{field}.{name}")
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

/// How many documents a format's file holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Documents {
    /// The first with content is the file's; any after it are not read.
    First,
    /// One: a further document with content is an error.
    One,
}

/// An entry of a mapping whose name is known.
#[derive(Debug, Clone)]
pub struct Entry<'n> {
    /// The known name it matched.
    pub name: &'static str,
    /// The key as written.
    pub key: &'n Node,
    /// The value.
    pub value: &'n Node,
    /// The field it is, for messages.
    pub path: String,
}

/// Walks a mapping with [`Decode::each`], `walk!(dialect, node, field,
/// strictness, |e| match e.name { "a" | "b" => …, })`: the names the arms
/// match are the known ones, so what a format reads and what it knows are
/// written once. Every arm is a statement; an entry no arm takes (its
/// guard false) is passed over.
macro_rules! walk {
    ($d:expr, $node:expr, $field:expr, $strictness:expr, |$e:ident| match $m:ident.name {
        $($arms:tt)*
    }) => {
        $crate::decode::Decode::each(
            &$d,
            $node,
            $field,
            &$crate::decode::walk!(@names [] $($arms)*),
            $strictness,
            |$e| {
                match $m.name {
                    $($arms)*
                    _ => {}
                }
                Ok(())
            },
        )
    };
    (@names [$($n:literal)*] $($name:literal)|+ $(if $guard:expr)? => $body:block $(,)? $($rest:tt)*) => {
        $crate::decode::walk!(@names [$($n)* $($name)+] $($rest)*)
    };
    (@names [$($n:literal)*] $($name:literal)|+ $(if $guard:expr)? => $body:expr $(, $($rest:tt)*)?) => {
        $crate::decode::walk!(@names [$($n)* $($name)+] $($($rest)*)?)
    };
    (@names [$($n:literal)*]) => {
        [$($n),*]
    };
}
pub(crate) use walk;

/// The strict decoding of every format, in the words of its dialect: each
/// value is checked against the type its field holds, and each failure
/// is located at the value and names its field.
pub trait Decode: Dialect {
    /// The root of the document `text` holds: the first with content
    /// (empty documents before it are skipped). No such document is an
    /// empty file; with [`Documents::One`], a later document other than
    /// null is refused.
    fn root(&self, text: &str, documents: Documents) -> SchemaResult<Node> {
        let docs = krusty_yaml::parse_stream(text)
            .map_err(|e| self.error(e.pos, "", Problem::Yaml(&e.message)))?;
        let mut roots = docs.into_iter().filter_map(|doc| doc.root);
        let first = roots
            .next()
            .ok_or_else(|| self.error(Pos { line: 1, col: 1 }, "", Problem::EmptyFile))?;
        match roots.find(|r| !r.is_null()) {
            Some(second) if documents == Documents::One => {
                Err(self.error(second.pos(), "", Problem::SecondDocument))
            }
            _ => Ok(first),
        }
    }

    /// Visits the entries of the mapping `node` (in `field`) in the order
    /// written, each under the known name it matches; an unknown one is
    /// an error naming it when `strictness` is strict (skipped otherwise).
    /// A failure of `visit` stops the walk: the first problem written is
    /// the one reported.
    fn each<'n>(
        &self,
        node: &'n Node,
        field: &str,
        known: &[&'static str],
        strictness: Strictness,
        mut visit: impl FnMut(Entry<'n>) -> SchemaResult<()>,
    ) -> SchemaResult<()> {
        for (key, value) in self.mapping(node, field)? {
            let written = key.key_str().unwrap_or_default();
            let found = known.iter().find(|k| match self.ignores_case() {
                true => k.eq_ignore_ascii_case(written),
                false => **k == written,
            });
            let path = self.entry_path(field, found.unwrap_or(&written));
            match found {
                Some(&name) => visit(Entry {
                    name,
                    key,
                    value,
                    path,
                })?,
                None if strictness == Strictness::Strict => {
                    return Err(self.error(key.pos(), &path, Problem::Unknown(written)));
                }
                None => {}
            }
        }
        Ok(())
    }

    /// The error for a required field `field` that `n` lacks.
    fn required(&self, n: &Node, field: &str) -> SchemaError {
        self.error(n.pos(), field, Problem::Required(None))
    }

    /// [`Decode::required`], saying what the field may hold.
    fn required_as(&self, n: &Node, field: &str, hint: &str) -> SchemaError {
        self.error(n.pos(), field, Problem::Required(Some(hint)))
    }

    /// The error `message` for the value `n` of `field`.
    fn invalid(&self, n: &Node, field: &str, message: impl Into<String>) -> SchemaError {
        self.error(n.pos(), field, Problem::Invalid(message.into()))
    }

    /// The error for a value of another type than `want`.
    fn mismatch(&self, n: &Node, field: &str, want: Kind) -> SchemaError {
        self.error(n.pos(), field, Problem::Mismatch(want, n))
    }

    /// The entries of a mapping.
    fn mapping<'n>(&self, n: &'n Node, field: &str) -> SchemaResult<&'n [(Node, Node)]> {
        match &n.value {
            Value::Map(entries) => Ok(entries),
            _ if n.is_null() && self.null_is_empty(Kind::Mapping) => Ok(&[]),
            _ => Err(self.mismatch(n, field, Kind::Mapping)),
        }
    }

    /// The items of a sequence.
    fn sequence<'n>(&self, n: &'n Node, field: &str) -> SchemaResult<&'n [Node]> {
        match &n.value {
            Value::Seq(items) => Ok(items),
            _ if n.is_null() && self.null_is_empty(Kind::Sequence) => Ok(&[]),
            _ => Err(self.mismatch(n, field, Kind::Sequence)),
        }
    }

    /// A string: a scalar that resolves to one (not a number, a boolean
    /// or null written plain).
    fn string(&self, n: &Node, field: &str) -> SchemaResult<String> {
        match (&n.value, resolve_input(n)) {
            (Value::Scalar(_), Resolved::Str(s)) => Ok(s.to_string()),
            (Value::Scalar(_), Resolved::Owned(s)) => Ok(s),
            (Value::Scalar(_), Resolved::Null) if self.null_is_empty(Kind::String) => {
                Ok(String::new())
            }
            _ => Err(self.mismatch(n, field, Kind::String)),
        }
    }

    /// The text of a scalar as written, whatever it resolves to (a
    /// number's digits, a boolean's word).
    fn text<'n>(&self, n: &'n Node, field: &str) -> SchemaResult<&'n str> {
        match n.as_scalar() {
            Some(s) if !n.is_null() => Ok(s.text.as_str()),
            Some(_) if self.null_is_empty(Kind::String) => Ok(""),
            _ => Err(self.mismatch(n, field, Kind::String)),
        }
    }

    /// A boolean.
    fn boolean(&self, n: &Node, field: &str) -> SchemaResult<bool> {
        match (&n.value, resolve_input(n)) {
            (Value::Scalar(_), Resolved::Bool(b)) => Ok(b),
            (Value::Scalar(_), Resolved::Null) if self.null_is_empty(Kind::Bool) => Ok(false),
            _ => Err(self.mismatch(n, field, Kind::Bool)),
        }
    }

    /// A whole number. One written as a float (`3.0`, `1e3`) is one: the
    /// YAML to JSON step writes it without a fraction.
    fn integer(&self, n: &Node, field: &str) -> SchemaResult<i64> {
        /// 2^63: floats from here on are out of `i64`'s range.
        const OUT_OF_RANGE: f64 = 9_223_372_036_854_775_808.0;
        match (&n.value, resolve_input(n)) {
            (Value::Scalar(_), Resolved::Null) if self.null_is_empty(Kind::Integer) => Ok(0),
            (Value::Scalar(_), Resolved::Int(i)) => {
                i64::try_from(i).map_err(|_| self.mismatch(n, field, Kind::Integer))
            }
            (Value::Scalar(_), Resolved::Float(f))
                if f.fract() == 0.0 && (-OUT_OF_RANGE..OUT_OF_RANGE).contains(&f) =>
            {
                Ok(f as i64)
            }
            _ => Err(self.mismatch(n, field, Kind::Integer)),
        }
    }

    /// A list of strings.
    fn strings(&self, n: &Node, field: &str) -> SchemaResult<Vec<String>> {
        let items = self.sequence(n, field)?.iter().enumerate();
        items
            .map(|(i, item)| self.string(item, &self.item_path(field, i)))
            .collect()
    }

    /// A map of strings, in the order written.
    fn string_map(&self, n: &Node, field: &str) -> SchemaResult<Vec<(String, String)>> {
        let entries = self.mapping(n, field)?.iter();
        entries
            .map(|(k, v)| {
                let key = k.key_str().unwrap_or_default();
                Ok((
                    key.to_string(),
                    self.string(v, &self.entry_path(field, key))?,
                ))
            })
            .collect()
    }
}

impl<D: Dialect + ?Sized> Decode for D {}

#[cfg(test)]
mod tests {
    use super::*;

    /// Krusty's words, at the field; null is an empty list only.
    struct Plain;

    impl Dialect for Plain {
        fn error(&self, pos: Pos, field: &str, problem: Problem<'_>) -> SchemaError {
            SchemaError::new(problem.to_string()).in_field(field, pos)
        }
        fn null_is_empty(&self, kind: Kind) -> bool {
            kind == Kind::Sequence
        }
    }

    #[test]
    fn a_walk_stops_at_the_first_problem_written() {
        let n = Plain
            .root("a: [x, 1]\nb: ~\nc: yes\n", Documents::One)
            .unwrap();
        let mut seen = Vec::new();
        let walk = Plain.each(&n, "top", &["a", "b"], Strictness::Strict, |e| {
            seen.push(e.name);
            Plain.strings(e.value, &e.path).map(drop)
        });
        let got = walk.unwrap_err().place_first("f.yaml");
        assert_eq!(
            (got.as_str(), seen),
            ("f.yaml:1:8: field 'top.a': must be a string", vec!["a"])
        );
        assert!(Plain
            .each(&n, "", &["b"], Strictness::Lenient, |_| Ok(()))
            .is_ok());
    }
}
