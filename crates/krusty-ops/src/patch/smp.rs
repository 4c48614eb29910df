//! Strategic merge: a patch document merged into a resource the way
//! Kustomize v5.5.0 merges it (its kyaml merge, not the API server's).
//!
//! Observed rules this reproduces:
//! - Both trees are walked together from the root, field by field. A patch
//!   scalar replaces the resource's; a patch `null` deletes the field.
//! - A list is merged element by element only where the schema gives it a
//!   patch strategy of `merge` (see [`Schema`]); every other list, and every
//!   list of a kind without a schema, is replaced by the patch's.
//! - Merged lists are rebuilt even where the patch does not touch them: the
//!   patch's elements come first in the patch's order, then the resource's
//!   other elements (for multi-key lists, matched elements keep the
//!   resource's order). Elements with equal keys collapse into one.
//! - A field's new scalar takes the style of the value it replaces (kyaml's
//!   field setter), and Kustomize's output reads it back: over a quoted or
//!   block scalar, a plain `2` or `true` comes out as the string `"2"`.
//! - A subtree the target lacks (or a `$patch: replace` one) is the patch's
//!   own node in kyaml, walked against itself: directives nested in it are
//!   stripped from the result (`aliased` below).
//! - `$patch: delete|replace|merge` works on maps, list elements and lists;
//!   other directives (`$setElementOrder`, `$retainKeys`,
//!   `$deleteFromPrimitiveList`) are not understood and stay as fields.

use std::cmp::Ordering;

use krusty_yaml::{CompactString, Node, ScalarStyle, Tag, ThinVec, Value};

use crate::error::{OpError, OpResult};
use crate::path::raw;
use crate::schema::{Schema, Shape};

/// The key of a strategic merge directive.
const DIRECTIVE: &str = "$patch";

/// Merges `patch` into `target`. `None` means the patch deleted the whole
/// resource (`$patch: delete` at the top).
pub fn merge(target: Node, patch: Node, schema: &Schema) -> OpResult<Option<Node>> {
    if let Some(problem) = schema.problem() {
        return Err(OpError::new(problem));
    }
    // Kustomize keeps the merge only where it changed the resource in
    // place, so `$patch: replace` at the top leaves the resource as it was.
    let original = (patch.get(DIRECTIVE).map(raw) == Some("replace")).then(|| target.clone());
    let merger = Merger { schema };
    match merger.walk(Some(target), Some(patch), None, false)? {
        Merged::Clear => Ok(None),
        Merged::Node {
            node,
            from_target: false,
        } => Ok(Some(original.unwrap_or(node))),
        Merged::Node { node, .. } | Merged::Kept(node) => Ok(Some(node)),
    }
}

/// Rewrites a patch's `metadata.labels` and `metadata.annotations` the way
/// Kustomize does before merging a patch with a `target:` and every
/// `patchesStrategicMerge:` patch (`CopyMergeMetaDataFieldsFrom`, a round
/// trip through `map[string]string`; `patches:` entries without a target
/// skip it): each value becomes the string of its text (`null` and `~` too,
/// so they no longer delete; collections become `""`), and a null or empty
/// map is dropped (so `labels: null` deletes nothing).
pub fn stringify_metadata_maps(patch: &mut Node) {
    let Some(meta) = patch.get_mut("metadata") else {
        return;
    };
    if meta.as_map().is_none() {
        return;
    }
    for field in ["labels", "annotations"] {
        let mut entries: Vec<(String, String)> = Vec::new();
        if let Some(map) = meta.get(field).and_then(Node::as_map) {
            for (k, v) in map {
                let Some(key) = k.key_str() else { continue };
                entries.retain(|(existing, _)| existing != key);
                entries.push((key.to_string(), raw(v).to_string()));
            }
        }
        meta.remove(field);
        if entries.is_empty() {
            continue;
        }
        entries.sort();
        let mut map = Node::map();
        for (k, v) in entries {
            map.set(&k, Node::string(v));
        }
        meta.set(field, map);
    }
}

/// What a merge step produced.
enum Merged {
    /// The field (or element) goes away.
    Clear,
    /// A value; `from_target` when it is the target's own node, updated in
    /// place (which decides what a merged list keeps, see `merge_elements`).
    Node { node: Node, from_target: bool },
    /// The target's explicit null, kept although it is null.
    Kept(Node),
}

impl Merged {
    fn node(node: Node, from_target: bool) -> Merged {
        Merged::Node { node, from_target }
    }

    fn from_option(node: Option<Node>, from_target: bool) -> Merged {
        node.map_or(Merged::Clear, |node| Merged::node(node, from_target))
    }

    /// `true` when setting this on a field removes the field.
    fn clears_field(&self) -> bool {
        match self {
            Merged::Clear => true,
            Merged::Node { node, .. } => node.is_null(),
            Merged::Kept(_) => false,
        }
    }

