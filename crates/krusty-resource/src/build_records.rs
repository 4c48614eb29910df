//! The annotations Kustomize keeps its build records in.
//!
//! Kustomize records a resource's origin, earlier names, prefixes, file
//! path and the like as annotations while it builds, and removes all of
//! them from every resource it prints: those it made, those a resource was
//! read with (the output of an earlier build fed back in), and those a
//! transformer set (`commonAnnotations`, a patch). krusty keeps its records
//! in [`crate::BuildMeta`] instead, and removes the same annotations.

use krusty_yaml::Node;

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
