//! Patching items: [`strategic_merge`] applies a patch the way a
//! Kubernetes strategic merge patch does for the fields functions patch
//! most (pod specs), keeping comments and order of what stays;
//! [`strategic_merge_with`] also knows the merge keys a [`MergeSchema`]
//! gives custom resources (from their CustomResourceDefinitions or an
//! OpenAPI document), as Kustomize does with `openapi: path:`.
//!
//! The rules of [`strategic_merge`]:
//!
//! - mappings merge key by key; a `null` value removes the key;
//!   `$patch: replace` in a patch mapping replaces the target mapping;
//! - lists of objects with a merge key merge item by item: `containers`,
//!   `initContainers`, `ephemeralContainers`, `volumes`, `env`,
//!   `imagePullSecrets` and `resourceClaims` by `name`; `volumeMounts` by
//!   `mountPath`; `volumeDevices` by `devicePath`; `hostAliases` by `ip`;
//!   `ports` by `containerPort` (container ports) or `port` (Service ports).
//!   A patch item with `$patch: delete` removes the matching item; new
//!   items are appended;
//! - every other list, and every scalar, is replaced.
//!
//! This is not Kubernetes' whole schema (it does not know `$setElementOrder`,
//! `$retainKeys` or other types' merge keys): for those, give a
//! [`MergeSchema`] or edit with [`crate::KubeObject`].
//!
//! The rules of [`strategic_merge_with`] for a kind its schema knows are
//! those of Kustomize v5.5.0 (kyaml's merge) with that schema:
//!
//! - a list is merged item by item only where its schema's
//!   `x-kubernetes-patch-strategy` includes `merge`; its keys are
//!   `x-kubernetes-list-map-keys` when given, else
//!   `x-kubernetes-patch-merge-key`, else none (a list of scalars merged
//!   by value, as a set). `x-kubernetes-list-type: map` without a patch
//!   strategy, a strategy of `replace`, no strategy, and every list the
//!   schema does not describe are replaced;
//! - order, one key: the patch's items first, in the patch's order (merged
//!   into the target's item with the same key, or new), then the target's
//!   other items in their order; several keys: the new items first, then
//!   the target's items in their order, matched ones merged in place;
//!   by value: the patch's values, then the target's others;
//! - a patch item lacking its key is dropped, and of patch items with the
//!   same key the first counts; `$patch: delete` removes the matching
//!   item; a `- $patch: replace` item makes the patch's other items the
//!   list (`- $patch: delete`: the list goes); a matched item's own
//!   `$patch: replace` leaves that item as it was, as Kustomize does
//!   (`$patch: replace` on a mapping field replaces it); `[]` leaves a
//!   merged list as it is;
//! - mappings merge key by key, `null` removing a key and `$patch: delete`
//!   a whole field; in content the target lacks, directives are dropped
//!   and nulls add nothing (directives in a replaced list are dropped too);
//! - `$patch: delete` or `replace` at the top of the patch leaves the item
//!   as it is (Kustomize ignores `replace` there, and deletes the resource
//!   for `delete`, which is the caller's to do).

use std::collections::HashMap;

use krusty_yaml::{Node, ThinVec, Value};

use crate::run::FnError;
use crate::to_node::assign;

/// The merge key of the list under `field`, given a patch item.
fn merge_key(field: &str, sample: &Node) -> Option<&'static str> {
    match field {
        "containers"
        | "initContainers"
        | "ephemeralContainers"
        | "volumes"
        | "env"
        | "imagePullSecrets"
        | "resourceClaims" => Some("name"),
        "volumeMounts" => Some("mountPath"),
        "volumeDevices" => Some("devicePath"),
        "hostAliases" => Some("ip"),
        "ports" if sample.get("containerPort").is_some() => Some("containerPort"),
        "ports" => Some("port"),
        _ => None,
    }
}

/// The directive of a patch mapping (`$patch: delete|replace|merge`).
fn directive(patch: &Node) -> Option<&str> {
    patch.get("$patch").and_then(Node::as_str)
}

