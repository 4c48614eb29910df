//! Patches: Kustomize's PatchTransformer (`patches:`),
//! PatchStrategicMergeTransformer (`patchesStrategicMerge:`) and
//! PatchJson6902Transformer (`patchesJson6902:`).

pub mod chain;
pub mod json6902;
mod json_syntax;
pub mod smp;

use krusty_resource::{ResMap, Resource};
use krusty_yaml::{Node, ScalarStyle, Value};

use crate::env::Env;
use crate::error::{OpError, OpResult};
use crate::parallel;
use crate::schema::{Schema, Shape};
use crate::selector::{Compile, Selector};
use crate::version::KustomizeVersion;
use json6902::JsonPatch;

pub use krusty_schema::patch::{Json6902Entry, PatchEntry, PatchSource, TextPlace};

/// What an operation adds to a [`PatchSource`]: reading its text, and
/// placing positions in it.
pub(crate) trait Text {
    /// `e` with the position it gives in this patch's text (an operation,
    /// a field) placed in the file that holds the text: the patch file,
    /// or for an inline patch its kustomization where `at` knows where the
    /// text stands there (without it only the operation stays named).
    fn place(&self, e: OpError, at: Option<TextPlace>) -> OpError;

    /// The patch's text: inline, or read from its file.
    fn text(&self, env: &Env<'_>) -> OpResult<String>;
}

impl Text for PatchSource {
    fn place(&self, e: OpError, at: Option<TextPlace>) -> OpError {
        match self {
            PatchSource::Path(path) => e.place(&|pos| Some((Some(path.clone()), pos))),
            PatchSource::Inline(_) => e.place(&|pos| at.map(|t| (None, t.position(pos)))),
        }
    }

    fn text(&self, env: &Env<'_>) -> OpResult<String> {
        match self {
            PatchSource::Inline(text) => Ok(text.clone()),
            PatchSource::Path(path) => {
                let bytes = env.files.read_bytes(path).map_err(|e| {
                    OpError::new(format!(
                        "failed to get the patch file from path({path}): {e}"
                    ))
                })?;
                String::from_utf8(bytes)
                    .map_err(|_| OpError::new(format!("patch file {path} is not valid UTF-8")))
            }
        }
    }
}

/// A patch's content, as detected from its text.
enum Parsed {
    Strategic(Vec<Resource>),
    /// A JSON patch, or why the text that must be one is not.
    Json(OpResult<JsonPatch>),
}

/// The patch documents of a stream: a `kind: ...List` with `items` stands
/// for its items, as Kustomize reads patches with its resource reader.
fn patch_documents(docs: Vec<krusty_yaml::Document>) -> Vec<Node> {
    let mut out = Vec::new();
    for mut root in docs.into_iter().filter_map(|d| d.root) {
        let is_list = root
            .get("kind")
            .and_then(Node::as_str)
            .is_some_and(|k| k.ends_with("List"))
            && root.get("items").is_some_and(|i| i.as_seq().is_some());
        if !is_list {
            out.push(root);
        } else if let Some(Value::Seq(items)) = root.remove("items").map(|items| items.value) {
            out.extend(items);
        }
    }
    out
}

/// The strategic merge patches in a text, or why it is not one.
fn strategic_patches(text: &str) -> Option<Vec<Resource>> {
    // Kustomize reads them as kyaml nodes, whose lookups find the first of
    // a repeated key.
    let limits = krusty_yaml::Limits::with_duplicate_keys(krusty_yaml::DuplicateKeys::FirstWins);
    let docs = krusty_yaml::parse_stream_with(text, limits).ok()?;
    let mut out = Vec::new();
    for root in patch_documents(docs) {
        // An empty list holds no patches (and `[]` then qualifies as both
        // kinds, as in Kustomize); nor does a null or empty document.
        if root.as_seq().is_some_and(|items| items.is_empty())
            || root.is_null()
            || root.as_map().is_some_and(|m| m.is_empty())
        {
            continue;
        }
        let r = Resource::from_node_as_is(root).ok()?;
        if r.name().is_empty() {
            return None;
        }
        out.push(r);
    }
    Some(out)
}

/// The JSON patch in a text (a JSON array, or YAML of the same), or why
/// it is not one.
fn json_patch(text: &str) -> OpResult<JsonPatch> {
    if text.is_empty() {
        return Err(OpError::new("empty json patch operations"));
    }
    // Text that starts with `[` is decoded as JSON, strictly.
    let text = if text.starts_with('[') {
        if let Some((e, pos)) = json_syntax::error(text) {
            return Err(OpError::new(e.to_string()).located(None, pos));
        }
        json_surrogates_as_yaml(text)
    } else {
        std::borrow::Cow::Borrowed(text)
    };
    // Other text is converted to JSON with go-yaml v2, where a repeated
    // key replaces the earlier one.
    let limits = krusty_yaml::Limits::with_duplicate_keys(krusty_yaml::DuplicateKeys::LastWins);
    let docs = krusty_yaml::parse_stream_with(&text, limits)?;
    match docs.into_iter().next().and_then(|d| d.root) {
        Some(root) => JsonPatch::from_node(&root),
        None => Ok(JsonPatch::default()),
    }
}

/// Valid JSON `text` with its UTF-16 surrogate escapes written as YAML
/// reads them: a pair (`\ud83d\ude80`) as the one character it encodes
/// (`\U0001f680`), a lone surrogate as U+FFFD, as Go's JSON decoder reads
/// them (YAML has no surrogate escapes). Everything else is unchanged.
fn json_surrogates_as_yaml(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains("\\u") {
        return std::borrow::Cow::Borrowed(text);
    }
    let unit = |at: usize| -> Option<u32> {
        let hex = text.get(at..at + 6)?.strip_prefix("\\u")?;
        u32::from_str_radix(hex, 16).ok()
    };
    let mut out = String::with_capacity(text.len());
    let mut rest = 0;
    let mut i = 0;
    let bytes = text.as_bytes();
    while i < bytes.len() {
        if bytes[i] != b'\\' {
            i += 1;
            continue;
        }
        let Some(high) = unit(i).filter(|u| (0xD800..0xE000).contains(u)) else {
            // Another escape: skip it whole (`\\` included).
            i += 2;
            continue;
        };
        out.push_str(&text[rest..i]);
        let low = unit(i + 6).filter(|u| (0xDC00..0xE000).contains(u));
        let (ch, len) = match low {
            Some(low) if high < 0xDC00 => {
                let code = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00);
                (char::from_u32(code).unwrap_or('\u{FFFD}'), 12)
            }
            _ => ('\u{FFFD}', 6),
        };
        out.push_str(&format!("\\U{:08x}", ch as u32));
        i += len;
        rest = i;
    }
    out.push_str(&text[rest..]);
    std::borrow::Cow::Owned(out)
}

