//! The wire format: a `ResourceList` read from and written to YAML (or
//! JSON, which is YAML) as the KRM functions specification v1 defines it.

use krusty_yaml::{EmitError, Node, Value, YamlError};

use crate::result::{FnResult, ResultError};

/// The `apiVersion` written on output.
pub const API_VERSION: &str = "config.kubernetes.io/v1";
/// The `apiVersion`s accepted on input.
pub const ACCEPTED_API_VERSIONS: [&str; 2] =
    ["config.kubernetes.io/v1", "config.kubernetes.io/v1beta1"];
/// The `kind` of the wire object.
pub const KIND: &str = "ResourceList";

/// The internal annotations of the specification, which an orchestrator
/// sets on items going out and removes from items coming back. Each is
/// listed with its legacy `config.kubernetes.io/` (or `config.k8s.io/`)
/// spelling.
pub mod annotations {
    /// The file an item came from.
    pub const PATH: [&str; 2] = [
        "internal.config.kubernetes.io/path",
        "config.kubernetes.io/path",
    ];
    /// The item's position in that file.
    pub const INDEX: [&str; 2] = [
        "internal.config.kubernetes.io/index",
        "config.kubernetes.io/index",
    ];
    /// An orchestrator's id for the item (krusty writes the legacy
    /// spelling, which Kustomize and kpt also set).
    pub const ID: [&str; 2] = ["internal.config.kubernetes.io/id", "config.k8s.io/id"];
    /// Every annotation under this prefix is the orchestrator's.
    pub const INTERNAL_PREFIX: &str = "internal.config.kubernetes.io/";
    /// Kustomize's record of an item's identity when it was sent: its
    /// group, version, kind, name and namespace, as a YAML mapping.
    pub const RESOURCE_ID: &str = "kustomize.config.k8s.io/id";
    /// Kustomize's copy of the item's index, kept for annotation
    /// migration.
    pub const MIGRATION_ID: &str =
        "internal.config.kubernetes.io/annotations-migration-resource-id";
}

/// Why a text is not a valid `ResourceList`, or a list cannot be written.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum WireError {
    /// The text is not YAML.
    #[error("not valid YAML: {}: {}", .0.pos, .0.message)]
    Yaml(YamlError),
    /// The text holds no document.
    #[error("empty input: expected a ResourceList")]
    Empty,
    /// The text holds more than one document.
    #[error("expected one ResourceList document, found several")]
    SeveralDocuments,
    /// The document is not a mapping.
    #[error("expected a ResourceList mapping")]
    NotAMapping,
    /// `items` is not a list.
    #[error("'items' must be a list")]
    ItemsNotAList,
    /// An item is not a mapping (its index).
    #[error("items[{0}] is not an object")]
    ItemNotAnObject(usize),
    /// `kind` is not `ResourceList` (the kind found).
    #[error("expected kind ResourceList, got '{0}'")]
    WrongKind(String),
    /// An apiVersion this wire format does not know (the one found).
    #[error(
        "unsupported ResourceList apiVersion '{}' (expected {})",
        .0,
        ACCEPTED_API_VERSIONS.join(" or ")
    )]
    WrongApiVersion(String),
    /// A result that cannot be read.
    #[error("results: {0}")]
    Result(ResultError),
    /// The text is not UTF-8.
    #[error("the output is not UTF-8")]
    NotUtf8,
    /// The list cannot be written.
    #[error("{0}")]
    Emit(EmitError),
    /// The bytes are not a node in the binary encoding
    /// ([`ResourceList::from_binary`]).
    #[error("{0}")]
    Binary(krusty_yaml::binary::DecodeError),
}

impl From<YamlError> for WireError {
    fn from(e: YamlError) -> WireError {
        WireError::Yaml(e)
    }
}

impl From<EmitError> for WireError {
    fn from(e: EmitError) -> WireError {
        WireError::Emit(e)
    }
}

/// The input and output of a function.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ResourceList {
    /// The resources.
    pub items: Vec<Node>,
    /// The function's configuration, if any.
    pub function_config: Option<Node>,
    /// What the function reports.
    pub results: Vec<FnResult>,
}

impl ResourceList {
    /// A list holding `items` and no configuration.
    pub fn new(items: Vec<Node>) -> ResourceList {
        ResourceList {
            items,
            ..ResourceList::default()
        }
    }

    /// Reads a `ResourceList` from YAML or JSON text.
    pub fn parse(text: &str) -> Result<ResourceList, WireError> {
        let docs = krusty_yaml::parse_stream(text)?;
        let mut roots = docs.into_iter().filter_map(|d| d.root);
        let root = roots.next().ok_or(WireError::Empty)?;
        if roots.next().is_some() {
            return Err(WireError::SeveralDocuments);
        }
        ResourceList::from_node(root)
    }