/// Applies `patch` to `target` (see the module's documentation).
pub fn strategic_merge(target: &mut Node, mut patch: Node) {
    if directive(&patch) == Some("replace") {
        patch.remove("$patch");
        *target = patch;
        return;
    }
    if patch.as_map().is_none() || target.as_map().is_none() {
        strip_directives(&mut patch);
        assign(target, patch);
        return;
    }
    let Value::Map(entries) = &mut patch.value else {
        return;
    };
    for (key, value) in std::mem::take(entries) {
        let Some(name) = key.key_str().map(str::to_string) else {
            continue;
        };
        if name == "$patch" {
            continue;
        }
        if value.is_null() {
            target.remove(&name);
            continue;
        }
        match target.get_mut(&name) {
            None => {
                let mut value = value;
                strip_directives(&mut value);
                target.set(&name, value);
            }
            Some(slot) => merge_field(&name, slot, value),
        }
    }
}

/// Merges the patch value of field `name` into `slot`.
fn merge_field(name: &str, slot: &mut Node, value: Node) {
    let key = value
        .as_seq()
        .and_then(|items| items.first())
        .and_then(|first| merge_key(name, first));
    match (key, &mut slot.value, value.value) {
        (Some(key), Value::Seq(items), Value::Seq(patch_items)) => {
            for p in patch_items {
                merge_item(items, key, p);
            }
        }
        (_, _, v) => {
            let mut v = Node::new(v);
            if slot.as_map().is_some() && v.as_map().is_some() {
                strategic_merge(slot, v);
            } else {
                strip_directives(&mut v);
                assign(slot, v);
            }
        }
    }
}

/// Merges one patch item into a keyed list.
fn merge_item(items: &mut krusty_yaml::ThinVec<Node>, key: &str, mut p: Node) {
    let id = p.get(key).and_then(Node::as_str).map(str::to_string);
    let found = id.as_deref().and_then(|id| {
        items
            .iter()
            .position(|i| i.get(key).and_then(Node::as_str) == Some(id))
    });
    match (found, directive(&p)) {
        (Some(i), Some("delete")) => {
            items.remove(i);
        }
        (None, Some("delete")) => {}
        (Some(i), _) => strategic_merge(&mut items[i], p),
        (None, _) => {
            strip_directives(&mut p);
            items.push(p);
        }
    }
}

/// Removes `$patch` directives from a value added as it is.
fn strip_directives(node: &mut Node) {
    match &mut node.value {
        Value::Map(entries) => {
            entries.retain(|(k, _)| k.key_str() != Some("$patch"));
            for (_, v) in entries.iter_mut() {
                strip_directives(v);
            }
        }
        Value::Seq(items) => items.iter_mut().for_each(strip_directives),
        Value::Scalar(_) => {}
    }
}

/// What a [`strategic_merge_with`] needs to know of custom resource types:
/// for each `apiVersion` and `kind`, which lists merge item by item and by
/// which keys. Read from CustomResourceDefinitions (`apiextensions.k8s.io`
/// `v1` or `v1beta1`: `spec.group`, `spec.names.kind`, each version's
/// `schema.openAPIV3Schema`), from OpenAPI documents (the Swagger 2.0 form
/// Kustomize's `openapi: path:` reads: `definitions` joined by `$ref`, root
/// types named by `x-kubernetes-group-version-kind`; OpenAPI 3's
/// `components.schemas` is read the same way), or from a bare schema given
/// for an `apiVersion` and `kind` ([`MergeSchema::add_kind`]).
///
/// A schema reads `properties`, `items`, `additionalProperties`, `$ref`
/// and, on arrays, `x-kubernetes-patch-strategy`,
/// `x-kubernetes-patch-merge-key` and `x-kubernetes-list-map-keys` (see the
/// [module's rules](crate::patch)). A later document replaces what an earlier one
/// said of the same kind, version or definition.
///
/// ```
/// use krusty_fn::{parse_object, strategic_merge_with, to_yaml, MergeSchema};
///
/// let schema = MergeSchema::from_yaml(r#"
/// apiVersion: apiextensions.k8s.io/v1
/// kind: CustomResourceDefinition
/// metadata: {name: widgets.example.com}
/// spec:
///   group: example.com
///   names: {kind: Widget, plural: widgets}
///   scope: Namespaced
///   versions:
///   - name: v1
///     served: true
///     storage: true
///     schema:
///       openAPIV3Schema:
///         type: object
///         properties:
///           spec:
///             type: object
///             properties:
///               parts:
///                 type: array
///                 x-kubernetes-patch-merge-key: name
///                 x-kubernetes-patch-strategy: merge
///                 items: {type: object}
/// "#)?;
/// let mut widget = parse_object(
///     "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\nspec:\n  parts:\n  - name: a\n    size: 1\n  - name: b\n    size: 2\n",
/// )?;
/// let patch = parse_object("spec:\n  parts:\n  - name: b\n    size: 3\n")?;
/// strategic_merge_with(&mut widget, patch, &schema);
/// assert_eq!(
///     to_yaml(&widget)?,
///     "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\nspec:\n  parts:\n  - name: b\n    size: 3\n  - name: a\n    size: 1\n",
/// );
/// # Ok::<(), krusty_fn::FnError>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct MergeSchema {
    /// Root shapes by kind, then apiVersion.
    kinds: HashMap<String, Vec<(String, Shape)>>,
    /// Named definitions (`$ref` targets), `None` until defined.
    defs: Vec<Option<Shape>>,
    def_ids: HashMap<String, usize>,
}

