//! YAML text of a document read from a string, as Kustomize v5.8.1 writes
//! it back (go-yaml v3 as kyaml sets it up): two-space indentation, list
//! items not indented under their key, keys in their order, comments and
//! quoting kept, flow collections kept in flow style, blanks at both ends
//! trimmed.
//!
//! krusty's preserving writer does the block part. What it writes
//! otherwise is put in afterwards: each flow collection, and each empty
//! plain scalar (`key:` with nothing after it), is handed to it as a
//! placeholder word that is then replaced.

use krusty_yaml::emit::{is_break, is_printable};
use krusty_yaml::{Node, ScalarStyle, Value};

use crate::path::raw;

/// The style bits that mark a collection written in flow style in its
/// string (a collection's style bits are otherwise unused).
const FLOW: ScalarStyle = ScalarStyle::Folded;

/// Marks the collections of `doc` written in flow style in `text`, the
/// string it was read from (a flow collection starts with its bracket).
pub(super) fn mark_flow_collections(doc: &mut Node, text: &str) {
    let lines: Vec<&str> = text.split('\n').collect();
    mark(doc, &lines);
}

fn mark(node: &mut Node, lines: &[&str]) {
    let pos = node.pos();
    let first = (pos.line as usize)
        .checked_sub(1)
        .and_then(|l| lines.get(l))
        .and_then(|l| l.chars().nth((pos.col as usize).saturating_sub(1)));
    match &mut node.value {
        Value::Scalar(_) => return,
        Value::Seq(items) => items.iter_mut().for_each(|n| mark(n, lines)),
        Value::Map(entries) => entries.iter_mut().for_each(|(_, v)| mark(v, lines)),
    }
    if matches!(first, Some('{' | '[')) {
        node.set_style(FLOW);
    }
}

/// Whether `node` is a collection marked as written in flow style.
fn is_flow(node: &Node) -> bool {
    node.as_scalar().is_none() && node.style() == FLOW
}

/// The YAML text of `doc`, trimmed; `None` when it cannot be written.
pub(super) fn serialize(doc: &Node) -> Option<String> {
    let mut placeholders = Placeholders::new(doc);
    let prepared = placeholders.prepare(doc);
    let text = krusty_yaml::to_yaml_preserving(&prepared).ok()?;
    Some(placeholders.fill(text).trim().to_string())
}

/// Words standing for what the block writer does not write.
struct Placeholders {
    /// The words' common start, found in no text of the document.
    stem: String,
    /// What each word stands for, by number: a flow collection's text,
    /// or `None` for an empty scalar.
    texts: Vec<Option<String>>,
}

impl Placeholders {
    fn new(doc: &Node) -> Placeholders {
        let mut stem = String::from("krustyplaceholder");
        while mentions(doc, &stem) {
            stem.push('x');
        }
        Placeholders {
            stem,
            texts: Vec::new(),
        }
    }

    fn word(&self, i: usize) -> String {
        format!("{}{i}z", self.stem)
    }

    /// A copy of `node` with placeholders for flow collections and empty
    /// plain scalars.
    fn prepare(&mut self, node: &Node) -> Node {
        let stands_for = if is_flow(node) {
            let mut text = String::new();
            flow(node, &mut text);
            Some(Some(text))
        } else if is_empty_plain(node) {
            Some(None)
        } else {
            None
        };
        if let Some(text) = stands_for {
            self.texts.push(text);
            let mut word = Node::plain(self.word(self.texts.len() - 1));
            word.extras = node.extras.clone();
            return word;
        }
        let mut copy = node.clone();
        match &mut copy.value {
            Value::Scalar(_) => {}
            Value::Seq(items) => {
                for item in items.iter_mut() {
                    *item = self.prepare(item);
                }
            }
            Value::Map(entries) => {
                for (_, v) in entries.iter_mut() {
                    *v = self.prepare(v);
                }
            }
        }
        copy
    }

    /// `text` with the placeholders replaced (an empty scalar's with the
    /// blank before it).
    fn fill(&self, mut text: String) -> String {
        for (i, stands_for) in self.texts.iter().enumerate().rev() {
            let word = self.word(i);
            text = match stands_for {
                Some(flow) => text.replace(&word, flow),
                None => text.replace(&format!(" {word}"), "").replace(&word, ""),
            };
        }
        text
    }
}

/// Whether any text in `node` (scalars, keys, comments) holds `stem`.
fn mentions(node: &Node, stem: &str) -> bool {
    let in_comments = node.extras.as_ref().is_some_and(|e| {
        e.head.iter().any(|c| c.contains(stem)) || e.line.as_ref().is_some_and(|c| c.contains(stem))
    });
    in_comments
        || match &node.value {
            Value::Scalar(s) => s.text.contains(stem),
            Value::Seq(items) => items.iter().any(|n| mentions(n, stem)),
            Value::Map(entries) => entries
                .iter()
                .any(|(k, v)| mentions(k, stem) || mentions(v, stem)),
        }
}

