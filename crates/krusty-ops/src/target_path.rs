//! Replacement target field paths: Kustomize's path matcher, which finds
//! every node a path reaches (every element for `*` and for a
//! `[key=pattern]` selector) and, with `create`, makes what is missing.
//! What it makes under a null is lost, as in Kustomize, which adds it to
//! the null scalar: the walk goes on, the null stays.
//!
//! From Kustomize v5.8.1 on, a field holding a scalar with more of the path
//! after it is read as YAML (a JSON or YAML document kept in a string) and
//! the rest of the path walks a parsed copy of it: what is written there is
//! lost (see [`Walk::enter_scalars`]; [`crate::structured`] writes into such
//! strings for real before this walk is tried).

use krusty_match::go_regex::RegexError;
use krusty_yaml::{Node, ScalarStyle, Value};
use regex::Regex;

use crate::error::{OpError, OpResult};
use crate::path::{self, list_selector, raw, wrong_kind};

/// One part of a target field path.
pub(crate) enum Step {
    /// A list index.
    Index(usize),
    /// `*`: every list element.
    Every,
    /// `[key=pattern]` (`key` empty for a list of scalars): the elements
    /// whose field matches the unanchored regular expression `pattern`;
    /// the pattern's compile error is reported when an element is tested.
    Match {
        /// The field tested (empty: the element itself).
        key: String,
        /// The pattern as written (the text of an element `create` makes).
        text: String,
        /// The compiled pattern, or Go's compile error.
        pattern: Result<Regex, RegexError>,
    },
    /// `[key]`: a bracketed part without `=`, an error when reached.
    NoEquals,
    /// A map key.
    Field(String),
}

impl Step {
    /// The steps of a target field path (empty parts skipped).
    pub(crate) fn parse_path(field_path: &str) -> Vec<Step> {
        Step::parse_parts(&path::split_replacement(field_path))
    }

    /// The steps of a split field path (empty parts skipped).
    pub(crate) fn parse_parts(parts: &[String]) -> Vec<Step> {
        parts
            .iter()
            .filter(|p| !p.trim().is_empty())
            .map(|p| Step::parse(p.clone()))
            .collect()
    }

    fn parse(part: String) -> Step {
        if let Ok(idx) = part.parse::<usize>() {
            return Step::Index(idx);
        }
        if part == "*" {
            return Step::Every;
        }
        if path::is_bracketed(&part) {
            let Some((key, text)) = list_selector(&part) else {
                return Step::NoEquals;
            };
            let pattern = krusty_match::go_regex::compile(text);
            return Step::Match {
                key: key.to_string(),
                text: text.to_string(),
                pattern,
            };
        }
        Step::Field(part)
    }

    /// What the step leads into when created: a list for indices and
    /// selectors, else a map (before `*` too, which then finds no list:
    /// Kustomize creates a map there and fails).
    fn container_kind(&self) -> NodeKind {
        match self {
            Step::Index(_) | Step::Match { .. } | Step::NoEquals => NodeKind::Seq,
            Step::Field(_) | Step::Every => NodeKind::Map,
        }
    }

    /// The node kind this step needs, as Kustomize names it in a `wrong
    /// node kind` error.
    fn expected_kind(&self) -> &'static str {
        match self {
            Step::Field(_) => "MappingNode",
            _ => "SequenceNode",
        }
    }
}

/// The text a `[key=pattern]` selector tests: a scalar as YAML writes it
/// in its own style (quotes included), as Kustomize matches it.
fn match_text(node: &Node) -> std::borrow::Cow<'_, str> {
    let text = raw(node);
    match node.style() {
        ScalarStyle::SingleQuoted => format!("'{}'", text.replace('\'', "''")).into(),
        ScalarStyle::DoubleQuoted => format!("\"{text}\"").into(),
        _ => text.into(),
    }
}

/// The kind of a node, and of the node a created field gets (the value's).
#[derive(Clone, Copy, PartialEq, Debug)]
pub(crate) enum NodeKind {
    /// A scalar.
    Scalar,
    /// A mapping.
    Map,
    /// A sequence.
    Seq,
}

