//! Kustomize v5.8.1's replacement targets inside structured strings: a
//! target path that goes on past a string field (`data.config\.json.db.host`)
//! reads the string as a YAML document (JSON is YAML), writes the value
//! inside, and writes the string back: as Go's `encoding/json` writes JSON
//! when the string held JSON, else as YAML (see [`json`] and [`yaml`]).
//!
//! Kustomize tries this on every target path before its usual walk, and
//! falls back to that walk whenever any step of it fails.

mod json;
mod yaml;

use krusty_yaml::{DuplicateKeys, Limits, Node, Pos, Resolved, ScalarStyle, Tag, YamlError};

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

/// Reads the first YAML document of `text` as Kustomize v5.8.1 reads a
/// string it goes into: `None` for an empty document (no node at all);
/// the error is go-yaml's message (`yaml: line 1: did not find expected
/// node content`). A key written twice is no error here.
pub(crate) fn parse_document(text: &str) -> Result<Option<Node>, String> {
    let first = first_document(text);
    let docs = match krusty_yaml::parse_stream(first) {
        Err(e) if e.message.contains("already defined") => krusty_yaml::parse_stream_with(
            first,
            Limits::with_duplicate_keys(DuplicateKeys::LastWins),
        ),
        docs => docs,
    }
    .map_err(|e| go_yaml_error(first, &e))?;
    Ok(docs.into_iter().next().and_then(|d| d.root))
}

/// The text of the first document of a YAML stream: up to the `---` or
/// `...` line that follows its content (go-yaml reads no further).
fn first_document(text: &str) -> &str {
    let mut started = false;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let bare = line.trim_end_matches(['\n', '\r']);
        let start = is_marker(bare, "---");
        if start || is_marker(bare, "...") {
            if started {
                return &text[..offset];
            }
            started = start;
        } else if !bare.trim().is_empty()
            && !bare.trim_start().starts_with('#')
            && !bare.starts_with('%')
        {
            started = true;
        }
        offset += line.len();
    }
    text
}

/// Whether `line` is the document marker `marker` (alone, or followed by
/// a blank).
fn is_marker(line: &str, marker: &str) -> bool {
    line.strip_prefix(marker)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', '\t']))
}

/// go-yaml's message for a YAML syntax error in `text`: `yaml: `, the
/// line for errors past the first line (for errors at the end of a text
/// without a final line break, the line after it), and the problem
/// without the reader's notes.
fn go_yaml_error(text: &str, e: &YamlError) -> String {
    let problem = match e.message.as_str() {
        UNCLOSED_FLOW => unclosed_flow_problem(text).to_string(),
        message => go_problem(message),
    };
    let line0 = e.pos.line.saturating_sub(1) as usize;
    let parser_error = problem.starts_with("did not find expected")
        && problem != "did not find expected comment or line break";
    let line = if parser_error {
        line0 + usize::from(at_end(text, e.pos) && !text.ends_with('\n'))
    } else if line0 == 0 {
        0
    } else {
        line0 + 1
    };
    match line {
        0 => format!("yaml: {problem}"),
        n => format!("yaml: line {n}: {problem}"),
    }
}

/// krusty's reader's message for a flow collection the text ends in.
const UNCLOSED_FLOW: &str =
    "did not find expected ',' or closing bracket before the end of the stream";

/// go-yaml's problem with a text that ends inside a flow collection: a
/// missing node after `[`, `{`, `,` or `:`, else the missing `,` or
/// closing bracket of the innermost open collection.
fn unclosed_flow_problem(text: &str) -> &'static str {
    let (open, last) = flow_state(text);
    match (last, open) {
        (Some('[' | '{' | ',' | ':'), _) => "did not find expected node content",
        (_, Some('[')) => "did not find expected ',' or ']'",
        _ => "did not find expected ',' or '}'",
    }
}

/// The innermost flow collection still open at the end of `text` (its
/// opening bracket) and the last character outside quotes and comments.
fn flow_state(text: &str) -> (Option<char>, Option<char>) {
    let mut open = Vec::new();
    let mut last = None;
    let mut quote: Option<char> = None;
    let mut chars = text.chars().peekable();
    let mut blank_before = true;
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some('"'), '\\') => {
                chars.next();
            }
            (Some(q), c) if c == q => {
                if q == '\'' && chars.peek() == Some(&'\'') {
                    chars.next();
                } else {
                    quote = None;
                    last = Some(c);
                }
            }
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '#') if blank_before => while chars.next_if(|&c| c != '\n').is_some() {},
            (None, c) if c.is_whitespace() => {}
            (None, c) => {
                match c {
                    '[' | '{' => open.push(c),
                    ']' | '}' => {
                        open.pop();
                    }
                    _ => {}
                }
                last = Some(c);
            }
        }
        blank_before = c.is_whitespace();
    }
    (open.last().copied(), last)
}

/// go-yaml's wording of a problem krusty's reader describes with notes
/// (`..., found ','`, `... while parsing a quoted scalar`).
fn go_problem(message: &str) -> String {
    let mut problem = message;
    for note in [", found", " while "] {
        if let Some(i) = problem.find(note) {
            problem = &problem[..i];
        }
    }
    if problem.starts_with("found character '") && problem.ends_with("that cannot start any token")
    {
        return "found character that cannot start any token".into();
    }
    problem.to_string()
}

/// Whether `pos` is at or past the end of `text`.
fn at_end(text: &str, pos: Pos) -> bool {
    let lines: Vec<&str> = text.split('\n').collect();
    let last = lines.len() as u32;
    let last_len = lines.last().map_or(0, |l| l.chars().count()) as u32;
    pos.line > last || (pos.line == last && pos.col > last_len)
}

#[cfg(test)]
mod tests;
