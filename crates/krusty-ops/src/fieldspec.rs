//! Field specs: which field of which kinds an operation reads or writes,
//! and the walk that finds those fields in a resource.

use krusty_resource::Gvk;
use krusty_yaml::{Node, Value};

use crate::error::{OpError, OpResult};

pub use krusty_schema::fieldspec::{specs_from_node, split_path, FieldSpec};

/// What kind of node to create at the end of a missing path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CreateKind {
    /// Never create.
    None,
    /// A scalar (names, namespaces, numbers).
    Scalar,
    /// A mapping (labels, annotations).
    Map,
}

/// Adds `spec` to `list`, as Kustomize's `FsSlice.MergeOne` does: the
/// first spec already there for the same path whose kind the new one's
/// selector covers stands for it (the new one is dropped; a different
/// `create` for it is a conflict).
pub fn merge_one(list: &mut Vec<FieldSpec>, spec: FieldSpec) -> OpResult<()> {
    let found = list
        .iter()
        .find(|s| s.path == spec.path && s.gvk.is_selected_by(&spec.gvk));
    match found {
        Some(existing) if existing.create != spec.create => {
            Err(OpError::new("conflicting fieldspecs"))
        }
        Some(_) => Ok(()),
        None => {
            list.push(spec);
            Ok(())
        }
    }
}

/// Adds every spec of `more` to `list` as Kustomize's `FsSlice.MergeAll`
/// does between two configurations, which it keeps sorted (see
/// [`sort_key`]): the specs of `more` are taken in that order, and each is
/// looked for among `list`'s in that order, then among those this merge
/// added ([`merge_one`]'s rule). The specs added go to the end of `list`
/// in `more`'s order.
pub fn merge_all(list: &mut Vec<FieldSpec>, more: &[FieldSpec]) -> OpResult<()> {
    if more.is_empty() {
        return Ok(());
    }
    let added = kept_in_merge(list, more)?;
    list.extend(added.into_iter().map(|i| more[i].clone()));
    Ok(())
}

/// `list` as Kustomize holds it once merged into an empty configuration
/// (a component's configuration merged back into its parent's): a spec
/// that an earlier one in sorted order stands for is dropped. The specs
/// kept stay in `list`'s order.
pub fn merged_into_empty(list: &[FieldSpec]) -> OpResult<Vec<FieldSpec>> {
    let kept = kept_in_merge(&[], list)?;
    Ok(kept.into_iter().map(|i| list[i].clone()).collect())
}

/// The indexes, in order, of the specs of `more` that merging it into
/// `list` adds (see [`merge_all`]); looked up by path, so merging large
/// tables stays close to linear.
fn kept_in_merge(list: &[FieldSpec], more: &[FieldSpec]) -> OpResult<Vec<usize>> {
    let sorted = |specs: &[FieldSpec]| {
        let mut indexes: Vec<usize> = (0..specs.len()).collect();
        indexes.sort_by_cached_key(|&i| sort_key(&specs[i].gvk));
        indexes
    };
    // Per path, the candidates in the order they are looked at.
    let mut by_path: std::collections::HashMap<&str, Vec<&FieldSpec>> =
        std::collections::HashMap::with_capacity(list.len() + more.len());
    for i in sorted(list) {
        by_path
            .entry(list[i].path.as_str())
            .or_default()
            .push(&list[i]);
    }
    let mut added = Vec::new();
    for i in sorted(more) {
        let spec = &more[i];
        let same_path = by_path.entry(spec.path.as_str()).or_default();
        match same_path.iter().find(|e| e.gvk.is_selected_by(&spec.gvk)) {
            Some(e) if e.create != spec.create => {
                return Err(OpError::new("conflicting fieldspecs"))
            }
            Some(_) => {}
            None => {
                same_path.push(spec);
                added.push(i);
            }
        }
    }
    added.sort_unstable();
    Ok(added)
}

