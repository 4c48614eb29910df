//! Replacements (`replacements:`, ReplacementTransformer): copy a value from
//! one resource's field into fields of other resources.

use krusty_resource::{ResId, ResMap, Resource};
use krusty_yaml::{resolve_input, Node, Pos, Resolved, ScalarStyle, Value};
use regex::Regex;

use crate::error::go_quote;
use crate::error::{OpError, OpResult};
use crate::path::{self, list_selector, raw, wrong_kind};
use crate::selector::{LabelSelector, Selector};
use crate::typed::{self, At, Strictness};

/// The field a source reads when it names none.
const DEFAULT_FIELD_PATH: &str = "metadata.name";

/// `options:` of a source or target.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FieldOptions {
    /// Split the value at this delimiter...
    pub delimiter: String,
    /// ...and use (or replace) this part.
    pub index: i64,
    /// Create missing target fields.
    pub create: bool,
}

/// Where a replacement's value comes from.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Source {
    /// The resource (group, version, kind, name, namespace).
    pub id: Selector,
    /// The field (default `metadata.name`).
    pub field_path: String,
    /// Delimiter and index.
    pub options: FieldOptions,
}

/// Where a replacement's value goes.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Target {
    /// Resources to write to.
    pub select: Option<Selector>,
    /// Resources to leave alone.
    pub reject: Vec<Selector>,
    /// Fields to write (default `metadata.name`).
    pub field_paths: Vec<String>,
    /// Delimiter, index and create.
    pub options: FieldOptions,
}

/// One replacement.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Replacement {
    /// Where it is written: its file, when not the kustomization or
    /// config that lists it, and position (for messages).
    pub written_at: (Option<String>, Pos),
    /// The value's origin.
    pub source: Option<Source>,
    /// Where it is written.
    pub targets: Option<Vec<Target>>,
}

/// An entry of a replacements list: inline, or a file of replacements.
#[derive(Debug, Clone, PartialEq)]
pub enum ReplacementEntry {
    /// A replacement written inline.
    Inline(Box<Replacement>),
    /// `path:` a file holding one replacement or a list of them.
    Path(String),
}

fn string(value: &Node, owner: &'static str, path: &'static str) -> OpResult<String> {
    typed::string(value, At { owner, path })
}

fn read_options(node: &Node, strictness: Strictness) -> OpResult<FieldOptions> {
    let mut o = FieldOptions::default();
    for (name, value) in typed::fields(
        node,
        &["delimiter", "index", "create"],
        "FieldOptions",
        strictness,
    )? {
        let at = At {
            owner: "FieldOptions",
            path: name,
        };
        match name {
            "delimiter" => o.delimiter = typed::string(value, at)?,
            "index" => o.index = typed::integer(value, at)?,
            _ => o.create = typed::boolean(value, at)?,
        }
    }
    Ok(o)
}

fn read_source(node: &Node, strictness: Strictness) -> OpResult<Source> {
    let known = [
        "group",
        "version",
        "kind",
        "name",
        "namespace",
        "fieldPath",
        "options",
    ];
    let mut s = Source::default();
    for (name, value) in typed::fields(node, &known, "SourceSelector", strictness)? {
        match name {
            "options" => s.options = read_options(value, strictness)?,
            "fieldPath" => s.field_path = string(value, "SourceSelector", name)?,
            _ => {
                s.id.set_field(name, string(value, "SourceSelector", name)?);
            }
        }
    }
    Ok(s)
}

