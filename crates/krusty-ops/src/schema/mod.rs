//! The OpenAPI facts a strategic merge needs: for each resource type, which
//! fields are lists merged element by element (and by which keys), and how
//! to reach them.
//!
//! The built-in Kubernetes schema is data (`kubernetes_v1_21_2.txt`, derived
//! by `tools/derive-merge-keys.py`); a kustomization's `openapi:` field can
//! replace it with a custom OpenAPI document, read by [`Schema::custom`].
//!
//! Kustomize keeps one schema for a whole build and adds each document it
//! reads to it, so whether the built-in definitions sit beside a custom
//! document, and which of the two wins where both define a type, depends on
//! what the build did before the document was chosen ([`KubernetesLayer`]).

use foldhash::HashMap;
use std::sync::OnceLock;

use krusty_yaml::Node;

use crate::error::{OpError, OpResult};

/// The built-in schema table: Kubernetes v1.21.2, as Kustomize v5.5.0 uses.
const KUBERNETES_TABLE: &str = include_str!("kubernetes_v1_21_2.txt");

/// The Kubernetes version of the built-in schema (`openapi: version:`).
pub const BUILTIN_VERSION: &str = "v1.21.2";

/// A line of a schema table that is not in the table format.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("schema table line {line}: {text:?}")]
pub struct TableError {
    /// The 1-based line number.
    pub line: usize,
    /// The line as written.
    pub text: String,
}

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

#[derive(Debug, Default, Clone)]
struct TypeDef {
    fields: HashMap<String, Shape>,
    /// The shape of fields not declared (`additionalProperties`).
    rest: Option<Shape>,
}

