//! Kustomize v5.8.1's replacement targets inside structured strings: a
//! target path that goes on past a string field (`data.config\.json.db.host`)
//! reads the string as a YAML document (JSON is YAML), writes the value
//! inside, and writes the string back: as Go's `encoding/json` writes JSON
//! when the string held JSON, else as YAML (see [`json`] and [`yaml`]).
//!
//! Kustomize tries this on every target path before its usual walk, and
//! falls back to that walk whenever any step of it fails.

mod json;
mod parse;
mod yaml;

pub(crate) use parse::parse_document;

use krusty_yaml::{Node, Resolved, ScalarStyle, Tag};

use crate::path::{self, raw};
use crate::target_path::{visit, NodeKind, Reached, Step, Walk};

/// Writes `value` inside the structured string `field_path` goes through
/// in `root`, as Kustomize v5.8.1 tries first for every target path
/// (`create` makes missing fields inside the string, the last of the
/// value's kind). `false` when nothing was written: the path has fewer
/// than two parts, goes through no string that reads as YAML, reaches
/// nothing inside it, or the result cannot be written back; the usual
/// walk follows then.
pub(crate) fn write_into_string(
    root: &mut Node,
    field_path: &str,
    value: &Node,
    create: Option<NodeKind>,
) -> bool {
    let parts = path::split_replacement(field_path);
    if parts.len() < 2 {
        return false;
    }
    let Some(found) = find_string(root, &parts) else {
        return false;
    };
    let Some(mut doc) = found.doc else {
        // An empty document has no fields to reach.
        return false;
    };
    if !write_in_document(&mut doc, &parts[found.split..], value, create) {
        return false;
    }
    let Some(text) = serialize(&doc, &found.text) else {
        return false;
    };
    match path::follow_mut(root, &found.at).map(|n| &mut n.value) {
        Some(krusty_yaml::Value::Scalar(s)) => {
            s.text = text.into();
            true
        }
        _ => false,
    }
}

/// A string field a target path goes through.
struct Found {
    /// Where the field is (see [`path::locate`]).
    at: Vec<usize>,
    /// How many parts of the path lead to it.
    split: usize,
    /// Its text.
    text: String,
    /// Its first YAML document (`None`: an empty one).
    doc: Option<Node>,
}

/// The first string field `parts` lead to, with more parts after it,
/// whose text reads as YAML. Prefixes the path getter cannot follow (`*`,
/// a kind that does not fit) are passed over.
fn find_string(root: &Node, parts: &[String]) -> Option<Found> {
    (1..parts.len()).find_map(|split| {
        let at = path::locate(root, &parts[..split]).ok()??;
        let text = path::follow(root, &at)?.as_scalar()?.text.to_string();
        let mut doc = parse_document(&text).ok()?;
        if let Some(doc) = &mut doc {
            yaml::mark_flow_collections(doc, &text);
        }
        Some(Found {
            at,
            split,
            text,
            doc,
        })
    })
}

/// Walks `rest` in `doc` and sets `value` at every node it reaches;
/// `false` when the walk fails or reaches nothing.
fn write_in_document(
    doc: &mut Node,
    rest: &[String],
    value: &Node,
    create: Option<NodeKind>,
) -> bool {
    let steps = Step::parse_parts(rest);
    if steps.is_empty() {
        return false;
    }
    let walk = Walk {
        create,
        enter_scalars: true,
    };
    let mut set = |field: &mut Node, at: Reached| {
        if !at.in_copy {
            set_in_document(field, at.created, value);
        }
        Ok(())
    };
    matches!(visit(doc, &steps, walk, &mut set, Reached::default()), Ok(n) if n > 0)
}

/// Sets `value` at `field`: a scalar takes only the text (a created one
/// has no type of its own; an existing one keeps its type, see
/// [`set_text_keeping_type`]), anything else becomes the value.
fn set_in_document(field: &mut Node, created: bool, value: &Node) {
    if field.as_scalar().is_none() {
        *field = value.clone();
    } else if created {
        *field = Node::plain(raw(value));
    } else {
        set_text_keeping_type(field, raw(value));
    }
}

/// The YAML type a scalar's text has, as a tag.
fn type_of(resolved: &Resolved<'_>) -> Tag {
    match resolved {
        Resolved::Null => Tag::Null,
        Resolved::Bool(_) => Tag::Bool,
        Resolved::Int(_) => Tag::Int,
        Resolved::Float(_) => Tag::Float,
        Resolved::Owned(_) => Tag::Timestamp,
        Resolved::Str(_) => Tag::Str,
    }
}

/// Gives a scalar read from a string new `text`, keeping the type it was
/// read with, as go-yaml writes such a node: a tag written in the source
/// stays; a quoted string stays quoted; plain text of the same type stays
/// plain; a string whose new text reads as another type is double-quoted;
/// any other type that the new text does not have gets its tag written
/// (`!!int many`).
fn set_text_keeping_type(node: &mut Node, text: &str) {
    let explicit = node.tag().is_some();
    let plain = node.style() == ScalarStyle::Plain;
    let old_type = match (explicit, plain) {
        (true, _) => node.tag(),
        (false, true) => type_of(&krusty_yaml::resolve::resolve_plain_v3(raw(node))),
        (false, false) => Tag::Str,
    };
    if let krusty_yaml::Value::Scalar(s) = &mut node.value {
        s.text = text.into();
    }
    if explicit || (old_type == Tag::Str && !plain) {
        return;
    }
    let new_type = type_of(&krusty_yaml::resolve::resolve_plain_v3(text));
    if new_type == old_type {
        return;
    }
    if old_type == Tag::Str {
        // A line break makes a literal block, a string whatever it holds.
        if !text.contains('\n') {
            node.set_style(ScalarStyle::DoubleQuoted);
        }
        return;
    }
    node.set_tag(old_type);
}

/// The document's new text: JSON when the old text (blanks trimmed)
/// starts with `{` or `[`, indented by two spaces when the old text has
/// a line break and two spaces in a row, else compact; YAML otherwise.
/// `None` when it cannot be written.
fn serialize(doc: &Node, old: &str) -> Option<String> {
    match old.trim().chars().next()? {
        '{' | '[' => json::serialize(doc, old.contains('\n') && old.contains("  ")).ok(),
        _ => yaml::serialize(doc),
    }
}

#[cfg(test)]
mod tests;
