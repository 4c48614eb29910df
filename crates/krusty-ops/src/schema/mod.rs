//! The OpenAPI facts a strategic merge needs: for each resource type, which
//! fields are lists merged element by element (and by which keys), and how
//! to reach them.
//!
//! The built-in Kubernetes schema is data (`kubernetes_v1_21_2.txt`, derived
//! by `tools/derive-merge-keys.py`); a kustomization's `openapi:` field can
//! replace it with a custom OpenAPI document, read by [`Schema::from_openapi`].

use foldhash::HashMap;
use std::sync::OnceLock;

use krusty_yaml::Node;

use crate::error::{OpError, OpResult};

/// The built-in schema table: Kubernetes v1.21.2, as Kustomize v5.5.0 uses.
const KUBERNETES_TABLE: &str = include_str!("kubernetes_v1_21_2.txt");

/// The Kubernetes version of the built-in schema (`openapi: version:`).
pub const BUILTIN_VERSION: &str = "v1.21.2";

/// How the value of one field is shaped, as far as merging cares.
#[derive(Debug, Clone, PartialEq)]
pub enum Shape {
    /// An object of a named type.
    Type(TypeId),
    /// A list of items.
    List {
        /// The items' shape.
        item: Box<Shape>,
        /// `Some(keys)` when the list is merged element by element (its patch
        /// strategy includes `merge`); empty keys mean a list of scalars
        /// merged by value.
        merge_keys: Option<Vec<String>>,
    },
    /// A map whose values all have one shape.
    Map(Box<Shape>),
    /// Anything else (scalars, free-form objects).
    Leaf,
}

/// Index of a type in a [`Schema`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TypeId(usize);

#[derive(Debug, Default)]
struct TypeDef {
    fields: HashMap<String, Shape>,
    /// The shape of fields not declared (`additionalProperties`).
    rest: Option<Shape>,
}

/// A set of types and the resource kinds rooted in them.
#[derive(Debug, Default)]
pub struct Schema {
    types: Vec<TypeDef>,
    names: HashMap<String, TypeId>,
    /// Root shapes by kind, then group and version (looked up without
    /// building a key).
    roots: HashMap<String, Vec<Root>>,
    /// Why a custom document cannot serve: Kustomize reads it only when a
    /// strategic merge first needs it, and fails then.
    problem: Option<String>,
}

/// A resource type's root: its group and version, and its shape.
#[derive(Debug)]
struct Root {
    group: String,
    version: String,
    shape: Shape,
}