/// A set of types and the resource kinds rooted in them.
#[derive(Debug, Default, Clone)]
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
#[derive(Debug, Clone)]
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
    fn from_table(text: &str) -> Result<Schema, TableError> {
        let mut schema = Schema::default();
        schema.add_table(text)?;
        Ok(schema)
    }

    /// Adds the types and roots of a table; a type it defines replaces one
    /// of the same name.
    fn add_table(&mut self, text: &str) -> Result<(), TableError> {
        let schema = self;
        let mut current = None;
        for (n, line) in text.lines().enumerate() {
            let bad = || TableError {
                line: n + 1,
                text: line.to_string(),
            };
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
                let id = schema.type_id(name).0;
                schema.types[id] = TypeDef::default();
                current = Some(id);
            } else {
                return Err(bad());
            }
        }
        Ok(())
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

    /// The schema a custom OpenAPI document gives, with the built-in
    /// Kubernetes definitions placed as `kubernetes` says.
    pub fn custom(doc: &Node, kubernetes: KubernetesLayer) -> OpResult<Schema> {
        let mut schema = match kubernetes {
            KubernetesLayer::Below => Schema::kubernetes().clone(),
            KubernetesLayer::Absent | KubernetesLayer::Above => Schema::default(),
        };
        schema.add_openapi(doc)?;
        if kubernetes == KubernetesLayer::Above {
            schema
                .add_table(KUBERNETES_TABLE)
                .map_err(|e| OpError::new(e.to_string()))?;
        }
        Ok(schema)
    }

    /// Adds a custom OpenAPI (v2) document: its `definitions`, with
    /// `$ref`, `properties`, `items`, `additionalProperties`, the
    /// `x-kubernetes-patch-strategy`, `x-kubernetes-patch-merge-key` and
    /// `x-kubernetes-list-map-keys` extensions, and root kinds from
    /// `x-kubernetes-group-version-kind`; a definition replaces a type of
    /// the same name, a root one of the same group, version and kind.
    /// A null document adds nothing; a document or `definitions` that is
    /// not a mapping is an error.
    fn add_openapi(&mut self, doc: &Node) -> OpResult<()> {
        let schema = self;
        if doc.is_null() {
            return Ok(());
        }
        if doc.as_map().is_none() {
            return Err(OpError::new("an OpenAPI document must be a mapping"));
        }
        let defs = match doc.get("definitions") {
            None => return Ok(()),
            Some(d) if d.is_null() => return Ok(()),
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
        Ok(())
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

/// Where the built-in Kubernetes definitions stand beside a custom OpenAPI
/// document. Kustomize reads the built-in schema into its one schema the
/// first time a strategic merge needs it, or flags it to be read with the
/// next document once it was asked the scope of a type it knows without
/// the schema ([`scope_known_without_schema`]); a custom document chosen by
/// a base or component afterwards is added to what is there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KubernetesLayer {
    /// The custom document alone (the top kustomization's, or one chosen
    /// before the build needed the built-in schema).
    Absent,
    /// The built-in definitions were read first: the custom document's
    /// types and roots replace theirs.
    Below,
    /// The built-in definitions are read after the custom document and
    /// replace its types and roots of the same names.
    Above,
}

/// The resource types whose scope Kustomize knows without reading a schema
/// (kyaml's precomputed table, by `apiVersion` and `kind`). Asking the scope
/// of any other type, a custom resource's or a built-in kind's under
/// another version, flags the built-in schema to be read
/// ([`KubernetesLayer::Above`]).
const SCOPE_KNOWN: [(&str, &str); 82] = [
    (
        "admissionregistration.k8s.io/v1",
        "MutatingWebhookConfiguration",
    ),
    (
        "admissionregistration.k8s.io/v1",
        "ValidatingWebhookConfiguration",
    ),
    (
        "admissionregistration.k8s.io/v1beta1",
        "MutatingWebhookConfiguration",
    ),
    (
        "admissionregistration.k8s.io/v1beta1",
        "ValidatingWebhookConfiguration",
    ),
    ("apiextensions.k8s.io/v1", "CustomResourceDefinition"),
    ("apiextensions.k8s.io/v1beta1", "CustomResourceDefinition"),
    ("apiregistration.k8s.io/v1", "APIService"),
    ("apiregistration.k8s.io/v1beta1", "APIService"),
    ("apps/v1", "ControllerRevision"),
    ("apps/v1", "DaemonSet"),
    ("apps/v1", "Deployment"),
    ("apps/v1", "ReplicaSet"),
    ("apps/v1", "StatefulSet"),
    ("autoscaling/v1", "HorizontalPodAutoscaler"),
    ("autoscaling/v1", "Scale"),
    ("autoscaling/v2beta1", "HorizontalPodAutoscaler"),
    ("autoscaling/v2beta2", "HorizontalPodAutoscaler"),
    ("batch/v1", "CronJob"),
    ("batch/v1", "Job"),
    ("batch/v1beta1", "CronJob"),
    ("certificates.k8s.io/v1", "CertificateSigningRequest"),
    ("certificates.k8s.io/v1beta1", "CertificateSigningRequest"),
    ("coordination.k8s.io/v1", "Lease"),
    ("coordination.k8s.io/v1beta1", "Lease"),
    ("discovery.k8s.io/v1", "EndpointSlice"),
    ("discovery.k8s.io/v1beta1", "EndpointSlice"),
    ("events.k8s.io/v1", "Event"),
    ("events.k8s.io/v1beta1", "Event"),
    ("extensions/v1beta1", "Ingress"),
    ("flowcontrol.apiserver.k8s.io/v1beta1", "FlowSchema"),
    (
        "flowcontrol.apiserver.k8s.io/v1beta1",
        "PriorityLevelConfiguration",
    ),
    ("networking.k8s.io/v1", "Ingress"),
    ("networking.k8s.io/v1", "IngressClass"),
    ("networking.k8s.io/v1", "NetworkPolicy"),
    ("networking.k8s.io/v1beta1", "Ingress"),
    ("networking.k8s.io/v1beta1", "IngressClass"),
    ("node.k8s.io/v1", "RuntimeClass"),
    ("node.k8s.io/v1beta1", "RuntimeClass"),
    ("policy/v1", "PodDisruptionBudget"),
    ("policy/v1beta1", "PodDisruptionBudget"),
    ("policy/v1beta1", "PodSecurityPolicy"),
    ("rbac.authorization.k8s.io/v1", "ClusterRole"),
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"),
    ("rbac.authorization.k8s.io/v1", "Role"),
    ("rbac.authorization.k8s.io/v1", "RoleBinding"),
    ("rbac.authorization.k8s.io/v1beta1", "ClusterRole"),
    ("rbac.authorization.k8s.io/v1beta1", "ClusterRoleBinding"),
    ("rbac.authorization.k8s.io/v1beta1", "Role"),
    ("rbac.authorization.k8s.io/v1beta1", "RoleBinding"),
    ("scheduling.k8s.io/v1", "PriorityClass"),
    ("scheduling.k8s.io/v1beta1", "PriorityClass"),
    ("storage.k8s.io/v1", "CSIDriver"),
    ("storage.k8s.io/v1", "CSINode"),
    ("storage.k8s.io/v1", "StorageClass"),
    ("storage.k8s.io/v1", "VolumeAttachment"),
    ("storage.k8s.io/v1beta1", "CSIDriver"),
    ("storage.k8s.io/v1beta1", "CSINode"),
    ("storage.k8s.io/v1beta1", "CSIStorageCapacity"),
    ("storage.k8s.io/v1beta1", "StorageClass"),
    ("storage.k8s.io/v1beta1", "VolumeAttachment"),
    ("v1", "ComponentStatus"),
    ("v1", "ConfigMap"),
    ("v1", "Endpoints"),
    ("v1", "Event"),
    ("v1", "LimitRange"),
    ("v1", "Namespace"),
    ("v1", "Node"),
    ("v1", "NodeProxyOptions"),
    ("v1", "PersistentVolume"),
    ("v1", "PersistentVolumeClaim"),
    ("v1", "Pod"),
    ("v1", "PodAttachOptions"),
    ("v1", "PodExecOptions"),
    ("v1", "PodPortForwardOptions"),
    ("v1", "PodProxyOptions"),
    ("v1", "PodTemplate"),
    ("v1", "ReplicationController"),
    ("v1", "ResourceQuota"),
    ("v1", "Secret"),
    ("v1", "Service"),
    ("v1", "ServiceAccount"),
    ("v1", "ServiceProxyOptions"),
];

/// Whether Kustomize knows the scope of resources of this `apiVersion`
/// and `kind` without reading a schema (see [`KubernetesLayer`]).
pub fn scope_known_without_schema(api_version: &str, kind: &str) -> bool {
    SCOPE_KNOWN
        .binary_search_by(|&(v, k)| (v, k).cmp(&(api_version, kind)))
        .is_ok()
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
        let schema = Schema::custom(doc.root.as_ref().unwrap(), KubernetesLayer::Absent).unwrap();
        assert_eq!(
            merge_keys(&schema, ("example.com", "v1", "Widget"), &["spec", "parts"]),
            Some(vec!["id".to_string()])
        );
    }

    /// A custom document that gives `PodSpec` containers no patch strategy
    /// and roots a `Widget` kind in a `PodTemplateSpec` it does not define.
    fn pod_spec_override() -> Node {
        let doc = krusty_yaml::parse_stream(
            r##"
definitions:
  v1.Widget:
    x-kubernetes-group-version-kind: [{group: example.com, kind: Widget, version: v1}]
    properties:
      template: {$ref: "#/definitions/io.k8s.api.core.v1.PodTemplateSpec"}
  io.k8s.api.core.v1.PodSpec:
    properties:
      containers:
        type: array
        items: {$ref: "#/definitions/io.k8s.api.core.v1.Container"}
"##,
        )
        .unwrap();
        doc.into_iter().next().unwrap().root.unwrap()
    }

    #[test]
    fn kubernetes_layer_decides_which_definition_wins() {
        let widget = ("example.com", "v1", "Widget");
        let containers = ["template", "spec", "containers"];
        let deployment = ("apps", "v1", "Deployment");
        let deployment_containers = ["spec", "template", "spec", "containers"];
        let doc = pod_spec_override();

        let alone = Schema::custom(&doc, KubernetesLayer::Absent).unwrap();
        assert_eq!(merge_keys(&alone, widget, &containers), None);
        assert!(alone.root("apps", "v1", "Deployment").is_none());

        let below = Schema::custom(&doc, KubernetesLayer::Below).unwrap();
        assert_eq!(merge_keys(&below, widget, &containers), None);
        assert_eq!(merge_keys(&below, deployment, &deployment_containers), None);

        let above = Schema::custom(&doc, KubernetesLayer::Above).unwrap();
        let by_name = Some(vec!["name".to_string()]);
        assert_eq!(merge_keys(&above, widget, &containers), by_name);
        assert_eq!(
            merge_keys(&above, deployment, &deployment_containers),
            by_name
        );
    }

    #[test]
    fn scope_is_known_for_built_in_kinds_at_their_versions() {
        assert!(scope_known_without_schema("apps/v1", "Deployment"));
        assert!(scope_known_without_schema("v1", "ConfigMap"));
        assert!(!scope_known_without_schema("apps/v1beta1", "Deployment"));
        assert!(!scope_known_without_schema("example.com/v1", "Widget"));
        assert!(!scope_known_without_schema("", "Deployment"));
    }
}