/// How a value is shaped, as far as merging cares.
#[derive(Debug, Clone, PartialEq)]
enum Shape {
    /// A named definition.
    Ref(usize),
    /// An object: its declared fields, and the shape of the others
    /// (`additionalProperties`).
    Object {
        fields: HashMap<String, Shape>,
        rest: Option<Box<Shape>>,
    },
    /// A list: `keys` is `Some` when it merges item by item (empty: by
    /// value).
    List {
        item: Box<Shape>,
        keys: Option<Vec<String>>,
    },
    /// Anything else.
    Leaf,
}

static LEAF: Shape = Shape::Leaf;

fn schema_error(message: String) -> FnError {
    FnError::Message(message)
}

impl MergeSchema {
    /// A schema that knows no kind (every merge is a [`strategic_merge`]).
    pub fn new() -> MergeSchema {
        MergeSchema::default()
    }

    /// Reads a stream of YAML (or JSON) documents, each a
    /// CustomResourceDefinition, a `List` of them, or an OpenAPI document
    /// ([`MergeSchema::add_document`]).
    pub fn from_yaml(text: &str) -> Result<MergeSchema, FnError> {
        MergeSchema::from_documents(&crate::parse_objects(text)?)
    }

    /// Reads documents ([`MergeSchema::add_document`]), e.g. the
    /// CustomResourceDefinitions among a function's items.
    pub fn from_documents<'a>(
        docs: impl IntoIterator<Item = &'a Node>,
    ) -> Result<MergeSchema, FnError> {
        let mut schema = MergeSchema::new();
        for doc in docs {
            schema.add_document(doc)?;
        }
        Ok(schema)
    }

    /// Adds a CustomResourceDefinition ([`MergeSchema::add_crd`]), the
    /// items of a `List` (`kind` ending in `List`), or an OpenAPI document
    /// (one with `definitions`, `components`, `swagger` or `openapi`:
    /// [`MergeSchema::add_openapi`]). Anything else is an error.
    pub fn add_document(&mut self, doc: &Node) -> Result<(), FnError> {
        let kind = doc.get("kind").and_then(Node::as_str).unwrap_or("");
        if kind == "CustomResourceDefinition" {
            return self.add_crd(doc);
        }
        if kind.ends_with("List") {
            if let Some(items) = doc.get("items").and_then(Node::as_seq) {
                return items.iter().try_for_each(|item| self.add_document(item));
            }
        }
        if ["definitions", "components", "swagger", "openapi"]
            .iter()
            .any(|k| doc.get(k).is_some())
        {
            return self.add_openapi(doc);
        }
        Err(schema_error(format!(
            "a merge schema is read from CustomResourceDefinitions and OpenAPI documents, not from {}",
            if kind.is_empty() {
                "a document without a kind".to_string()
            } else {
                format!("a {kind}")
            }
        )))
    }

    /// Adds the kinds a CustomResourceDefinition defines: `spec.group` and
    /// `spec.names.kind`, at each of its `spec.versions` that has a
    /// `schema.openAPIV3Schema` (for `v1beta1`, `spec.validation` serves
    /// the versions without their own, and `spec.version` names the only
    /// one when there is no list). A version without a schema stays
    /// unknown.
    pub fn add_crd(&mut self, crd: &Node) -> Result<(), FnError> {
        let name = crd
            .get_path(&["metadata", "name"])
            .and_then(Node::as_str)
            .unwrap_or("");
        let fail = |what: &str| schema_error(format!("CustomResourceDefinition '{name}': {what}"));
        if crd.get("kind").and_then(Node::as_str) != Some("CustomResourceDefinition") {
            return Err(fail("not a CustomResourceDefinition"));
        }
        let spec = crd.get("spec").ok_or_else(|| fail("spec is missing"))?;
        let text = |path: &[&str]| {
            spec.get_path(path)
                .and_then(Node::as_str)
                .filter(|s| !s.is_empty())
        };
        let group = text(&["group"]).ok_or_else(|| fail("spec.group is missing"))?;
        let kind = text(&["names", "kind"]).ok_or_else(|| fail("spec.names.kind is missing"))?;
        let shared = spec.get_path(&["validation", "openAPIV3Schema"]);
        let mut versions = Vec::new();
        match spec.get("versions").and_then(Node::as_seq) {
            Some(list) => {
                for (i, v) in list.iter().enumerate() {
                    let version = v
                        .get("name")
                        .and_then(Node::as_str)
                        .ok_or_else(|| fail(&format!("spec.versions[{i}].name is missing")))?;
                    let schema = v.get_path(&["schema", "openAPIV3Schema"]).or(shared);
                    versions.push((
                        version,
                        schema,
                        format!("spec.versions[{i}].schema.openAPIV3Schema"),
                    ));
                }
            }
            None => {
                let version = text(&["version"]).ok_or_else(|| fail("spec.versions is missing"))?;
                versions.push((
                    version,
                    shared,
                    "spec.validation.openAPIV3Schema".to_string(),
                ));
            }
        }
        for (version, schema, at) in versions {
            let Some(schema) = schema.filter(|s| !s.is_null()) else {
                continue;
            };
            let shape = self
                .shape_of(schema, &at)
                .map_err(|e| fail(&e.to_string()))?;
            self.set_kind(&format!("{group}/{version}"), kind, shape);
        }
        Ok(())
    }

    /// Adds an OpenAPI document's `definitions` (or `components.schemas`),
    /// and as roots the definitions with `x-kubernetes-group-version-kind`.
    /// A `$ref` names a definition by the last segment of its path
    /// (`#/definitions/NAME`); one no document defines is a value whose
    /// lists are replaced.
    pub fn add_openapi(&mut self, doc: &Node) -> Result<(), FnError> {
        if doc.as_map().is_none() {
            return Err(schema_error("an OpenAPI document must be a mapping".into()));
        }
        let defs = doc
            .get("definitions")
            .or_else(|| doc.get_path(&["components", "schemas"]));
        let Some(defs) = defs.filter(|d| !d.is_null()) else {
            return Ok(());
        };
        let defs = defs
            .as_map()
            .ok_or_else(|| schema_error("OpenAPI definitions must be a mapping".into()))?;
        for (name, def) in defs {
            let name = name.key_str().unwrap_or_default();
            let shape = self.shape_of(def, name)?;
            let id = self.def_id(name);
            self.defs[id] = Some(shape);
            let gvks = def
                .get("x-kubernetes-group-version-kind")
                .and_then(Node::as_seq);
            for gvk in gvks.into_iter().flatten() {
                let part = |k| gvk.get(k).and_then(Node::as_str).unwrap_or("");
                let (group, version, kind) = (part("group"), part("version"), part("kind"));
                if version.is_empty() || kind.is_empty() {
                    continue;
                }
                let api_version = if group.is_empty() {
                    version.to_string()
                } else {
                    format!("{group}/{version}")
                };
                self.set_kind(&api_version, kind, Shape::Ref(id));
            }
        }
        Ok(())
    }

    /// Adds the schema of resources of `api_version` (`group/version`, or
    /// `version` for the core group) and `kind`: an OpenAPI schema object,
    /// such as a CRD's `openAPIV3Schema` (its `$ref`s name definitions of
    /// [`MergeSchema::add_openapi`] documents).
    pub fn add_kind(
        &mut self,
        api_version: &str,
        kind: &str,
        schema: &Node,
    ) -> Result<(), FnError> {
        let shape = self.shape_of(schema, &format!("{api_version} {kind}"))?;
        self.set_kind(api_version, kind, shape);
        Ok(())
    }

    /// Whether this schema knows resources of `api_version` and `kind`
    /// ([`strategic_merge_with`] merges them by it).
    pub fn knows(&self, api_version: &str, kind: &str) -> bool {
        self.root(api_version, kind).is_some()
    }

    /// The merge keys of the list at `path` (field names; lists on the way
    /// are entered) in resources of `api_version` and `kind`: `None` when
    /// the list is replaced (or unknown), `Some(&[])` when it merges by
    /// value.
    pub fn list_merge_keys(
        &self,
        api_version: &str,
        kind: &str,
        path: &[&str],
    ) -> Option<&[String]> {
        let mut shape = self.root(api_version, kind)?;
        for (i, name) in path.iter().enumerate() {
            shape = self.field(Some(shape), name)?;
            if i + 1 < path.len() {
                if let Shape::List { item, .. } = self.resolve(shape) {
                    shape = item;
                }
            }
        }
        match self.resolve(shape) {
            Shape::List {
                keys: Some(keys), ..
            } => Some(keys),
            _ => None,
        }
    }

    fn root(&self, api_version: &str, kind: &str) -> Option<&Shape> {
        self.kinds
            .get(kind)?
            .iter()
            .find(|(v, _)| v == api_version)
            .map(|(_, shape)| shape)
    }

    fn set_kind(&mut self, api_version: &str, kind: &str, shape: Shape) {
        let roots = self.kinds.entry(kind.to_string()).or_default();
        roots.retain(|(v, _)| v != api_version);
        roots.push((api_version.to_string(), shape));
    }

    fn def_id(&mut self, name: &str) -> usize {
        if let Some(&id) = self.def_ids.get(name) {
            return id;
        }
        self.defs.push(None);
        self.def_ids.insert(name.to_string(), self.defs.len() - 1);
        self.defs.len() - 1
    }

    /// Follows `$ref`s (an undefined one, or a loop of them, is a leaf).
    fn resolve<'a>(&'a self, mut shape: &'a Shape) -> &'a Shape {
        for _ in 0..64 {
            match shape {
                Shape::Ref(id) => match &self.defs[*id] {
                    Some(next) => shape = next,
                    None => return &LEAF,
                },
                other => return other,
            }
        }
        &LEAF
    }

    /// The shape of field `name` of a value of shape `shape`.
    fn field<'a>(&'a self, shape: Option<&'a Shape>, name: &str) -> Option<&'a Shape> {
        match self.resolve(shape?) {
            Shape::Object { fields, rest } => fields.get(name).or(rest.as_deref()),
            _ => None,
        }
    }

    /// The item shape and keys of a list merged item by item.
    fn merged_list<'a>(&'a self, shape: Option<&'a Shape>) -> Option<(&'a Shape, &'a [String])> {
        match self.resolve(shape?) {
            Shape::List {
                item,
                keys: Some(keys),
            } => Some((item, keys)),
            _ => None,
        }
    }

    /// Reads an OpenAPI schema object (`at` names it in errors).
    fn shape_of(&mut self, node: &Node, at: &str) -> Result<Shape, FnError> {
        if node.as_map().is_none() {
            // `additionalProperties: true`, `items: true`…
            if node.as_scalar().is_some() {
                return Ok(Shape::Leaf);
            }
            return Err(schema_error(format!("{at}: a schema must be a mapping")));
        }
        if let Some(reference) = node.get("$ref") {
            let reference = reference
                .as_str()
                .ok_or_else(|| schema_error(format!("{at}: $ref must be a string")))?;
            let name = reference.rsplit('/').next().unwrap_or(reference);
            return Ok(Shape::Ref(self.def_id(name)));
        }
        let items = node.get("items");
        if items.is_some() || node.get("type").and_then(Node::as_str) == Some("array") {
            let item = match items {
                Some(items) => self.shape_of(items, &format!("{at}.items"))?,
                None => Shape::Leaf,
            };
            return Ok(Shape::List {
                item: Box::new(item),
                keys: merge_keys(node),
            });
        }
        let properties = node.get("properties").filter(|p| !p.is_null());
        let rest = node
            .get("additionalProperties")
            .filter(|a| a.as_map().is_some());
        if properties.is_none() && rest.is_none() {
            return Ok(Shape::Leaf);
        }
        let mut fields = HashMap::new();
        if let Some(properties) = properties {
            let entries = properties
                .as_map()
                .ok_or_else(|| schema_error(format!("{at}.properties must be a mapping")))?;
            for (key, value) in entries {
                let key = key.key_str().unwrap_or_default();
                let shape = self.shape_of(value, &format!("{at}.properties.{key}"))?;
                fields.insert(key.to_string(), shape);
            }
        }
        let rest = match rest {
            Some(rest) => Some(Box::new(
                self.shape_of(rest, &format!("{at}.additionalProperties"))?,
            )),
            None => None,
        };
        Ok(Shape::Object { fields, rest })
    }
}