    fn into_node(self) -> Option<Node> {
        match self {
            Merged::Clear => None,
            Merged::Node { node, .. } | Merged::Kept(node) => Some(node),
        }
    }
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum Kind {
    Map,
    Seq,
    Scalar,
}

fn kind_of(node: &Node) -> Kind {
    match node.value {
        Value::Map(_) => Kind::Map,
        Value::Seq(_) => Kind::Seq,
        Value::Scalar(_) => Kind::Scalar,
    }
}

fn missing_or_null(node: Option<&Node>) -> bool {
    node.is_none_or(Node::is_null)
}

/// A key's value as merge keys see it: empty when missing, null or an empty
/// (or any) collection.
fn key_value(element: &Node, key: &str) -> String {
    match element.get(key) {
        Some(v) if !v.is_null() => raw(v).to_string(),
        _ => String::new(),
    }
}

/// Whether a field's value is written quoted or as a block scalar, without
/// an explicit tag. kyaml's field setter gives the value replacing it the
/// same style, and Kustomize's output (YAML, reparsed) then reads it back
/// as a string: a quoted `"1.5"` replaced by a plain `2` prints `"2"`.
fn forces_string(node: &Node) -> bool {
    matches!(&node.value, Value::Scalar(_))
        && node.tag().is_none()
        && node.style() != ScalarStyle::Plain
}

/// Turns a plain scalar (of any resolved type) into a string with the same
/// text; core-schema tags such as `!!int` are dropped with the style.
fn make_string(node: &mut Node) {
    if matches!(node.value, Value::Scalar(_))
        && node.style() == ScalarStyle::Plain
        && node.tag() != Tag::Other
    {
        node.set_style(ScalarStyle::DoubleQuoted);
        node.set_tag(Tag::None);
    }
}

fn is_empty_map(node: &Node) -> bool {
    matches!(&node.value, Value::Map(m) if m.is_empty())
}

/// A strategic merge directive.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Directive {
    Merge,
    Replace,
    Delete,
}

fn parse_directive(value: &str) -> OpResult<Directive> {
    match value {
        "merge" => Ok(Directive::Merge),
        "replace" => Ok(Directive::Replace),
        "delete" => Ok(Directive::Delete),
        other => Err(OpError::new(format!(
            "unknown patch strategy '{other}'; it must be merge, replace or delete"
        ))),
    }
}

/// Reads (and removes) the `$patch` field of a patch mapping.
fn map_directive(patch: Option<&mut Node>) -> OpResult<Directive> {
    let Some(patch) = patch else {
        return Ok(Directive::Merge);
    };
    let Some(value) = patch.get(DIRECTIVE) else {
        return Ok(Directive::Merge);
    };
    let directive = parse_directive(raw(value)).map_err(|e| e.located(None, value.pos()))?;
    patch.remove(DIRECTIVE);
    Ok(directive)
}

/// Reads (and removes) a `{$patch: ...}` element of a patch list.
fn seq_directive(patch: Option<&mut Node>) -> OpResult<Directive> {
    let Some(items) = patch.and_then(Node::as_seq_mut) else {
        return Ok(Directive::Merge);
    };
    let Some(element) = items
        .iter()
        .find(|e| e.as_map().is_some() && e.get(DIRECTIVE).is_some())
    else {
        return Ok(Directive::Merge);
    };
    if element.as_map().is_some_and(|m| m.len() > 1) {
        return Ok(Directive::Merge);
    }
    let written = element.get(DIRECTIVE);
    let value = written.map(raw).unwrap_or_default().to_string();
    let pos = written.map(Node::pos).unwrap_or_default();
    let directive = parse_directive(&value).map_err(|e| e.located(None, pos))?;
    set_element(items, &[DIRECTIVE.into()], &[value], None)?;
    Ok(directive)
}

struct Merger<'a> {
    schema: &'a Schema,
}

impl<'s> Merger<'s> {
    /// Merges one field's values (either may be missing). `aliased` when
    /// the target is the patch's own node: kyaml adds (and replaces) a
    /// patch's subtree by reference and then walks it against itself, so
    /// directives it strips from the patch vanish from the result too.
    fn walk(
        &self,
        target: Option<Node>,
        patch: Option<Node>,
        shape: Option<&'s Shape>,
        aliased: bool,
    ) -> OpResult<Merged> {
        let shape = shape.or_else(|| self.root_shape(target.as_ref(), patch.as_ref()));
        let kind = [target.as_ref(), patch.as_ref()]
            .into_iter()
            .flatten()
            .find(|n| !n.is_null())
            .map(kind_of);
        if let Some(kind) = kind {
            // The kind is the target's when it has one: only the patch
            // (its field, at its position in the patch) can differ.
            for node in [target.as_ref(), patch.as_ref()].into_iter().flatten() {
                if !node.is_null() && kind_of(node) != kind {
                    return Err(wrong_kind(kind, node).located(None, node.pos()));
                }
            }
        }
        match kind {
            None | Some(Kind::Map) => self.walk_map(target, patch, shape, aliased),
            Some(Kind::Seq) => match shape {
                Some(Shape::List {
                    item,
                    merge_keys: Some(keys),
                }) => self.walk_merged_list(target, patch, item, keys, aliased),
                _ => Ok(match patch {
                    Some(p) => Merged::node(p, false),
                    None => Merged::from_option(target, true),
                }),
            },
            Some(Kind::Scalar) => Ok(match patch {
                Some(p) => Merged::node(p, false),
                None => Merged::from_option(target, true),
            }),
        }
    }