    /// Reads a `ResourceList` from its root node.
    pub fn from_node(root: Node) -> Result<ResourceList, WireError> {
        let Value::Map(entries) = root.value else {
            return Err(WireError::NotAMapping);
        };
        let mut list = ResourceList::default();
        let (mut kind, mut api_version) = (String::new(), String::new());
        for (key, value) in entries {
            match key.key_str().unwrap_or_default() {
                "kind" => kind = value.as_str().unwrap_or_default().to_string(),
                "apiVersion" => api_version = value.as_str().unwrap_or_default().to_string(),
                "items" => match value.value {
                    Value::Seq(items) => list.items = items.into(),
                    Value::Scalar(_) if value.is_null() => {}
                    _ => return Err(WireError::ItemsNotAList),
                },
                "functionConfig" if !value.is_null() => list.function_config = Some(value),
                "results" => {
                    for r in value.as_seq().map(|s| s.as_slice()).unwrap_or_default() {
                        list.results
                            .push(FnResult::from_node(r).map_err(WireError::Result)?);
                    }
                }
                _ => {}
            }
        }
        if kind != KIND {
            return Err(WireError::WrongKind(kind));
        }
        if !ACCEPTED_API_VERSIONS.contains(&api_version.as_str()) {
            return Err(WireError::WrongApiVersion(api_version));
        }
        if let Some(i) = list.items.iter().position(|it| it.as_map().is_none()) {
            return Err(WireError::ItemNotAnObject(i));
        }
        Ok(list)
    }

    /// The wire form as one node.
    pub fn into_node(self) -> Node {
        let mut root = Node::map();
        root.set("apiVersion", Node::plain(API_VERSION));
        root.set("kind", Node::plain(KIND));
        root.set("items", Node::seq_of(self.items));
        if let Some(config) = self.function_config {
            root.set("functionConfig", config);
        }
        if !self.results.is_empty() {
            let results = self.results.iter().map(FnResult::to_node).collect();
            root.set("results", Node::new(Value::Seq(results)));
        }
        root
    }

    /// Writes the list as YAML, keeping the items' key order, comments and
    /// scalar styles.
    pub fn to_yaml(&self) -> Result<String, WireError> {
        Ok(self.to_yaml_tracked()?.text)
    }

    /// Appends `functionConfig` and `results`, when present.
    pub(crate) fn write_rest(&self, out: &mut String) -> Result<(), WireError> {
        let mut rest = Node::map();
        if let Some(config) = &self.function_config {
            rest.set("functionConfig", config.clone());
        }
        if !self.results.is_empty() {
            let results = self.results.iter().map(FnResult::to_node).collect();
            rest.set("results", Node::new(Value::Seq(results)));
        }
        if rest.as_map().is_some_and(|m| !m.is_empty()) {
            krusty_yaml::emit_document_preserving(&rest, out)?;
        }
        Ok(())
    }

    /// `true` when some result has severity `error`.
    pub fn has_errors(&self) -> bool {
        self.results
            .iter()
            .any(|r| r.severity == crate::result::Severity::Error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_yaml_and_json_and_round_trips() {
        let yaml = "apiVersion: config.kubernetes.io/v1beta1\nkind: ResourceList\nitems:\n- kind: A # keep\n  metadata:\n    name: a\nfunctionConfig:\n  data:\n    x: '1'\n";
        let list = ResourceList::parse(yaml).unwrap();
        assert_eq!(list.items.len(), 1);
        let out = list.to_yaml().unwrap();
        assert_eq!(
            out,
            "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- kind: A # keep\n  metadata:\n    name: a\nfunctionConfig:\n  data:\n    x: '1'\n"
        );
        let json = r#"{"apiVersion":"config.kubernetes.io/v1","kind":"ResourceList","items":[{"kind":"B","metadata":{"name":"b"}}],"results":[{"message":"m","severity":"warning"}]}"#;
        let list = ResourceList::parse(json).unwrap();
        assert_eq!(list.items.len(), 1);
        assert_eq!(list.results[0].severity, crate::Severity::Warning);
        assert!(!list.has_errors());
    }

    #[test]
    fn rejects_what_is_not_a_resource_list() {
        for (text, want) in [
            ("", "empty input"),
            ("kind: ConfigMap\n", "expected kind ResourceList"),
            (
                "apiVersion: v9\nkind: ResourceList\n",
                "unsupported ResourceList apiVersion",
            ),
            (
                "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: 3\n",
                "must be a list",
            ),
            (
                "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: [1]\n",
                "items[0]",
            ),
            ("{{", "not valid YAML"),
        ] {
            let err = ResourceList::parse(text).unwrap_err();
            assert!(err.to_string().contains(want), "{text:?}: {err}");
        }
    }
}