impl Schema {
    /// The built-in Kubernetes schema (parsed once).
    pub fn kubernetes() -> &'static Schema {
        static SCHEMA: OnceLock<Schema> = OnceLock::new();
        SCHEMA.get_or_init(|| {
            Schema::from_table(KUBERNETES_TABLE).expect("the built-in schema table is well-formed")
        })
    }

    /// A schema that fails every strategic merge with `problem` (a custom
    /// document that could not be read).
    pub fn unusable(problem: String) -> Schema {
        Schema {
            problem: Some(problem),
            ..Schema::default()
        }
    }

    /// Why this schema cannot serve a strategic merge, if it cannot.
    pub fn problem(&self) -> Option<&str> {
        self.problem.as_deref()
    }

    /// The root shape of resources of this group, version and kind.
    pub fn root(&self, group: &str, version: &str, kind: &str) -> Option<&Shape> {
        self.roots
            .get(kind)?
            .iter()
            .find(|r| r.group == group && r.version == version)
            .map(|r| &r.shape)
    }

    /// The shape of field `name` inside a value of shape `shape`.
    pub fn field<'a>(&'a self, shape: &'a Shape, name: &str) -> Option<&'a Shape> {
        match shape {
            Shape::Type(id) => {
                let def = &self.types[id.0];
                def.fields.get(name).or(def.rest.as_ref())
            }
            Shape::Map(value) => Some(value),
            _ => None,
        }
    }

    /// Declares `group/version, kind` a root of type `id` (a later
    /// declaration of the same root wins).
    fn add_root(&mut self, group: &str, version: &str, kind: &str, id: TypeId) {
        let roots = self.roots.entry(kind.to_string()).or_default();
        roots.retain(|r| r.group != group || r.version != version);
        roots.push(Root {
            group: group.to_string(),
            version: version.to_string(),
            shape: Shape::Type(id),
        });
    }

    fn type_id(&mut self, name: &str) -> TypeId {
        if let Some(&id) = self.names.get(name) {
            return id;
        }
        let id = TypeId(self.types.len());
        self.types.push(TypeDef::default());
        self.names.insert(name.to_string(), id);
        id
    }

    /// Reads krusty's table format (see the table's header).
    fn from_table(text: &str) -> Result<Schema, String> {
        let mut schema = Schema::default();
        let mut current = None;
        for (n, line) in text.lines().enumerate() {
            let bad = || format!("schema table line {}: {line:?}", n + 1);
            if line.starts_with('#') || line.trim().is_empty() {
                continue;
            }
            let words: Vec<&str> = line.split_whitespace().collect();
            if line.starts_with("  ") {
                let id: usize = current.ok_or_else(bad)?;
                let (field, shape) = words.split_first().ok_or_else(bad)?;
                let shape = schema.table_shape(shape).ok_or_else(bad)?;
                schema.types[id].fields.insert(field.to_string(), shape);
            } else if let ["gvk", group, version, kind, ty] = words[..] {
                let group = if group == "-" { "" } else { group };
                let id = schema.type_id(ty);
                schema.add_root(group, version, kind, id);
            } else if let ["type", name] = words[..] {
                current = Some(schema.type_id(name).0);
            } else {
                return Err(bad());
            }
        }
        Ok(schema)
    }

    /// A shape in table form: `NAME`, `leaf`, `[]SHAPE [merge [KEYS]]`, `{}SHAPE`.
    fn table_shape(&mut self, words: &[&str]) -> Option<Shape> {
        let (first, rest) = words.split_first()?;
        if let Some(item) = first.strip_prefix("[]") {
            let merge_keys = match rest {
                [] => None,
                ["merge"] => Some(Vec::new()),
                ["merge", keys] => Some(keys.split(',').map(String::from).collect()),
                _ => return None,
            };
            let item = Box::new(self.table_shape(&[item])?);
            return Some(Shape::List { item, merge_keys });
        }
        if !rest.is_empty() {
            return None;
        }
        Some(if let Some(value) = first.strip_prefix("{}") {
            Shape::Map(Box::new(self.table_shape(&[value])?))
        } else if *first == "leaf" {
            Shape::Leaf
        } else {
            Shape::Type(self.type_id(first))
        })
    }

    /// Reads a custom OpenAPI (v2) document: its `definitions`, with
    /// `$ref`, `properties`, `items`, `additionalProperties`, the
    /// `x-kubernetes-patch-strategy`, `x-kubernetes-patch-merge-key` and
    /// `x-kubernetes-list-map-keys` extensions, and root kinds from
    /// `x-kubernetes-group-version-kind`.
    /// A null document is an empty schema; a document or `definitions`
    /// that is not a mapping is an error.
    pub fn from_openapi(doc: &Node) -> OpResult<Schema> {
        let mut schema = Schema::default();
        if doc.is_null() {
            return Ok(schema);
        }
        if doc.as_map().is_none() {
            return Err(OpError::new("an OpenAPI document must be a mapping"));
        }
        let defs = match doc.get("definitions") {
            None => return Ok(schema),
            Some(d) if d.is_null() => return Ok(schema),
            Some(d) => d
                .as_map()
                .ok_or_else(|| OpError::new("OpenAPI 'definitions' must be a mapping"))?,
        };
        for (name, def) in defs {
            let name = name.key_str().unwrap_or_default();
            let id = schema.type_id(name);
            schema.fill_type(id, def)?;
            if let Some(gvks) = def.get("x-kubernetes-group-version-kind") {
                for gvk in gvks.as_seq().into_iter().flatten() {
                    let part = |k| gvk.get(k).and_then(Node::as_str).unwrap_or("");
                    schema.add_root(part("group"), part("version"), part("kind"), id);
                }
            }
        }
        Ok(schema)
    }

    fn fill_type(&mut self, id: TypeId, def: &Node) -> OpResult<()> {
        let mut fields = HashMap::default();
        for (key, value) in def
            .get("properties")
            .and_then(Node::as_map)
            .into_iter()
            .flatten()
        {
            let shape = self.openapi_shape(value)?;
            fields.insert(key.key_str().unwrap_or_default().to_string(), shape);
        }
        let rest = match def.get("additionalProperties") {
            Some(ap) if ap.as_map().is_some() => Some(self.openapi_shape(ap)?),
            _ => None,
        };
        self.types[id.0] = TypeDef { fields, rest };
        Ok(())
    }

    fn openapi_shape(&mut self, node: &Node) -> OpResult<Shape> {
        if let Some(reference) = node.get("$ref").and_then(Node::as_str) {
            let name = reference.rsplit('/').next().unwrap_or(reference);
            return Ok(Shape::Type(self.type_id(name)));
        }
        if let Some(items) = node.get("items") {
            let item = Box::new(self.openapi_shape(items)?);
            return Ok(Shape::List {
                item,
                merge_keys: openapi_merge_keys(node),
            });
        }
        if node.get("properties").is_some() {
            let id = TypeId(self.types.len());
            self.types.push(TypeDef::default());
            self.fill_type(id, node)?;
            return Ok(Shape::Type(id));
        }
        match node.get("additionalProperties") {
            Some(ap) if ap.as_map().is_some() => Ok(Shape::Map(Box::new(self.openapi_shape(ap)?))),
            _ if node.as_map().is_none() => Err(OpError::new(
                "an OpenAPI schema must be a mapping".to_string(),
            )),
            _ => Ok(Shape::Leaf),
        }
    }
}

