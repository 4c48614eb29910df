//! Serde values to nodes, and writing a new value over an old node so
//! that what did not change keeps its comments, key order and style.

use krusty_yaml::{Node, Value};
use serde::ser::{self, Serialize};

use crate::config::to_json_value;

/// Why a value cannot become a node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToNodeError(pub String);

impl std::fmt::Display for ToNodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ToNodeError {}

impl ser::Error for ToNodeError {
    fn custom<T: std::fmt::Display>(msg: T) -> ToNodeError {
        ToNodeError(msg.to_string())
    }
}

/// Converts any `Serialize` value to a node. Struct fields come in their
/// declaration order; a struct field that serializes as null (an
/// `Option` that is `None`) is left out; strings are strings whatever
/// they look like (`"80"` stays a string).
pub fn to_node<T: Serialize + ?Sized>(value: &T) -> Result<Node, ToNodeError> {
    value.serialize(NodeSerializer)
}

/// Writes `new` over `old` in place: mappings are updated key by key
/// (keys kept in their order, new keys appended, missing keys removed),
/// lists item by item, and scalars only when their value changes. What
/// is unchanged keeps its comments and style; a changed node keeps its
/// comments.
pub fn assign(old: &mut Node, mut new: Node) {
    if let (Value::Map(entries), Value::Map(new_entries)) = (&mut old.value, &mut new.value) {
        let new_entries = std::mem::take(new_entries);
        entries.retain(|(k, _)| {
            new_entries
                .iter()
                .any(|(nk, _)| nk.key_str() == k.key_str())
        });
        for (key, value) in new_entries {
            let name = key.key_str().unwrap_or_default();
            match entries.iter_mut().find(|(k, _)| k.key_str() == Some(name)) {
                Some(slot) => assign(&mut slot.1, value),
                None => entries.push((key, value)),
            }
        }
        return;
    }
    if let (Value::Seq(items), Value::Seq(new_items)) = (&mut old.value, &mut new.value) {
        let new_items = std::mem::take(new_items);
        items.truncate(new_items.len());
        for (i, item) in new_items.into_iter().enumerate() {
            match items.get_mut(i) {
                Some(slot) => assign(slot, item),
                None => items.push(item),
            }
        }
        return;
    }
    if matches!(old.value, Value::Scalar(_))
        && matches!(new.value, Value::Scalar(_))
        && to_json_value(old) == to_json_value(&new)
    {
        return;
    }
    let extras = old.extras.take();
    // A new node (no source position): the writer quotes it only where needed.
    *old = new;
    if extras.is_some() {
        old.extras = extras;
    }
}

struct NodeSerializer;

fn scalar(text: impl ToString) -> Result<Node, ToNodeError> {
    Ok(Node::plain(text.to_string()))
}

fn tagged(variant: &str, value: Node) -> Node {
    let mut m = Node::map();
    m.set(variant, value);
    m
}

impl ser::Serializer for NodeSerializer {
    type Ok = Node;
    type Error = ToNodeError;
    type SerializeSeq = SeqBuilder;
    type SerializeTuple = SeqBuilder;
    type SerializeTupleStruct = SeqBuilder;
    type SerializeTupleVariant = SeqBuilder;
    type SerializeMap = MapBuilder;
    type SerializeStruct = MapBuilder;
    type SerializeStructVariant = MapBuilder;

