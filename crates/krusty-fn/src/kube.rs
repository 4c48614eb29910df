//! A typed view of resources: [`KubeObject`], implemented for [`Node`],
//! so every item of a [`ResourceList`](crate::ResourceList), and every
//! part of one (a sub-object), reads and edits the same way.
//!
//! ```
//! use krusty_fn::{KubeObject, Node};
//!
//! # fn main() -> Result<(), krusty_fn::FnError> {
//! let mut item = krusty_fn::parse_object(
//!     "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web # the front end\n\
//!      spec:\n  template:\n    spec:\n      containers:\n      - name: app\n        image: nginx\n",
//! )?;
//! assert_eq!(item.name(), "web");
//! let image: Option<String> = item.field("spec.template.spec.containers[name=app].image")?;
//! assert_eq!(image.as_deref(), Some("nginx"));
//! item.set_field("spec.replicas", &3)?;
//! item.set_label("team", "web");
//! let pod = item.at_mut("spec.template.spec")?.expect("a pod spec");
//! pod.set_field("containers[name=app].image", "nginx:1.27")?;
//! assert!(krusty_fn::to_yaml(&item)?.contains("name: web # the front end"));
//! # Ok(())
//! # }
//! ```

use std::collections::BTreeMap;

use krusty_yaml::Node;
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::config::from_node;
use crate::path::{Path, Step};
use crate::run::FnError;
use crate::to_node::{assign, to_node};

/// The annotation that keeps a resource out of the output.
pub const LOCAL_CONFIG: &str = "config.kubernetes.io/local-config";

/// Reading and editing a resource (or any part of one) by path. Paths
/// are written as in [`crate::path`]: `spec.containers[name=app].image`.
/// Edits keep the rest of the node: key order, comments and styles.
pub trait KubeObject {
    /// `apiVersion`, or `""`.
    fn api_version(&self) -> &str;
    /// `kind`, or `""`.
    fn kind(&self) -> &str;
    /// `metadata.name`, or `""`.
    fn name(&self) -> &str;
    /// `metadata.namespace`, or `""`.
    fn namespace(&self) -> &str;
    /// The group of `apiVersion` (`""` for the core group).
    fn group(&self) -> &str;
    /// The version of `apiVersion`.
    fn version(&self) -> &str;
    /// Sets `apiVersion`.
    fn set_api_version(&mut self, value: &str);
    /// Sets `kind`.
    fn set_kind(&mut self, value: &str);
    /// Sets `metadata.name`.
    fn set_name(&mut self, value: &str);
    /// Sets `metadata.namespace`.
    fn set_namespace(&mut self, value: &str);
    /// Label `key`.
    fn label(&self, key: &str) -> Option<&str>;
    /// All labels.
    fn labels(&self) -> BTreeMap<String, String>;
    /// Sets label `key`.
    fn set_label(&mut self, key: &str, value: &str);
    /// Removes label `key` (and `labels` when it becomes empty).
    fn remove_label(&mut self, key: &str) -> Option<String>;
    /// Annotation `key`.
    fn annotation(&self, key: &str) -> Option<&str>;
    /// All annotations.
    fn annotations(&self) -> BTreeMap<String, String>;
    /// Sets annotation `key`.
    fn set_annotation(&mut self, key: &str, value: &str);
    /// Removes annotation `key` (and `annotations` when it becomes empty).
    fn remove_annotation(&mut self, key: &str) -> Option<String>;
    /// `true` when the resource is marked `config.kubernetes.io/local-config: "true"`.
    fn is_local_config(&self) -> bool;