/// Why `text`, which is neither, is not a strategic merge patch nor a JSON
/// patch, at the position in the text that shows it.
fn why_neither(text: &str) -> OpError {
    if text.starts_with('[') {
        if let Err(e) = json_patch(text) {
            return e;
        }
    }
    let limits = krusty_yaml::Limits::with_duplicate_keys(krusty_yaml::DuplicateKeys::FirstWins);
    let docs = match krusty_yaml::parse_stream_with(text, limits) {
        Ok(docs) => docs,
        Err(e) => return OpError::new(e.message).located(None, e.pos),
    };
    for root in patch_documents(docs) {
        let pos = root.pos();
        let why = match &root.value {
            Value::Seq(items) if items.is_empty() => continue,
            Value::Seq(_) => match JsonPatch::from_node(&root) {
                Ok(_) => continue,
                Err(e) => return e,
            },
            Value::Map(_) => match Resource::from_node_as_is(root) {
                Err(e) => OpError::from(e),
                Ok(r) if r.name().is_empty() => OpError::new(format!(
                    "missing metadata.name in object of kind {}",
                    r.kind()
                )),
                Ok(_) => continue,
            },
            Value::Scalar(_) => OpError::new(
                "a patch is a mapping (strategic merge) or a list of operations (JSON 6902)",
            ),
        };
        return why.located(None, pos);
    }
    OpError::new("not a patch")
}

