//! What Kustomize tells a function about each item, and reads back from
//! what the function returns.
//!
//! Kustomize keeps its build records (earlier names, prefixes and
//! suffixes, generator behavior, the need for a hash suffix) as internal
//! annotations on the resource itself, so a function sees them and what it
//! returns is what counts: an item returned without them loses them, an
//! item returned with them has them, whatever it was before. To each item
//! it adds its identity (`kustomize.config.k8s.io/id`, a YAML mapping) and
//! its position in the list: `config.kubernetes.io/index`,
//! `internal.config.kubernetes.io/index` and
//! `internal.config.kubernetes.io/annotations-migration-resource-id` count
//! from 0, `internal.config.kubernetes.io/id` and `config.k8s.io/id` from 1.
//! It sends no path annotations.

use krusty_fn::wire::annotations::{ID, INDEX, MIGRATION_ID, PATH, RESOURCE_ID};
use krusty_resource::id::NOT_A_NAMESPACE;
use krusty_resource::{Behavior, BuildMeta, Origin, PreviousId};
use krusty_yaml::{CompactString, Node, Pos, ScalarStyle};

/// The annotation recording where a resource came from.
pub const ORIGIN_ANNOTATION: &str = "config.kubernetes.io/origin";
/// The annotation listing the operations that changed a resource.
pub const TRANSFORMATIONS_ANNOTATION: &str = "alpha.config.kubernetes.io/transformations";

const GENERATOR_BEHAVIOR: &str = "internal.config.kubernetes.io/generatorBehavior";
const NEEDS_HASH_SUFFIX: &str = "internal.config.kubernetes.io/needsHashSuffix";
const PREVIOUS_NAMES: &str = "internal.config.kubernetes.io/previousNames";
const PREVIOUS_KINDS: &str = "internal.config.kubernetes.io/previousKinds";
const PREVIOUS_NAMESPACES: &str = "internal.config.kubernetes.io/previousNamespaces";
const PREFIXES: &str = "internal.config.kubernetes.io/prefixes";
const SUFFIXES: &str = "internal.config.kubernetes.io/suffixes";

/// Annotations Kustomize removes from what a function returns, besides
/// the path, index and id annotations and the records above: other build
/// records, and what `buildMetadata` adds. Other `internal.` annotations
/// stay.
const ALSO_REMOVED: [&str; 6] = [
    "internal.config.kubernetes.io/allowNameChange",
    "internal.config.kubernetes.io/allowKindChange",
    "internal.config.kubernetes.io/refBy",
    "internal.config.kubernetes.io/seqindent",
    "config.kubernetes.io/origin",
    "alpha.config.kubernetes.io/transformations",
];

/// Adds Kustomize's annotations to `node`, item `index` (from 0) of the
/// list sent to a function, whose build records are `meta`.
pub(super) fn annotate(node: &mut Node, meta: &BuildMeta, index: usize) {
    let identity = identity_text(node);
    let Some(annotations) = node
        .entry_map("metadata")
        .and_then(|m| m.entry_map("annotations"))
    else {
        return;
    };
    for (key, value) in build_records(meta) {
        annotations.set(key, Node::string(value));
    }
    annotations.set(RESOURCE_ID, Node::scalar(identity, ScalarStyle::Literal));
    let quoted = |n: usize| {
        // Written in its own style only when it counts as read from a
        // source (a position); Kustomize single-quotes these numbers.
        let mut node = Node::scalar(n.to_string(), ScalarStyle::SingleQuoted);
        node.set_pos(Pos { line: 1, col: 1 });
        node
    };
    annotations.set(INDEX[1], quoted(index));
    annotations.set(INDEX[0], quoted(index));
    annotations.set(MIGRATION_ID, quoted(index));
    annotations.set(ID[0], quoted(index + 1));
    annotations.set(ID[1], quoted(index + 1));
}

/// The build records Kustomize keeps on a resource as annotations, in its
/// key order.
fn build_records(meta: &BuildMeta) -> Vec<(&'static str, String)> {
    let mut records = Vec::new();
    if matches!(
        meta.origin.as_deref().map(Origin::local),
        Some(Origin::Configured { .. })
    ) {
        records.push((GENERATOR_BEHAVIOR, behavior_name(meta.behavior).to_string()));
    }
    if meta.needs_hash {
        records.push((NEEDS_HASH_SUFFIX, "enabled".to_string()));
    }
    if !meta.prefixes.is_empty() {
        records.push((PREFIXES, meta.prefixes.join(",")));
    }
    if !meta.previous.is_empty() {
        let join =
            |f: fn(&PreviousId) -> &str| meta.previous.iter().map(f).collect::<Vec<_>>().join(",");
        records.push((PREVIOUS_KINDS, join(|p| &p.kind)));
        records.push((PREVIOUS_NAMES, join(|p| &p.name)));
        // A cluster-scoped kind's (empty) namespace is Kustomize's marker.
        records.push((
            PREVIOUS_NAMESPACES,
            join(|p| match p.namespace.as_str() {
                "" => NOT_A_NAMESPACE,
                ns => ns,
            }),
        ));
    }
    if !meta.suffixes.is_empty() {
        records.push((SUFFIXES, meta.suffixes.join(",")));
    }
    records
}