/// The merge keys of an array schema: `Some` when its patch strategy
/// includes `merge` (keys from `x-kubernetes-list-map-keys`, else the patch
/// merge key, else none: merged by value).
fn merge_keys(node: &Node) -> Option<Vec<String>> {
    let strategy = node.get("x-kubernetes-patch-strategy")?.as_str()?;
    if !strategy.split(',').any(|s| s.trim() == "merge") {
        return None;
    }
    if let Some(keys) = node
        .get("x-kubernetes-list-map-keys")
        .and_then(Node::as_seq)
    {
        let keys: Vec<String> = keys
            .iter()
            .filter_map(Node::as_str)
            .map(String::from)
            .collect();
        if !keys.is_empty() {
            return Some(keys);
        }
    }
    Some(
        node.get("x-kubernetes-patch-merge-key")
            .and_then(Node::as_str)
            .map(|k| vec![k.to_string()])
            .unwrap_or_default(),
    )
}

/// A mapping's `apiVersion` and `kind`.
fn api_version_and_kind(node: &Node) -> Option<(&str, &str)> {
    Some((
        node.get("apiVersion")?.as_str()?,
        node.get("kind")?.as_str()?,
    ))
}

/// Applies `patch` to `target` with the merge keys `schema` gives the
/// target's `apiVersion` and `kind` (see the module's rules, which are
/// Kustomize's); a kind the schema does not know is merged by
/// [`strategic_merge`], as it was.
pub fn strategic_merge_with(target: &mut Node, patch: Node, schema: &MergeSchema) {
    let root = api_version_and_kind(target).and_then(|(v, k)| schema.root(v, k));
    let Some(root) = root else {
        return strategic_merge(target, patch);
    };
    if patch.as_map().is_none() || target.as_map().is_none() {
        return strategic_merge(target, patch);
    }
    if matches!(directive(&patch), Some("delete" | "replace")) {
        return;
    }
    Merger { schema }.map(target, patch, Some(root));
}

