//! [`Serialize`] and [`Deserialize`] for [`Node`] (cargo feature `serde`).
//!
//! A node serializes as the data it holds: a mapping as a map (keys as
//! their text), a sequence as a sequence, and a scalar typed as krusty's
//! reader resolves it ([`resolve_input`]: YAML 1.2's core schema as
//! go-yaml v3 reads it): plain `3` is an integer, `"3"` a string, `true`
//! a boolean, `~` null, `!!binary` text its decoded string. An integer
//! outside the `i64` and `u64` ranges, and a float JSON cannot hold
//! (`.inf`, `.nan`), serialize as their text. Comments, styles and
//! positions are not data and are left out. This is the typing
//! `krusty_fn::config::to_json_value` gives, so that
//! `serde_json::to_value(&node)` is the same value.
//!
//! ```
//! let node = krusty_yaml::first_root("replicas: 3\nname: \"3\"\nports: [80]\n")
//!     .unwrap()
//!     .unwrap();
//! let json = serde_json::to_string(&node).unwrap();
//! assert_eq!(json, r#"{"replicas":3,"name":"3","ports":[80]}"#);
//! ```
//!
//! A node deserializes from any self-describing format into plain new
//! nodes (no position, no comments, block style): numbers, booleans and
//! null as plain scalars, strings plain where their text reads back as the
//! same string and double-quoted where it would not (`"80"`, `"true"`,
//! `""`), so that every value comes back as the type it had.
//!
//! ```
//! use krusty_yaml::{to_yaml_preserving, Node};
//!
//! let node: Node = serde_json::from_str(r#"{"port":"80","enabled":true,"name":"web"}"#).unwrap();
//! assert_eq!(
//!     to_yaml_preserving(&node).unwrap(),
//!     "port: \"80\"\nenabled: true\nname: web\n"
//! );
//! ```

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};

use crate::node::{Node, Value};
use crate::resolve::{resolve_input, Resolved};

impl Serialize for Node {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match &self.value {
            Value::Scalar(s) => match resolve_input(self) {
                Resolved::Null => serializer.serialize_unit(),
                Resolved::Bool(b) => serializer.serialize_bool(b),
                Resolved::Int(i) => {
                    if let Ok(i) = i64::try_from(i) {
                        serializer.serialize_i64(i)
                    } else if let Ok(u) = u64::try_from(i) {
                        serializer.serialize_u64(u)
                    } else {
                        serializer.serialize_str(&s.text)
                    }
                }
                Resolved::Float(f) if f.is_finite() => serializer.serialize_f64(f),
                Resolved::Float(_) => serializer.serialize_str(&s.text),
                Resolved::Str(text) => serializer.serialize_str(text),
                Resolved::Owned(text) => serializer.serialize_str(&text),
            },
            Value::Seq(items) => {
                let mut seq = serializer.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            Value::Map(entries) => {
                let mut map = serializer.serialize_map(Some(entries.len()))?;
                for (k, v) in entries {
                    map.serialize_entry(k.key_str().unwrap_or_default(), v)?;
                }
                map.end()
            }
        }
    }
}

/// A string scalar: plain when its text resolves as that string, else
/// double-quoted.
fn string_node(text: &str) -> Node {
    let plain = Node::plain(text);
    if matches!(resolve_input(&plain), Resolved::Str(t) if t == text) {
        plain
    } else {
        Node::string(text)
    }
}

/// A finite float's text as YAML reads it back as a float (`1.0`, not
/// `1`); YAML's words for the others.
fn float_text(f: f64) -> String {
    if f.is_nan() {
        ".nan".into()
    } else if f.is_infinite() {
        if f > 0.0 { ".inf" } else { "-.inf" }.into()
    } else {
        format!("{f:?}")
    }
}

struct NodeVisitor;

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = Node;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any YAML value")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Node, E> {
        Ok(Node::plain(if v { "true" } else { "false" }))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Node, E> {
        Ok(Node::plain(v.to_string()))
    }
    fn visit_i128<E: de::Error>(self, v: i128) -> Result<Node, E> {
        Ok(Node::plain(v.to_string()))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Node, E> {
        Ok(Node::plain(v.to_string()))
    }
    fn visit_u128<E: de::Error>(self, v: u128) -> Result<Node, E> {
        Ok(Node::plain(v.to_string()))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Node, E> {
        Ok(Node::plain(float_text(v)))
    }
    fn visit_char<E: de::Error>(self, v: char) -> Result<Node, E> {
        Ok(string_node(v.encode_utf8(&mut [0; 4])))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Node, E> {
        Ok(string_node(v))
    }
    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Node, E> {
        Ok(Node::seq_of(v.iter().map(|b| Node::plain(b.to_string()))))
    }
    fn visit_none<E: de::Error>(self) -> Result<Node, E> {
        Ok(Node::null())
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Node, D::Error> {
        Node::deserialize(d)
    }
    fn visit_unit<E: de::Error>(self) -> Result<Node, E> {
        Ok(Node::null())
    }
    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<Node, D::Error> {
        Node::deserialize(d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
        while let Some(item) = seq.next_element::<Node>()? {
            items.push(item);
        }
        Ok(Node::seq_of(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
        let mut entries = Vec::with_capacity(map.size_hint().unwrap_or(0).min(4096));
        while let Some((key, value)) = map.next_entry::<Node, Node>()? {
            if !matches!(key.value, Value::Scalar(_)) {
                return Err(de::Error::custom("a mapping key must be a scalar"));
            }
            entries.push((key, value));
        }
        Ok(Node::map_of(entries))
    }
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Node, D::Error> {
        deserializer.deserialize_any(NodeVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_that_look_typed_are_quoted() {
        for text in ["80", "true", "", "null", "~", "1.5", "0x1F"] {
            let n = string_node(text);
            assert_eq!(resolve_input(&n), Resolved::Str(text), "{text:?}");
            assert_ne!(n.style(), crate::ScalarStyle::Plain, "{text:?}");
        }
        assert_eq!(string_node("web").style(), crate::ScalarStyle::Plain);
    }
}