/// An untagged plain scalar with no text: go-yaml writes nothing for it
/// in a block (`key:`).
fn is_empty_plain(node: &Node) -> bool {
    node.as_scalar().is_some_and(|s| s.text.is_empty())
        && node.tag().is_none()
        && node.style() == ScalarStyle::Plain
}

/// Appends `node` in flow style, as go-yaml writes it inside a flow
/// collection: `{a: 1, b: [x, y]}`.
fn flow(node: &Node, out: &mut String) {
    match &node.value {
        Value::Scalar(_) => flow_scalar(node, out),
        Value::Seq(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                flow(item, out);
            }
            out.push(']');
        }
        Value::Map(entries) => {
            out.push('{');
            for (i, (k, v)) in entries.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                flow(k, out);
                out.push_str(": ");
                flow(v, out);
            }
            out.push('}');
        }
    }
}

/// How a scalar is written in a flow collection.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Quoting {
    Plain,
    Single,
    Double,
}

/// Appends a scalar as go-yaml writes it in a flow collection: its tag if
/// it has one, then its text in its own style where that style is
/// allowed there (a block scalar, and text that needs it, double-quoted;
/// plain text that cannot stay plain, and empty text, single-quoted).
fn flow_scalar(node: &Node, out: &mut String) {
    if let Some(tag) = node.tag_text() {
        out.push_str(tag);
        out.push(' ');
    }
    let text = raw(node);
    let mut quoting = match node.style() {
        ScalarStyle::Plain if flow_plain_allowed(text) => Quoting::Plain,
        ScalarStyle::Plain | ScalarStyle::SingleQuoted => Quoting::Single,
        ScalarStyle::DoubleQuoted | ScalarStyle::Literal | ScalarStyle::Folded => Quoting::Double,
    };
    if quoting == Quoting::Single && !text.chars().all(is_printable) {
        quoting = Quoting::Double;
    }
    if quoting == Quoting::Single && text.contains(is_break) {
        quoting = Quoting::Double;
    }
    match quoting {
        Quoting::Plain => out.push_str(text),
        Quoting::Single => {
            out.push('\'');
            out.push_str(&text.replace('\'', "''"));
            out.push('\'');
        }
        Quoting::Double => double_quoted(text, out),
    }
}

/// Whether go-yaml writes `text` plain inside a flow collection: not
/// empty, no blank at either end, no line break, nothing it would escape,
/// and no indicator (`,[]{}?` anywhere, `:` anywhere, `#` after a blank,
/// an indicator character first, `---` or `...` first).
fn flow_plain_allowed(text: &str) -> bool {
    let Some(first) = text.chars().next() else {
        return false;
    };
    let ends_blank = text.starts_with([' ', '\t']) || text.ends_with([' ', '\t']);
    let indicator_first = "-?:,[]{}#&*!|>'\"%@`".contains(first)
        || text.starts_with("---")
        || text.starts_with("...");
    let comment = text.contains(" #") || text.contains("\t#");
    let indicator = text.contains([',', '[', ']', '{', '}', '?', ':']);
    !(ends_blank
        || indicator_first
        || comment
        || indicator
        || text.contains(is_break)
        || !text.chars().all(is_printable))
}

/// Appends `text` double-quoted with go-yaml's escapes.
fn double_quoted(text: &str, out: &mut String) {
    out.push('"');
    for c in text.chars() {
        if is_printable(c) && !matches!(c, '"' | '\\' | '\u{feff}') && !is_break(c) {
            out.push(c);
            continue;
        }
        out.push('\\');
        match escape_letter(c) {
            Some(letter) => out.push(letter),
            None => {
                let v = c as u32;
                out.push_str(&match v {
                    0..=0xFF => format!("x{v:02X}"),
                    0x100..=0xFFFF => format!("u{v:04X}"),
                    _ => format!("U{v:08X}"),
                });
            }
        }
    }
    out.push('"');
}

/// The letter of a character's short escape in a double-quoted scalar.
fn escape_letter(c: char) -> Option<char> {
    Some(match c {
        '\0' => '0',
        '\x07' => 'a',
        '\x08' => 'b',
        '\t' => 't',
        '\n' => 'n',
        '\x0b' => 'v',
        '\x0c' => 'f',
        '\r' => 'r',
        '\x1b' => 'e',
        '"' => '"',
        '\\' => '\\',
        '\u{85}' => 'N',
        '\u{a0}' => '_',
        '\u{2028}' => 'L',
        '\u{2029}' => 'P',
        _ => return None,
    })
}
