//! A resource: one YAML mapping with `apiVersion`, `kind` and `metadata`.

use krusty_yaml::{CompactString, Node, ScalarStyle, Value};

use crate::id::{Gvk, ResId};
use crate::json_round_trip::{self, JsonError, JsonScalar};
use crate::meta::{BuildMeta, TypedAnnotation};

/// Why a document cannot be a resource, or a resource cannot take a step.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ResourceError {
    /// The document is not a mapping.
    #[error("a resource must be a YAML mapping (object)")]
    NotAMapping,
    /// The mapping has no `kind`.
    #[error("missing kind in object")]
    MissingKind,
    /// A value JSON cannot hold, or a JSON round trip cannot read back.
    #[error(transparent)]
    NotJson(JsonError),
}

/// One Kubernetes-style object.
#[derive(Debug, Clone, PartialEq)]
pub struct Resource {
    /// The object's root mapping.
    pub node: Node,
    /// What the build knows about the resource beyond its content.
    pub meta: BuildMeta,
}

impl Resource {
    /// Wraps a mapping node as a resource, checking it has the fields every
    /// resource needs.
    pub fn from_node(node: Node) -> Result<Resource, ResourceError> {
        let mut r = Resource::from_node_as_is(node)?;
        r.normalize_annotations();
        Ok(r)
    }

    /// Like [`Resource::from_node`], but keeps `metadata.annotations` as
    /// written (patches must keep a `null` that deletes annotations).
    pub fn from_node_as_is(node: Node) -> Result<Resource, ResourceError> {
        if !matches!(node.value, Value::Map(_)) {
            return Err(ResourceError::NotAMapping);
        }
        let r = Resource {
            node,
            meta: BuildMeta::default(),
        };
        if r.kind().is_empty() {
            return Err(ResourceError::MissingKind);
        }
        Ok(r)
    }

    /// Kustomize rewrites `metadata.annotations` when it reads a resource
    /// and again when it writes the build's output: every value becomes a
    /// string (its source text; collections become empty strings), and an
    /// empty or null annotations field disappears.
    pub fn normalize_annotations(&mut self) {
        let Some(meta) = self.node.get_mut("metadata") else {
            return;
        };
        let typed = &mut self.meta.typed_annotations;
        let keep = match meta.get_mut("annotations") {
            None => return,
            Some(ann) => match &mut ann.value {
                Value::Map(entries) if !entries.is_empty() => {
                    for (k, v) in entries.iter_mut() {
                        match &v.value {
                            Value::Scalar(_) => stringify_annotation(k, v, typed),
                            _ => v.replace_keeping_pos(Node::string(String::new())),
                        }
                    }
                    true
                }
                _ => false,
            },
        };
        if !keep {
            meta.remove("annotations");
        }
    }

    /// Kustomize's round trip of `metadata.annotations` through a Go string
    /// map, which it makes after every transformer when the build keeps
    /// build records (it adds a transformation record to each resource
    /// that has an origin): each value becomes a string of its text, a
    /// mapping or list the empty string, and none is read as a typed value
    /// any more.
    pub fn annotations_through_string_map(&mut self) {
        let Some(Value::Map(entries)) = self
            .node
            .get_mut("metadata")
            .and_then(|m| m.get_mut("annotations"))
            .map(|a| &mut a.value)
        else {
            return;
        };
        for (_, v) in entries.iter_mut() {
            let text = match &v.value {
                Value::Scalar(_) if v.tag() == krusty_yaml::node::Tag::Str => continue,
                Value::Scalar(s) => s.text.to_string(),
                _ => String::new(),
            };
            v.replace_keeping_pos(Node::string(text));
        }
        self.meta.typed_annotations.clear();
    }

    /// Gives the annotations that were read as typed values their JSON
    /// form, as the start of a JSON patch does in Kustomize (see
    /// [`TypedAnnotation`]); an annotation changed since keeps its value.
    /// Returns the keys of those now a number, boolean or null, for
    /// [`Resource::values_through_json`].
    pub fn annotations_through_json(&mut self) -> Result<Vec<CompactString>, ResourceError> {
        let mut made_typed = Vec::new();
        if self.meta.typed_annotations.is_empty() {
            return Ok(made_typed);
        }
        let typed = std::mem::take(&mut self.meta.typed_annotations);
        let Some(annotations) = self
            .node
            .get_mut("metadata")
            .and_then(|m| m.get_mut("annotations"))
        else {
            return Ok(made_typed);
        };
        for t in typed {
            if let Some(v) = annotations.get_mut(&t.key) {
                if v.as_str() == Some(&*t.source) {
                    let json = t.json.map_err(ResourceError::NotJson)?;
                    // A number, boolean or null is one in the JSON the
                    // patch works on.
                    let value = if t.typed {
                        made_typed.push(t.key.clone());
                        Node::plain(json)
                    } else {
                        Node::string(json)
                    };
                    v.replace_keeping_pos(value);
                }
            }
        }
        Ok(made_typed)
    }