    /// Without a schema, a mapping that has `apiVersion` and `kind` is
    /// merged with the schema of that kind.
    fn root_shape(&self, target: Option<&Node>, patch: Option<&Node>) -> Option<&'s Shape> {
        [target, patch].into_iter().flatten().find_map(|n| {
            let (api_version, kind) = api_version_and_kind(n)?;
            if api_version.is_empty() || kind.is_empty() {
                return None;
            }
            let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
            self.schema.root(group, version, kind)
        })
    }

    fn walk_map(
        &self,
        target: Option<Node>,
        mut patch: Option<Node>,
        shape: Option<&'s Shape>,
        aliased: bool,
    ) -> OpResult<Merged> {
        let (mut dest, from_target, aliased) = if missing_or_null(target.as_ref()) {
            // A directive error is ignored here, as Kustomize does.
            if map_directive(patch.as_mut()) == Ok(Directive::Delete) {
                return Ok(Merged::Clear);
            }
            match (patch.as_ref(), target) {
                (None, Some(t)) if !raw(&t).is_empty() => {
                    return Ok(Merged::Kept(t));
                }
                (None, _) => return Ok(Merged::Clear),
                (Some(p), _) => (p.clone(), false, true),
            }
        } else if patch.as_ref().is_some_and(Node::is_null) {
            return Ok(Merged::Clear);
        } else {
            match map_directive(patch.as_mut())? {
                Directive::Delete => return Ok(Merged::Clear),
                Directive::Replace => match patch.clone() {
                    Some(p) => (p, false, true),
                    None => return Ok(Merged::Clear),
                },
                Directive::Merge => match target {
                    Some(mut t) => {
                        if aliased {
                            t.remove(DIRECTIVE);
                        }
                        (t, true, aliased)
                    }
                    None => return Ok(Merged::Clear),
                },
            }
        };
        if dest.is_null() {
            return Ok(Merged::node(dest, from_target));
        }
        // Every field of either side is walked, in name order (new fields
        // are appended in that order). A target field the patch lacks is
        // skipped when walking it alone would leave it as it is.
        let field_shape = |name: &str| shape.and_then(|s| self.schema.field(s, name));
        let patch_has = |name: &str| patch.as_ref().is_some_and(|p| p.get(name).is_some());
        // Names are copied out (the walk below changes both maps); most
        // fit a CompactString inline.
        let mut names: Vec<CompactString> = dest
            .as_map()
            .into_iter()
            .flatten()
            .filter_map(|(k, v)| {
                let name = k.key_str()?;
                let skip = !aliased && !patch_has(name) && self.settled(v, field_shape(name));
                (!skip).then(|| CompactString::from(name))
            })
            .chain(
                patch
                    .as_ref()
                    .and_then(Node::as_map)
                    .into_iter()
                    .flatten()
                    .filter_map(|(k, _)| k.key_str().map(CompactString::from)),
            )
            .collect();
        names.sort_unstable();
        names.dedup();
        for name in names {
            let field_shape = field_shape(&name);
            let current = take_field(&mut dest, &name);
            let string_style = current.as_ref().is_some_and(forces_string);
            let patch_value = patch.as_mut().and_then(|p| take_field(p, &name));
            let merged = self.walk(current, patch_value, field_shape, aliased)?;
            if merged.clears_field() {
                dest.remove(&name);
            } else if let Some(mut node) = merged.into_node() {
                if string_style {
                    make_string(&mut node);
                }
                dest.set(&name, node);
            }
        }
        Ok(Merged::node(dest, from_target))
    }

    /// A list merged element by element, by `keys` (empty: by value).
    fn walk_merged_list(
        &self,
        target: Option<Node>,
        mut patch: Option<Node>,
        item: &'s Shape,
        keys: &[String],
        aliased: bool,
    ) -> OpResult<Merged> {
        if !aliased && !keys.is_empty() {
            if let (Some(Value::Seq(t)), Some(Value::Seq(p))) = (
                target.as_ref().map(|n| &n.value),
                patch.as_ref().map(|n| &n.value),
            ) {
                let regular = regular_keys(&[t, p], keys)
                    .filter(|_| p.iter().all(|e| e.get(DIRECTIVE).is_none()));
                if let Some(keys) = regular {
                    let (Some(Value::Seq(t)), Some(Value::Seq(p))) =
                        (target.map(|n| n.value), patch.map(|n| n.value))
                    else {
                        unreachable!("both sides were just seen to be sequences")
                    };
                    let merged = self.merge_regular(t, p, item, &keys)?;
                    return Ok(Merged::node(Node::new(Value::Seq(merged)), false));
                }
            }
        }
        let (dest, aliased) = if missing_or_null(target.as_ref()) {
            match patch.clone() {
                Some(p) => (p, true),
                None => return Ok(Merged::Clear),
            }
        } else if patch.as_ref().is_some_and(Node::is_null) {
            return Ok(Merged::Clear);
        } else {
            match seq_directive(patch.as_mut())? {
                Directive::Delete => return Ok(Merged::Clear),
                Directive::Replace => match patch.clone() {
                    Some(p) => (p, true),
                    None => return Ok(Merged::Clear),
                },
                // The patch, less its directive element, is the target.
                Directive::Merge if aliased => match patch.clone() {
                    Some(p) => (p, true),
                    None => return Ok(Merged::Clear),
                },
                Directive::Merge => match target {
                    Some(t) => (t, false),
                    None => return Ok(Merged::Clear),
                },
            }
        };
        let Value::Seq(dest) = dest.value else {
            return Ok(Merged::node(dest, false));
        };
        let patch_items = patch.and_then(|p| match p.value {
            Value::Seq(items) => Some(items),
            _ => None,
        });
        let sources = [patch_items.as_deref(), Some(dest.as_slice())];
        let by_value = [String::new()];
        let (values, keys) = if keys.is_empty() {
            (scalar_values(&sources), &by_value[..])
        } else {
            (key_values(&sources, keys), keys)
        };
        let merged = self.merge_elements(values, keys, dest, patch_items, item, aliased)?;
        Ok(Merged::node(Node::new(Value::Seq(merged)), false))
    }

    /// Rebuilds a merged list from the key values of all elements of both
    /// sides (patch first).
    fn merge_elements(
        &self,
        mut values_list: Vec<Vec<String>>,
        keys: &[String],
        mut dest: ThinVec<Node>,
        patch: Option<ThinVec<Node>>,
        item: &'s Shape,
        aliased: bool,
    ) -> OpResult<ThinVec<Node>> {
        if keys.len() > 1 {
            unify_values(&mut values_list);
        }
        let mut added: ThinVec<Node> = ThinVec::new();
        let mut last_keys = keys.to_vec();
        for values in &values_list {
            let (keys_now, values_now) = valid_keys(&values_list, values, keys);
            let (match_keys, match_values) =
                valid_keys(std::slice::from_ref(&values_now), &values_now, &keys_now);
            let (valid_keys, valid_values) = (keys_now, values_now);
            let dest_index = find_element(&dest, &match_keys, &match_values);
            let patch_element = patch
                .as_deref()
                .and_then(|p| find_element(p, &match_keys, &match_values).map(|i| p[i].clone()));
            // A mapping element merged with a patch element that has no
            // directive always comes back as the merged target (written
            // back below): it can be moved out instead of copied.
            let moves = dest_index.is_some_and(|i| dest[i].as_map().is_some())
                && patch_element
                    .as_ref()
                    .is_none_or(|p| p.as_map().is_some_and(|_| p.get(DIRECTIVE).is_none()));
            let dest_element = dest_index.map(|i| {
                if moves {
                    std::mem::replace(&mut dest[i], placeholder())
                } else {
                    dest[i].clone()
                }
            });
            let merged = self.walk(dest_element, patch_element, Some(item), aliased)?;
            last_keys = valid_keys.clone();
            let (mut node, from_target) = match merged {
                Merged::Node { node, from_target } if !node.is_null() && !is_empty_map(&node) => {
                    (node, from_target)
                }
                Merged::Kept(node) => (node, false),
                _ => {
                    set_element(&mut dest, &valid_keys, &valid_values, None)?;
                    continue;
                }
            };
            for (key, value) in valid_keys.iter().zip(&valid_values) {
                if !key.is_empty() && !value.is_empty() && node.get(key).is_none() {
                    if node.as_map().is_none() {
                        return Err(wrong_kind(Kind::Map, &node));
                    }
                    node.set(key, Node::plain(value.clone()));
                }
            }
            // An aliased target element is the patch's own node, which the
            // walk changed in place (it lost its directive).
            if from_target || aliased || moves {
                if let Some(i) = dest_index {
                    dest[i] = node.clone();
                }
            }
            set_element(&mut added, &valid_keys, &valid_values, Some(node))?;
        }
        if values_list.is_empty() {
            return Ok(dest);
        }
        append_elements(&mut added, dest, &last_keys)?;
        Ok(added)
    }

    /// What [`Merger::merge_elements`] makes of two regular lists (see
    /// [`regular_keys`], which gives `keys`) whose patch elements carry no
    /// directive, without
    /// its key tuples and rescans. Each patch element is merged into the
    /// target element with the same keys (or added); a result that is
    /// null or an empty mapping is dropped. Order: with one key, the
    /// patch's elements in the patch's order, then the target's others;
    /// with several keys, the new elements, then the target's in its order.
    fn merge_regular(
        &self,
        dest: ThinVec<Node>,
        patch: ThinVec<Node>,
        item: &'s Shape,
        keys: &[&str],
    ) -> OpResult<ThinVec<Node>> {
        let keep = |merged: Merged| match merged {
            Merged::Node { node, .. } if !node.is_null() && !is_empty_map(&node) => Some(node),
            _ => None,
        };
        let mut dest: Vec<Option<Node>> = dest.into_iter().map(Some).collect();
        let mut results: Vec<Option<Node>> = Vec::new();
        results.resize_with(dest.len(), || None);
        let mut added: Vec<Option<Node>> = Vec::new();
        // Where each patch element's result went: `Ok(i)` into `results`,
        // `Err(j)` into `added`.
        let mut patch_order: Vec<Result<usize, usize>> = Vec::with_capacity(patch.len());
        for p in patch {
            let found = dest
                .iter()
                .position(|d| d.as_ref().is_some_and(|d| same_keys(d, &p, keys)));
            match found {
                Some(i) => {
                    results[i] = keep(self.walk(dest[i].take(), Some(p), Some(item), false)?);
                    patch_order.push(Ok(i));
                }
                None => {
                    added.push(keep(self.walk(None, Some(p), Some(item), false)?));
                    patch_order.push(Err(added.len() - 1));
                }
            }
        }
        for (i, d) in dest.iter_mut().enumerate() {
            if let Some(d) = d.take() {
                results[i] = if self.settled(&d, Some(item)) {
                    Some(d)
                } else {
                    keep(self.walk(Some(d), None, Some(item), false)?)
                };
            }
        }
        let mut out = ThinVec::with_capacity(results.len() + added.len());
        if keys.len() == 1 {
            for slot in patch_order {
                out.extend(match slot {
                    Ok(i) => results[i].take(),
                    Err(j) => added[j].take(),
                });
            }
            out.extend(results.into_iter().flatten());
        } else {
            out.extend(added.into_iter().flatten());
            out.extend(results.into_iter().flatten());
        }
        Ok(out)
    }

    /// Whether walking `node` against no patch value (not aliased) gives
    /// back `node` itself, so the walk can leave it alone. What such a walk
    /// changes: a field whose value is an empty null goes away, and a
    /// merged list is rebuilt, which drops null and empty elements,
    /// collapses elements with equal keys and acts on elements that lack a
    /// key. A node that may be changed answers `false` and is walked.
    fn settled(&self, node: &Node, shape: Option<&'s Shape>) -> bool {
        match &node.value {
            Value::Scalar(_) => settled_scalar(node),
            Value::Map(entries) => {
                let shape = shape.or_else(|| self.root_shape(Some(node), None));
                entries.iter().all(|(k, v)| match (&v.value, k.key_str()) {
                    // A scalar's answer needs no shape: none is looked up.
                    (Value::Scalar(_), _) => settled_scalar(v),
                    (_, Some(name)) => {
                        self.settled(v, shape.and_then(|s| self.schema.field(s, name)))
                    }
                    // Fields with collection keys are never walked.
                    (_, None) => true,
                })
            }
            Value::Seq(items) => match shape {
                Some(Shape::List {
                    item,
                    merge_keys: Some(keys),
                }) => self.settled_list(items, item, keys),
                _ => true,
            },
        }
    }

    /// [`Merger::settled`] for a merged list: its rebuild keeps it as it is
    /// when it is regular (see [`regular_keys`]; for lists merged by value,
    /// distinct non-null scalars) and every element is settled.
    fn settled_list(&self, items: &[Node], item: &'s Shape, keys: &[String]) -> bool {
        let regular = if keys.is_empty() {
            items.iter().all(has_text) && all_distinct(items, |a, b| raw(a).cmp(raw(b)))
        } else {
            regular_keys(&[items], keys).is_some()
        };
        regular && items.iter().all(|e| self.settled(e, Some(item)))
    }
}