/// Kustomize's name for a generator behavior.
fn behavior_name(behavior: Behavior) -> &'static str {
    match behavior {
        Behavior::Unspecified => "unspecified",
        Behavior::Create => "create",
        Behavior::Replace => "replace",
        Behavior::Merge => "merge",
    }
}

/// The item's identity as Kustomize writes it: `group` (when not the core
/// group), `kind`, `name`, `namespace` (when set) and `version`.
fn identity_text(node: &Node) -> String {
    let text = |path: &[&str]| {
        let mut n = Some(node);
        for key in path {
            n = n.and_then(|n| n.get(key));
        }
        n.and_then(Node::as_str).unwrap_or_default().to_string()
    };
    let api_version = text(&["apiVersion"]);
    let (group, version) = api_version
        .rsplit_once('/')
        .unwrap_or(("", api_version.as_str()));
    let mut id = Node::map();
    for (key, value) in [
        ("group", group),
        ("kind", &text(&["kind"])),
        ("name", &text(&["metadata", "name"])),
        ("namespace", &text(&["metadata", "namespace"])),
        ("version", version),
    ] {
        if !value.is_empty() || matches!(key, "kind" | "name" | "version") {
            id.set(key, Node::string(value));
        }
    }
    krusty_yaml::to_kustomize_yaml(&id).unwrap_or_default()
}

/// The build records an item came back with.
#[derive(Debug, Default)]
pub(super) struct Returned {
    /// `config.k8s.io/id` (or its internal form): the item's position in
    /// the list sent, counting from 1.
    pub id: Option<usize>,
    previous: Vec<PreviousId>,
    prefixes: Vec<String>,
    suffixes: Vec<String>,
    needs_hash: bool,
    behavior: Behavior,
}

impl Returned {
    /// Sets the build records of `meta` to what came back.
    pub(super) fn apply_to(self, meta: &mut BuildMeta) {
        meta.previous = self.previous;
        meta.prefixes = self.prefixes;
        meta.suffixes = self.suffixes;
        meta.needs_hash = self.needs_hash;
        meta.behavior = self.behavior;
    }
}

/// Why the records of a returned item cannot be read, in Kustomize's
/// words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RecordsError {
    /// The internal and legacy spelling of an annotation (`path`,
    /// `index` or `id`) disagree.
    #[error("resource input to function has mismatched legacy and internal {0} annotations")]
    Mismatched(&'static str),
    /// The earlier names, kinds and namespaces do not pair up.
    #[error("number of previous names, number of previous namespaces, number of previous kinds not equal")]
    PreviousIds,
}

/// Removes the orchestrator's annotations from a returned item (and its
/// annotations when nothing else is left in them); returns the records
/// they held. Fails when the earlier names, kinds and namespaces do not
/// pair up.
pub(super) fn take(node: &mut Node) -> Result<Returned, RecordsError> {
    let mut returned = Returned::default();
    let Some(annotations) = node
        .get_mut("metadata")
        .and_then(|m| m.get_mut("annotations"))
    else {
        return Ok(returned);
    };
    for (what, [internal, legacy]) in [("path", PATH), ("index", INDEX), ("id", ID)] {
        let (a, b) = (annotations.get(internal), annotations.get(legacy));
        if a.is_some() && b.is_some() && a.and_then(Node::as_str) != b.and_then(Node::as_str) {
            return Err(RecordsError::Mismatched(what));
        }
    }
    let text = |key: &str| {
        annotations
            .get(key)
            .and_then(Node::as_str)
            .unwrap_or_default()
    };
    let list = |key: &str| -> Vec<String> {
        let t = text(key);
        if t.is_empty() {
            Vec::new()
        } else {
            t.split(',').map(str::to_string).collect()
        }
    };
    returned.id = ID
        .iter()
        .find_map(|k| annotations.get(k).and_then(Node::as_str))
        .and_then(|s| s.parse().ok());
    returned.prefixes = list(PREFIXES);
    returned.suffixes = list(SUFFIXES);
    returned.needs_hash = text(NEEDS_HASH_SUFFIX) == "enabled";
    returned.behavior = Behavior::parse(text(GENERATOR_BEHAVIOR));
    let (names, kinds, namespaces) = (
        list(PREVIOUS_NAMES),
        list(PREVIOUS_KINDS),
        list(PREVIOUS_NAMESPACES),
    );
    if names.len() != kinds.len() || names.len() != namespaces.len() {
        return Err(RecordsError::PreviousIds);
    }
    returned.previous = names
        .into_iter()
        .zip(kinds)
        .zip(namespaces)
        .map(|((name, kind), namespace)| PreviousId {
            kind: CompactString::from(kind),
            name: CompactString::from(name),
            namespace: match namespace.as_str() {
                NOT_A_NAMESPACE => CompactString::default(),
                ns => CompactString::from(ns),
            },
        })
        .collect();
    if let Some(entries) = annotations.as_map_mut() {
        entries.retain(|(k, _)| !is_orchestrators(k.key_str().unwrap_or_default()));
        if entries.is_empty() {
            if let Some(meta) = node.get_mut("metadata") {
                meta.remove("annotations");
            }
        }
    }
    Ok(returned)
}