/// A merge by a [`MergeSchema`].
struct Merger<'s> {
    schema: &'s MergeSchema,
}

impl<'s> Merger<'s> {
    /// The shape of field `name` (an embedded resource the schema knows is
    /// merged by its kind's schema).
    fn field(
        &self,
        shape: Option<&'s Shape>,
        name: &str,
        values: [Option<&Node>; 2],
    ) -> Option<&'s Shape> {
        self.schema.field(shape, name).or_else(|| {
            values.into_iter().flatten().find_map(|v| {
                let (api_version, kind) = api_version_and_kind(v)?;
                self.schema.root(api_version, kind)
            })
        })
    }

    /// Merges a patch mapping into a target mapping.
    fn map(&self, target: &mut Node, patch: Node, shape: Option<&'s Shape>) {
        let Value::Map(entries) = patch.value else {
            return;
        };
        for (key, value) in entries {
            let Some(name) = key.key_str() else {
                continue;
            };
            if name == "$patch" {
                continue;
            }
            if value.is_null() {
                target.remove(name);
                continue;
            }
            let field = self.field(shape, name, [target.get(name), Some(&value)]);
            let keep = match target.get_mut(name) {
                Some(slot) if !slot.is_null() => self.merge_value(slot, value, field),
                _ => match self.added(value, field) {
                    Some(value) => {
                        target.set(name, value);
                        true
                    }
                    None => false,
                },
            };
            if !keep {
                target.remove(name);
            }
        }
    }

    /// Merges a patch value into a field's value; `false` when the field
    /// goes.
    fn merge_value(&self, slot: &mut Node, mut value: Node, shape: Option<&'s Shape>) -> bool {
        match (&mut slot.value, &mut value.value) {
            (Value::Map(_), Value::Map(_)) => match directive(&value) {
                Some("delete") => return false,
                Some("replace") => {}
                _ => {
                    self.map(slot, value, shape);
                    return true;
                }
            },
            (Value::Seq(items), Value::Seq(patch_items)) => {
                if let Some((item, keys)) = self.schema.merged_list(shape) {
                    let merged = self.list(
                        std::mem::take(items),
                        std::mem::take(patch_items),
                        item,
                        keys,
                    );
                    return match merged {
                        Some(merged) => {
                            *items = merged;
                            true
                        }
                        None => false,
                    };
                }
            }
            _ => {}
        }
        strip_directives(&mut value);
        assign(slot, value);
        true
    }

    /// What a patch value the target lacks adds (`None`: nothing):
    /// directives act on nothing and go, nulls add nothing, merged lists
    /// are merged into an empty one.
    fn added(&self, mut value: Node, shape: Option<&'s Shape>) -> Option<Node> {
        if value.as_map().is_some() && directive(&value) == Some("delete") {
            return None;
        }
        match &mut value.value {
            Value::Map(entries) => {
                for (key, v) in std::mem::take(entries) {
                    let Some(name) = key.key_str() else {
                        entries.push((key, v));
                        continue;
                    };
                    if name == "$patch" || v.is_null() {
                        continue;
                    }
                    let field = self.field(shape, name, [Some(&v), None]);
                    if let Some(v) = self.added(v, field) {
                        entries.push((key, v));
                    }
                }
            }
            Value::Seq(items) => match self.schema.merged_list(shape) {
                Some((item, keys)) => {
                    *items = self.list(ThinVec::new(), std::mem::take(items), item, keys)?;
                }
                None => strip_directives(&mut value),
            },
            Value::Scalar(_) => {}
        }
        Some(value)
    }

    /// Merges one patch item into the target's item with its keys.
    fn item(&self, target: &mut Node, patch: Node, shape: &'s Shape) {
        if target.as_map().is_some() && patch.as_map().is_some() {
            self.map(target, patch, Some(shape));
        } else {
            let mut patch = patch;
            strip_directives(&mut patch);
            assign(target, patch);
        }
    }

    /// Merges a patch list into a target list merged by `keys` (empty: by
    /// value); `None` when the list goes (`- $patch: delete`).
    fn list(
        &self,
        target: ThinVec<Node>,
        mut patch: ThinVec<Node>,
        item: &'s Shape,
        keys: &[String],
    ) -> Option<ThinVec<Node>> {
        let only_directive =
            |n: &Node| n.as_map().is_some_and(|m| m.len() == 1) && directive(n).is_some();
        if let Some(at) = patch.iter().position(only_directive) {
            let element = patch.remove(at);
            match directive(&element) {
                Some("delete") => return None,
                Some("replace") => return self.list(ThinVec::new(), patch, item, keys),
                _ => {}
            }
        }
        if keys.is_empty() {
            return Some(by_value(target, patch));
        }
        let mut base: Vec<Option<Node>> = target.into_iter().map(Some).collect();
        let base_keys: Vec<Option<Vec<String>>> = base
            .iter()
            .map(|n| n.as_ref().and_then(|n| key_values(n, keys)))
            .collect();
        // The patch's items (one key) or the new items (several keys).
        let mut out: Vec<Node> = Vec::new();
        let one_key = keys.len() == 1;
        // The first patch item with a key counts, as in Kustomize.
        let mut seen: Vec<Vec<String>> = Vec::new();
        for p in patch {
            let Some(k) = key_values(&p, keys) else {
                continue;
            };
            if seen.contains(&k) {
                continue;
            }
            let found =
                (0..base.len()).find(|&i| base[i].is_some() && base_keys[i].as_ref() == Some(&k));
            match (directive(&p), found) {
                (Some("delete"), Some(i)) => base[i] = None,
                (Some("delete"), None) => {}
                // Kustomize keeps the target's item as it was.
                (Some("replace"), Some(i)) => {
                    if one_key {
                        out.extend(base[i].take());
                    }
                }
                (_, Some(i)) => {
                    if one_key {
                        if let Some(mut t) = base[i].take() {
                            self.item(&mut t, p, item);
                            out.push(t);
                        }
                    } else if let Some(t) = base[i].as_mut() {
                        self.item(t, p, item);
                    }
                }
                (_, None) => out.extend(self.added(p, Some(item))),
            }
            seen.push(k);
        }
        Some(out.into_iter().chain(base.into_iter().flatten()).collect())
    }
}