/// Reads a patch text as a strategic merge patch or a JSON patch, as
/// Kustomize release `version` tells them apart.
fn detect(
    text: &str,
    source: &PatchSource,
    at: Option<TextPlace>,
    version: KustomizeVersion,
) -> OpResult<Parsed> {
    let newer = version >= KustomizeVersion::V5_8_1;
    // Nothing at all reads as a JSON patch of no operations (which then
    // needs a target); comments or `---` alone read as both kinds. From
    // v5.8.1 on, text that reads as neither kind with content is no patch
    // at all.
    if text.is_empty() && !newer {
        return Ok(Parsed::Json(Ok(JsonPatch::default())));
    }
    // go-yaml reads no token in a tab alone.
    if text.contains('\t') && text.trim().is_empty() {
        return Err(OpError::new(format!(
            "unable to parse SM or JSON patch from {}",
            source.describe()
        )));
    }
    let strategic = strategic_patches(text);
    let json = json_patch(text);
    match (strategic, json) {
        (Some(sm), Ok(js)) if newer && !sm.is_empty() && !js.is_empty() => {
            Err(illegally_both(source))
        }
        (Some(sm), Ok(js)) if !newer && sm.is_empty() == js.is_empty() => {
            Err(illegally_both(source))
        }
        // Kustomize v5.5.0 takes a text of no strategic merge patch as a
        // JSON patch.
        (Some(sm), Err(e)) if !newer && sm.is_empty() => Ok(Parsed::Json(Err(e))),
        (Some(sm), _) => Ok(Parsed::Strategic(sm)),
        (None, Ok(js)) => Ok(Parsed::Json(Ok(js))),
        (None, Err(_)) => Err(source.place(why_neither(text), at).context(format!(
            "unable to parse SM or JSON patch from {}",
            source.describe()
        ))),
    }
}

fn illegally_both(source: &PatchSource) -> OpError {
    OpError::new(format!(
        "illegally qualifies as both an SM and JSON patch: {}",
        source.describe()
    ))
}

/// Applying a patch entry to resources.
pub trait Patch {
    /// Applies the patch to every resource it selects.
    fn apply(&self, resources: &mut ResMap, env: &Env<'_>) -> OpResult<()>;
}

impl Patch for PatchEntry {
    /// Applies the patch (a chain of one entry).
    fn apply(&self, resources: &mut ResMap, env: &Env<'_>) -> OpResult<()> {
        chain::apply(&[self], resources, env).map_err(|e| e.error)
    }
}

/// `patchesStrategicMerge:` (PatchStrategicMergeTransformer).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StrategicMergePatches {
    /// Entries: each is inline patch YAML or a file path.
    pub paths: Vec<String>,
    /// More patches, inline.
    pub patches: String,
}

impl StrategicMergePatches {
    /// Applies every patch in order, each to the resource with its id.
    pub fn apply(&self, resources: &mut ResMap, env: &Env<'_>) -> OpResult<()> {
        if self.paths.is_empty() && self.patches.is_empty() {
            return Err(OpError::new("empty file path and empty patch content"));
        }
        // Each patch with the file it was read from (none: written inline).
        let mut loaded: Vec<(Resource, Option<&str>)> = Vec::new();
        for entry in &self.paths {
            // For historical reasons an entry is first tried as patch YAML.
            match strategic_patches(entry).filter(|p| !p.is_empty()) {
                Some(patches) => loaded.extend(patches.into_iter().map(|p| (p, None))),
                None => {
                    let text = PatchSource::Path(entry.clone()).text(env)?;
                    let patches = read_patch_resources(&text).map_err(|e| {
                        e.place(&|pos| Some((Some(entry.clone()), pos)))
                            .context(format!("patch file {entry}"))
                    })?;
                    loaded.extend(patches.into_iter().map(|p| (p, Some(entry.as_str()))));
                }
            }
        }
        if !self.patches.is_empty() {
            let patches = read_patch_resources(&self.patches).map_err(|e| e.place(&|_| None))?;
            loaded.extend(patches.into_iter().map(|p| (p, None)));
        }
        if loaded.is_empty() {
            return Err(OpError::new(format!(
                "patch appears to be empty; files={:?}, Patch={}",
                self.paths, self.patches
            )));
        }
        for (patch, file) in &loaded {
            let place = |e: OpError| e.place(&|pos| file.map(|f| (Some(f.to_string()), pos)));
            let index = find_by_id(resources, patch)
                .map_err(|e| place(e.located(None, patch.node.pos())))?;
            apply_strategic(resources, &[index], patch, true, env).map_err(place)?;
        }
        Ok(())
    }
}

/// Reads every document of a patch file as a patch resource (a repeated
/// key is ignored, as kyaml's lookups find the first).
fn read_patch_resources(text: &str) -> OpResult<Vec<Resource>> {
    let limits = krusty_yaml::Limits::with_duplicate_keys(krusty_yaml::DuplicateKeys::FirstWins);
    let docs = krusty_yaml::parse_stream_with(text, limits)
        .map_err(|e| OpError::new(e.message).located(None, e.pos))?;
    patch_documents(docs)
        .into_iter()
        .map(|root| Resource::from_node_as_is(root).map_err(OpError::from))
        .collect()
}

