//! Go `encoding/json` text of a node: what Kustomize hashes and compares.
//!
//! Keys are sorted bytewise, output is compact, and `<`, `>`, `&`, U+2028,
//! U+2029 and control characters are escaped as Go escapes them. Scalars keep the types the
//! reader gives them (numbers stay numbers).

use crate::node::{Node, Value};
use crate::resolve::{resolve_input, Resolved};

/// The compact JSON encoding of `node`, as Go's `json.Marshal` of the
/// decoded value would write it.
pub fn to_go_json(node: &Node) -> String {
    let mut out = String::new();
    write_value(node, &mut out);
    out
}

/// Appends a JSON string literal with Go's escaping.
pub fn write_go_json_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            // Go 1.22 and later (kubectl v1.32 is built with Go 1.23).
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => {
                out.push_str(&format!("\\u{:04x}", c as u32))
            }
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

fn write_value(node: &Node, out: &mut String) {
    match &node.value {
        Value::Map(entries) => {
            let mut sorted: Vec<(&str, &Node)> = entries
                .iter()
                .map(|(k, v)| (k.key_str().unwrap_or_default(), v))
                .collect();
            sorted.sort_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (i, (k, v)) in sorted.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_go_json_string(k, out);
                out.push(':');
                write_value(v, out);
            }
            out.push('}');
        }
        Value::Seq(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(item, out);
            }
            out.push(']');
        }
        Value::Scalar(_) => match resolve_input(node) {
            Resolved::Null => out.push_str("null"),
            Resolved::Bool(b) => out.push_str(if b { "true" } else { "false" }),
            Resolved::Int(i) => out.push_str(&i.to_string()),
            Resolved::Float(f) => out.push_str(&crate::emit::go_json_float(f)),
            Resolved::Str(t) => write_go_json_string(t, out),
            Resolved::Owned(t) => write_go_json_string(&t, out),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorted_compact_and_go_escaped() {
        let docs = crate::parse_stream("b: 1\na: '<x>'\nc: [true, null, 1.5]\n").unwrap();
        let root = docs[0].root.as_ref().unwrap();
        assert_eq!(
            to_go_json(root),
            r#"{"a":"\u003cx\u003e","b":1,"c":[true,null,1.5]}"#
        );
    }
}