    /// The node at `path`, if it exists.
    fn at(&self, path: &str) -> Result<Option<&Node>, FnError>;
    /// The node at `path`, mutably, if it exists: a sub-object with the
    /// same methods.
    fn at_mut(&mut self, path: &str) -> Result<Option<&mut Node>, FnError>;
    /// The node at `path`, created (null) with what leads to it when
    /// missing.
    fn ensure(&mut self, path: &str) -> Result<&mut Node, FnError>;
    /// The value at `path` read into `T` (`String`, `i64`, `bool`,
    /// `Vec<_>`, a map, your own struct…); `None` when it is missing or
    /// null. A value of the wrong type is an error naming the path.
    fn field<T: DeserializeOwned>(&self, path: &str) -> Result<Option<T>, FnError>;
    /// The text of the scalar at `path`; `None` when missing or not a scalar.
    fn field_str(&self, path: &str) -> Result<Option<&str>, FnError>;
    /// Sets the value at `path` to any `Serialize` value (a string, a
    /// number, a struct, a [`Node`]…), creating what leads to it. An
    /// existing value is updated in place: what does not change keeps its
    /// comments, order and style.
    fn set_field<T: Serialize + ?Sized>(&mut self, path: &str, value: &T) -> Result<(), FnError>;
    /// Sets the node at `path` as it is (its own comments and styles).
    fn set_field_node(&mut self, path: &str, value: Node) -> Result<(), FnError>;
    /// Removes the value at `path`, returning it.
    fn remove_field(&mut self, path: &str) -> Result<Option<Node>, FnError>;
    /// The comment after the value at `path` on its line (without `#`).
    fn line_comment(&self, path: &str) -> Result<Option<&str>, FnError>;
    /// Sets (or, with `""`, removes) the line comment of the value at
    /// `path`; `false` when there is no value there.
    fn set_line_comment(&mut self, path: &str, text: &str) -> Result<bool, FnError>;
    /// The comment lines above the field at `path` (joined by newlines).
    fn head_comment(&self, path: &str) -> Result<Option<String>, FnError>;
    /// Sets (or, with `""`, removes) the comment lines above the field at
    /// `path`; `false` when there is no field there.
    fn set_head_comment(&mut self, path: &str, text: &str) -> Result<bool, FnError>;
    /// The whole node read into `T`.
    fn as_typed<T: DeserializeOwned>(&self) -> Result<T, FnError>;
    /// Reads the node into `T`, lets `f` change it, and writes it back in
    /// place as [`KubeObject::set_field`] does.
    fn update<T, F>(&mut self, f: F) -> Result<(), FnError>
    where
        T: Serialize + DeserializeOwned,
        F: FnOnce(&mut T);
}

fn parse_path(path: &str) -> Result<Path, FnError> {
    Path::parse(path).map_err(FnError::from)
}

fn scalar<'a>(node: &'a Node, path: &[&str]) -> &'a str {
    node.get_path(path).and_then(Node::as_str).unwrap_or("")
}

fn string_map(node: &Node, key: &str) -> BTreeMap<String, String> {
    let entries = node.get_path(&["metadata", key]).and_then(Node::as_map);
    entries
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| Some((k.key_str()?.to_string(), v.as_str()?.to_string())))
        .collect()
}

fn set_meta(node: &mut Node, key: &str, field: &str, value: &str) {
    if node.is_null() {
        *node = Node::map();
    }
    if let Some(map) = node.entry_map("metadata").and_then(|m| m.entry_map(key)) {
        map.set(field, Node::string(value));
    }
}

fn remove_meta(node: &mut Node, key: &str, field: &str) -> Option<String> {
    let meta = node.get_mut("metadata")?;
    let map = meta.get_mut(key)?;
    let removed = map.remove(field)?;
    if map.as_map().is_some_and(|m| m.is_empty()) {
        meta.remove(key);
    }
    Some(removed.as_str().unwrap_or_default().to_string())
}

/// The node holding the head comment of the field at `path`: the key
/// of a mapping entry, else the node itself.
fn comment_holder<'a>(node: &'a Node, path: &Path) -> Option<&'a Node> {
    let Some((Step::Key(key), parents)) = path.steps.split_last() else {
        return path.lookup(node);
    };
    let parent = Path {
        steps: parents.to_vec(),
    }
    .lookup(node)?;
    parent
        .as_map()?
        .iter()
        .find(|(k, _)| k.key_str() == Some(key))
        .map(|(k, _)| k)
}

fn comment_holder_mut<'a>(node: &'a mut Node, path: &Path) -> Option<&'a mut Node> {
    let Some((Step::Key(key), parents)) = path.steps.split_last() else {
        return path.lookup_mut(node);
    };
    let parent = Path {
        steps: parents.to_vec(),
    }
    .lookup_mut(node)?;
    parent
        .as_map_mut()?
        .iter_mut()
        .find(|(k, _)| k.key_str() == Some(key.as_str()))
        .map(|(k, _)| k)
}