impl Patch for Json6902Entry {
    /// Applies the op list to every selected resource.
    fn apply(&self, resources: &mut ResMap, env: &Env<'_>) -> OpResult<()> {
        let at_entry = |e: OpError| e.located(None, self.written_at);
        if self.target.name.is_empty() {
            return Err(at_entry(OpError::new("must specify the target name")));
        }
        let text = self.source.text(env).map_err(at_entry)?;
        if let PatchSource::Path(path) = &self.source {
            if text.is_empty() {
                return Err(at_entry(OpError::new(format!(
                    "patch file '{path}' empty seems to be empty"
                ))));
            }
        }
        let ops = json_patch(&text).map_err(|e| {
            self.source
                .place(e, self.text_at)
                .context(format!("decoding {text}"))
        })?;
        if ops.is_empty() {
            let path = match &self.source {
                PatchSource::Path(p) => p.as_str(),
                PatchSource::Inline(_) => "",
            };
            return Err(at_entry(OpError::new(format!(
                "patch appears to be empty; file={path}, JsonOp={text}"
            ))));
        }
        for index in select(resources, &self.target)? {
            apply_json(&mut resources.resources_mut()[index], &ops).map_err(|e| {
                self.source
                    .place(e, self.text_at)
                    .context(format!("patch {}", self.source.describe()))
            })?;
        }
        Ok(())
    }
}

/// Indices of the resources a target selects.
fn select(resources: &ResMap, target: &Selector) -> OpResult<Vec<usize>> {
    let compiled = target.compile_regex()?;
    Ok(parallel::positions_where(resources.as_slice(), |r| {
        compiled.matches(r)
    }))
}

/// The one resource whose current or earlier id equals the patch's id.
fn find_by_id(resources: &mut ResMap, patch: &Resource) -> OpResult<usize> {
    let id = patch.id();
    let named = resources.named(&id.name).to_vec();
    let found: Vec<usize> = named
        .into_iter()
        .filter(|&i| resources.at(i).any_id(|rid| rid.equals(&id)))
        .collect();
    match found.as_slice() {
        [one] => Ok(*one),
        [] => Err(OpError::new(format!(
            "no matches for Id {id}; failed to find unique target for patch {id}"
        ))),
        _ => Err(OpError::new(format!(
            "multiple matches for Id {id}; failed to find unique target for patch {id}"
        ))),
    }
}

/// Applies a strategic merge patch to the selected resources; resources the
/// patch deletes leave the map. `copied`: Kustomize applies a copy of the
/// patch whose labels and annotations went through string maps (targeted
/// `patches:` and `patchesStrategicMerge:`), not the patch itself.
fn apply_strategic(
    resources: &mut ResMap,
    selected: &[usize],
    patch: &Resource,
    copied: bool,
    env: &Env<'_>,
) -> OpResult<()> {
    let renames = patch.meta.allow_name_change || patch.meta.allow_kind_change;
    let targets = if renames {
        resources.resources_mut()
    } else {
        resources.resources_mut_keeping_identity()
    };
    if selected.is_empty() {
        return Ok(());
    }
    let schema = env.schema();
    let mut prepared = patch.node.clone();
    if copied {
        smp::stringify_metadata_maps(&mut prepared);
    }
    // Each target gets its own copy of the patch; the merges are
    // independent of one another.
    let outcomes = parallel::map_at(targets, selected, |r| {
        let mut patch_node = prepared.clone();
        take_api_version(&mut patch_node, r);
        apply_strategic_one(r, patch_node, patch, schema).inspect(|_| {
            if copied {
                null_api_version_if_missing(r);
                untype_renamed(r, patch);
            }
        })
    });
    let mut deleted = Vec::new();
    for (&index, outcome) in selected.iter().zip(outcomes) {
        if !outcome? {
            deleted.push(index);
        }
    }
    for index in deleted.into_iter().rev() {
        resources.remove_at(index);
    }
    // Only a patch allowed to rename can make two resources collide.
    if renames {
        resources.check_unique().map_err(OpError::from)?;
    }
    Ok(())
}

/// The patch takes the target's apiVersion, keeping its own kind; a
/// target without one gives the patch none.
fn take_api_version(patch_node: &mut Node, r: &Resource) {
    match r.api_version() {
        "" => {
            patch_node.remove("apiVersion");
        }
        version => patch_node.set("apiVersion", Node::string(version)),
    }
}