/// `true` for the annotations Kustomize removes from returned items.
fn is_orchestrators(key: &str) -> bool {
    key == RESOURCE_ID
        || key == MIGRATION_ID
        || PATH.contains(&key)
        || INDEX.contains(&key)
        || ID.contains(&key)
        || [
            GENERATOR_BEHAVIOR,
            NEEDS_HASH_SUFFIX,
            PREVIOUS_NAMES,
            PREVIOUS_KINDS,
            PREVIOUS_NAMESPACES,
            PREFIXES,
            SUFFIXES,
        ]
        .contains(&key)
        || ALSO_REMOVED.contains(&key)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(text: &str) -> Node {
        krusty_yaml::first_root(text).unwrap().unwrap()
    }

    #[test]
    fn records_go_out_and_come_back() {
        let mut meta = BuildMeta {
            previous: vec![PreviousId {
                kind: "ConfigMap".into(),
                name: "g".into(),
                namespace: "default".into(),
            }],
            prefixes: vec!["p-".into()],
            needs_hash: true,
            behavior: Behavior::Merge,
            ..BuildMeta::default()
        };
        meta.origin = Some(Box::new(Origin::Configured {
            configured_in: "kustomization.yaml".into(),
            api_version: "builtin".into(),
            kind: "ConfigMapGenerator".into(),
            name: String::new(),
            namespace: String::new(),
        }));
        let mut item = node(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: p-g\n  namespace: ns\n",
        );
        annotate(&mut item, &meta, 2);
        let sent = krusty_yaml::to_yaml_preserving(&item).unwrap();
        assert!(sent.contains("kustomize.config.k8s.io/id: |\n      group: apps\n      kind: Deployment\n      name: p-g\n      namespace: ns\n      version: v1\n"), "{sent}");
        assert!(sent.contains("config.kubernetes.io/index: '2'\n"), "{sent}");
        assert!(sent.contains("config.k8s.io/id: '3'\n"), "{sent}");
        assert!(!sent.contains("/path"), "{sent}");
        let returned = take(&mut item).unwrap();
        assert_eq!(returned.id, Some(3));
        let mut back = BuildMeta::default();
        returned.apply_to(&mut back);
        assert_eq!(back.previous, meta.previous);
        assert_eq!(back.prefixes, meta.prefixes);
        assert!(back.needs_hash);
        assert_eq!(back.behavior, Behavior::Merge);
        assert!(item.get("metadata").unwrap().get("annotations").is_none());
    }

    #[test]
    fn other_internal_annotations_stay_and_mismatched_pairs_fail() {
        let mut item = node("kind: A\nmetadata:\n  name: a\n  annotations:\n    internal.config.kubernetes.io/foo: x\n    internal.config.kubernetes.io/seqindent: compact\n    config.kubernetes.io/origin: 'path: a.yaml'\n    config.kubernetes.io/path: a.yaml\n    internal.config.kubernetes.io/path: a.yaml\n");
        take(&mut item).unwrap();
        let annotations = item.get("metadata").unwrap().get("annotations").unwrap();
        let keys: Vec<&str> = annotations
            .as_map()
            .unwrap()
            .iter()
            .filter_map(|(k, _)| k.key_str())
            .collect();
        assert_eq!(keys, ["internal.config.kubernetes.io/foo"]);
        let mut item = node("kind: A\nmetadata:\n  name: a\n  annotations:\n    config.kubernetes.io/index: '3'\n    internal.config.kubernetes.io/index: '4'\n");
        assert_eq!(
            take(&mut item).unwrap_err().to_string(),
            "resource input to function has mismatched legacy and internal index annotations"
        );
    }

    #[test]
    fn unpaired_previous_ids_are_an_error() {
        let mut item = node("kind: A\nmetadata:\n  name: a\n  annotations:\n    internal.config.kubernetes.io/previousNames: a,b\n    internal.config.kubernetes.io/previousKinds: A\n    internal.config.kubernetes.io/previousNamespaces: default\n");
        assert_eq!(take(&mut item).unwrap_err(), RecordsError::PreviousIds);
    }
}