/// [`Merger::settled`] for a scalar: only an empty null changes (its field
/// goes away).
fn settled_scalar(node: &Node) -> bool {
    !(raw(node).is_empty() && node.is_null())
}

/// A mapping's `apiVersion` and `kind`, when both are there, found in one
/// pass over its entries (most mappings a merge meets have neither).
fn api_version_and_kind(node: &Node) -> Option<(&str, &str)> {
    let (mut api_version, mut kind) = (None, None);
    for (k, v) in node.as_map()? {
        match k.key_str() {
            Some("apiVersion") if api_version.is_none() => api_version = Some(v),
            Some("kind") if kind.is_none() => kind = Some(v),
            _ => continue,
        }
        if let (Some(a), Some(k)) = (api_version, kind) {
            return Some((a.as_str()?, k.as_str()?));
        }
    }
    None
}

/// Whether a scalar is neither null nor empty (a key value or an element
/// merges by it as it is).
fn has_text(node: &Node) -> bool {
    node.as_scalar().is_some() && !node.is_null() && !raw(node).is_empty()
}

/// The keys that lists (merged together) are really merged by, when their
/// rebuild needs none of its special cases: every element is a non-empty
/// mapping; each merge key is either absent from every element (Kustomize
/// then merges by the others, e.g. ports without `protocol`) or has a
/// scalar, non-null, non-empty value in every element; at least one key is
/// present; and no two elements of one list have the same key values.
fn regular_keys<'k>(lists: &[&[Node]], keys: &'k [String]) -> Option<Vec<&'k str>> {
    if let [key] = keys {
        return regular_by(lists, key).then(|| vec![key.as_str()]);
    }
    let elements = || lists.iter().flat_map(|l| l.iter());
    if !elements().all(|e| e.as_map().is_some_and(|m| !m.is_empty())) {
        return None;
    }
    let present: Vec<&str> = keys
        .iter()
        .map(String::as_str)
        .filter(|k| elements().any(|e| e.get(k).is_some()))
        .collect();
    let well_formed = !present.is_empty()
        && elements().all(|e| present.iter().all(|k| e.get(k).is_some_and(has_text)))
        && lists
            .iter()
            .all(|l| all_distinct(l, |a, b| compare_keys(a, b, &present)));
    well_formed.then_some(present)
}