/// Kustomize sets an empty apiVersion on the copy of a patch it applies
/// by `target:` (and for `patchesStrategicMerge:`), which comes out as
/// `apiVersion: null` on a resource that had none.
fn null_api_version_if_missing(r: &mut Resource) {
    if r.node.get("apiVersion").is_none() {
        r.node.set("apiVersion", Node::null());
    }
}

/// Merges `patch_node` into `r`; `false` when the patch deleted it.
fn apply_strategic_one(
    r: &mut Resource,
    patch_node: Node,
    patch: &Resource,
    schema: &Schema,
) -> OpResult<bool> {
    let id = r.id();
    if patch.meta.allow_name_change || patch.meta.allow_kind_change {
        r.store_previous_id();
    }
    let replacing = (!r.meta.shared.is_empty()
        && crate::builtins::metadata_map::has_replace_directive(&patch_node))
    .then(|| patch_node.clone());
    let target = std::mem::replace(&mut r.node, Node::null());
    match smp::merge(target, patch_node, schema) {
        Err(e) => return Err(e.context(format!("applying to {id}"))),
        Ok(None) => return Ok(false),
        Ok(Some(merged)) => r.node = merged,
    }
    crate::builtins::metadata_map::reconcile_shared_after_merge(r, replacing.as_ref());
    if r.meta.untyped_numbers {
        let shape = root_shape(r, schema);
        quote_untyped_numbers(&mut r.node, shape, schema);
    }
    if r.node.as_map().is_none_or(|m| m.is_empty()) {
        return Ok(false);
    }
    if !patch.meta.allow_kind_change && !holds_string(r.node.get("kind"), &id.gvk.kind) {
        r.set_kind(&id.gvk.kind);
    }
    if !patch.meta.allow_name_change {
        set_name_untyped(r, &id.name);
    }
    let namespace = meta_field(r, "namespace");
    let namespace_kept = match id.namespace.as_str() {
        // Setting an empty namespace removes the field.
        "" => namespace.is_none(),
        ns => holds_string(namespace, ns),
    };
    if !namespace_kept {
        r.set_namespace(&id.namespace);
    }
    Ok(true)
}

/// The schema's shape for `r`'s group, version and kind.
fn root_shape<'s>(r: &Resource, schema: &'s Schema) -> Option<&'s Shape> {
    let api_version = r.api_version();
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    schema.root(group, version, r.kind())
}

/// Kustomize's strategic merge sets every field of the maps it walks again,
/// quoting a value without a type whose text YAML 1.1 reads as another
/// type (a number a replacement wrote into a field it made): maps at any
/// depth and the elements of lists merged by one key (`containers`,
/// `env`), not other lists (Service `ports`, merged by port and protocol,
/// nor lists without merge keys).
fn quote_untyped_numbers(node: &mut Node, shape: Option<&Shape>, schema: &Schema) {
    match &mut node.value {
        Value::Map(entries) => {
            for (k, v) in entries.iter_mut() {
                if matches!(v.value, Value::Scalar(_)) {
                    if crate::replacement::is_untyped_number(v) {
                        v.set_style(ScalarStyle::DoubleQuoted);
                    }
                    continue;
                }
                let field = shape.zip(k.key_str()).and_then(|(s, n)| schema.field(s, n));
                quote_untyped_numbers(v, field, schema);
            }
        }
        Value::Seq(items) => {
            if let Some(Shape::List {
                item,
                merge_keys: Some(keys),
            }) = shape
            {
                if keys.len() == 1 {
                    for element in items.iter_mut() {
                        quote_untyped_numbers(element, Some(item), schema);
                    }
                }
            }
        }
        Value::Scalar(_) => {}
    }
}

/// After a targeted patch that may rename: Kustomize merges a copy of the
/// patch whose name it set again, so a new name has no type of its own.
pub(super) fn untype_renamed(r: &mut Resource, patch: &Resource) {
    if patch.meta.allow_name_change && !r.name().is_empty() {
        let name = r.name().to_string();
        set_name_untyped(r, &name);
    }
}

/// Sets `metadata.name` as Kustomize sets it again after every strategic
/// merge: a string without a type of its own, so a number a replacement
/// writes there later prints as a number.
fn set_name_untyped(r: &mut Resource, name: &str) {
    if let Some(meta) = r.node.entry_map("metadata") {
        let node = crate::replacement::untyped_string(name);
        match meta.get_mut("name") {
            Some(n) => *n = node,
            None => meta.set("name", node),
        }
    }
}