    /// Gives every value the form it has after a JSON patch's round trip
    /// in Kustomize (see [`json_round_trip`]); annotations stay strings.
    /// `made_typed` are the annotations the patch found as numbers,
    /// booleans or nulls: already in their JSON form, they are strings of
    /// that text again first.
    pub fn values_through_json(
        &mut self,
        made_typed: &[CompactString],
    ) -> Result<(), ResourceError> {
        if let Some(entries) = self
            .node
            .get_mut("metadata")
            .and_then(|m| m.get_mut("annotations"))
            .and_then(Node::as_map_mut)
        {
            for key in made_typed {
                if let Some((k, v)) = entries.iter_mut().find(|(k, _)| k.key_str() == Some(key)) {
                    stringify_annotation(k, v, &mut self.meta.typed_annotations);
                }
            }
        }
        json_round_trip::through_json(&mut self.node).map_err(ResourceError::NotJson)?;
        self.normalize_annotations();
        Ok(())
    }

    fn str_at(&self, path: &[&str]) -> &str {
        self.node
            .get_path(path)
            .and_then(Node::as_str)
            .unwrap_or("")
    }

    /// `kind`.
    pub fn kind(&self) -> &str {
        self.str_at(&["kind"])
    }

    /// `apiVersion`.
    pub fn api_version(&self) -> &str {
        self.str_at(&["apiVersion"])
    }

    /// `metadata.name`.
    pub fn name(&self) -> &str {
        self.str_at(&["metadata", "name"])
    }

    /// `metadata.namespace`.
    pub fn namespace(&self) -> &str {
        self.str_at(&["metadata", "namespace"])
    }

    /// Group, version and kind.
    pub fn gvk(&self) -> Gvk {
        Gvk::from_api_version(self.api_version(), self.kind())
    }

    /// The current identity.
    pub fn id(&self) -> ResId {
        // One pass over the root mapping and one over `metadata`, instead
        // of a lookup per field (ids are taken often). The first entry
        // with a key counts, as in a lookup.
        let (mut api_version, mut kind, mut meta) = (None, None, None);
        for (k, v) in self.node.as_map().into_iter().flatten() {
            match k.key_str() {
                Some("apiVersion") if api_version.is_none() => api_version = Some(v),
                Some("kind") if kind.is_none() => kind = Some(v),
                Some("metadata") if meta.is_none() => meta = Some(v),
                _ => {}
            }
        }
        let (mut name, mut namespace) = (None, None);
        for (k, v) in meta.and_then(Node::as_map).into_iter().flatten() {
            match k.key_str() {
                Some("name") if name.is_none() => name = Some(v),
                Some("namespace") if namespace.is_none() => namespace = Some(v),
                _ => {}
            }
        }
        fn text(n: Option<&Node>) -> &str {
            n.and_then(Node::as_str).unwrap_or("")
        }
        let (api_version, kind) = (text(api_version), text(kind));
        let (name, namespace) = (text(name), text(namespace));
        ResId {
            gvk: Gvk::from_api_version(api_version, kind),
            name: name.into(),
            namespace: namespace.into(),
        }
    }

    /// `true` for `kind: List` and other `...List` kinds holding `items`.
    pub fn is_list(&self) -> bool {
        self.kind().ends_with("List") && self.node.get("items").is_some()
    }

    /// An annotation's value.
    pub fn annotation(&self, key: &str) -> Option<&str> {
        self.node
            .get_path(&["metadata", "annotations", key])
            .and_then(Node::as_str)
    }

    /// Sets an annotation to a string, creating `metadata.annotations`
    /// when missing (a later key goes after the others).
    pub fn set_annotation(&mut self, key: &str, value: &str) {
        if let Some(annotations) = self
            .node
            .entry_map("metadata")
            .and_then(|m| m.entry_map("annotations"))
        {
            annotations.set(key, Node::string(value));
        }
    }

