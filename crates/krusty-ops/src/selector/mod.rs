//! Resource selectors (`target:` of patches, `select:`/`reject:` of
//! replacements): group, version, kind, name, namespace, and label and
//! annotation selectors in Kubernetes' selector syntax.

mod subject;

use krusty_match::selector::{Fields, IdPatterns};
use krusty_resource::{Gvk, ResId, Resource};
use krusty_yaml::{Node, Pos};

use crate::error::{OpError, OpResult};
use crate::typed::{self, At, Strictness};
use crate::version::KustomizeVersion;

pub use subject::{AsWritten, Selected};

/// Which resources an operation applies to; empty fields match anything.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Selector {
    /// Group, version and kind (exact; empty parts match anything).
    pub gvk: Gvk,
    /// Name.
    pub name: String,
    /// Namespace.
    pub namespace: String,
    /// A label selector, e.g. `app=web,tier in (a,b)`.
    pub label_selector: String,
    /// An annotation selector, same syntax.
    pub annotation_selector: String,
    /// Where each field is written (in the order of [`FIELDS`]), for
    /// messages; nowhere unless [`Selector::written_in`] says.
    pub written_at: [Pos; 7],
}

/// The selector fields, as Kustomize names them.
pub const FIELDS: [&str; 7] = [
    "group",
    "version",
    "kind",
    "name",
    "namespace",
    "labelSelector",
    "annotationSelector",
];

impl Selector {
    /// Reads a selector mapping; `owner` is the Go type named in errors.
    pub fn from_node(
        node: &Node,
        owner: &'static str,
        strictness: Strictness,
    ) -> OpResult<Selector> {
        let mut s = Selector::default();
        for (field, value) in typed::fields(node, &FIELDS, owner, strictness)? {
            s.set_field(field, typed::string(value, At { owner, path: field })?);
        }
        Ok(s)
    }

    /// Reads a selector mapping that is field `path` of Go struct `owner`
    /// (`Patch` and `patches.target`), its errors naming the field as
    /// release `version`'s Go names it (v5.8.1's names the embedded
    /// structs: `Selector.patches.target.ResId.Gvk.kind`).
    pub fn from_node_in(
        node: &Node,
        owner: &'static str,
        path: &str,
        strictness: Strictness,
        version: KustomizeVersion,
    ) -> OpResult<Selector> {
        let mut s = Selector::default();
        for (field, value) in typed::fields(node, &FIELDS, owner, strictness)? {
            let embedded = match field {
                "group" | "version" | "kind" if version >= KustomizeVersion::V5_8_1 => "ResId.Gvk.",
                "name" | "namespace" if version >= KustomizeVersion::V5_8_1 => "ResId.",
                _ => "",
            };
            let full = format!("{path}.{embedded}{field}");
            s.set_field(field, typed::string(value, At { owner, path: &full })?);
        }
        Ok(s)
    }

    /// The selector, knowing where `node`, the mapping it was read from
    /// (in the file its messages name), writes each of its fields.
    pub fn written_in(mut self, node: &Node) -> Selector {
        for (key, value) in node.as_map().map(|m| m.as_slice()).unwrap_or_default() {
            let key = key.key_str().unwrap_or_default();
            if let Some(i) = FIELDS.iter().position(|f| f.eq_ignore_ascii_case(key)) {
                self.written_at[i] = value.pos();
            }
        }
        self
    }

    /// `e`, located where `field` (one of [`FIELDS`]) is written, when
    /// known.
    fn locate(&self, field: &str, e: OpError) -> OpError {
        match FIELDS.iter().position(|f| *f == field) {
            Some(i) => e.located(None, self.written_at[i]),
            None => e,
        }
    }

    /// Sets the field with this canonical name (one of the selector's
    /// fields); `false` if there is none.
    pub fn set_field(&mut self, field: &str, text: String) -> bool {
        match field {
            "group" => self.gvk.group = text.into(),
            "version" => self.gvk.version = text.into(),
            "kind" => self.gvk.kind = text.into(),
            "name" => self.name = text,
            "namespace" => self.namespace = text,
            "labelSelector" => self.label_selector = text,
            "annotationSelector" => self.annotation_selector = text,
            _ => return false,
        }
        true
    }

    /// Kustomize's text form of the selector's id part, as in its messages.
    pub fn id_text(&self) -> String {
        ResId {
            gvk: self.gvk.clone(),
            name: self.name.as_str().into(),
            namespace: self.namespace.as_str().into(),
        }
        .to_string()
    }

    /// The text of the selector's fields, for [`krusty_match::selector`].
    fn fields(&self) -> Fields<'_> {
        Fields {
            group: &self.gvk.group,
            version: &self.gvk.version,
            kind: &self.gvk.kind,
            name: &self.name,
            namespace: &self.namespace,
            label_selector: &self.label_selector,
            annotation_selector: &self.annotation_selector,
        }
    }

    /// Compiles the selector with group, version, kind, name and namespace
    /// as anchored regular expressions (as patch targets use them, e.g.
    /// `kind: Deployment|StatefulSet`); the error is located where the
    /// field that does not compile is written.
    pub fn compile_regex(&self) -> OpResult<CompiledSelector> {
        krusty_match::selector::Selector::compile(&self.fields())
            .map(CompiledSelector)
            .map_err(|e| self.locate(e.field.name(), OpError::new(e.message)))
    }

    /// Compiles the id part as anchored regular expressions (the first
    /// that does not compile is the error, in Go's words), to match ids
    /// as written (see [`AsWritten`]): Kustomize v5.8.1's replacement
    /// targets select and reject this way.
    pub fn compile_id_patterns(&self) -> OpResult<IdPatterns> {
        IdPatterns::compile(&self.fields()).map_err(|e| OpError::new(e.message))
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
