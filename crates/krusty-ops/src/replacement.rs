//! Replacements (`replacements:`, ReplacementTransformer): copy a value from
//! one resource's field into fields of other resources.

use krusty_match::selector::{IdPatterns, Subject};
use krusty_match::LabelSelector;
use krusty_resource::{ResId, ResMap, Resource};
use krusty_yaml::{resolve_input, Node, Resolved, ScalarStyle, Value};

use crate::error::go_quote;
use crate::error::{OpError, OpResult};
use crate::path::{self, raw};
use crate::selector::{AsWritten, Compile, Selected, Selector};
use crate::structured;
use crate::target_path::{kind_of, visit, Reached, Step, Walk};
use crate::typed::{self, At, Strictness};
use crate::version::KustomizeVersion;

/// The field a source reads when it names none.
const DEFAULT_FIELD_PATH: &str = "metadata.name";

pub use krusty_schema::replacement::{
    read_entry, read_file, read_replacement, FieldOptions, Replacement, ReplacementEntry, Source,
    Target,
};

/// Every id a resource has had (current first).
fn ids(r: &Resource) -> Vec<ResId> {
    let mut out = vec![r.id()];
    out.extend(r.previous_ids());
    out
}

fn matches_label_and_annotation(r: &Resource, s: &Selector) -> OpResult<bool> {
    let parse = |text: &str| LabelSelector::parse(text).map_err(|e| OpError::new(e.to_string()));
    let annotations = parse(&s.annotation_selector)?;
    let labels = parse(&s.label_selector)?;
    let r = Selected(r);
    Ok(annotations.matches(|k| r.annotation(k)) && labels.matches(|k| r.label(k)))
}

/// How a source is named in messages: its id and field.
fn describe(source: &Source) -> String {
    format!("{}:{}", source.id.id_text(), source.field_path)
}