    fn serialize_bool(self, v: bool) -> Result<Node, ToNodeError> {
        scalar(v)
    }
    fn serialize_i8(self, v: i8) -> Result<Node, ToNodeError> {
        scalar(v)
    }
    fn serialize_i16(self, v: i16) -> Result<Node, ToNodeError> {
        scalar(v)
    }
    fn serialize_i32(self, v: i32) -> Result<Node, ToNodeError> {
        scalar(v)
    }
    fn serialize_i64(self, v: i64) -> Result<Node, ToNodeError> {
        scalar(v)
    }
    fn serialize_u8(self, v: u8) -> Result<Node, ToNodeError> {
        scalar(v)
    }
    fn serialize_u16(self, v: u16) -> Result<Node, ToNodeError> {
        scalar(v)
    }
    fn serialize_u32(self, v: u32) -> Result<Node, ToNodeError> {
        scalar(v)
    }
    fn serialize_u64(self, v: u64) -> Result<Node, ToNodeError> {
        scalar(v)
    }
    fn serialize_f32(self, v: f32) -> Result<Node, ToNodeError> {
        self.serialize_f64(f64::from(v))
    }
    fn serialize_f64(self, v: f64) -> Result<Node, ToNodeError> {
        if v.is_nan() {
            scalar(".nan")
        } else if v.is_infinite() {
            scalar(if v > 0.0 { ".inf" } else { "-.inf" })
        } else {
            scalar(format!("{v:?}"))
        }
    }
    fn serialize_char(self, v: char) -> Result<Node, ToNodeError> {
        Ok(Node::string(v.to_string()))
    }
    fn serialize_str(self, v: &str) -> Result<Node, ToNodeError> {
        Ok(Node::string(v))
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<Node, ToNodeError> {
        Ok(Node::seq_of(v.iter().map(|b| Node::plain(b.to_string()))))
    }
    fn serialize_none(self) -> Result<Node, ToNodeError> {
        Ok(Node::null())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<Node, ToNodeError> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<Node, ToNodeError> {
        Ok(Node::null())
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<Node, ToNodeError> {
        Ok(Node::null())
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<Node, ToNodeError> {
        Ok(Node::string(variant))
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<Node, ToNodeError> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<Node, ToNodeError> {
        Ok(tagged(variant, to_node(value)?))
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<SeqBuilder, ToNodeError> {
        Ok(SeqBuilder {
            items: Vec::with_capacity(len.unwrap_or(0)),
            variant: None,
        })
    }
    fn serialize_tuple(self, len: usize) -> Result<SeqBuilder, ToNodeError> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        len: usize,
    ) -> Result<SeqBuilder, ToNodeError> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<SeqBuilder, ToNodeError> {
        let mut b = self.serialize_seq(Some(len))?;
        b.variant = Some(variant);
        Ok(b)
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<MapBuilder, ToNodeError> {
        Ok(MapBuilder::new(None))
    }
    fn serialize_struct(self, _name: &'static str, _len: usize) -> Result<MapBuilder, ToNodeError> {
        Ok(MapBuilder::new(None))
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<MapBuilder, ToNodeError> {
        Ok(MapBuilder::new(Some(variant)))
    }
}

/// Builds a list (or an enum variant holding one).
struct SeqBuilder {
    items: Vec<Node>,
    variant: Option<&'static str>,
}

impl SeqBuilder {
    fn push<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), ToNodeError> {
        self.items.push(to_node(value)?);
        Ok(())
    }
    fn finish(self) -> Result<Node, ToNodeError> {
        let seq = Node::seq_of(self.items);
        Ok(match self.variant {
            Some(v) => tagged(v, seq),
            None => seq,
        })
    }
}

impl ser::SerializeSeq for SeqBuilder {
    type Ok = Node;
    type Error = ToNodeError;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), ToNodeError> {
        self.push(value)
    }
    fn end(self) -> Result<Node, ToNodeError> {
        self.finish()
    }
}

impl ser::SerializeTuple for SeqBuilder {
    type Ok = Node;
    type Error = ToNodeError;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), ToNodeError> {
        self.push(value)
    }
    fn end(self) -> Result<Node, ToNodeError> {
        self.finish()
    }
}

impl ser::SerializeTupleStruct for SeqBuilder {
    type Ok = Node;
    type Error = ToNodeError;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), ToNodeError> {
        self.push(value)
    }
    fn end(self) -> Result<Node, ToNodeError> {
        self.finish()
    }
}

impl ser::SerializeTupleVariant for SeqBuilder {
    type Ok = Node;
    type Error = ToNodeError;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), ToNodeError> {
        self.push(value)
    }
    fn end(self) -> Result<Node, ToNodeError> {
        self.finish()
    }
}

/// Builds a mapping (or an enum variant holding one).
struct MapBuilder {
    map: Node,
    key: Option<String>,
    variant: Option<&'static str>,
}

impl MapBuilder {
    fn new(variant: Option<&'static str>) -> MapBuilder {
        MapBuilder {
            map: Node::map(),
            key: None,
            variant,
        }
    }
    fn finish(self) -> Result<Node, ToNodeError> {
        Ok(match self.variant {
            Some(v) => tagged(v, self.map),
            None => self.map,
        })
    }
    fn field<T: Serialize + ?Sized>(&mut self, key: &str, value: &T) -> Result<(), ToNodeError> {
        let node = to_node(value)?;
        if !node.is_null() {
            self.map.set(key, node);
        }
        Ok(())
    }
}

/// The text of a map key: a scalar's text.
fn key_text(node: Node) -> Result<String, ToNodeError> {
    node.key_str()
        .map(str::to_string)
        .ok_or_else(|| ToNodeError("a mapping key must be a string, number or boolean".into()))
}

impl ser::SerializeMap for MapBuilder {
    type Ok = Node;
    type Error = ToNodeError;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), ToNodeError> {
        self.key = Some(key_text(to_node(key)?)?);
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), ToNodeError> {
        let key = self
            .key
            .take()
            .ok_or_else(|| ToNodeError("a map value without a key".into()))?;
        self.map.set(&key, to_node(value)?);
        Ok(())
    }
    fn end(self) -> Result<Node, ToNodeError> {
        self.finish()
    }
}

impl ser::SerializeStruct for MapBuilder {
    type Ok = Node;
    type Error = ToNodeError;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), ToNodeError> {
        self.field(key, value)
    }
    fn end(self) -> Result<Node, ToNodeError> {
        self.finish()
    }
}

impl ser::SerializeStructVariant for MapBuilder {
    type Ok = Node;
    type Error = ToNodeError;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), ToNodeError> {
        self.field(key, value)
    }
    fn end(self) -> Result<Node, ToNodeError> {
        self.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Serialize;
    use std::collections::BTreeMap;

    #[derive(Serialize)]
    struct Container {
        name: String,
        image: String,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        args: Vec<String>,
        port: Option<u16>,
        env: BTreeMap<String, String>,
    }

    fn parse(text: &str) -> Node {
        krusty_yaml::parse_stream(text).unwrap()[0]
            .root
            .clone()
            .unwrap()
    }

    #[test]
    fn structs_keep_field_order_and_string_types() {
        let c = Container {
            name: "side".into(),
            image: "busybox:1.36".into(),
            args: vec![],
            port: Some(8080),
            env: [("A".to_string(), "1".to_string())].into(),
        };
        let n = to_node(&c).unwrap();
        assert_eq!(
            krusty_yaml::to_yaml_preserving(&n).unwrap(),
            "name: side\nimage: busybox:1.36\nport: 8080\nenv:\n  A: \"1\"\n"
        );
    }

    #[test]
    fn assign_keeps_what_did_not_change() {
        let mut old =
            parse("# head\nname: side # the name\nimage: old # img\nextra: x\nports:\n- 1\n- 2\n");
        let new = parse("image: new\nname: side\nports: [1]\nmore: y\n");
        assign(&mut old, new);
        assert_eq!(
            krusty_yaml::to_yaml_preserving(&old).unwrap(),
            "# head\nname: side # the name\nimage: new # img\nports:\n- 1\nmore: y\n"
        );
    }
}
