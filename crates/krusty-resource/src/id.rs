//! Resource identity: group, version, kind, namespace and name.

use std::fmt;

/// Group, version and kind of a resource.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Gvk {
    /// API group; empty for the core group.
    pub group: String,
    /// API version.
    pub version: String,
    /// Kind.
    pub kind: String,
}

impl Gvk {
    /// Splits an `apiVersion` (`group/version` or `version`) and pairs it with `kind`.
    pub fn from_api_version(api_version: &str, kind: &str) -> Gvk {
        let (group, version) = match api_version.rsplit_once('/') {
            Some((g, v)) => (g, v),
            None => ("", api_version),
        };
        Gvk {
            group: group.to_string(),
            version: version.to_string(),
            kind: kind.to_string(),
        }
    }

    /// `apiVersion` as written in a resource.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
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
    pub name: String,
    /// `metadata.namespace`; empty when unset.
    pub namespace: String,
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
            namespace: String::new(),
        };
        assert_eq!(id.to_string(), "StatefulSet.v1.apps/my-sts.[noNs]");
        let core = Gvk::from_api_version("v1", "Deployment");
        assert_eq!(core.to_string(), "Deployment.v1.[noGrp]");
        assert_eq!(core.api_version(), "v1");
    }
}
