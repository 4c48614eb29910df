//! Which built-in kinds are cluster-scoped (have no namespace).

/// Kubernetes built-in kinds that are cluster-scoped. Every other kind,
/// including unknown custom kinds, is treated as namespaced, as Kustomize does.
const CLUSTER_SCOPED: [&str; 30] = [
    "APIService",
    "CSIDriver",
    "CSINode",
    "CertificateSigningRequest",
    "ClusterRole",
    "ClusterRoleBinding",
    "ComponentStatus",
    "CustomResourceDefinition",
    "FlowSchema",
    "IngressClass",
    "MutatingAdmissionPolicy",
    "MutatingAdmissionPolicyBinding",
    "MutatingWebhookConfiguration",
    "Namespace",
    "Node",
    "PersistentVolume",
    "PodSecurityPolicy",
    "PriorityClass",
    "PriorityLevelConfiguration",
    "RuntimeClass",
    "SelfSubjectAccessReview",
    "SelfSubjectReview",
    "SelfSubjectRulesReview",
    "StorageClass",
    "StorageVersionMigration",
    "SubjectAccessReview",
    "TokenReview",
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionPolicyBinding",
    "ValidatingWebhookConfiguration",
];

/// `true` if resources of this kind have no namespace.
pub fn is_cluster_scoped(kind: &str) -> bool {
    CLUSTER_SCOPED.binary_search(&kind).is_ok()
}

#[cfg(test)]
mod tests {
    #[test]
    fn list_is_sorted_for_binary_search() {
        let mut sorted = super::CLUSTER_SCOPED;
        sorted.sort_unstable();
        assert_eq!(sorted, super::CLUSTER_SCOPED);
        assert!(super::is_cluster_scoped("Namespace"));
        assert!(!super::is_cluster_scoped("Deployment"));
    }
}