impl KubeObject for Node {
    fn api_version(&self) -> &str {
        scalar(self, &["apiVersion"])
    }
    fn kind(&self) -> &str {
        scalar(self, &["kind"])
    }
    fn name(&self) -> &str {
        scalar(self, &["metadata", "name"])
    }
    fn namespace(&self) -> &str {
        scalar(self, &["metadata", "namespace"])
    }
    fn group(&self) -> &str {
        self.api_version().rsplit_once('/').map_or("", |(g, _)| g)
    }
    fn version(&self) -> &str {
        let v = self.api_version();
        v.rsplit_once('/').map_or(v, |(_, v)| v)
    }
    fn set_api_version(&mut self, value: &str) {
        self.set("apiVersion", Node::string(value));
    }
    fn set_kind(&mut self, value: &str) {
        self.set("kind", Node::string(value));
    }
    fn set_name(&mut self, value: &str) {
        if let Some(m) = self.entry_map("metadata") {
            m.set("name", Node::string(value));
        }
    }
    fn set_namespace(&mut self, value: &str) {
        if let Some(m) = self.entry_map("metadata") {
            m.set("namespace", Node::string(value));
        }
    }
    fn label(&self, key: &str) -> Option<&str> {
        self.get_path(&["metadata", "labels", key])
            .and_then(Node::as_str)
    }
    fn labels(&self) -> BTreeMap<String, String> {
        string_map(self, "labels")
    }
    fn set_label(&mut self, key: &str, value: &str) {
        set_meta(self, "labels", key, value);
    }
    fn remove_label(&mut self, key: &str) -> Option<String> {
        remove_meta(self, "labels", key)
    }
    fn annotation(&self, key: &str) -> Option<&str> {
        self.get_path(&["metadata", "annotations", key])
            .and_then(Node::as_str)
    }
    fn annotations(&self) -> BTreeMap<String, String> {
        string_map(self, "annotations")
    }
    fn set_annotation(&mut self, key: &str, value: &str) {
        set_meta(self, "annotations", key, value);
    }
    fn remove_annotation(&mut self, key: &str) -> Option<String> {
        remove_meta(self, "annotations", key)
    }
    fn is_local_config(&self) -> bool {
        self.annotation(LOCAL_CONFIG) == Some("true")
    }