/// [`regular_keys`] for lists merged by one key (most are): the values
/// under `key` are read once per element and compared as text.
fn regular_by(lists: &[&[Node]], key: &str) -> bool {
    const ON_STACK: usize = 32;
    let mut any = false;
    for list in lists {
        let mut stack = [""; ON_STACK];
        let mut heap = Vec::new();
        let values: &mut [&str] = if list.len() <= ON_STACK {
            &mut stack[..list.len()]
        } else {
            heap.resize(list.len(), "");
            &mut heap
        };
        for (slot, element) in values.iter_mut().zip(list.iter()) {
            if element.as_map().is_none_or(|m| m.is_empty()) {
                return false;
            }
            match element.get(key) {
                Some(v) if has_text(v) => *slot = raw(v),
                _ => return false,
            }
        }
        if !all_distinct(values, |a, b| a.cmp(b)) {
            return false;
        }
        any |= !list.is_empty();
    }
    any
}

/// Whether two elements have the same values for `keys`.
fn same_keys(a: &Node, b: &Node, keys: &[&str]) -> bool {
    compare_keys(a, b, keys) == Ordering::Equal
}

/// Orders elements by their values for `keys`, in turn.
fn compare_keys(a: &Node, b: &Node, keys: &[&str]) -> Ordering {
    keys.iter()
        .map(|k| a.get(k).map(raw).cmp(&b.get(k).map(raw)))
        .find(|o| o.is_ne())
        .unwrap_or(Ordering::Equal)
}