/// Kustomize's order of field specs (`Gvk.IsLessThan`): the kind's rank
/// in the legacy resource order, then group, version and kind joined by
/// `_`, blanks standing as `~G`, `~V` and `~K`.
fn sort_key(gvk: &Gvk) -> (i64, String) {
    static ORDER: std::sync::OnceLock<krusty_resource::LegacyOrder> = std::sync::OnceLock::new();
    let order = ORDER.get_or_init(krusty_resource::LegacyOrder::default);
    let blank = |s: &str, b: &str| {
        if s.is_empty() {
            b.to_string()
        } else {
            s.to_string()
        }
    };
    (
        order.rank(&gvk.kind),
        format!(
            "{}_{}_{}",
            blank(&gvk.group, "~G"),
            blank(&gvk.version, "~V"),
            blank(&gvk.kind, "~K")
        ),
    )
}

/// Adds each spec of `more` to `list`, unless `list` already has one for
/// the same path that the new one's selector covers (that one is kept; a
/// different `create` for it is a conflict). This is how Kustomize adds
/// its default specs to a `labels` entry's own `fields`: the entry's
/// `{kind: Service, path: spec/selector}` without `create` stays beside the
/// default `v1 Service` spec (whose version it lacks), while one for any
/// kind meets the default `metadata/labels` spec and conflicts.
pub fn merge_into(list: &mut Vec<FieldSpec>, more: &[FieldSpec]) -> OpResult<()> {
    for spec in more {
        let found = list
            .iter()
            .find(|s| s.path == spec.path && s.gvk.is_selected_by(&spec.gvk));
        match found {
            Some(existing) if existing.create != spec.create => {
                return Err(OpError::new("conflicting fieldspecs"))
            }
            Some(_) => {}
            None => list.push(spec.clone()),
        }
    }
    Ok(())
}

/// Applies `set` to every field `spec` names in `root` (a resource of kind
/// `gvk`). Sequences met on the way are walked element by element; missing
/// fields are created when the spec says so and `create` allows it.
pub fn apply<F>(
    root: &mut Node,
    gvk: &Gvk,
    spec: &FieldSpec,
    create: CreateKind,
    set: &mut F,
) -> OpResult<()>
where
    F: FnMut(&mut Node) -> OpResult<()>,
{
    if !spec.selects(gvk) {
        return Ok(());
    }
    let create = if spec.create {
        create
    } else {
        CreateKind::None
    };
    walk_path(root, &spec.path, create, set)
}

/// Applies `set` to every field at `path` (a field-spec path) in `root`,
/// creating nothing.
pub fn visit<F>(root: &mut Node, path: &str, set: &mut F) -> OpResult<()>
where
    F: FnMut(&mut Node) -> OpResult<()>,
{
    walk_path(root, path, CreateKind::None, set)
}

fn walk_path<F>(root: &mut Node, path: &str, create: CreateKind, set: &mut F) -> OpResult<()>
where
    F: FnMut(&mut Node) -> OpResult<()>,
{
    // Most paths have no escaped slash: their segments are found in the
    // path as the walk descends.
    if !path.as_bytes().contains(&b'\\') {
        walk(root, SlashPath(Some(path)), create, set)
    } else {
        let owned = split_path(path);
        let segments: Vec<&str> = owned.iter().map(String::as_str).collect();
        walk(root, segments.as_slice(), create, set)
    }
}

/// The segments of a field path still to walk.
trait Segments<'a>: Copy {
    /// The next segment and the ones after it; `None` at the end.
    fn split_first(self) -> Option<(&'a str, Self)>;
}

impl<'a> Segments<'a> for &'a [&'a str] {
    fn split_first(self) -> Option<(&'a str, Self)> {
        <[&str]>::split_first(self).map(|(first, rest)| (*first, rest))
    }
}

/// A path without escaped slashes, split at each `/` as it is walked
/// (`None` once every segment was taken; an empty path is one empty segment).
#[derive(Clone, Copy)]
struct SlashPath<'a>(Option<&'a str>);