/// The kind of `node`.
pub(crate) fn kind_of(node: &Node) -> NodeKind {
    match node.value {
        Value::Scalar(_) => NodeKind::Scalar,
        Value::Map(_) => NodeKind::Map,
        Value::Seq(_) => NodeKind::Seq,
    }
}

fn new_node(kind: NodeKind) -> Node {
    match kind {
        NodeKind::Scalar => Node::plain(""),
        NodeKind::Map => Node::map(),
        NodeKind::Seq => Node::seq(),
    }
}

/// How a walk goes.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Walk {
    /// Make what is missing; the last part of the path becomes a node of
    /// this kind.
    pub create: Option<NodeKind>,
    /// Kustomize v5.8.1: a field holding a scalar, with more of the path
    /// after it, is parsed as a YAML document and the rest of the path
    /// walks that parsed copy; the copy is dropped afterwards, so what is
    /// set there is lost ([`Reached::in_copy`]). Text that is not YAML is
    /// an error, as is an empty document.
    pub enter_scalars: bool,
}

/// What the walk knows of a node it reached.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Reached {
    /// The walk created the node (or a node above it).
    pub created: bool,
    /// The node is in a copy that is dropped after the walk (a string's
    /// parsed copy, or what `create` makes under a null): what is set
    /// there is lost.
    pub in_copy: bool,
}

/// Called on every node a walk reaches.
pub(crate) type Setter<'a> = dyn FnMut(&mut Node, Reached) -> OpResult<()> + 'a;

fn child_kind(rest: &[Step], create: NodeKind) -> NodeKind {
    rest.first().map_or(create, Step::container_kind)
}

/// Calls `set` on every node `steps` reach from `node` (creating what is
/// missing when `walk.create` is given); returns how many there were.
pub(crate) fn visit(
    node: &mut Node,
    steps: &[Step],
    walk: Walk,
    set: &mut Setter<'_>,
    at: Reached,
) -> OpResult<usize> {
    let Some((step, rest)) = steps.split_first() else {
        set(node, at)?;
        return Ok(1);
    };
    match step {
        Step::Index(idx) => visit_index(node, *idx, rest, walk, set, at),
        Step::Every => {
            let Value::Seq(items) = &mut node.value else {
                return Err(wrong_kind("SequenceNode", node));
            };
            let mut count = 0;
            for item in items.iter_mut() {
                count += visit(item, rest, walk, set, at)?;
            }
            Ok(count)
        }
        Step::NoEquals => Err(path::selector_without_equals()),
        Step::Match { key, text, pattern } => {
            visit_matching(node, (key, text, pattern), rest, walk, set, at)
        }
        Step::Field(part) => visit_field(node, part, rest, walk, set, at),
    }
}

fn visit_field(
    node: &mut Node,
    part: &str,
    rest: &[Step],
    walk: Walk,
    set: &mut Setter<'_>,
    at: Reached,
) -> OpResult<usize> {
    if node.is_null() {
        // Kustomize adds the field to the null scalar, which keeps no
        // fields (the null stays): the walk goes on in a map that is then
        // lost.
        let Some(kind) = walk.create else {
            return Ok(0);
        };
        let mut lost = Node::map();
        lost.set(part, new_node(child_kind(rest, kind)));
        let child = lost.get_mut(part).expect("just set");
        return visit_in_copy(child, rest, walk, set, created(at));
    }
    if node.as_map().is_none() {
        return Err(wrong_kind("MappingNode", node));
    }
    let mut at = at;
    if node.get(part).is_none() {
        match walk.create {
            Some(kind) => node.set(part, new_node(child_kind(rest, kind))),
            None => return Ok(0),
        }
        at = created(at);
    }
    let child = node.get_mut(part).expect("present");
    if walk.enter_scalars && !rest.is_empty() && child.as_scalar().is_some() {
        return visit_parsed_copy(raw(child), rest, walk, set);
    }
    visit(child, rest, walk, set, at)
}

