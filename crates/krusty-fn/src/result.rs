//! Results: what a function reports besides its items (spec v1 `Result`).

use std::fmt;

use krusty_yaml::Node;

use crate::object;
use crate::wire::annotations;

/// How serious a result is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Severity {
    /// The function failed; the orchestrator fails the build.
    #[default]
    Error,
    /// Worth a look; does not fail the build.
    Warning,
    /// For information only.
    Info,
}

impl Severity {
    /// The wire name: `error`, `warning` or `info`.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
        }
    }

    /// Parses a wire name; an empty or missing severity means `error`.
    pub fn parse(s: &str) -> Option<Severity> {
        match s {
            "" | "error" => Some(Severity::Error),
            "warning" => Some(Severity::Warning),
            "info" => Some(Severity::Info),
            _ => None,
        }
    }
}

/// The object a result is about.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ResourceRef {
    /// `apiVersion` of the object.
    pub api_version: String,
    /// `kind` of the object.
    pub kind: String,
    /// `metadata.name` of the object.
    pub name: String,
    /// `metadata.namespace`, empty when unset.
    pub namespace: String,
}

impl ResourceRef {
    /// The reference to a resource node.
    pub fn of(item: &Node) -> ResourceRef {
        ResourceRef {
            api_version: object::get_str(item, &["apiVersion"]).to_string(),
            kind: object::get_str(item, &["kind"]).to_string(),
            name: object::get_str(item, &["metadata", "name"]).to_string(),
            namespace: object::get_str(item, &["metadata", "namespace"]).to_string(),
        }
    }
}

impl fmt::Display for ResourceRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}/", self.api_version, self.kind)?;
        if !self.namespace.is_empty() {
            write!(f, "{}/", self.namespace)?;
        }
        f.write_str(&self.name)
    }
}

/// A field of the object a result is about.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FieldRef {
    /// Path of the field, e.g. `spec.template.spec.containers[0].image`.
    pub path: String,
    /// The field's current value, if the function reports it.
    pub current_value: Option<Node>,
    /// The value the function proposes, if any.
    pub proposed_value: Option<Node>,
}

/// The file holding the object a result is about.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FileRef {
    /// Slash-separated relative path.
    pub path: String,
    /// Index of the object in a multi-object file.
    pub index: u64,
}

/// Why a node is not a result's wire form.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ResultError {
    /// The node is not a mapping.
    #[error("a result must be a mapping")]
    NotAMapping,
}

/// One result: a message with optional references to what it is about.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FnResult {
    /// Human-readable message.
    pub message: String,
    /// How serious it is.
    pub severity: Severity,
    /// The object it is about.
    pub resource_ref: Option<ResourceRef>,
    /// The field it is about (needs `resource_ref`).
    pub field: Option<FieldRef>,
    /// The file it is about.
    pub file: Option<FileRef>,
    /// Free-form tags.
    pub tags: Vec<(String, String)>,
}

impl FnResult {
    /// An error result.
    pub fn error(message: impl Into<String>) -> FnResult {
        FnResult {
            message: message.into(),
            severity: Severity::Error,
            ..FnResult::default()
        }
    }

    /// A warning result.
    pub fn warning(message: impl Into<String>) -> FnResult {
        FnResult {
            severity: Severity::Warning,
            ..FnResult::error(message)
        }
    }

    /// An informational result.
    pub fn info(message: impl Into<String>) -> FnResult {
        FnResult {
            severity: Severity::Info,
            ..FnResult::error(message)
        }
    }

    /// This result, about `item` (and the file it came from, when the
    /// orchestrator recorded one in the internal annotations).
    pub fn about(mut self, item: &Node) -> FnResult {
        self.resource_ref = Some(ResourceRef::of(item));
        let annotation = |keys: [&str; 2]| keys.iter().find_map(|k| object::annotation(item, k));
        if let Some(path) = annotation(annotations::PATH) {
            self.file = Some(FileRef {
                path: path.to_string(),
                index: annotation(annotations::INDEX)
                    .and_then(|i| i.parse().ok())
                    .unwrap_or(0),
            });
        }
        self
    }

    /// This result, about the field at `path` of its resource.
    pub fn at_field(mut self, path: impl Into<String>) -> FnResult {
        self.field = Some(FieldRef {
            path: path.into(),
            ..FieldRef::default()
        });
        self
    }

    /// The field reference's current and proposed values (any
    /// `Serialize` value; one that cannot be written is left out).
    /// Needs [`FnResult::at_field`] first.
    pub fn with_values<C, P>(mut self, current: Option<&C>, proposed: Option<&P>) -> FnResult
    where
        C: serde::Serialize + ?Sized,
        P: serde::Serialize + ?Sized,
    {
        if let Some(field) = &mut self.field {
            field.current_value = current.and_then(|v| crate::to_node::to_node(v).ok());
            field.proposed_value = proposed.and_then(|v| crate::to_node::to_node(v).ok());
        }
        self
    }