/// The merge keys of a list schema: `Some` when its patch strategy includes
/// `merge` (keys from `x-kubernetes-list-map-keys`, else the patch merge key).
fn openapi_merge_keys(node: &Node) -> Option<Vec<String>> {
    let strategy = node.get("x-kubernetes-patch-strategy")?.as_str()?;
    if !strategy.split(',').any(|s| s == "merge") {
        return None;
    }
    if let Some(keys) = node
        .get("x-kubernetes-list-map-keys")
        .and_then(Node::as_seq)
    {
        return Some(
            keys.iter()
                .filter_map(Node::as_str)
                .map(String::from)
                .collect(),
        );
    }
    Some(
        node.get("x-kubernetes-patch-merge-key")
            .and_then(Node::as_str)
            .map(|k| vec![k.to_string()])
            .unwrap_or_default(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The merge keys of the list at `path` (lists on the way are entered).
    fn merge_keys(schema: &Schema, root: (&str, &str, &str), path: &[&str]) -> Option<Vec<String>> {
        let mut shape = schema.root(root.0, root.1, root.2)?;
        for (i, part) in path.iter().enumerate() {
            shape = schema.field(shape, part)?;
            if i + 1 < path.len() {
                if let Shape::List { item, .. } = shape {
                    shape = item;
                }
            }
        }
        match shape {
            Shape::List { merge_keys, .. } => merge_keys.clone(),
            _ => None,
        }
    }

    #[test]
    fn builtin_table_knows_pod_template_lists() {
        let k8s = Schema::kubernetes();
        let containers = ["spec", "template", "spec", "containers"];
        assert_eq!(
            merge_keys(k8s, ("apps", "v1", "Deployment"), &containers),
            Some(vec!["name".to_string()])
        );
        let ports = ["spec", "template", "spec", "containers", "ports"];
        assert_eq!(
            merge_keys(k8s, ("apps", "v1", "StatefulSet"), &ports),
            Some(vec!["containerPort".to_string(), "protocol".to_string()])
        );
        assert_eq!(
            merge_keys(k8s, ("", "v1", "Service"), &["spec", "ports"]),
            Some(vec!["port".to_string(), "protocol".to_string()])
        );
        // Finalizers merge by value; args are replaced.
        assert_eq!(
            merge_keys(k8s, ("", "v1", "Pod"), &["metadata", "finalizers"]),
            Some(vec![])
        );
        assert_eq!(
            merge_keys(k8s, ("", "v1", "Pod"), &["spec", "containers", "args"]),
            None
        );
        assert!(k8s.root("example.com", "v1", "Widget").is_none());
    }

    #[test]
    fn custom_openapi_documents_give_merge_keys() {
        let doc = &krusty_yaml::parse_stream(
            r##"
definitions:
  v1.Widget:
    x-kubernetes-group-version-kind: [{group: example.com, kind: Widget, version: v1}]
    properties:
      spec:
        properties:
          parts:
            type: array
            items: {$ref: "#/definitions/v1.Part"}
            x-kubernetes-patch-strategy: merge
            x-kubernetes-patch-merge-key: id
  v1.Part:
    properties:
      id: {type: string}
"##,
        )
        .unwrap()[0];
        let schema = Schema::from_openapi(doc.root.as_ref().unwrap()).unwrap();
        assert_eq!(
            merge_keys(&schema, ("example.com", "v1", "Widget"), &["spec", "parts"]),
            Some(vec!["id".to_string()])
        );
    }
}