fn read_target(node: &Node, strictness: Strictness) -> OpResult<Target> {
    let known = ["select", "reject", "fieldPaths", "options"];
    let mut t = Target::default();
    for (name, value) in typed::fields(node, &known, "TargetSelector", strictness)? {
        match name {
            "select" if !value.is_null() => {
                t.select = Some(Selector::from_node(value, "Selector", strictness)?)
            }
            "select" => {}
            "reject" => {
                for r in typed::array(
                    value,
                    At {
                        owner: "TargetSelector",
                        path: name,
                    },
                    "[]*types.Selector",
                )? {
                    t.reject
                        .push(Selector::from_node(r, "Selector", strictness)?);
                }
            }
            "fieldPaths" => {
                t.field_paths = typed::string_list(
                    value,
                    At {
                        owner: "TargetSelector",
                        path: name,
                    },
                )?
            }
            _ => t.options = read_options(value, strictness)?,
        }
    }
    Ok(t)
}

/// Reads one replacement mapping (`source` and `targets`).
pub fn read_replacement(node: &Node, strictness: Strictness) -> OpResult<Replacement> {
    let mut r = Replacement {
        written_at: (None, node.pos()),
        ..Replacement::default()
    };
    for (name, value) in typed::fields(node, &["source", "targets"], "Replacement", strictness)? {
        match name {
            "source" if !value.is_null() => r.source = Some(read_source(value, strictness)?),
            "targets" if !value.is_null() => {
                let items = typed::array(
                    value,
                    At {
                        owner: "Replacement",
                        path: name,
                    },
                    "[]*types.TargetSelector",
                )?;
                r.targets = Some(
                    items
                        .iter()
                        .map(|t| read_target(t, strictness))
                        .collect::<OpResult<_>>()?,
                );
            }
            _ => {}
        }
    }
    Ok(r)
}

/// Reads an entry of a replacements list: `{path: FILE}` or an inline
/// replacement (not both).
pub fn read_entry(node: &Node, strictness: Strictness) -> OpResult<ReplacementEntry> {
    let path = node
        .as_map()
        .and_then(|m| {
            m.iter()
                .find(|(k, _)| k.key_str().is_some_and(|k| k.eq_ignore_ascii_case("path")))
        })
        .map(|(_, v)| v);
    match path {
        Some(p) => {
            if node.as_map().is_some_and(|m| m.len() > 1) {
                return Err(
                    OpError::new("cannot specify both path and inline replacement")
                        .located(None, node.pos()),
                );
            }
            Ok(ReplacementEntry::Path(typed::string(
                p,
                At {
                    owner: "ReplacementField",
                    path: "path",
                },
            )?))
        }
        None => Ok(ReplacementEntry::Inline(Box::new(read_replacement(
            node, strictness,
        )?))),
    }
}

/// Reads a replacements file: one replacement or a list of them (unknown
/// fields ignored).
pub fn read_file(text: &str, path: &str) -> OpResult<Vec<Replacement>> {
    // Kustomize decodes them with go-yaml v2: a repeated key replaces the
    // earlier one, and `yes`/`on` are booleans.
    let limits = krusty_yaml::Limits::with_duplicate_keys(krusty_yaml::DuplicateKeys::LastWins);
    let docs = krusty_yaml::parse_stream_with(text, limits)
        .map_err(|e| OpError::new(format!("{path}: {e}")))?;
    let mut out = Vec::new();
    for mut root in docs.into_iter().filter_map(|d| d.root) {
        krusty_yaml::retype_as_go_yaml_v2(&mut root);
        let in_file = |e: OpError| e.place(&|pos| Some((Some(path.to_string()), pos)));
        match &root.value {
            Value::Seq(items) => {
                for item in items {
                    out.push(read_replacement(item, Strictness::Lenient).map_err(in_file)?);
                }
            }
            _ => out.push(read_replacement(&root, Strictness::Lenient).map_err(in_file)?),
        }
    }
    for r in &mut out {
        r.written_at.0 = Some(path.to_string());
    }
    Ok(out)
}

impl Selector {
    /// Whether a resource id is selected by this selector's id part
    /// (exact names; empty fields match anything). As in Kustomize, a
    /// resource without a namespace, cluster-scoped ones included, is in
    /// `default` here.
    pub fn selects_id(&self, id: &ResId) -> bool {
        let ns_ok = self.namespace.is_empty() || {
            let namespace = match id.namespace.as_str() {
                "" => "default",
                ns => ns,
            };
            self.namespace == namespace
        };
        (self.name.is_empty() || self.name == id.name) && ns_ok && id.gvk.is_selected_by(&self.gvk)
    }