    /// Removes an annotation, and `metadata.annotations` when it leaves
    /// that mapping empty; the value it had.
    pub fn remove_annotation(&mut self, key: &str) -> Option<Node> {
        let metadata = self.node.get_mut("metadata")?;
        let annotations = metadata.get_mut("annotations")?;
        let removed = annotations.remove(key)?;
        if annotations.as_map().is_some_and(|m| m.is_empty()) {
            metadata.remove("annotations");
        }
        Some(removed)
    }

    /// Sets a scalar string at `metadata.<field>`, creating `metadata`.
    fn set_meta_string(&mut self, field: &str, value: &str) {
        if let Some(meta) = self.node.entry_map("metadata") {
            match meta.get_mut(field) {
                Some(n) => {
                    n.replace_keeping_pos(Node::string(value));
                }
                None => meta.set(field, Node::string(value)),
            }
        }
    }

    /// Sets `metadata.name`.
    pub fn set_name(&mut self, name: &str) {
        self.set_meta_string("name", name);
    }

    /// Sets `metadata.namespace`; an empty value removes the field.
    pub fn set_namespace(&mut self, namespace: &str) {
        if namespace.is_empty() {
            if let Some(meta) = self.node.get_mut("metadata") {
                meta.remove("namespace");
            }
        } else {
            self.set_meta_string("namespace", namespace);
        }
    }

    /// Sets `kind`.
    pub fn set_kind(&mut self, kind: &str) {
        self.node.set("kind", Node::string(kind));
    }

    /// The identities the resource had before renames, oldest first
    /// (without the current one).
    pub fn previous_ids(&self) -> Vec<ResId> {
        self.meta.previous.iter().map(|p| self.id_from(p)).collect()
    }

    /// A recorded previous identity as a `ResId` (group and version are
    /// the current ones; renames never change them).
    fn id_from(&self, p: &crate::meta::PreviousId) -> ResId {
        ResId {
            gvk: Gvk::from_api_version(self.api_version(), &p.kind),
            name: p.name.clone(),
            namespace: p.namespace.clone(),
        }
    }

    /// The identity the resource had when it was first read or generated.
    pub fn original_id(&self) -> ResId {
        match self.meta.previous.first() {
            Some(p) => self.id_from(p),
            None => self.id(),
        }
    }

    /// `true` if the resource is or was called `name` (a cheap test to run
    /// before [`Resource::any_id`]).
    pub fn has_had_name(&self, name: &str) -> bool {
        self.name() == name || self.meta.previous.iter().any(|p| p.name == name)
    }

    /// `true` if the current or any earlier identity satisfies `pred`.
    pub fn any_id(&self, pred: impl Fn(&ResId) -> bool) -> bool {
        pred(&self.id()) || self.previous_ids().iter().any(pred)
    }

    /// Records the current identity as a previous one, before a rename.
    pub fn store_previous_id(&mut self) {
        let id = self.id();
        let namespace = match id.effective_namespace() {
            crate::id::NOT_A_NAMESPACE => CompactString::default(),
            ns => ns.into(),
        };
        self.meta.previous.push(crate::meta::PreviousId {
            kind: id.gvk.kind,
            name: id.name,
            namespace,
        });
    }
}

/// Makes the scalar annotation `v` (under `key`) a string in place (the
/// text stays, only its type changes), noting in `typed` the JSON form it
/// keeps until a JSON patch when it was written as another type.
fn stringify_annotation(
    key: &Node,
    v: &mut Node,
    typed: &mut krusty_yaml::node::ThinVec<TypedAnnotation>,
) {
    let Value::Scalar(s) = &v.value else {
        return;
    };
    let json: Option<Result<(CompactString, bool), JsonError>> =
        match json_round_trip::json_scalar(v) {
            Ok(JsonScalar::Same(_)) => None,
            Ok(JsonScalar::String(t)) => (t != s.text).then(|| Ok((t.into(), false))),
            Ok(JsonScalar::Other(t)) => Some(Ok((t.into(), true))),
            Err(e) => Some(Err(e)),
        };
    if let Some(json) = json {
        typed.push(TypedAnnotation {
            key: key.key_str().unwrap_or_default().into(),
            source: s.text.clone(),
            typed: matches!(json, Ok((_, true))),
            json: json.map(|(t, _)| t),
        });
    }
    v.set_style(ScalarStyle::DoubleQuoted);
    v.clear_tag();
}