/// Whether no two items compare equal. Pairwise for short lists; long
/// lists are sorted so only neighbours are compared.
fn all_distinct<T>(items: &[T], compare: impl Fn(&T, &T) -> Ordering) -> bool {
    const PAIRWISE_UP_TO: usize = 32;
    if items.len() <= PAIRWISE_UP_TO {
        return items
            .iter()
            .enumerate()
            .all(|(i, a)| items[..i].iter().all(|b| compare(a, b).is_ne()));
    }
    let mut order: Vec<&T> = items.iter().collect();
    order.sort_by(|a, b| compare(a, b));
    order.windows(2).all(|w| compare(w[0], w[1]).is_ne())
}

/// Takes a field's value out of a mapping (leaving the entry in place).
fn take_field(map: &mut Node, name: &str) -> Option<Node> {
    map.get_mut(name)
        .map(|slot| std::mem::replace(slot, placeholder()))
}

/// What a value taken out of a tree leaves behind until it is put back (an
/// empty null, which allocates nothing).
fn placeholder() -> Node {
    Node::new(Value::Scalar(krusty_yaml::Scalar::default()))
}

fn wrong_kind(expected: Kind, node: &Node) -> OpError {
    let expected = match expected {
        Kind::Map => "MappingNode",
        Kind::Seq => "SequenceNode",
        Kind::Scalar => "ScalarNode",
    };
    crate::path::wrong_kind(expected, node)
}

