//! Which kinds are cluster-scoped (have no namespace).
//!
//! Kustomize decides this from the Kubernetes v1.21 OpenAPI schema it
//! embeds, keyed by apiVersion and kind: a kind it does not know (a custom
//! resource, a newer built-in such as ValidatingAdmissionPolicy, or a
//! built-in kind name under another group) counts as namespaced.

/// Cluster-scoped kinds of the Kubernetes v1.21 API: group, kind, and the
/// versions the schema has for them.
const CLUSTER_SCOPED: [(&str, &str, &[&str]); 25] = [
    ("", "ComponentStatus", &["v1"]),
    ("", "Namespace", &["v1"]),
    ("", "Node", &["v1"]),
    ("", "PersistentVolume", &["v1"]),
    (
        "admissionregistration.k8s.io",
        "MutatingWebhookConfiguration",
        &["v1", "v1beta1"],
    ),
    (
        "admissionregistration.k8s.io",
        "ValidatingWebhookConfiguration",
        &["v1", "v1beta1"],
    ),
    (
        "apiextensions.k8s.io",
        "CustomResourceDefinition",
        &["v1", "v1beta1"],
    ),
    ("apiregistration.k8s.io", "APIService", &["v1", "v1beta1"]),
    ("authentication.k8s.io", "TokenReview", &["v1", "v1beta1"]),
    (
        "authorization.k8s.io",
        "SelfSubjectAccessReview",
        &["v1", "v1beta1"],
    ),
    (
        "authorization.k8s.io",
        "SelfSubjectRulesReview",
        &["v1", "v1beta1"],
    ),
    (
        "authorization.k8s.io",
        "SubjectAccessReview",
        &["v1", "v1beta1"],
    ),
    (
        "certificates.k8s.io",
        "CertificateSigningRequest",
        &["v1", "v1beta1"],
    ),
    (
        "flowcontrol.apiserver.k8s.io",
        "FlowSchema",
        &["v1alpha1", "v1beta1"],
    ),
    (
        "flowcontrol.apiserver.k8s.io",
        "PriorityLevelConfiguration",
        &["v1alpha1", "v1beta1"],
    ),
    ("networking.k8s.io", "IngressClass", &["v1", "v1beta1"]),
    (
        "node.k8s.io",
        "RuntimeClass",
        &["v1", "v1alpha1", "v1beta1"],
    ),
    ("policy", "PodSecurityPolicy", &["v1beta1"]),
    (
        "rbac.authorization.k8s.io",
        "ClusterRole",
        &["v1", "v1alpha1", "v1beta1"],
    ),
    (
        "rbac.authorization.k8s.io",
        "ClusterRoleBinding",
        &["v1", "v1alpha1", "v1beta1"],
    ),
    (
        "scheduling.k8s.io",
        "PriorityClass",
        &["v1", "v1alpha1", "v1beta1"],
    ),
    ("storage.k8s.io", "CSIDriver", &["v1", "v1beta1"]),
    ("storage.k8s.io", "CSINode", &["v1", "v1beta1"]),
    ("storage.k8s.io", "StorageClass", &["v1", "v1beta1"]),
    (
        "storage.k8s.io",
        "VolumeAttachment",
        &["v1", "v1alpha1", "v1beta1"],
    ),
];

/// `true` if resources of this group, version and kind have no namespace.
pub fn is_cluster_scoped(group: &str, version: &str, kind: &str) -> bool {
    // Asked for every resource in several steps: most kinds are ruled out
    // by their length and first and last letters, before any comparison of
    // text.
    if !CLUSTER_SCOPED_SHAPES.contains(&shape(kind.as_bytes())) {
        return false;
    }
    CLUSTER_SCOPED
        .iter()
        .any(|(g, k, versions)| *k == kind && *g == group && versions.contains(&version))
}

/// A kind name's length and first and last bytes, packed.
const fn shape(kind: &[u8]) -> u32 {
    match kind {
        [] => 0,
        [first, .., last] => (kind.len() as u32) << 16 | (*first as u32) << 8 | *last as u32,
        [only] => 1 << 16 | (*only as u32) << 8 | *only as u32,
    }
}

/// The shapes of the kind names in [`CLUSTER_SCOPED`].
const CLUSTER_SCOPED_SHAPES: [u32; CLUSTER_SCOPED.len()] = {
    let mut shapes = [0; CLUSTER_SCOPED.len()];
    let mut i = 0;
    while i < CLUSTER_SCOPED.len() {
        shapes[i] = shape(CLUSTER_SCOPED[i].1.as_bytes());
        i += 1;
    }
    shapes
};

#[cfg(test)]
mod tests {
    use super::{is_cluster_scoped, CLUSTER_SCOPED};

    /// The quick shape test never rules out a kind of the table, and kinds
    /// of the same shape outside it are namespaced.
    #[test]
    fn every_listed_kind_is_found_and_lookalikes_are_not() {
        for (group, kind, versions) in CLUSTER_SCOPED {
            for version in versions {
                assert!(is_cluster_scoped(group, version, kind), "{kind}");
            }
            let lookalike = format!("{}x{}", &kind[..1], &kind[2..]);
            assert!(
                !is_cluster_scoped(group, versions[0], &lookalike),
                "{lookalike}"
            );
        }
        for kind in [
            "",
            "N",
            "Deployment",
            "Service",
            "Role",
            "RoleBinding",
            "Nodes",
        ] {
            assert!(!is_cluster_scoped("", "v1", kind), "{kind}");
        }
    }

    #[test]
    fn scope_depends_on_group_and_version() {
        assert!(is_cluster_scoped("", "v1", "Namespace"));
        assert!(!is_cluster_scoped(
            "servicebus.azure.com",
            "v1",
            "Namespace"
        ));
        assert!(!is_cluster_scoped("apps", "v1", "Deployment"));
        assert!(is_cluster_scoped(
            "rbac.authorization.k8s.io",
            "v1",
            "ClusterRole"
        ));
        assert!(!is_cluster_scoped(
            "admissionregistration.k8s.io",
            "v1",
            "ValidatingAdmissionPolicy"
        ));
    }
}