    /// This result, about the file `path` (object `index` in it).
    pub fn in_file(mut self, path: impl Into<String>, index: u64) -> FnResult {
        self.file = Some(FileRef {
            path: path.into(),
            index,
        });
        self
    }

    /// Adds a tag.
    pub fn with_tag(mut self, key: impl Into<String>, value: impl Into<String>) -> FnResult {
        self.tags.push((key.into(), value.into()));
        self
    }

    /// Reads a result from its wire form. A severity other than `error`,
    /// `warning` and `info` is read as `warning`, its message saying so.
    pub fn from_node(node: &Node) -> Result<FnResult, ResultError> {
        if node.as_map().is_none() {
            return Err(ResultError::NotAMapping);
        }
        let severity_text = object::get_str(node, &["severity"]);
        let mut message = object::get_str(node, &["message"]).to_string();
        // An unknown severity does not fail the run: the result is kept,
        // as a warning that says what it was.
        let severity = Severity::parse(severity_text).unwrap_or_else(|| {
            message = format!("{message} (unknown severity '{severity_text}', read as a warning)");
            Severity::Warning
        });
        let resource_ref = node.get("resourceRef").map(|r| ResourceRef {
            api_version: object::get_str(r, &["apiVersion"]).to_string(),
            kind: object::get_str(r, &["kind"]).to_string(),
            name: object::get_str(r, &["name"]).to_string(),
            namespace: object::get_str(r, &["namespace"]).to_string(),
        });
        let field = node.get("field").map(|f| FieldRef {
            path: object::get_str(f, &["path"]).to_string(),
            current_value: f.get("currentValue").cloned(),
            proposed_value: f.get("proposedValue").cloned(),
        });
        let file = node.get("file").map(|f| FileRef {
            path: object::get_str(f, &["path"]).to_string(),
            index: object::get_str(f, &["index"]).parse().unwrap_or(0),
        });
        let tags = node
            .get("tags")
            .and_then(Node::as_map)
            .map(|m| {
                m.iter()
                    .map(|(k, v)| {
                        (
                            k.key_str().unwrap_or_default().to_string(),
                            v.as_str().unwrap_or_default().to_string(),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        Ok(FnResult {
            message,
            severity,
            resource_ref,
            field,
            file,
            tags,
        })
    }

    /// The result's wire form.
    pub fn to_node(&self) -> Node {
        let mut n = Node::map();
        n.set("message", Node::string(&self.message));
        n.set("severity", Node::plain(self.severity.as_str()));
        if let Some(r) = &self.resource_ref {
            let mut m = Node::map();
            m.set("apiVersion", Node::string(&r.api_version));
            m.set("kind", Node::string(&r.kind));
            m.set("name", Node::string(&r.name));
            if !r.namespace.is_empty() {
                m.set("namespace", Node::string(&r.namespace));
            }
            n.set("resourceRef", m);
        }
        if let Some(f) = &self.field {
            let mut m = Node::map();
            m.set("path", Node::string(&f.path));
            if let Some(v) = &f.current_value {
                m.set("currentValue", v.clone());
            }
            if let Some(v) = &f.proposed_value {
                m.set("proposedValue", v.clone());
            }
            n.set("field", m);
        }
        if let Some(f) = &self.file {
            let mut m = Node::map();
            m.set("path", Node::string(&f.path));
            if f.index != 0 {
                m.set("index", Node::plain(f.index.to_string()));
            }
            n.set("file", m);
        }
        if !self.tags.is_empty() {
            let mut m = Node::map();
            for (k, v) in &self.tags {
                m.set(k, Node::string(v));
            }
            n.set("tags", m);
        }
        n
    }
}

/// One line per result: `[severity] resource field=… file=…: message`.
impl fmt::Display for FnResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{}]", self.severity.as_str())?;
        if let Some(r) = &self.resource_ref {
            write!(f, " {r}")?;
        }
        if let Some(field) = &self.field {
            write!(f, " field={}", field.path)?;
        }
        if let Some(file) = &self.file {
            write!(f, " file={}", file.path)?;
            if file.index != 0 {
                write!(f, "#{}", file.index)?;
            }
        }
        write!(f, ": {}", self.message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_severity_is_a_warning_that_says_so() {
        let node = krusty_yaml::parse_stream("message: odd\nseverity: bogus\n")
            .unwrap()
            .into_iter()
            .find_map(|d| d.root)
            .unwrap();
        let r = FnResult::from_node(&node).unwrap();
        assert_eq!(r.severity, Severity::Warning);
        assert_eq!(
            r.message,
            "odd (unknown severity 'bogus', read as a warning)"
        );
    }
}
