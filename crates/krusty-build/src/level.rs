//! What a kustomization level passes up to the one that includes it.

use std::borrow::Cow;
use std::path::PathBuf;

use krusty_ops::vars::VarSet;
use krusty_ops::TransformerConfig;

/// A transformer configuration: Kustomize's defaults are shared, not
/// copied, by every level that does not change them (most levels).
pub(crate) type Config = Cow<'static, TransformerConfig>;

/// A directory built as part of another: its root, its configuration and
/// its vars.
#[derive(Debug, Clone)]
pub(crate) struct SubTarget {
    pub(crate) dir: PathBuf,
    pub(crate) config: Config,
    pub(crate) vars: VarSet,
}
