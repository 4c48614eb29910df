//! Resource selectors as written (`target:` of patches, `select:` and
//! `reject:` of replacements): group, version, kind, name, namespace, and
//! label and annotation selectors. Matching resources is the operations'
//! job; this is the data and its reading.

use krusty_yaml::{Node, Pos};

use crate::error::SchemaResult;
use crate::id::{Gvk, ResId};
use crate::typed::{self, At, Strictness};
use crate::version::KustomizeVersion;

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
    ) -> SchemaResult<Selector> {
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
    ) -> SchemaResult<Selector> {
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

    /// Where `field` (one of [`FIELDS`]) is written, when known.
    pub fn position_of(&self, field: &str) -> Pos {
        FIELDS
            .iter()
            .position(|f| *f == field)
            .map_or(Pos::default(), |i| self.written_at[i])
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

    /// Whether a resource id is selected by this selector's id part
    /// (exact names; empty fields match anything). As in Kustomize, a
    /// resource without a namespace, cluster-scoped ones included, is in
    /// `default` here.
    pub fn selects_id(&self, id: &ResId) -> bool {
        let ns_ok = self.namespace.is_empty() || {
            let namespace = match id.namespace.as_str() {
                "" => "default",
                ns => ns,
            };
            self.namespace == namespace
        };
        (self.name.is_empty() || self.name == id.name) && ns_ok && id.gvk.is_selected_by(&self.gvk)
    }

    /// Whether the selector names any part of an id.
    pub fn has_id(&self) -> bool {
        !(self.gvk.group.is_empty()
            && self.gvk.version.is_empty()
            && self.gvk.kind.is_empty()
            && self.name.is_empty()
            && self.namespace.is_empty())
    }
}
