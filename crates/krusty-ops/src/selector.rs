//! Resource selectors (`target:` of patches, `select:`/`reject:` of
//! replacements): group, version, kind, name, namespace, and label and
//! annotation selectors in Kubernetes' selector syntax.

use krusty_resource::id::NOT_A_NAMESPACE;
use krusty_resource::{is_cluster_scoped, Gvk, ResId, Resource};
use krusty_yaml::{Node, Pos};
use regex::Regex;

use crate::error::{OpError, OpResult};
use crate::typed::{self, At, Strictness};

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
        Regex::new(&anchored)
            .map(Pattern::Regex)
            .map_err(|e| OpError::new(crate::go_regex::error_text(&anchored, &e)))
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

/// One requirement of a label selector.
#[derive(Debug, Clone, PartialEq)]
enum Requirement {
    Exists(String),
    NotExists(String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
}

/// A parsed label (or annotation) selector; empty matches everything.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LabelSelector(Vec<Requirement>);

impl LabelSelector {
    /// Parses Kubernetes' selector syntax: comma-separated `k`, `!k`,
    /// `k=v`, `k==v`, `k!=v`, `k in (a,b)`, `k notin (a,b)`.
    pub fn parse(text: &str) -> OpResult<LabelSelector> {
        let mut out = Vec::new();
        let mut rest = text.trim();
        while !rest.is_empty() {
            let (req, after) = parse_requirement(rest)
                .map_err(|why| OpError::new(format!("unable to parse requirement: {why}")))?;
            out.push(req);
            rest = after.trim_start();
            if let Some(r) = rest.strip_prefix(',') {
                rest = r.trim_start();
                if rest.is_empty() {
                    return Err(OpError::new(
                        "unable to parse requirement: found '', expected: identifier",
                    ));
                }
            } else if !rest.is_empty() {
                return Err(OpError::new(format!(
                    "found '{}', expected: ',' or 'end of string'",
                    rest.split_whitespace().next().unwrap_or(rest)
                )));
            }
        }
        Ok(LabelSelector(out))
    }

    /// Whether a labels (or annotations) mapping satisfies every requirement.
    pub fn matches(&self, map: Option<&Node>) -> bool {
        let get = |k: &str| map.and_then(|m| m.get(k)).map(typed::lenient_string);
        self.0.iter().all(|req| match req {
            Requirement::Exists(k) => get(k).is_some(),
            Requirement::NotExists(k) => get(k).is_none(),
            Requirement::In(k, vs) => get(k).is_some_and(|v| vs.contains(&v)),
            Requirement::NotIn(k, vs) => get(k).is_none_or(|v| !vs.contains(&v)),
        })
    }
}

fn is_key_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/')
}

fn take_word(s: &str) -> (&str, &str) {
    let end = s.find(|c: char| !is_key_char(c)).unwrap_or(s.len());
    (&s[..end], &s[end..])
}

fn parse_requirement(s: &str) -> Result<(Requirement, &str), String> {
    if let Some(rest) = s.strip_prefix('!') {
        let (key, rest) = take_word(rest.trim_start());
        if key.is_empty() {
            return Err("found '', expected: identifier".into());
        }
        return Ok((Requirement::NotExists(key.into()), rest));
    }
    let (key, rest) = take_word(s);
    if key.is_empty() {
        return Err(format!(
            "found '{}', expected: !, identifier, or 'end of string'",
            s.chars().next().unwrap_or_default()
        ));
    }
    let rest = rest.trim_start();
    if rest.is_empty() || rest.starts_with(',') {
        return Ok((Requirement::Exists(key.into()), rest));
    }
    let (op, rest) = if let Some(r) = rest.strip_prefix("==") {
        ("=", r)
    } else if let Some(r) = rest.strip_prefix("!=") {
        ("!=", r)
    } else if let Some(r) = rest.strip_prefix('=') {
        ("=", r)
    } else {
        let (word, r) = take_word(rest);
        match word {
            "in" | "notin" => (word, r),
            other => {
                return Err(format!(
                    "found '{other}', expected: in, notin, =, ==, !=, gt, lt"
                ))
            }
        }
    };
    let rest = rest.trim_start();
    match op {
        "=" | "!=" => {
            let (value, rest) = take_word(rest);
            let values = vec![value.to_string()];
            let req = if op == "=" {
                Requirement::In(key.into(), values)
            } else {
                Requirement::NotIn(key.into(), values)
            };
            Ok((req, rest))
        }
        _ => {
            let Some(inner) = rest.strip_prefix('(') else {
                return Err("found '', expected: '('".into());
            };
            let close = inner.find(')').ok_or("found '', expected: ')'")?;
            let values: Vec<String> = inner[..close]
                .split(',')
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
                .collect();
            let rest = &inner[close + 1..];
            let req = if op == "in" {
                Requirement::In(key.into(), values)
            } else {
                Requirement::NotIn(key.into(), values)
            };
            Ok((req, rest))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(text: &str) -> Node {
        krusty_yaml::parse_stream(text).unwrap()[0]
            .root
            .clone()
            .unwrap()
    }

    #[test]
    fn label_selectors_follow_kubernetes_semantics() {
        let l = labels("{app: web, tier: front}");
        let m = |s: &str| LabelSelector::parse(s).unwrap().matches(Some(&l));
        assert!(m(""));
        assert!(m("app=web"));
        assert!(m("app==web,tier"));
        assert!(!m("app!=web"));
        assert!(m("tier in (front, back)"));
        assert!(!m("tier notin (front)"));
        assert!(m("!missing"));
        assert!(m("missing!=x"));
        assert!(!m("missing in (x)"));
        assert!(LabelSelector::parse("app in x").is_err());
        assert!(LabelSelector::parse("app=web,").is_err());
    }
}
