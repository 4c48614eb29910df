//! Resource identity: group, version, kind, namespace and name.

use std::fmt;

use krusty_yaml::CompactString;

/// Group, version and kind of a resource.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Gvk {
    /// API group; empty for the core group.
    pub group: CompactString,
    /// API version.
    pub version: CompactString,
    /// Kind.
    pub kind: CompactString,
}

impl Gvk {
    /// Splits an `apiVersion` (`group/version` or `version`) and pairs it with `kind`.
    pub fn from_api_version(api_version: &str, kind: &str) -> Gvk {
        let (group, version) = match api_version.rsplit_once('/') {
            Some((g, v)) => (g, v),
            None => ("", api_version),
        };
        Gvk {
            group: group.into(),
            version: version.into(),
            kind: kind.into(),
        }
    }

    /// `true` if every non-empty field of `selector` equals this one's: the
    /// match Kustomize uses for field specs and target selectors.
    pub fn is_selected_by(&self, selector: &Gvk) -> bool {
        (selector.group.is_empty() || selector.group == self.group)
            && (selector.version.is_empty() || selector.version == self.version)
            && (selector.kind.is_empty() || selector.kind == self.kind)
    }

    /// `true` for kinds that have no namespace.
    pub fn is_cluster_scoped(&self) -> bool {
        crate::scope::is_cluster_scoped(&self.group, &self.version, &self.kind)
    }

    /// Go's `%#v` form of Kustomize's Gvk, used in some of its error texts.
    pub fn go_debug(&self) -> String {
        format!(
            "resid.Gvk{{Group:{:?}, Version:{:?}, Kind:{:?}, isClusterScoped:{}}}",
            self.group,
            self.version,
            self.kind,
            self.is_cluster_scoped()
        )
    }

    /// `apiVersion` as written in a resource.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.to_string()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }
}

/// Kustomize's text form: `Kind.version.group`, with `[noVer]`/`[noGrp]` for blanks.
impl fmt::Display for Gvk {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let or = |s: &str, d: &'static str| {
            if s.is_empty() {
                d.to_string()
            } else {
                s.to_string()
            }
        };
        write!(
            f,
            "{}.{}.{}",
            or(&self.kind, "[noKind]"),
            or(&self.version, "[noVer]"),
            or(&self.group, "[noGrp]")
        )
    }
}

/// The identity of a resource within a build.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct ResId {
    /// Group, version and kind.
    pub gvk: Gvk,
    /// `metadata.name`.
    pub name: CompactString,
    /// `metadata.namespace`; empty when unset.
    pub namespace: CompactString,
}

/// The namespace Kustomize compares with: cluster-scoped kinds have none.
pub const NOT_A_NAMESPACE: &str = "_non_namespaceable_";

impl ResId {
    /// The namespace used for comparisons: `default` when unset, a marker for
    /// cluster-scoped kinds.
    pub fn effective_namespace(&self) -> &str {
        if self.gvk.is_cluster_scoped() {
            NOT_A_NAMESPACE
        } else if self.namespace.is_empty() {
            "default"
        } else {
            &self.namespace
        }
    }

    /// `true` if both ids name the same namespace (unset equals `default`).
    pub fn ns_equals(&self, other: &ResId) -> bool {
        self.effective_namespace() == other.effective_namespace()
    }

    /// Kustomize's id equality: same group, version, kind and name, and the
    /// same effective namespace.
    pub fn equals(&self, other: &ResId) -> bool {
        self.gvk == other.gvk && self.name == other.name && self.ns_equals(other)
    }

    /// Go's `%#v` form of Kustomize's ResId, used in some of its error texts.
    pub fn go_debug(&self) -> String {
        format!(
            "resid.ResId{{Gvk:{}, Name:{:?}, Namespace:{:?}}}",
            self.gvk.go_debug(),
            self.name,
            self.namespace
        )
    }
}

/// Kustomize's text form: `Kind.version.group/name.namespace` with `[noNs]`.
impl fmt::Display for ResId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ns = if self.namespace.is_empty() {
            "[noNs]"
        } else {
            &self.namespace
        };
        let name = if self.name.is_empty() {
            "[noName]"
        } else {
            &self.name
        };
        write!(f, "{}/{}.{}", self.gvk, name, ns)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_forms_match_kustomize() {
        let id = ResId {
            gvk: Gvk::from_api_version("apps/v1", "StatefulSet"),
            name: "my-sts".into(),
            namespace: CompactString::default(),
        };
        assert_eq!(id.to_string(), "StatefulSet.v1.apps/my-sts.[noNs]");
        let core = Gvk::from_api_version("v1", "Deployment");
        assert_eq!(core.to_string(), "Deployment.v1.[noGrp]");
        assert_eq!(core.api_version(), "v1");
    }
}
