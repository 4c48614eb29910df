//! Resource selectors (`target:` of patches, `select:`/`reject:` of
//! replacements): group, version, kind, name, namespace, and label and
//! annotation selectors in Kubernetes' selector syntax.

mod subject;

use krusty_match::selector::{Fields, IdPatterns};
use krusty_resource::Resource;

use crate::error::{OpError, OpResult};

pub use krusty_schema::selector::{Selector, FIELDS};
pub use subject::{AsWritten, Selected};

/// What an operation adds to a [`Selector`]: compiling it to match resources.
pub trait Compile {
    /// Compiles the selector with group, version, kind, name and namespace
    /// as anchored regular expressions (as patch targets use them, e.g.
    /// `kind: Deployment|StatefulSet`); the error is located where the
    /// field that does not compile is written.
    fn compile_regex(&self) -> OpResult<CompiledSelector>;

    /// Compiles the id part as anchored regular expressions (the first
    /// that does not compile is the error, in Go's words), to match ids
    /// as written (see [`AsWritten`]): Kustomize v5.8.1's replacement
    /// targets select and reject this way.
    fn compile_id_patterns(&self) -> OpResult<IdPatterns>;
}

impl Compile for Selector {
    fn compile_regex(&self) -> OpResult<CompiledSelector> {
        krusty_match::selector::Selector::compile(&fields(self))
            .map(CompiledSelector)
            .map_err(|e| OpError::new(e.message).located(None, self.position_of(e.field.name())))
    }

    fn compile_id_patterns(&self) -> OpResult<IdPatterns> {
        IdPatterns::compile(&fields(self)).map_err(|e| OpError::new(e.message))
    }
}

/// The text of the selector's fields, for [`krusty_match::selector`].
fn fields(s: &Selector) -> Fields<'_> {
    Fields {
        group: &s.gvk.group,
        version: &s.gvk.version,
        kind: &s.gvk.kind,
        name: &s.name,
        namespace: &s.namespace,
        label_selector: &s.label_selector,
        annotation_selector: &s.annotation_selector,
    }
}

/// A selector ready to match resources.
#[derive(Debug)]
pub struct CompiledSelector(krusty_match::selector::Selector);

impl CompiledSelector {
    /// Whether `r` is selected: its original or current namespace and name
    /// match, its kind matches, and its labels and annotations satisfy the
    /// selectors (see [`Selected`]).
    pub fn matches(&self, r: &Resource) -> bool {
        self.0.matches(&Selected(r))
    }
}
