//! The annotations Kustomize keeps its build records in.
//!
//! Kustomize records a resource's origin, earlier names, prefixes, file
//! path and the like as annotations while it builds, and removes all of
//! them from every resource it prints: those it made, those a resource was
//! read with (the output of an earlier build fed back in), and those a
//! transformer set (`commonAnnotations`, a patch). krusty keeps its records
//! in [`crate::BuildMeta`] instead, and removes the same annotations.

use krusty_yaml::Node;

use crate::Resource;

/// The annotations removed from every printed resource.
pub const ANNOTATIONS: [&str; 18] = [
    "config.kubernetes.io/origin",
    "alpha.config.kubernetes.io/transformations",
    "config.kubernetes.io/index",
    "config.kubernetes.io/path",
    "config.k8s.io/id",
    "internal.config.kubernetes.io/previousNames",
    "internal.config.kubernetes.io/previousKinds",
    "internal.config.kubernetes.io/previousNamespaces",
    "internal.config.kubernetes.io/prefixes",
    "internal.config.kubernetes.io/suffixes",
    "internal.config.kubernetes.io/path",
    "internal.config.kubernetes.io/index",
    "internal.config.kubernetes.io/id",
    "internal.config.kubernetes.io/annotations-migration-resource-id",
    "internal.config.kubernetes.io/refBy",
    "internal.config.kubernetes.io/seqindent",
    "internal.config.kubernetes.io/generatorBehavior",
    NEEDS_HASH_SUFFIX,
];

/// Kustomize's record that a resource's name gets a content hash.
pub const NEEDS_HASH_SUFFIX: &str = "internal.config.kubernetes.io/needsHashSuffix";

/// The annotations in which Kustomize keeps the bookkeeping of
/// [`crate::BuildMeta`] while it builds: a generated resource's behavior
/// and hash, prefixes, earlier ids, suffixes.
const BOOKKEEPING: [&str; 7] = [
    "internal.config.kubernetes.io/generatorBehavior",
    NEEDS_HASH_SUFFIX,
    "internal.config.kubernetes.io/prefixes",
    "internal.config.kubernetes.io/previousKinds",
    "internal.config.kubernetes.io/previousNames",
    "internal.config.kubernetes.io/previousNamespaces",
    "internal.config.kubernetes.io/suffixes",
];

/// Writes `r`'s bookkeeping into its `metadata.annotations` mapping (when
/// it has one) as Kustomize holds it there: lists joined by `,`, earlier
/// ids oldest first, a cluster-scoped resource's namespace as
/// `_non_namespaceable_`. What reads the annotations while they are there
/// (a JSON patch's `copy` or `test`) sees them.
pub fn write_bookkeeping(r: &mut Resource) {
    let meta = &r.meta;
    let joined = |items: &mut dyn Iterator<Item = &str>| items.collect::<Vec<_>>().join(",");
    let mut entries: Vec<(&str, String)> = Vec::new();
    if meta.generated {
        entries.push((BOOKKEEPING[0], meta.behavior.name().to_string()));
        if meta.needs_hash {
            entries.push((BOOKKEEPING[1], "enabled".to_string()));
        }
    }
    if !meta.prefixes.is_empty() {
        entries.push((
            BOOKKEEPING[2],
            joined(&mut meta.prefixes.iter().map(String::as_str)),
        ));
    }
    if !meta.previous.is_empty() {
        fn namespace(ns: &str) -> &str {
            match ns {
                "" => crate::id::NOT_A_NAMESPACE,
                ns => ns,
            }
        }
        let previous = &meta.previous;
        entries.push((
            BOOKKEEPING[3],
            joined(&mut previous.iter().map(|p| p.kind.as_str())),
        ));
        entries.push((
            BOOKKEEPING[4],
            joined(&mut previous.iter().map(|p| p.name.as_str())),
        ));
        entries.push((
            BOOKKEEPING[5],
            joined(&mut previous.iter().map(|p| namespace(&p.namespace))),
        ));
    }
    if !meta.suffixes.is_empty() {
        entries.push((
            BOOKKEEPING[6],
            joined(&mut meta.suffixes.iter().map(String::as_str)),
        ));
    }
    let Some(annotations) = r
        .node
        .get_mut("metadata")
        .and_then(|m| m.get_mut("annotations"))
        .filter(|a| a.as_map().is_some())
    else {
        return;
    };
    for (key, value) in entries {
        annotations.set(key, Node::string(value));
    }
}

/// Takes what [`write_bookkeeping`] wrote out of `root`'s annotations.
pub fn remove_bookkeeping(root: &mut Node) {
    if let Some(annotations) = root
        .get_mut("metadata")
        .and_then(|m| m.get_mut("annotations"))
    {
        for key in BOOKKEEPING {
            annotations.remove(key);
        }
    }
}

/// Removes the [`ANNOTATIONS`] from a resource's root node (and its
/// `metadata.annotations`, if nothing else is left in them); `true` when
/// it carried `needsHashSuffix: enabled`, which Kustomize acts on.
pub fn strip(root: &mut Node) -> bool {
    let Some(annotations) = root
        .get_mut("metadata")
        .and_then(|m| m.get_mut("annotations"))
    else {
        return false;
    };
    let Some(entries) = annotations.as_map_mut() else {
        return false;
    };
    let before = entries.len();
    let mut needs_hash = false;
    entries.retain(|(k, v)| {
        let key = k.key_str().unwrap_or_default();
        needs_hash |= key == NEEDS_HASH_SUFFIX && v.as_str() == Some("enabled");
        !ANNOTATIONS.contains(&key)
    });
    if entries.is_empty() && before > 0 {
        if let Some(metadata) = root.get_mut("metadata") {
            metadata.remove("annotations");
        }
    }
    needs_hash
}