/// Walks `rest` from `node`, a copy that is dropped afterwards.
fn visit_in_copy(
    node: &mut Node,
    rest: &[Step],
    walk: Walk,
    set: &mut Setter<'_>,
    at: Reached,
) -> OpResult<usize> {
    let mut set_in_copy = |n: &mut Node, r: Reached| set(n, Reached { in_copy: true, ..r });
    visit(node, rest, walk, &mut set_in_copy, at)
}

/// `at`, for a node the walk created.
fn created(at: Reached) -> Reached {
    Reached {
        created: true,
        ..at
    }
}

/// Kustomize v5.8.1: walks `rest` in a parsed copy of a scalar's `text`
/// (see [`Walk::enter_scalars`]).
fn visit_parsed_copy(
    text: &str,
    rest: &[Step],
    walk: Walk,
    set: &mut Setter<'_>,
) -> OpResult<usize> {
    let parsed =
        crate::structured::parse_document(text).map_err(|e| OpError::new(e.to_string()))?;
    let Some(mut copy) = parsed else {
        // An empty document has no node kind.
        let expected = rest.first().map_or("MappingNode", Step::expected_kind);
        if matches!(rest.first(), Some(Step::NoEquals)) {
            return Err(path::selector_without_equals());
        }
        return Err(OpError::new(format!(
            "wrong node kind: expected {expected} but got : node contents:\nnull"
        )));
    };
    visit_in_copy(&mut copy, rest, walk, set, Reached::default())
}

fn visit_index(
    node: &mut Node,
    idx: usize,
    rest: &[Step],
    walk: Walk,
    set: &mut Setter<'_>,
    at: Reached,
) -> OpResult<usize> {
    let Value::Seq(items) = &mut node.value else {
        return Err(wrong_kind("SequenceNode", node));
    };
    if idx == items.len() {
        if let Some(kind) = walk.create {
            items.push(new_node(child_kind(rest, kind)));
            return visit(&mut items[idx], rest, walk, set, created(at));
        }
    }
    if idx >= items.len() {
        return Err(OpError::new(format!(
            "index {idx} specified but only {} elements found",
            items.len()
        )));
    }
    visit(&mut items[idx], rest, walk, set, at)
}

/// `[key=pattern]`: visits the elements whose `key` (or, with no key, the
/// element itself) matches; with `create`, appends one when none does.
fn visit_matching(
    node: &mut Node,
    (key, text, pattern): (&str, &str, &Result<Regex, RegexError>),
    rest: &[Step],
    walk: Walk,
    set: &mut Setter<'_>,
    at: Reached,
) -> OpResult<usize> {
    let is_match = |item: &Node| -> OpResult<bool> {
        let re = pattern.as_ref().map_err(|e| OpError::new(e.to_string()))?;
        let field = if key.is_empty() {
            item.as_scalar().map(|_| item)
        } else {
            item.get(key)
        };
        Ok(field.is_some_and(|f| re.is_match(match_text(f).trim())))
    };
    let new_element = || {
        if key.is_empty() {
            Node::plain(text)
        } else {
            let mut m = Node::map();
            m.set(key, Node::plain(text));
            m
        }
    };
    if node.is_null() {
        // As for a field under a null: the element is kept nowhere.
        if walk.create.is_none() {
            return Ok(0);
        }
        let mut element = new_element();
        is_match(&element)?;
        return visit_in_copy(&mut element, rest, walk, set, created(at));
    }
    let Value::Seq(items) = &mut node.value else {
        return Err(wrong_kind("SequenceNode", node));
    };
    let mut count = 0;
    let mut matched = false;
    for item in items.iter_mut() {
        if is_match(item)? {
            matched = true;
            count += visit(item, rest, walk, set, at)?;
        }
    }
    if !matched && walk.create.is_some() {
        let element = new_element();
        // Kustomize looks for the new element again; it is found when the
        // pattern matches its own text.
        is_match(&element)?;
        items.push(element);
        let last = items.len() - 1;
        count += visit(&mut items[last], rest, walk, set, created(at))?;
    }
    Ok(count)
}