    fn has_id(&self) -> bool {
        !(self.gvk.group.is_empty()
            && self.gvk.version.is_empty()
            && self.gvk.kind.is_empty()
            && self.name.is_empty()
            && self.namespace.is_empty())
    }
}

/// Every id a resource has had (current first).
fn ids(r: &Resource) -> Vec<ResId> {
    let mut out = vec![r.id()];
    out.extend(r.previous_ids());
    out
}

fn matches_label_and_annotation(r: &Resource, s: &Selector) -> OpResult<bool> {
    let annotations = LabelSelector::parse(&s.annotation_selector)?;
    let labels = LabelSelector::parse(&s.label_selector)?;
    Ok(
        annotations.matches(r.node.get_path(&["metadata", "annotations"]))
            && labels.matches(r.node.get_path(&["metadata", "labels"])),
    )
}

impl Source {
    fn describe(&self) -> String {
        format!("{}:{}", self.id.id_text(), self.field_path)
    }
}

/// Applies replacements in order; each sees the previous ones' writes.
/// Two resources may be left with the same id (Kustomize fails on that
/// only when the build is done).
pub fn apply(resources: &mut ResMap, replacements: &[Replacement]) -> OpResult<()> {
    for r in replacements {
        let (file, pos) = &r.written_at;
        let located = |e: OpError| e.located(file.as_deref(), *pos);
        let (Some(source), Some(targets)) = (&r.source, &r.targets) else {
            return Err(located(OpError::new(
                "replacements must specify a source and at least one target",
            )));
        };
        let mut value = source_value(resources, source).map_err(located)?;
        for target in targets {
            apply_target(resources, &mut value, target).map_err(located)?;
        }
    }
    Ok(())
}

/// A source's value, and where to read it again: Kustomize copies the
/// source field itself into each target, so a write into that field (the
/// source resource selected as a target) changes what later targets get.
struct SourceValue {
    /// Position of the source resource.
    index: usize,
    /// The source field's path.
    parts: Vec<String>,
    /// The value is the field as it stands (no `delimiter` made a copy).
    live: bool,
    value: Node,
}

impl SourceValue {
    /// Reads the value again from the source resource's `node`.
    fn refresh(&mut self, node: &Node) {
        if !self.live {
            return;
        }
        if let Ok(Some(n)) = path::lookup(node, &self.parts) {
            if !is_nil_or_empty(n) {
                self.value = n.clone();
            }
        }
    }
}

fn source_value(resources: &ResMap, source: &Source) -> OpResult<SourceValue> {
    let mut found: Option<(usize, &Resource)> = None;
    for (i, r) in resources.iter().enumerate() {
        if ids(r).iter().any(|id| source.id.selects_id(id)) {
            if found.is_some() {
                return Err(OpError::new(format!(
                    "multiple matches for selector {}",
                    source.describe()
                )));
            }
            found = Some((i, r));
        }
    }
    let Some((index, r)) = found else {
        return Err(OpError::new(format!(
            "nothing selected by {}",
            source.describe()
        )));
    };
    let field_path = if source.field_path.is_empty() {
        DEFAULT_FIELD_PATH
    } else {
        &source.field_path
    };
    let parts = path::split_replacement(field_path);
    let node = path::lookup(&r.node, &parts)
        .map_err(|e| e.context("error looking up replacement source"))?;
    let node = match node {
        Some(n) if !is_nil_or_empty(n) => n,
        _ => {
            return Err(OpError::new(format!(
                "fieldPath `{field_path}` is missing for replacement source {}",
                source.id.id_text()
            )))
        }
    };
    let mut value = node.clone();
    let live = source.options.delimiter.is_empty();
    if !live {
        let Value::Scalar(s) = &mut value.value else {
            return Err(OpError::new(
                "delimiter option can only be used with scalar nodes",
            ));
        };
        let parts: Vec<&str> = s.text.split(source.options.delimiter.as_str()).collect();
        let index = source.options.index;
        if index < 0 || index as usize >= parts.len() {
            return Err(OpError::new(format!(
                "options.index {index} is out of bounds for value {}",
                s.text
            )));
        }
        s.text = parts[index as usize].into();
    }
    Ok(SourceValue {
        index,
        parts,
        live,
        value,
    })
}

