//! Patches: Kustomize's PatchTransformer (`patches:`),
//! PatchStrategicMergeTransformer (`patchesStrategicMerge:`) and
//! PatchJson6902Transformer (`patchesJson6902:`).

pub mod chain;
pub mod json6902;
pub mod smp;

use krusty_resource::{ResMap, Resource};
use krusty_yaml::{Node, ScalarStyle, Value};

use crate::env::Env;
use crate::error::{go_quote, OpError, OpResult};
use crate::parallel;
use crate::schema::{Schema, Shape};
use crate::selector::Selector;
use json6902::JsonPatch;

/// Where a patch's text comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum PatchSource {
    /// Written inline (`patch:`), already trimmed.
    Inline(String),
    /// A file (`path:`), relative to the kustomization root.
    Path(String),
}

impl PatchSource {
    /// How Kustomize names the patch in messages: `[patch: "..."]` or
    /// `[path: "..."]`.
    fn describe(&self) -> String {
        match self {
            PatchSource::Inline(text) => format!("[patch: {}]", go_quote(text)),
            PatchSource::Path(path) => format!("[path: {}]", go_quote(path)),
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

/// One `patches:` entry (PatchTransformer).
#[derive(Debug, Clone, PartialEq)]
pub struct PatchEntry {
    /// The patch text.
    pub source: PatchSource,
    /// Which resources to patch; without it, a strategic merge patch
    /// patches the resource with its own id.
    pub target: Option<Selector>,
    /// `options.allowNameChange`.
    pub allow_name_change: bool,
    /// `options.allowKindChange`.
    pub allow_kind_change: bool,
}

/// A patch's content, as detected from its text.
enum Parsed {
    Strategic(Vec<Resource>),
    Json(JsonPatch),
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
        // kinds, as in Kustomize).
        if root.as_seq().is_some_and(|items| items.is_empty()) {
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
    // Kustomize converts them to JSON with go-yaml v2, where a repeated key
    // replaces the earlier one.
    let limits = krusty_yaml::Limits::with_duplicate_keys(krusty_yaml::DuplicateKeys::LastWins);
    let docs = krusty_yaml::parse_stream_with(text, limits)?;
    match docs.into_iter().next().and_then(|d| d.root) {
        Some(root) => JsonPatch::from_node(&root),
        None => Ok(JsonPatch::default()),
    }
}

fn detect(text: &str, source: &PatchSource) -> OpResult<Parsed> {
    // Nothing at all reads as a JSON patch of no operations (which then
    // needs a target); comments or `---` alone read as both kinds.
    if text.trim().is_empty() {
        return Ok(Parsed::Json(JsonPatch::default()));
    }
    let strategic = strategic_patches(text);
    let json = json_patch(text);
    match (strategic, json) {
        (Some(sm), Ok(js)) if sm.is_empty() == js.is_empty() => Err(OpError::new(format!(
            "illegally qualifies as both an SM and JSON patch: {}",
            source.describe()
        ))),
        (Some(sm), _) => Ok(Parsed::Strategic(sm)),
        (None, Ok(js)) => Ok(Parsed::Json(js)),
        (None, Err(_)) => Err(OpError::new(format!(
            "unable to parse SM or JSON patch from {}",
            source.describe()
        ))),
    }
}

impl PatchEntry {
    /// Applies the patch (a chain of one entry).
    pub fn apply(&self, resources: &mut ResMap, env: &Env<'_>) -> OpResult<()> {
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
        let mut loaded = Vec::new();
        for entry in &self.paths {
            // For historical reasons an entry is first tried as patch YAML.
            match strategic_patches(entry).filter(|p| !p.is_empty()) {
                Some(patches) => loaded.extend(patches),
                None => {
                    let text = PatchSource::Path(entry.clone()).text(env)?;
                    let patches = read_patch_resources(&text)
                        .map_err(|e| e.context(format!("patch file {entry}")))?;
                    loaded.extend(patches);
                }
            }
        }
        if !self.patches.is_empty() {
            loaded.extend(read_patch_resources(&self.patches)?);
        }
        if loaded.is_empty() {
            return Err(OpError::new(format!(
                "patch appears to be empty; files={:?}, Patch={}",
                self.paths, self.patches
            )));
        }
        for patch in &loaded {
            let index = find_by_id(resources, patch)?;
            apply_strategic(resources, &[index], patch, true, env)?;
        }
        Ok(())
    }
}

/// Reads every document of a patch file as a patch resource (a repeated
/// key is ignored, as kyaml's lookups find the first).
fn read_patch_resources(text: &str) -> OpResult<Vec<Resource>> {
    let limits = krusty_yaml::Limits::with_duplicate_keys(krusty_yaml::DuplicateKeys::FirstWins);
    let docs = krusty_yaml::parse_stream_with(text, limits)?;
    patch_documents(docs)
        .into_iter()
        .map(|root| Resource::from_node_as_is(root).map_err(OpError::from))
        .collect()
}

/// One `patchesJson6902:` entry (PatchJson6902Transformer).
#[derive(Debug, Clone, PartialEq)]
pub struct Json6902Entry {
    /// The resources to patch (a name is required).
    pub target: Selector,
    /// The op list: inline (`jsonOp`/`op`) or a file.
    pub source: PatchSource,
}

impl Json6902Entry {
    /// Applies the op list to every selected resource.
    pub fn apply(&self, resources: &mut ResMap, env: &Env<'_>) -> OpResult<()> {
        if self.target.name.is_empty() {
            return Err(OpError::new("must specify the target name"));
        }
        let text = self.source.text(env)?;
        if let PatchSource::Path(path) = &self.source {
            if text.is_empty() {
                return Err(OpError::new(format!(
                    "patch file '{path}' empty seems to be empty"
                )));
            }
        }
        let ops = json_patch(&text).map_err(|e| e.context(format!("decoding {text}")))?;
        if ops.is_empty() {
            let path = match &self.source {
                PatchSource::Path(p) => p.as_str(),
                PatchSource::Inline(_) => "",
            };
            return Err(OpError::new(format!(
                "patch appears to be empty; file={path}, JsonOp={text}"
            )));
        }
        for index in select(resources, &self.target)? {
            apply_json(&mut resources.resources_mut()[index], &ops)
                .map_err(|e| e.context(format!("patch {}", self.source.describe())))?;
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
    let id = r.id();
    // Kustomize's JSON round trip gives every field a node of its own.
    r.meta.shared.clear();
    if ops.replaces_annotations() {
        // Kustomize's origin and transformation records go with them; the
        // step that ran becomes the origin (see `Builtin::apply`).
        r.meta.origin = None;
        r.meta.transformations.clear();
    }
    r.annotations_through_json()?;
    if let Some(metadata) = r.node.get_mut("metadata").filter(|m| m.as_map().is_some()) {
        // Annotations that are not a mapping were replaced by the records.
        if metadata
            .get("annotations")
            .is_none_or(|a| a.as_map().is_none())
        {
            metadata.set("annotations", Node::map());
        }
    }
    let applied = ops
        .apply(&mut r.node)
        .map_err(|e| e.context(format!("applying to {id}")))
        .and_then(|()| r.values_through_json().map_err(OpError::from));
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