/// The merge-key values of every element of both sides, patch first,
/// without repeats.
fn key_values(sources: &[Option<&[Node]>], keys: &[String]) -> Vec<Vec<String>> {
    let mut out: Vec<Vec<String>> = Vec::new();
    for items in sources.iter().flatten() {
        for element in items.iter() {
            let values: Vec<String> = keys.iter().map(|k| key_value(element, k)).collect();
            if !out.contains(&values) {
                out.push(values);
            }
        }
    }
    out
}

/// The values of a list of scalars, patch first, without repeats.
fn scalar_values(sources: &[Option<&[Node]>]) -> Vec<Vec<String>> {
    let mut out: Vec<Vec<String>> = Vec::new();
    for items in sources.iter().flatten() {
        for element in items.iter() {
            let value = vec![raw(element).to_string()];
            if !out.contains(&value) {
                out.push(value);
            }
        }
    }
    out
}

/// With several merge keys, key tuples that agree wherever both have a
/// value (e.g. a port with and without `protocol`) become one tuple.
fn unify_values(values_list: &mut [Vec<String>]) {
    for i in 0..values_list.len() {
        for j in 0..values_list.len() {
            if let Some(unified) = unify(&values_list[i], &values_list[j]) {
                values_list[i] = unified.clone();
                values_list[j] = unified;
            }
        }
    }
}

fn unify(a: &[String], b: &[String]) -> Option<Vec<String>> {
    if a.len() != b.len() {
        return None;
    }
    let mut common = false;
    let mut out = Vec::with_capacity(a.len());
    for (x, y) in a.iter().zip(b) {
        if x == y {
            common = true;
            out.push(x.clone());
        } else if !x.is_empty() && !y.is_empty() {
            return None;
        } else {
            out.push(if x.is_empty() { y.clone() } else { x.clone() });
        }
    }
    common.then_some(out)
}

/// The keys that have a value in some element (all keys if none has), and
/// this element's values for them.
fn valid_keys(
    values_list: &[Vec<String>],
    values: &[String],
    keys: &[String],
) -> (Vec<String>, Vec<String>) {
    let valid: Vec<bool> = (0..keys.len())
        .map(|i| {
            values_list
                .iter()
                .any(|v| v.get(i).is_some_and(|s| !s.is_empty()))
        })
        .collect();
    if !valid.iter().any(|&v| v) {
        return (keys.to_vec(), values.to_vec());
    }
    let keys_out = keys
        .iter()
        .zip(&valid)
        .filter(|(_, &v)| v)
        .map(|(k, _)| k.clone())
        .collect();
    let values_out = values
        .iter()
        .enumerate()
        .filter(|(i, v)| !v.is_empty() || valid.get(*i).copied().unwrap_or(false))
        .map(|(_, v)| v.clone())
        .collect();
    (keys_out, values_out)
}

/// The first element whose merge keys have these values (a scalar element
/// with this value when the key is empty).
fn find_element(items: &[Node], keys: &[String], values: &[String]) -> Option<usize> {
    if keys.first().is_none_or(|k| k.is_empty()) {
        let value = values.first().map_or("", String::as_str);
        return items.iter().position(|e| raw(e) == value);
    }
    if keys.len() != values.len() {
        return None;
    }
    items.iter().position(|e| {
        e.as_map().is_some()
            && keys
                .iter()
                .zip(values)
                .all(|(k, v)| e.get(k).is_some_and(|f| raw(f) == v))
    })
}

/// Whether `element` has field `key` with `value` (any value when `value`
/// is empty); for an empty key, whether the scalar element equals `value`.
fn field_matches(element: &Node, key: &str, value: &str) -> OpResult<bool> {
    if element.is_null() {
        return Ok(false);
    }
    if key.is_empty() {
        if element.as_scalar().is_none() {
            return Err(wrong_kind(Kind::Scalar, element));
        }
        return Ok(raw(element) == value);
    }
    if element.as_map().is_none() {
        return Err(wrong_kind(Kind::Map, element));
    }
    Ok(element
        .get(key)
        .is_some_and(|f| value.is_empty() || raw(f) == value))
}

