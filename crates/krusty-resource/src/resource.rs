//! A resource: one YAML mapping with `apiVersion`, `kind` and `metadata`.

use krusty_yaml::{Node, Value};

use crate::id::{Gvk, ResId};

/// Why a document cannot be a resource.
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceError(pub String);

impl std::fmt::Display for ResourceError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ResourceError {}

/// One Kubernetes-style object.
#[derive(Debug, Clone, PartialEq)]
pub struct Resource {
    /// The object's root mapping.
    pub node: Node,
}

impl Resource {
    /// Wraps a mapping node as a resource, checking it has the fields every
    /// resource needs.
    pub fn from_node(node: Node) -> Result<Resource, ResourceError> {
        if !matches!(node.value, Value::Map(_)) {
            return Err(ResourceError(
                "a resource must be a YAML mapping (object)".into(),
            ));
        }
        let mut r = Resource { node };
        if r.kind().is_empty() {
            return Err(ResourceError("missing kind in object".into()));
        }
        r.normalize_annotations();
        Ok(r)
    }

    /// Kustomize rewrites `metadata.annotations` when it reads a resource:
    /// every value becomes a string (its source text; collections become
    /// empty strings), and an empty or null annotations field disappears.
    fn normalize_annotations(&mut self) {
        let Some(meta) = self.node.get_mut("metadata") else {
            return;
        };
        let keep = match meta.get_mut("annotations") {
            None => return,
            Some(ann) => match &mut ann.value {
                Value::Map(entries) if !entries.is_empty() => {
                    for (_, v) in entries.iter_mut() {
                        let text = match &v.value {
                            Value::Scalar(s) => s.text.clone(),
                            _ => String::new(),
                        };
                        let pos = v.pos;
                        *v = Node::string(text);
                        v.pos = pos;
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
        ResId {
            gvk: self.gvk(),
            name: self.name().to_string(),
            namespace: self.namespace().to_string(),
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
}
