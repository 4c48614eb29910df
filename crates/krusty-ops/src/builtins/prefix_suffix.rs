//! PrefixTransformer, SuffixTransformer and the older PrefixSuffixTransformer:
//! add text before and after names.

use krusty_resource::{Gvk, ResMap};
use krusty_yaml::Node;

use crate::error::OpResult;
use crate::fieldspec::{apply, CreateKind, FieldSpec};
use crate::parallel;

/// Adds `prefix` and `suffix` to the fields in `specs`.
#[derive(Debug, Clone, PartialEq)]
pub struct AddNameAffixes {
    /// Text put before the name.
    pub prefix: String,
    /// Text put after the name.
    pub suffix: String,
    /// Which fields (by default only `metadata/name`).
    pub specs: Vec<FieldSpec>,
}

/// Kinds whose names are never prefixed or suffixed: their names are
/// fixed by the API (CRDs, APIServices) or by the namespace they create.
fn never_renamed(gvk: &Gvk) -> bool {
    gvk.kind == "CustomResourceDefinition"
        || (gvk.kind == "APIService" && gvk.group == "apiregistration.k8s.io")
        || gvk.kind == "Namespace"
}

impl AddNameAffixes {
    /// Renames the resources.
    pub fn apply(&self, resources: &mut ResMap) -> OpResult<()> {
        if self.prefix.is_empty() && self.suffix.is_empty() {
            return Ok(());
        }
        parallel::try_each(resources.resources_mut(), |r| {
            let original = r.original_id();
            if never_renamed(&original.gvk) {
                return Ok(());
            }
            let gvk = r.gvk();
            for spec in &self.specs {
                if !original.gvk.is_selected_by(&spec.gvk) {
                    continue;
                }
                if spec.path == "metadata/name" {
                    if !self.prefix.is_empty() {
                        r.meta.prefixes.push(self.prefix.clone());
                    }
                    if !self.suffix.is_empty() {
                        r.meta.suffixes.push(self.suffix.clone());
                    }
                    r.store_previous_id();
                }
                apply(
                    &mut r.node,
                    &gvk,
                    spec,
                    CreateKind::None,
                    &mut |n: &mut Node| {
                        let old = n.as_scalar().map(|s| s.text.clone()).unwrap_or_default();
                        // A new scalar in the old one's style, without a
                        // type of its own, as Kustomize sets it (a number a
                        // replacement writes there later prints as one).
                        *n = Node::scalar(
                            format!("{}{}{}", self.prefix, old, self.suffix),
                            n.style(),
                        );
                        Ok(())
                    },
                )?;
            }
            Ok(())
        })
    }
}