impl<'a> Segments<'a> for SlashPath<'a> {
    fn split_first(self) -> Option<(&'a str, Self)> {
        let path = self.0?;
        Some(match path.bytes().position(|b| b == b'/') {
            Some(i) => (&path[..i], SlashPath(Some(&path[i + 1..]))),
            None => (path, SlashPath(None)),
        })
    }
}

/// Positions of the items of a list (field specs, or anything selecting
/// resources by kind), grouped by the kind each selects, so that the items
/// for one resource are found without testing every item against it.
#[derive(Debug, Default)]
pub struct KindIndex {
    by_kind: foldhash::HashMap<krusty_yaml::CompactString, Vec<usize>>,
    any_kind: Vec<usize>,
}

impl KindIndex {
    /// Indexes items by the kind each selects (empty: any kind), given in
    /// list order.
    pub fn new<'a>(kinds: impl IntoIterator<Item = &'a str>) -> KindIndex {
        let mut index = KindIndex::default();
        for (i, kind) in kinds.into_iter().enumerate() {
            if kind.is_empty() {
                index.any_kind.push(i);
            } else {
                index.by_kind.entry(kind.into()).or_default().push(i);
            }
        }
        index
    }

    /// Positions, ascending, of the items that select `kind` or any kind
    /// (their group and version are still to be checked).
    pub fn positions(&self, kind: &str) -> impl Iterator<Item = usize> + '_ {
        let named = self.by_kind.get(kind).map_or(&[][..], Vec::as_slice);
        Ascending {
            a: named,
            b: &self.any_kind,
        }
    }
}

/// Merges two ascending lists of positions into one ascending sequence.
struct Ascending<'a> {
    a: &'a [usize],
    b: &'a [usize],
}

impl Iterator for Ascending<'_> {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        let take_a = match (self.a.first(), self.b.first()) {
            (Some(a), Some(b)) => a < b,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => return None,
        };
        let list = if take_a { &mut self.a } else { &mut self.b };
        let (&first, rest) = list.split_first()?;
        *list = rest;
        Some(first)
    }
}