fn is_nil_or_empty(n: &Node) -> bool {
    match &n.value {
        Value::Scalar(_) => n.is_null(),
        Value::Seq(items) => items.is_empty(),
        Value::Map(entries) => entries.is_empty(),
    }
}

fn apply_target(resources: &mut ResMap, source: &mut SourceValue, target: &Target) -> OpResult<()> {
    let Some(select) = &target.select else {
        return Err(OpError::new("target must specify resources to select"));
    };
    let default_paths = [DEFAULT_FIELD_PATH.to_string()];
    let field_paths: &[String] = if target.field_paths.is_empty() {
        &default_paths
    } else {
        &target.field_paths
    };
    let paths: Vec<(&str, Vec<Step>)> = field_paths
        .iter()
        .map(|p| (p.as_str(), Step::parse_path(p)))
        .collect();
    for (i, r) in resources.resources_mut().iter_mut().enumerate() {
        if !is_target(r, select, &target.reject)? {
            continue;
        }
        for (field_path, steps) in &paths {
            // Writing the source field itself changes the value at once,
            // for the next node the same path reaches (a `create` may move
            // nodes, so it is followed only without one).
            let source_node = (i == source.index && source.live && !target.options.create)
                .then(|| path::lookup(&r.node, &source.parts).ok().flatten())
                .flatten()
                .map(|n| n as *const Node);
            let written = write_field(
                &mut r.node,
                field_path,
                steps,
                (&mut source.value, source_node),
                &target.options,
            )?;
            r.meta.untyped_numbers |= written.number_like;
            r.meta.mistyped |= written.mistyped;
            if i == source.index {
                source.refresh(&r.node);
            }
        }
    }
    Ok(())
}

/// Whether `select` picks `r` (by its labels, annotations and any id it
/// has had) and no entry of `reject` leaves it out.
fn is_target(r: &Resource, select: &Selector, reject: &[Selector]) -> OpResult<bool> {
    if !matches_label_and_annotation(r, select)? {
        return Ok(false);
    }
    for rej in reject {
        if (!rej.label_selector.is_empty() || !rej.annotation_selector.is_empty())
            && matches_label_and_annotation(r, rej)?
        {
            return Ok(false);
        }
    }
    let ids = ids(r);
    let rejected = || {
        reject
            .iter()
            .any(|rej| rej.has_id() && ids.iter().any(|id| rej.selects_id(id)))
    };
    Ok(ids.iter().any(|id| select.selects_id(id)) && !rejected())
}

/// One part of a target field path.
enum Step {
    /// A list index.
    Index(usize),
    /// `*`: every list element.
    Every,
    /// `[key=pattern]` (`key` empty for a list of scalars): the elements
    /// whose field matches the unanchored regular expression `pattern`;
    /// the pattern's compile error is reported when an element is tested.
    Match {
        key: String,
        text: String,
        pattern: Result<Regex, String>,
    },
    /// `[key]`: a bracketed part without `=`, an error when reached.
    NoEquals,
    /// A map key.
    Field(String),
}