/// The value of `metadata.<name>`.
fn meta_field<'r>(r: &'r Resource, name: &str) -> Option<&'r Node> {
    r.node.get("metadata").and_then(|m| m.get(name))
}

/// Whether `node` is already what setting `text` as a string makes it, so
/// setting it again would change nothing.
fn holds_string(node: Option<&Node>, text: &str) -> bool {
    node.is_some_and(|n| {
        n.extras.is_none()
            && matches!(&n.value, Value::Scalar(s) if s.text == text)
            && n.style() == ScalarStyle::DoubleQuoted
            && n.tag().is_none()
    })
}

/// Applies JSON 6902 operations to a resource. While Kustomize applies
/// them, every resource's `metadata.annotations` holds its build
/// bookkeeping (removed afterwards), so operations on an annotation work
/// on a resource that has none, and an annotations map left empty is
/// dropped; the same is done here with an empty map put in place and
/// taken away again.
fn apply_json(r: &mut Resource, ops: &JsonPatch) -> OpResult<()> {
    if r.meta.mistyped {
        // Kustomize decodes the resource to JSON first.
        krusty_yaml::resolve::check_scalar_tags(&r.node)
            .map_err(|e| OpError::new(format!("yaml: {e}")))?;
    }
    let id = r.id();
    // Kustomize's JSON round trip gives every field a node of its own.
    r.meta.shared.clear();
    if ops.replaces_annotations() {
        // Kustomize's origin and transformation records go with them; the
        // step that ran becomes the origin (see `Builtin::apply`).
        r.meta.origin = None;
        r.meta.transformations.clear();
    }
    let made_typed = r.annotations_through_json()?;
    if let Some(metadata) = r.node.get_mut("metadata").filter(|m| m.as_map().is_some()) {
        // Annotations that are not a mapping were replaced by the records.
        if metadata
            .get("annotations")
            .is_none_or(|a| a.as_map().is_none())
        {
            metadata.set("annotations", Node::map());
        }
    }
    let bookkeeping = ops.reads_annotations();
    if bookkeeping {
        krusty_resource::build_records::write_bookkeeping(r);
    }
    let applied = ops
        .apply(&mut r.node)
        .map_err(|e| e.context(format!("applying to {id}")))
        .and_then(|()| r.values_through_json(&made_typed).map_err(OpError::from));
    if bookkeeping {
        krusty_resource::build_records::remove_bookkeeping(&mut r.node);
    }
    if let Some(metadata) = r.node.get_mut("metadata") {
        if metadata
            .get("annotations")
            .and_then(Node::as_map)
            .is_some_and(|a| a.is_empty())
        {
            metadata.remove("annotations");
        }
    } else if r.node.as_map().is_some() {
        // Kustomize records in a new `metadata` (left as `metadata: {}`).
        r.node.set("metadata", Node::map());
    }
    applied
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_surrogate_escapes_read_as_go_reads_them() {
        let cases = [
            (r#"["\ud83d\ude80"]"#, r#"["\U0001f680"]"#),
            (r#"["\ud83d x"]"#, r#"["\U0000fffd x"]"#),
            (r#"["\ude80\ud83d"]"#, r#"["\U0000fffd\U0000fffd"]"#),
            (r#"["\\ud83d", "\u00e9"]"#, r#"["\\ud83d", "\u00e9"]"#),
        ];
        for (json, yaml) in cases {
            assert_eq!(json_surrogates_as_yaml(json), yaml, "{json}");
        }
    }

    #[test]
    fn an_operation_error_names_the_operation_and_the_patch_file() {
        let ops = json_patch("- op: add\n  path: /a\n  value: 1\n- op: remove\n  path: /b\n")
            .expect("a JSON patch");
        let mut doc = krusty_yaml::parse_stream("a: 0\n").expect("valid")[0]
            .root
            .clone()
            .expect("a document");
        let e = ops.apply(&mut doc).expect_err("/b is missing");
        let placed = PatchSource::Path("p.yaml".into()).place(e.clone(), None);
        assert!(
            placed
                .to_string()
                .ends_with("(p.yaml, operation 2, line 4, column 3)"),
            "{placed}"
        );
        let unplaced = PatchSource::Inline(String::new()).place(e, None);
        assert!(
            unplaced.to_string().ends_with("(operation 2)"),
            "{unplaced}"
        );
    }
}