    fn at(&self, path: &str) -> Result<Option<&Node>, FnError> {
        Ok(parse_path(path)?.lookup(self))
    }
    fn at_mut(&mut self, path: &str) -> Result<Option<&mut Node>, FnError> {
        Ok(parse_path(path)?.lookup_mut(self))
    }
    fn ensure(&mut self, path: &str) -> Result<&mut Node, FnError> {
        parse_path(path)?.create(self).map_err(FnError::from)
    }
    fn field<T: DeserializeOwned>(&self, path: &str) -> Result<Option<T>, FnError> {
        match self.at(path)? {
            None => Ok(None),
            Some(n) if n.is_null() => Ok(None),
            Some(n) => from_node(n)
                .map(Some)
                .map_err(|e| FnError::Message(e.under(path).to_string())),
        }
    }
    fn field_str(&self, path: &str) -> Result<Option<&str>, FnError> {
        Ok(self.at(path)?.and_then(Node::as_str))
    }
    fn set_field<T: Serialize + ?Sized>(&mut self, path: &str, value: &T) -> Result<(), FnError> {
        let node = to_node(value).map_err(|e| FnError::Message(format!("{path}: {e}")))?;
        assign(self.ensure(path)?, node);
        Ok(())
    }
    fn set_field_node(&mut self, path: &str, value: Node) -> Result<(), FnError> {
        *self.ensure(path)? = value;
        Ok(())
    }
    fn remove_field(&mut self, path: &str) -> Result<Option<Node>, FnError> {
        Ok(parse_path(path)?.remove(self))
    }
    fn line_comment(&self, path: &str) -> Result<Option<&str>, FnError> {
        let node = self.at(path)?;
        let line = node.and_then(|n| n.extras.as_ref()?.line.as_deref());
        Ok(line.map(str::trim_start))
    }
    fn set_line_comment(&mut self, path: &str, text: &str) -> Result<bool, FnError> {
        let Some(node) = self.at_mut(path)? else {
            return Ok(false);
        };
        let extras = node.extras.get_or_insert_with(Default::default);
        extras.line = (!text.is_empty()).then(|| format!(" {text}"));
        Ok(true)
    }
    fn head_comment(&self, path: &str) -> Result<Option<String>, FnError> {
        let node = comment_holder(self, &parse_path(path)?);
        let head = node.and_then(|n| Some(&n.extras.as_ref()?.head));
        Ok(head.filter(|h| !h.is_empty()).map(|h| {
            h.iter()
                .map(|l| l.trim_start())
                .collect::<Vec<_>>()
                .join("\n")
        }))
    }
    fn set_head_comment(&mut self, path: &str, text: &str) -> Result<bool, FnError> {
        let Some(node) = comment_holder_mut(self, &parse_path(path)?) else {
            return Ok(false);
        };
        let extras = node.extras.get_or_insert_with(Default::default);
        extras.head = text
            .lines()
            .filter(|_| !text.is_empty())
            .map(|l| format!(" {l}"))
            .collect();
        Ok(true)
    }
    fn as_typed<T: DeserializeOwned>(&self) -> Result<T, FnError> {
        from_node(self).map_err(|e| FnError::Message(e.to_string()))
    }
    fn update<T, F>(&mut self, f: F) -> Result<(), FnError>
    where
        T: Serialize + DeserializeOwned,
        F: FnOnce(&mut T),
    {
        let mut typed: T = self.as_typed()?;
        f(&mut typed);
        let node = to_node(&typed).map_err(|e| FnError::Message(e.to_string()))?;
        assign(self, node);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    const DEPLOY: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web # the front end\n  labels:\n    app: web\nspec:\n  replicas: 1 # one\n  template:\n    spec:\n      containers:\n      - name: app\n        image: nginx\n";

    #[derive(Serialize, Deserialize)]
    struct Container {
        name: String,
        image: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        args: Vec<String>,
    }

    #[test]
    fn reads_and_edits_by_path_keeping_comments() {
        let mut d = crate::parse_object(DEPLOY).unwrap();
        assert_eq!(
            (d.group(), d.version(), d.kind(), d.name()),
            ("apps", "v1", "Deployment", "web")
        );
        assert_eq!(d.field::<i64>("spec.replicas").unwrap(), Some(1));
        assert!(d.field::<bool>("spec.replicas").is_err());
        assert_eq!(
            d.field_str("spec.template.spec.containers[0].name")
                .unwrap(),
            Some("app")
        );
        d.set_field("spec.replicas", &3).unwrap();
        d.set_field(
            "spec.template.spec.containers[name=side]",
            &Container {
                name: "side".into(),
                image: "busybox".into(),
                args: vec!["sleep".into()],
            },
        )
        .unwrap();
        d.update::<Container, _>(|_| ()).unwrap_err();
        let c = d
            .at_mut("spec.template.spec.containers[name=app]")
            .unwrap()
            .unwrap();
        c.update(|c: &mut Container| c.image = "nginx:1.27".into())
            .unwrap();
        d.set_label("team", "web");
        d.set_annotation("a", "1");
        assert_eq!(d.remove_annotation("a").as_deref(), Some("1"));
        assert_eq!(d.labels().len(), 2);
        assert_eq!(
            crate::to_yaml(&d).unwrap(),
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web # the front end\n  labels:\n    app: web\n    team: web\nspec:\n  replicas: 3 # one\n  template:\n    spec:\n      containers:\n      - name: app\n        image: nginx:1.27\n      - name: side\n        image: busybox\n        args:\n        - sleep\n"
        );
        assert!(d.set_field("metadata.name.x", &1).is_err());
        assert_eq!(
            d.line_comment("metadata.name").unwrap(),
            Some("the front end")
        );
        assert!(d.set_line_comment("spec.replicas", "three").unwrap());
        assert!(d
            .set_head_comment("spec.template", "the pods\nof web")
            .unwrap());
        assert_eq!(
            d.head_comment("spec.template").unwrap().as_deref(),
            Some("the pods\nof web")
        );
        assert!(!d.set_head_comment("spec.nothing", "x").unwrap());
        let out = crate::to_yaml(&d).unwrap();
        assert!(
            out.contains("  replicas: 3 # three\n  # the pods\n  # of web\n  template:\n"),
            "{out}"
        );
        assert!(d.at("spec[").is_err());
    }
}