fn walk<'a, F>(
    node: &mut Node,
    path: impl Segments<'a>,
    create: CreateKind,
    set: &mut F,
) -> OpResult<()>
where
    F: FnMut(&mut Node) -> OpResult<()>,
{
    let Some((first, rest)) = path.split_first() else {
        return set(node);
    };
    if node.is_null() {
        return Ok(());
    }
    match &mut node.value {
        Value::Seq(items) => {
            for item in items {
                walk(item, path, create, set)?;
            }
            Ok(())
        }
        Value::Map(entries) => {
            if first == "*" {
                // Kustomize looks fields up one at a time, by name.
                return Err(OpError::new(
                    "fieldName: *: wildcard is not supported in PathGetter",
                ));
            }
            let (is_seq, field) = match first.strip_suffix("[]") {
                Some(f) => (true, f),
                None => (false, first),
            };
            if is_seq && field.is_empty() {
                return Err(OpError::new(
                    "visit traversal: cannot set or create an empty field name",
                ));
            }
            // What a missing (or null) field becomes, if anything.
            let make = || -> Option<Node> {
                let last = rest.split_first().is_none();
                match create {
                    CreateKind::None => None,
                    _ if is_seq => None,
                    CreateKind::Map if last => Some(Node::map()),
                    CreateKind::Scalar if last => Some(Node::string("")),
                    _ => Some(Node::map()),
                }
            };
            let at = match entries.iter().position(|(k, _)| k.key_str() == Some(field)) {
                Some(at) => at,
                None => match make() {
                    Some(n) => {
                        entries.push((Node::plain(field), n));
                        entries.len() - 1
                    }
                    None => return Ok(()),
                },
            };
            let child = &mut entries[at].1;
            if child.is_null() {
                if is_seq {
                    *child = Node::seq();
                } else if let Some(n) = make() {
                    if !matches!(n.value, Value::Scalar(_)) {
                        *child = n;
                    }
                } else if rest.split_first().is_none() {
                    // A null field the spec may not create stays null.
                    return Ok(());
                }
            }
            walk(child, rest, create, set)
        }
        Value::Scalar(_) => Err(OpError::new("expected sequence or mapping node")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kind_index_lists_named_and_any_kind_items_in_order() {
        let index = KindIndex::new(["Deployment", "", "Service", "Deployment", ""]);
        assert_eq!(
            index.positions("Deployment").collect::<Vec<_>>(),
            [0, 1, 3, 4]
        );
        assert_eq!(index.positions("Service").collect::<Vec<_>>(), [1, 2, 4]);
        assert_eq!(index.positions("Pod").collect::<Vec<_>>(), [1, 4]);
        assert_eq!(KindIndex::new([]).positions("Pod").count(), 0);
    }

    use crate::test_support::node as parse;

    #[test]
    fn long_paths_are_walked_whole() {
        let names: Vec<String> = (0..20).map(|i| format!("f{i}")).collect();
        let mut n = parse("a: 1\n");
        let gvk = Gvk::from_api_version("v1", "Pod");
        let spec = FieldSpec::any(&names.join("/"), true);
        apply(
            &mut n,
            &gvk,
            &spec,
            CreateKind::Scalar,
            &mut |v: &mut Node| {
                *v = Node::string("deep");
                Ok(())
            },
        )
        .unwrap();
        let path: Vec<&str> = names.iter().map(String::as_str).collect();
        assert_eq!(n.get_path(&path).and_then(Node::as_str), Some("deep"));
    }

    #[test]
    fn escaped_slashes_stay_in_one_segment() {
        assert_eq!(
            split_path(r"metadata/annotations/example.com\/key"),
            vec!["metadata", "annotations", "example.com/key"]
        );
    }

    #[test]
    fn walks_sequences_and_creates_maps() {
        let mut n = parse("spec:\n  containers:\n  - image: a\n  - image: b\n");
        let gvk = Gvk::from_api_version("v1", "Pod");
        let spec = FieldSpec::any("spec/containers[]/image", false);
        let mut seen = Vec::new();
        apply(
            &mut n,
            &gvk,
            &spec,
            CreateKind::None,
            &mut |v: &mut Node| {
                seen.push(v.as_str().unwrap().to_string());
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(seen, vec!["a", "b"]);

        let spec = FieldSpec::any("spec/template/metadata/labels", true);
        apply(&mut n, &gvk, &spec, CreateKind::Map, &mut |v: &mut Node| {
            v.set("x", Node::string("y"));
            Ok(())
        })
        .unwrap();
        assert_eq!(
            n.get_path(&["spec", "template", "metadata", "labels", "x"])
                .and_then(Node::as_str),
            Some("y")
        );
    }

    #[test]
    fn conflicting_create_flags_do_not_merge() {
        let mut list = vec![FieldSpec::any("metadata/labels", true)];
        assert!(merge_one(&mut list, FieldSpec::any("metadata/labels", true)).is_ok());
        assert_eq!(list.len(), 1);
        assert!(merge_one(&mut list, FieldSpec::any("metadata/labels", false)).is_err());
    }

    #[test]
    fn defaults_merged_into_label_fields_keep_narrower_fields() {
        let service = |version: &str, create: bool| FieldSpec {
            gvk: Gvk {
                group: "".into(),
                version: version.into(),
                kind: "Service".into(),
            },
            path: "spec/selector".into(),
            create,
        };
        // The default names a version the entry's spec lacks: both stay.
        let mut list = vec![service("", false)];
        merge_into(&mut list, &[service("v1", true)]).unwrap();
        assert_eq!(list.len(), 2);
        // A spec for any kind is covered by the default for any kind.
        let mut list = vec![FieldSpec::any("metadata/labels", false)];
        assert!(merge_into(&mut list, &[FieldSpec::any("metadata/labels", true)]).is_err());
    }
}
