//! Resource selectors (`target:` of patches, `select:`/`reject:` of
//! replacements): group, version, kind, name, namespace, and label and
//! annotation selectors in Kubernetes' selector syntax.

use krusty_resource::id::NOT_A_NAMESPACE;
use krusty_resource::{is_cluster_scoped, Gvk, ResId, Resource};
use krusty_yaml::{Node, Pos};
use regex::Regex;

use crate::error::{OpError, OpResult};
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

    /// Compiles the selector with group, version, kind, name and namespace
    /// as anchored regular expressions (as patch targets use them, e.g.
    /// `kind: Deployment|StatefulSet`).
    pub fn compile_regex(&self) -> OpResult<CompiledSelector> {
        let pattern =
            |field: &str, text: &str| Pattern::new(text).map_err(|e| self.locate(field, e));
        let labels =
            |field: &str, text: &str| LabelSelector::parse(text).map_err(|e| self.locate(field, e));
        Ok(CompiledSelector {
            group: pattern("group", &self.gvk.group)?,
            version: pattern("version", &self.gvk.version)?,
            kind: pattern("kind", &self.gvk.kind)?,
            name: pattern("name", &self.name)?,
            namespace: pattern("namespace", &self.namespace)?,
            labels: labels("labelSelector", &self.label_selector)?,
            annotations: labels("annotationSelector", &self.annotation_selector)?,
        })
    }
}

/// A selector's id part (group, version, kind, name, namespace) as
/// anchored regular expressions, matched against resource ids as written:
/// a resource without a namespace has none (not `default`). Kustomize
/// v5.8.1's replacement targets select and reject this way.
#[derive(Debug)]
pub struct IdPatterns {
    group: Pattern,
    version: Pattern,
    kind: Pattern,
    name: Pattern,
    namespace: Pattern,
    /// The selector names no id field (it selects by labels alone).
    empty: bool,
}

impl IdPatterns {
    /// Whether `id` matches every field the selector gives.
    pub fn matches(&self, id: &ResId) -> bool {
        self.group.matches(&id.gvk.group)
            && self.version.matches(&id.gvk.version)
            && self.kind.matches(&id.gvk.kind)
            && self.name.matches(&id.name)
            && self.namespace.matches(&id.namespace)
    }

    /// Whether the selector names no id field.
    pub fn is_empty(&self) -> bool {
        self.empty
    }
}

impl Selector {
    /// Compiles the id part as anchored regular expressions (the first
    /// that does not compile is the error, in Go's words).
    pub fn compile_id_patterns(&self) -> OpResult<IdPatterns> {
        Ok(IdPatterns {
            group: Pattern::new(&self.gvk.group)?,
            version: Pattern::new(&self.gvk.version)?,
            kind: Pattern::new(&self.gvk.kind)?,
            name: Pattern::new(&self.name)?,
            namespace: Pattern::new(&self.namespace)?,
            empty: self.gvk.group.is_empty()
                && self.gvk.version.is_empty()
                && self.gvk.kind.is_empty()
                && self.name.is_empty()
                && self.namespace.is_empty(),
        })
    }
}

/// A selector ready to match resources.
#[derive(Debug)]
pub struct CompiledSelector {
    group: Pattern,
    version: Pattern,
    kind: Pattern,
    name: Pattern,
    namespace: Pattern,
    labels: LabelSelector,
    annotations: LabelSelector,
}

impl CompiledSelector {
    /// Whether `r` is selected: its original or current namespace and name
    /// match, its kind matches, and its labels and annotations satisfy the
    /// selectors.
    pub fn matches(&self, r: &Resource) -> bool {
        // Compared field by field on the resource's own text: no ids are
        // built (this runs for every resource a targeted patch considers).
        let kind = r.kind();
        if !self.kind.matches(kind) {
            return false;
        }
        let api_version = r.api_version();
        let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
        if !self.group.matches(group) || !self.version.matches(version) {
            return false;
        }
        let (original_kind, original_name, original_namespace) = match r.meta.previous.first() {
            Some(p) => (p.kind.as_str(), p.name.as_str(), p.namespace.as_str()),
            None => (kind, r.name(), r.namespace()),
        };
        let ns_ok = matches!(self.namespace, Pattern::Any) || {
            let original_cluster = is_cluster_scoped(group, version, original_kind);
            let cluster = is_cluster_scoped(group, version, kind);
            self.namespace
                .matches(effective_namespace(original_cluster, original_namespace))
                || self
                    .namespace
                    .matches(effective_namespace(cluster, r.namespace()))
        };
        let name_ok = self.name.matches(original_name) || self.name.matches(r.name());
        ns_ok
            && name_ok
            && self
                .labels
                .matches(r.node.get_path(&["metadata", "labels"]))
            && self
                .annotations
                .matches(r.node.get_path(&["metadata", "annotations"]))
    }
}

/// A selector's group, version, kind, name or namespace: anything when
/// empty, else an anchored regular expression, compared as text when it
/// has no metacharacters (most: `Deployment`, `apps`, `v1`).
#[derive(Debug)]
enum Pattern {
    Any,
    Text(String),
    Regex(Regex),
}

impl Pattern {
    fn new(text: &str) -> OpResult<Pattern> {
        if text.is_empty() {
            return Ok(Pattern::Any);
        }
        if is_literal(text) {
            return Ok(Pattern::Text(text.to_string()));
        }
        let anchored = format!("^(?:{text})$");
        krusty_match::go_regex::compile(&anchored)
            .map(Pattern::Regex)
            .map_err(|e| OpError::new(e.to_string()))
    }

    fn matches(&self, text: &str) -> bool {
        match self {
            Pattern::Any => true,
            Pattern::Text(t) => t == text,
            Pattern::Regex(re) => re.is_match(text),
        }
    }
}

/// Whether a selector's group, version or kind has no regular-expression
/// metacharacters, so it matches itself alone.
pub fn is_literal(text: &str) -> bool {
    regex::escape(text) == text
}

/// The namespace a selector sees, as `ResId::effective_namespace` gives it.
fn effective_namespace(cluster_scoped: bool, namespace: &str) -> &str {
    if cluster_scoped {
        NOT_A_NAMESPACE
    } else if namespace.is_empty() {
        "default"
    } else {
        namespace
    }
}

/// A label (or annotation) selector, matched against a resource's
/// `metadata.labels` (or `metadata.annotations`) mapping.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LabelSelector(krusty_match::LabelSelector);

impl LabelSelector {
    /// Parses Kubernetes' selector syntax (see [`krusty_match::label_selector`]).
    pub fn parse(text: &str) -> OpResult<LabelSelector> {
        krusty_match::LabelSelector::parse(text)
            .map(LabelSelector)
            .map_err(|e| OpError::new(e.to_string()))
    }

    /// Whether a labels (or annotations) mapping satisfies every requirement.
    pub fn matches(&self, map: Option<&Node>) -> bool {
        self.0
            .matches(|k| map.and_then(|m| m.get(k)).map(typed::lenient_string))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::test_support::node as labels;

    #[test]
    fn label_selectors_read_the_metadata_mapping() {
        let l = labels("{app: web, replicas: 3, on: true}");
        let m = |s: &str| LabelSelector::parse(s).unwrap().matches(Some(&l));
        assert!(m("app=web,replicas>2"));
        assert!(m("on=true"));
        assert!(!m("app!=web"));
        assert!(LabelSelector::parse("").unwrap().matches(None));
        assert!(!LabelSelector::parse("app").unwrap().matches(None));
        assert!(LabelSelector::parse("app in x").is_err());
    }
}