impl Step {
    /// The steps of a target field path (empty parts skipped).
    fn parse_path(field_path: &str) -> Vec<Step> {
        path::split_replacement(field_path)
            .into_iter()
            .filter(|p| !p.trim().is_empty())
            .map(Step::parse)
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

/// The kind of node a created field gets: the value's.
#[derive(Clone, Copy, PartialEq)]
enum NodeKind {
    Scalar,
    Map,
    Seq,
}

fn kind_of(node: &Node) -> NodeKind {
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

/// What writing a value left in the fields it was written to.
#[derive(Debug, Default, Clone, Copy)]
struct Written {
    /// Number-like text (YAML 1.1 reads something else than a string) in
    /// a field without a type (see `BuildMeta::untyped_numbers`).
    number_like: bool,
    /// Text that does not suit a field's type (see `BuildMeta::mistyped`).
    mistyped: bool,
}

impl std::ops::BitOrAssign for Written {
    fn bitor_assign(&mut self, other: Written) {
        self.number_like |= other.number_like;
        self.mistyped |= other.mistyped;
    }
}

/// Writes `value` at every node `steps` reach. When one of them is
/// `source_node` (the field the value was read from), the value becomes
/// what was written there.
fn write_field(
    root: &mut Node,
    field_path: &str,
    steps: &[Step],
    (value, source_node): (&mut Node, Option<*const Node>),
    options: &FieldOptions,
) -> OpResult<Written> {
    let create = options.create.then(|| kind_of(value));
    let retrieval = |msg: Option<String>| {
        let verb = if create.is_some() {
            "unable to find or create field"
        } else {
            "unable to find field"
        };
        let base = format!("{verb} {} in replacement target", go_quote(field_path));
        OpError::new(match msg {
            Some(m) => format!("{base}: {m}"),
            None => base,
        })
    };
    let mut written = Written::default();
    let mut set = |field: &mut Node, created: bool| {
        written |= set_value(field, created, value, options)?;
        if source_node.is_some_and(|n| std::ptr::eq(n, field)) {
            *value = field.clone();
        }
        Ok(())
    };
    let count =
        visit(root, steps, create, &mut set, false).map_err(|e| retrieval(Some(e.to_string())))?;
    if count == 0 {
        return Err(retrieval(None));
    }
    Ok(written)
}

type Setter<'a> = dyn FnMut(&mut Node, bool) -> OpResult<()> + 'a;

fn child_kind(rest: &[Step], create: NodeKind) -> NodeKind {
    rest.first().map_or(create, Step::container_kind)
}

/// Calls `set` on every node `steps` reach (creating what is missing when
/// `create` is given); returns how many there were.
fn visit(
    node: &mut Node,
    steps: &[Step],
    create: Option<NodeKind>,
    set: &mut Setter<'_>,
    created: bool,
) -> OpResult<usize> {
    let Some((step, rest)) = steps.split_first() else {
        set(node, created)?;
        return Ok(1);
    };
    match step {
        Step::Index(idx) => visit_index(node, *idx, rest, create, set, created),
        Step::Every => {
            let Value::Seq(items) = &mut node.value else {
                return Err(wrong_kind("SequenceNode", node));
            };
            let mut count = 0;
            for item in items.iter_mut() {
                count += visit(item, rest, create, set, created)?;
            }
            Ok(count)
        }
        Step::NoEquals => Err(path::selector_without_equals()),
        Step::Match { key, text, pattern } => {
            visit_matching(node, (key, text, pattern), rest, create, set, created)
        }
        Step::Field(part) => {
            if node.is_null() && create.is_some() {
                *node = Node::map();
            }
            if node.as_map().is_none() {
                return Err(wrong_kind("MappingNode", node));
            }
            if node.get(part).is_none() {
                match create {
                    Some(kind) => node.set(part, new_node(child_kind(rest, kind))),
                    None => return Ok(0),
                }
                let child = node.get_mut(part).expect("just set");
                return visit(child, rest, create, set, true);
            }
            let child = node.get_mut(part).expect("present");
            visit(child, rest, create, set, created)
        }
    }
}

fn visit_index(
    node: &mut Node,
    idx: usize,
    rest: &[Step],
    create: Option<NodeKind>,
    set: &mut Setter<'_>,
    created: bool,
) -> OpResult<usize> {
    let Value::Seq(items) = &mut node.value else {
        return Err(wrong_kind("SequenceNode", node));
    };
    if idx == items.len() {
        if let Some(kind) = create {
            items.push(new_node(child_kind(rest, kind)));
            return visit(&mut items[idx], rest, create, set, true);
        }
    }
    if idx >= items.len() {
        return Err(OpError::new(format!(
            "index {idx} specified but only {} elements found",
            items.len()
        )));
    }
    visit(&mut items[idx], rest, create, set, created)
}

/// `[key=pattern]`: visits the elements whose `key` (or, with no key, the
/// element itself) matches; with `create`, appends one when none does.
fn visit_matching(
    node: &mut Node,
    (key, text, pattern): (&str, &str, &Result<Regex, String>),
    rest: &[Step],
    create: Option<NodeKind>,
    set: &mut Setter<'_>,
    created: bool,
) -> OpResult<usize> {
    if node.is_null() && create.is_some() {
        *node = Node::seq();
    }
    let Value::Seq(items) = &mut node.value else {
        return Err(wrong_kind("SequenceNode", node));
    };
    let is_match = |item: &Node| -> OpResult<bool> {
        let re = pattern.as_ref().map_err(|e| OpError::new(e.clone()))?;
        let field = if key.is_empty() {
            item.as_scalar().map(|_| item)
        } else {
            item.get(key)
        };
        Ok(field.is_some_and(|f| re.is_match(match_text(f).trim())))
    };
    let mut count = 0;
    let mut matched = false;
    for item in items.iter_mut() {
        if is_match(item)? {
            matched = true;
            count += visit(item, rest, create, set, created)?;
        }
    }
    if !matched && create.is_some() {
        let element = if key.is_empty() {
            Node::plain(text)
        } else {
            let mut m = Node::map();
            m.set(key, Node::plain(text));
            m
        };
        // Kustomize looks for the new element again; it is found when the
        // pattern matches its own text.
        is_match(&element)?;
        items.push(element);
        let last = items.len() - 1;
        count += visit(&mut items[last], rest, create, set, true)?;
    }
    Ok(count)
}

/// The data type a scalar resolves to, as a YAML tag.
fn scalar_tag(node: &Node) -> &'static str {
    match node.as_scalar().map(|_| resolve_input(node)) {
        Some(Resolved::Null) => "!!null",
        Some(Resolved::Bool(_)) => "!!bool",
        Some(Resolved::Int(_)) => "!!int",
        Some(Resolved::Float(_)) => "!!float",
        _ => "!!str",
    }
}

/// Whether a scalar was made during the build as plain text without a
/// type (a field `create` made, for one): Kustomize's nodes without a tag,
/// whose type comes from whatever text they hold when printed.
pub(crate) fn is_untyped(node: &Node) -> bool {
    node.pos().line == 0 && node.style() == ScalarStyle::Plain && node.tag().is_none()
}

/// Whether `node` is a scalar without a type (see [`is_untyped`]) whose
/// text YAML 1.1 reads as something else than a string.
pub(crate) fn is_untyped_number(node: &Node) -> bool {
    matches!(node.value, Value::Scalar(_)) && is_untyped(node) && yaml_1_1_non_string(raw(node))
}

/// Whether YAML 1.1 reads `text`, written plain, as something else than a
/// string (a number, boolean, null).
pub(crate) fn yaml_1_1_non_string(text: &str) -> bool {
    !text.is_empty()
        && !text.contains('\n')
        && !matches!(
            krusty_yaml::resolve::resolve_plain_v2(text),
            Resolved::Str(_)
        )
}

/// A string set during the build as Kustomize sets names again after a
/// strategic merge patch: without a type, written plain unless YAML 1.1
/// would read the text as something else than a string (then quoted).
pub(crate) fn untyped_string(text: &str) -> Node {
    if yaml_1_1_non_string(text) {
        Node::string(text)
    } else {
        Node::plain(text)
    }
}

/// Writes `value` into a target field. A scalar target read from a file
/// keeps its type and takes only the value's text (a number into a string
/// field stays a string); a field made during the build without a type
/// (see [`is_untyped`]) takes the text's own type; a new or non-scalar
/// target becomes the value. Text that does not suit a typed field's type
/// is written all the same, and the field keeps its type, as in Kustomize.
fn set_value(
    target: &mut Node,
    created: bool,
    value: &Node,
    options: &FieldOptions,
) -> OpResult<Written> {
    let mut value = value.clone();
    if !options.delimiter.is_empty() {
        let Value::Scalar(t) = &target.value else {
            return Err(OpError::new(
                "delimiter option can only be used with scalar nodes",
            ));
        };
        let mut parts: Vec<String> = t
            .text
            .split(options.delimiter.as_str())
            .map(String::from)
            .collect();
        let v = raw(&value).to_string();
        if options.index < 0 {
            parts.insert(0, v);
        } else if options.index as usize >= parts.len() {
            parts.push(v);
        } else {
            parts[options.index as usize] = v;
        }
        let joined = parts.join(&options.delimiter);
        match &mut value.value {
            Value::Scalar(s) => s.text = joined.into(),
            _ => value = Node::plain(joined),
        }
    }
    if target.as_scalar().is_none() {
        // The value itself, typed where it was typed (Kustomize copies the
        // node with its tag, a mistyped one too).
        *target = value;
        return Ok(Written {
            mistyped: krusty_yaml::resolve::check_scalar_tags(target).is_err(),
            ..Written::default()
        });
    }
    let text = raw(&value).to_string();
    if created || is_untyped(target) {
        // Empty text prints as a null, as Kustomize writes it in a block
        // mapping.
        let number_like = yaml_1_1_non_string(&text);
        *target = Node::plain(text);
        return Ok(Written {
            number_like,
            ..Written::default()
        });
    }
    let tag = scalar_tag(target);
    let probe = Node::plain(text.clone());
    let new_tag = scalar_tag(&probe);
    let compatible = tag == "!!str" || tag == new_tag || (tag == "!!float" && new_tag == "!!int");
    if let Value::Scalar(s) = &mut target.value {
        s.text = text.into();
        target.set_tag_text(tag);
    }
    Ok(Written {
        mistyped: !compatible,
        ..Written::default()
    })
}

/// The ReplacementTransformer: replacement entries, files read when run.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Replacements {
    /// The entries, in order.
    pub entries: Vec<ReplacementEntry>,
}

impl Replacements {
    /// Reads a ReplacementTransformer config (`replacements:` list).
    pub fn from_config(config: &Node) -> OpResult<Replacements> {
        let mut entries = Vec::new();
        if let Some(list) = config.get("replacements") {
            let items = typed::array(
                list,
                At {
                    owner: "ReplacementTransformerPlugin",
                    path: "replacements",
                },
                "[]types.ReplacementField",
            )?;
            for item in items {
                entries.push(read_entry(item, Strictness::Lenient)?);
            }
        }
        Ok(Replacements { entries })
    }

    /// Loads the entries (reading files through `files`) and applies them.
    pub fn apply(&self, resources: &mut ResMap, files: &dyn crate::FileSource) -> OpResult<()> {
        let mut all = Vec::new();
        for entry in &self.entries {
            match entry {
                ReplacementEntry::Inline(r) => all.push((**r).clone()),
                ReplacementEntry::Path(p) => {
                    let bytes = files.read_bytes(p)?;
                    let text = String::from_utf8(bytes)
                        .map_err(|_| OpError::new(format!("{p}: not valid UTF-8")))?;
                    all.extend(read_file(&text, p)?);
                }
            }
        }
        apply(resources, &all)
    }
}