/// The values of an item's merge keys (`""` for a missing one), `None`
/// when it has none of them.
fn key_values(node: &Node, keys: &[String]) -> Option<Vec<String>> {
    node.as_map()?;
    let values: Vec<String> = keys
        .iter()
        .map(|k| node.get(k).and_then(Node::as_str).unwrap_or("").to_string())
        .collect();
    values.iter().any(|v| !v.is_empty()).then_some(values)
}

/// A list of scalars merged as a set: the patch's values, then the
/// target's others (each once; a value both have keeps the target's node).
fn by_value(target: ThinVec<Node>, patch: ThinVec<Node>) -> ThinVec<Node> {
    let mut base: Vec<Option<Node>> = target.into_iter().map(Some).collect();
    let mut seen: Vec<String> = Vec::new();
    let mut out = ThinVec::new();
    for p in patch {
        let Some(text) = p.as_str().map(str::to_string) else {
            continue;
        };
        if seen.contains(&text) {
            continue;
        }
        let found = base
            .iter_mut()
            .find(|b| b.as_ref().and_then(Node::as_str) == Some(&text));
        out.push(found.and_then(Option::take).unwrap_or(p));
        seen.push(text);
    }
    for b in base.into_iter().flatten() {
        match b.as_str().map(str::to_string) {
            Some(text) if seen.contains(&text) => {}
            Some(text) => {
                seen.push(text);
                out.push(b);
            }
            None => out.push(b),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Node {
        crate::parse_object(text).unwrap()
    }

    #[test]
    fn merges_pod_lists_by_key_and_keeps_comments() {
        let mut d = parse(
            "spec:\n  replicas: 1 # one\n  template:\n    spec:\n      containers:\n      - name: app # main\n        image: a\n        ports:\n        - containerPort: 80\n      - name: old\n        image: o\n      tolerations: [{key: a}]\n",
        );
        let patch = parse(
            "spec:\n  replicas: 2\n  template:\n    spec:\n      containers:\n      - name: app\n        image: b\n        ports:\n        - containerPort: 81\n      - name: old\n        $patch: delete\n      - name: side\n        image: s\n      tolerations: [{key: b}]\n",
        );
        strategic_merge(&mut d, patch);
        assert_eq!(
            crate::to_yaml(&d).unwrap(),
            "spec:\n  replicas: 2 # one\n  template:\n    spec:\n      containers:\n      - name: app # main\n        image: b\n        ports:\n        - containerPort: 80\n        - containerPort: 81\n      - name: side\n        image: s\n      tolerations: [{key: b}]\n"
        );
        let mut m = parse("a: {b: 1, c: 2}\nd: 3\n");
        strategic_merge(&mut m, parse("a: {$patch: replace, e: 5}\nd: null\n"));
        assert_eq!(crate::to_yaml(&m).unwrap(), "a:\n  e: 5\n");
    }
}
