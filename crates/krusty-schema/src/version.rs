//! Which Kustomize release a build reproduces.
//!
//! krusty emulates two releases byte for byte: v5.5.0, and v5.8.1 (what
//! current kubectl, Argo CD and Flux ship). Every rule that differs
//! between them asks the build's [`KustomizeVersion`]; the list of
//! differences is in `docs/compatibility.md`.

use std::fmt;
use std::str::FromStr;

/// A Kustomize release whose behaviour krusty reproduces. Releases order
/// by age, so a rule added in v5.8.1 holds for `version >= V5_8_1`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum KustomizeVersion {
    /// Kustomize v5.5.0 (the one kubectl v1.32 embeds).
    V5_5_0,
    /// Kustomize v5.8.1 (what current kubectl, Argo CD and Flux ship): the
    /// default.
    #[default]
    V5_8_1,
}

impl KustomizeVersion {
    /// Every release krusty reproduces, oldest first.
    pub const ALL: [KustomizeVersion; 2] = [KustomizeVersion::V5_5_0, KustomizeVersion::V5_8_1];

    /// The release's tag, as `kustomize version` prints it (`v5.8.1`).
    pub fn as_str(self) -> &'static str {
        match self {
            KustomizeVersion::V5_5_0 => "v5.5.0",
            KustomizeVersion::V5_8_1 => "v5.8.1",
        }
    }
}

impl fmt::Display for KustomizeVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A version string that names no release krusty reproduces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownVersion(pub String);

impl fmt::Display for UnknownVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let known: Vec<&str> = KustomizeVersion::ALL.iter().map(|v| v.as_str()).collect();
        write!(
            f,
            "unknown Kustomize version {:?}: krusty reproduces {}",
            self.0,
            known.join(" and ")
        )
    }
}

impl std::error::Error for UnknownVersion {}

impl FromStr for KustomizeVersion {
    type Err = UnknownVersion;

    /// Reads `v5.8.1` or `5.8.1`.
    fn from_str(text: &str) -> Result<KustomizeVersion, UnknownVersion> {
        let bare = text.strip_prefix('v').unwrap_or(text);
        KustomizeVersion::ALL
            .into_iter()
            .find(|v| &v.as_str()[1..] == bare)
            .ok_or_else(|| UnknownVersion(text.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_tags_with_and_without_v() {
        assert_eq!("v5.5.0".parse(), Ok(KustomizeVersion::V5_5_0));
        assert_eq!("5.8.1".parse(), Ok(KustomizeVersion::V5_8_1));
        assert!("v5.8.0".parse::<KustomizeVersion>().is_err());
        assert!("".parse::<KustomizeVersion>().is_err());
        assert!(KustomizeVersion::V5_5_0 < KustomizeVersion::V5_8_1);
        assert_eq!(KustomizeVersion::default().to_string(), "v5.8.1");
    }
}