/// Replaces the elements matching the keys with `element` (appending it if
/// none matches), or removes them when `element` is `None`. Null and empty
/// elements are dropped on the way, as Kustomize's list setter does.
fn set_element(
    items: &mut ThinVec<Node>,
    keys: &[String],
    values: &[String],
    element: Option<Node>,
) -> OpResult<()> {
    let default_keys = [String::new()];
    let keys = if keys.is_empty() {
        &default_keys[..]
    } else {
        keys
    };
    let mapping_setter = !keys[0].is_empty() && values.first().is_some_and(|v| !v.is_empty());
    let mut kept = ThinVec::with_capacity(items.len() + 1);
    let mut slots: Vec<usize> = Vec::new();
    let mut found = false;
    for existing in std::mem::take(items) {
        if existing.is_null() || is_empty_map(&existing) {
            continue;
        }
        if existing.as_map().is_none() && mapping_setter {
            kept.push(existing);
            continue;
        }
        let mut matched = !values.is_empty();
        for (key, value) in keys.iter().zip(values) {
            if !field_matches(&existing, key, value)? {
                matched = false;
                break;
            }
        }
        if !matched {
            if !values.is_empty() {
                kept.push(existing);
            }
            continue;
        }
        found = true;
        if element.is_some() {
            // Filled in below: the element itself for the last match,
            // copies for any before it.
            slots.push(kept.len());
            kept.push(Node::null());
        }
    }
    *items = kept;
    if let Some(e) = element {
        match slots.split_last() {
            Some((&last, before)) => {
                for &slot in before {
                    items[slot] = e.clone();
                }
                items[last] = e;
            }
            None if !found && !e.is_null() => items.push(e),
            None => {}
        }
    }
    Ok(())
}

/// Adds the target's elements after the patch's, each replacing the merged
/// element with its keys.
fn append_elements(
    added: &mut ThinVec<Node>,
    dest: ThinVec<Node>,
    keys: &[String],
) -> OpResult<()> {
    for element in dest {
        if keys.first().is_none_or(|k| k.is_empty()) {
            let value = raw(&element).to_string();
            set_element(added, &[String::new()], &[value], Some(element))?;
            continue;
        }
        let mut values = Vec::new();
        for key in keys {
            if element.is_null() {
                added.push(element.clone());
                continue;
            }
            if element.as_map().is_none() {
                return Err(wrong_kind(Kind::Map, &element));
            }
            match element.get(key) {
                Some(v) => values.push(raw(v).to_string()),
                None => added.push(element.clone()),
            }
        }
        if keys.len() > 1 {
            set_element(added, keys, &values, None)?;
        }
        set_element(added, keys, &values, Some(element))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Node {
        let docs = krusty_yaml::parse_stream(text).expect("valid YAML");
        docs.into_iter()
            .next()
            .and_then(|d| d.root)
            .expect("a document")
    }

    fn merged(target: &str, patch: &str) -> String {
        let node = merge(parse(target), parse(patch), Schema::kubernetes())
            .expect("merge succeeds")
            .expect("resource kept");
        krusty_yaml::to_kustomize_yaml(&node).expect("emits")
    }

    const DEPLOYMENT: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n";

    #[test]
    fn quoted_target_scalar_makes_the_patch_value_a_string() {
        let target = format!(
            "{DEPLOYMENT}spec:\n  replicas: \"3\"\n  minReadySeconds: 5\n  paused: !!str true\n"
        );
        let patch =
            format!("{DEPLOYMENT}spec:\n  replicas: 4\n  minReadySeconds: 6\n  paused: false\n");
        let out = merged(&target, &patch);
        assert!(out.contains("replicas: \"4\"\n"), "{out}");
        assert!(out.contains("minReadySeconds: 6\n"), "{out}");
        assert!(out.contains("paused: false\n"), "{out}");
    }

    #[test]
    fn directives_inside_added_subtrees_are_dropped() {
        let target = format!(
            "{DEPLOYMENT}spec:\n  template:\n    spec:\n      containers:\n      - name: a\n        image: x\n"
        );
        let patch = format!(
            "{DEPLOYMENT}spec:\n  template:\n    metadata:\n      labels:\n        $patch: merge\n        a: b\n    spec:\n      containers:\n      - name: b\n        image: y\n        resources:\n          $patch: merge\n          limits:\n            cpu: 1\n        env:\n        - name: A\n          value: a\n          $patch: replace\n        volumeMounts:\n        - $patch: merge\n        - mountPath: /x\n          name: x\n"
        );
        let out = merged(&target, &patch);
        assert!(!out.contains("$patch"), "{out}");
        assert!(out.contains("mountPath: /x"), "{out}");
        assert!(out.contains("- name: A\n"), "{out}");
    }

    #[test]
    fn stringified_metadata_maps() {
        let mut patch = parse(&format!(
            "{DEPLOYMENT}  labels:\n    z: 1\n    a: null\n    t: ~\n  annotations: null\n"
        ));
        stringify_metadata_maps(&mut patch);
        let out = krusty_yaml::to_kustomize_yaml(&patch).expect("emits");
        assert!(
            out.contains("  labels:\n    a: \"null\"\n    t: \"~\"\n    z: \"1\"\n"),
            "{out}"
        );
        assert!(!out.contains("annotations"), "{out}");
    }
}