/// Applies replacements in order; each sees the previous ones' writes.
/// Two resources may be left with the same id (Kustomize fails on that
/// only when the build is done).
pub fn apply(
    resources: &mut ResMap,
    replacements: &[Replacement],
    version: KustomizeVersion,
) -> OpResult<()> {
    for r in replacements {
        let (file, pos) = &r.written_at;
        let located = |e: OpError| e.located(file.as_deref(), *pos);
        // `targets: []` is no targets.
        let targets = match (&r.source, &r.source_value, &r.targets) {
            (Some(_), _, Some(targets)) | (_, Some(_), Some(targets)) if !targets.is_empty() => {
                targets
            }
            _ => {
                return Err(located(OpError::new(
                    "replacements must specify a source and at least one target",
                )))
            }
        };
        let mut value = match (&r.source, &r.source_value) {
            (Some(_), Some(_)) => {
                return Err(located(OpError::new(
                    "value and resource selectors are mutually exclusive",
                )))
            }
            (Some(source), None) => source_value(resources, source).map_err(located)?,
            (None, value) => SourceValue::given(value.as_deref().unwrap_or_default()),
        };
        for target in targets {
            apply_target(resources, &mut value, target, version).map_err(located)?;
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
    /// A value given as text (`sourceValue:`): a plain scalar without a
    /// tag, read from no resource.
    fn given(text: &str) -> SourceValue {
        SourceValue {
            index: usize::MAX,
            parts: Vec::new(),
            live: false,
            value: Node::plain(text),
        }
    }

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
                    describe(source)
                )));
            }
            found = Some((i, r));
        }
    }
    let Some((index, r)) = found else {
        return Err(OpError::new(format!(
            "nothing selected by {}",
            describe(source)
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

fn apply_target(
    resources: &mut ResMap,
    source: &mut SourceValue,
    target: &Target,
    version: KustomizeVersion,
) -> OpResult<()> {
    let Some(select) = &target.select else {
        return Err(OpError::new("target must specify resources to select"));
    };
    let ids_by = if version >= KustomizeVersion::V5_8_1 {
        let compiled = || -> OpResult<(IdPatterns, Vec<IdPatterns>)> {
            let reject = target.reject.iter().map(Selector::compile_id_patterns);
            Ok((
                select.compile_id_patterns()?,
                reject.collect::<OpResult<_>>()?,
            ))
        };
        IdMatch::Regex(Box::new(
            compiled().map_err(|e| e.context("error creating target selector"))?,
        ))
    } else {
        IdMatch::Exact
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
        if !is_target(r, select, &target.reject, &ids_by)? {
            continue;
        }
        for (field_path, steps) in &paths {
            if version >= KustomizeVersion::V5_8_1 {
                let create = target.options.create.then(|| kind_of(&source.value));
                if structured::write_into_string(&mut r.node, field_path, &source.value, create) {
                    if i == source.index {
                        source.refresh(&r.node);
                    }
                    continue;
                }
            }
            // Writing the source field itself changes the value at once,
            // for the next node the same path reaches (a `create` may move
            // nodes, so it is followed only without one).
            let source_node = (i == source.index && source.live && !target.options.create)
                .then(|| path::lookup(&r.node, &source.parts).ok().flatten())
                .flatten()
                .map(|n| n as *const Node);
            let written = write_field(
                &mut r.node,
                (field_path, steps),
                (&mut source.value, source_node),
                &target.options,
                version,
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

/// How a target's `select` and `reject` match ids.
enum IdMatch {
    /// Exact text, a resource without a namespace in `default`
    /// (Kustomize v5.5.0).
    Exact,
    /// Anchored regular expressions on the ids as written (Kustomize
    /// v5.8.1): the select's, and each reject's.
    Regex(Box<(IdPatterns, Vec<IdPatterns>)>),
}

/// Whether `select` picks `r` (by its labels, annotations and any id it
/// has had) and no entry of `reject` leaves it out.
fn is_target(
    r: &Resource,
    select: &Selector,
    reject: &[Selector],
    ids_by: &IdMatch,
) -> OpResult<bool> {
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
    Ok(match ids_by {
        IdMatch::Exact => {
            let rejected = || {
                reject
                    .iter()
                    .any(|rej| rej.has_id() && ids.iter().any(|id| rej.selects_id(id)))
            };
            ids.iter().any(|id| select.selects_id(id)) && !rejected()
        }
        IdMatch::Regex(patterns) => {
            let (select, reject) = patterns.as_ref();
            let rejected = reject
                .iter()
                .any(|rej| !rej.is_empty() && ids.iter().any(|id| rej.matches(&AsWritten(id))));
            !rejected && ids.iter().any(|id| select.matches(&AsWritten(id)))
        }
    })
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
/// what was written there. From Kustomize v5.8.1 on, the walk goes into
/// strings (see [`Walk::enter_scalars`]).
fn write_field(
    root: &mut Node,
    (field_path, steps): (&str, &[Step]),
    (value, source_node): (&mut Node, Option<*const Node>),
    options: &FieldOptions,
    version: KustomizeVersion,
) -> OpResult<Written> {
    let create = options.create.then(|| kind_of(value));
    let walk = Walk {
        create,
        enter_scalars: version >= KustomizeVersion::V5_8_1,
    };
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
    let mut set = |field: &mut Node, at: Reached| {
        let w = set_value(field, at.created, value, options)?;
        if at.in_copy {
            // Written into a copy that is dropped: nothing changes.
            return Ok(());
        }
        written |= w;
        if source_node.is_some_and(|n| std::ptr::eq(n, field)) {
            *value = field.clone();
        }
        Ok(())
    };
    let count = visit(root, steps, walk, &mut set, Reached::default())
        .map_err(|e| retrieval(Some(e.to_string())))?;
    if count == 0 {
        return Err(retrieval(None));
    }
    Ok(written)
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
    pub fn from_config(config: &Node, version: KustomizeVersion) -> OpResult<Replacements> {
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
                entries.push(read_entry(item, Strictness::Lenient, version)?);
            }
        }
        Ok(Replacements { entries })
    }

    /// Loads the entries (reading files through `env`'s files) and
    /// applies them as `env`'s Kustomize release does.
    pub fn apply(&self, resources: &mut ResMap, env: &crate::Env<'_>) -> OpResult<()> {
        let files = env.files;
        let mut all = Vec::new();
        for entry in &self.entries {
            match entry {
                ReplacementEntry::Inline(r) => all.push((**r).clone()),
                ReplacementEntry::Path(p) => {
                    let bytes = files.read_bytes(p)?;
                    let text = String::from_utf8(bytes)
                        .map_err(|_| OpError::new(format!("{p}: not valid UTF-8")))?;
                    all.extend(read_file(&text, p, env.version)?);
                }
            }
        }
        apply(resources, &all, env.version)
    }
}
