//! Flux `Kustomization` objects (`kustomize.toolkit.fluxcd.io/v1`),
//! rendered as kustomize-controller renders them (docs/flux.md lists
//! every rule and its source):
//!
//! 1. `spec.path` is joined to the source root, `..` stopping at it;
//! 2. the folder's kustomization gets Flux's fields (or one is generated,
//!    [`generate`]) and is handed to the build as text;
//! 3. the build loads files without restriction but inside the source
//!    root, runs no plugins, no Helm, and keeps the order it made;
//! 4. each object gets `postBuild` substitution ([`envsubst`]), unless
//!    marked `kustomize.toolkit.fluxcd.io/substitute: disabled`;
//! 5. each object gets the labels naming its Kustomization, then
//!    `commonMetadata`.

pub mod envsubst;
pub mod generate;

use std::collections::{BTreeMap, HashMap};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use krusty_api::{BuildRequest, Engine, Inputs, Resource};
use krusty_yaml::Node;

use crate::diff::Rendering;
use crate::error::{Error, Result};
use crate::object::{Fields, Found};
use crate::target::{render_folder, Rendered, Side};

/// The API group of Flux's Kustomization.
pub const GROUP: &str = "kustomize.toolkit.fluxcd.io";

/// The label and annotation that turn substitution off for one object.
const SUBSTITUTE_MARK: &str = "kustomize.toolkit.fluxcd.io/substitute";

/// The fields of a Kustomization's `spec`.
const SPEC_FIELDS: [&str; 27] = [
    "sourceRef",
    "path",
    "targetNamespace",
    "namePrefix",
    "nameSuffix",
    "patches",
    "images",
    "components",
    "ignoreMissingComponents",
    "buildMetadata",
    "commonMetadata",
    "postBuild",
    "dependsOn",
    "decryption",
    "prune",
    "interval",
    "retryInterval",
    "timeout",
    "force",
    "wait",
    "healthChecks",
    "healthCheckExprs",
    "ignore",
    "deletionPolicy",
    "suspend",
    "serviceAccountName",
    "kubeConfig",
];

/// How Flux Kustomizations are rendered.
#[derive(Debug)]
pub struct Settings {
    /// Builds their folders: no load restriction, no plugins, no Helm,
    /// the build's own order ([`Settings::engine_options`]).
    pub engine: Engine,
    /// Fail on a variable that is not defined (the controller's default
    /// since v1.9).
    pub strict: bool,
    /// ConfigMaps and Secrets `substituteFrom` may name, besides those in
    /// the repository (files the user gave).
    pub extra_objects: Vec<Found>,
}

impl Settings {
    /// The build options of kustomize-controller: Kustomize v5.8.1 (or
    /// `version`), no load restriction, builtins only, Helm off, the
    /// build's order, remote bases refused when `no_remote_bases`.
    pub fn engine_options(
        version: krusty_api::KustomizeVersion,
        no_remote_bases: bool,
    ) -> krusty_api::Options {
        krusty_api::Options {
            kustomize_version: version,
            load_restrictor: krusty_api::LoadRestrictor::None,
            keep_build_order: true,
            refuse_remote_bases: no_remote_bases,
            ..krusty_api::Options::default()
        }
    }
}

/// An image override of `spec.images`.
#[derive(Debug, Clone, Default)]
pub struct Image {
    /// The image name matched.
    pub name: String,
    /// Its new name.
    pub new_name: String,
    /// Its new tag.
    pub new_tag: String,
    /// Its digest.
    pub digest: String,
}

/// A `substituteFrom` reference.
#[derive(Debug, Clone)]
struct SubstituteFrom {
    kind: String,
    name: String,
    optional: bool,
}

/// `spec.postBuild`.
#[derive(Debug, Clone, Default)]
struct PostBuild {
    substitute: BTreeMap<String, String>,
    substitute_from: Vec<SubstituteFrom>,
    always: bool,
}

/// A Flux Kustomization, as read from its file.
#[derive(Debug, Clone)]
pub struct FluxKustomization {
    /// `metadata.name`.
    pub name: String,
    /// `metadata.namespace`.
    pub namespace: String,
    /// The file it was read from, relative to the side's top.
    pub file: PathBuf,
    /// `spec.path`.
    pub path: String,
    pub(crate) target_namespace: String,
    pub(crate) name_prefix: String,
    pub(crate) name_suffix: String,
    pub(crate) patches: Vec<(String, Option<Node>)>,
    pub(crate) images: Vec<Image>,
    pub(crate) components: Vec<String>,
    pub(crate) ignore_missing_components: bool,
    pub(crate) build_metadata: Vec<String>,
    common_labels: BTreeMap<String, String>,
    common_annotations: BTreeMap<String, String>,
    post_build: Option<PostBuild>,
    /// `spec.dependsOn`, as `namespace/name`.
    pub depends_on: Vec<String>,
}

impl FluxKustomization {
    /// Reads a Kustomization found in a file.
    pub fn read(found: &Found) -> Result<FluxKustomization> {
        let node = &found.node;
        let f = Fields::new("Kustomization", node, &found.file);
        let meta = node.get("metadata").cloned().unwrap_or_else(Node::map);
        let name = f.string(&meta, "metadata", "name")?;
        if name.is_empty() {
            return Err(f.error("metadata.name: must be set"));
        }
        let namespace = f.string(&meta, "metadata", "namespace")?;
        let spec = node.get("spec").cloned().unwrap_or_else(Node::map);
        f.known(&spec, "spec", &SPEC_FIELDS)?;
        let mut patches = Vec::new();
        for p in f.maps(&spec, "spec", "patches")? {
            f.known(p, "spec.patches", &["patch", "target"])?;
            let target = p.get("target").filter(|t| !t.is_null()).cloned();
            patches.push((f.string(p, "spec.patches", "patch")?, target));
        }
        let mut images = Vec::new();
        for i in f.maps(&spec, "spec", "images")? {
            let field = "spec.images";
            f.known(i, field, &["name", "newName", "newTag", "digest"])?;
            images.push(Image {
                name: f.string(i, field, "name")?,
                new_name: f.string(i, field, "newName")?,
                new_tag: f.string(i, field, "newTag")?,
                digest: f.string(i, field, "digest")?,
            });
        }
        let common = spec
            .get("commonMetadata")
            .cloned()
            .unwrap_or_else(Node::map);
        let post_build = match spec.get("postBuild").filter(|p| !p.is_null()) {
            None => None,
            Some(p) => {
                let field = "spec.postBuild";
                f.known(
                    p,
                    field,
                    &["substitute", "substituteFrom", "substituteStrategy"],
                )?;
                let mut from = Vec::new();
                for s in f.maps(p, field, "substituteFrom")? {
                    let field = "spec.postBuild.substituteFrom";
                    f.known(s, field, &["kind", "name", "optional"])?;
                    from.push(SubstituteFrom {
                        kind: f.string(s, field, "kind")?,
                        name: f.string(s, field, "name")?,
                        optional: f.boolean(s, field, "optional")?,
                    });
                }
                Some(PostBuild {
                    substitute: f.string_map(p, field, "substitute")?,
                    substitute_from: from,
                    always: f.string(p, field, "substituteStrategy")? == "Always",
                })
            }
        };
        let mut depends_on = Vec::new();
        for d in f.maps(&spec, "spec", "dependsOn")? {
            let dep_ns = f.string(d, "spec.dependsOn", "namespace")?;
            let dep_ns = if dep_ns.is_empty() {
                namespace.clone()
            } else {
                dep_ns
            };
            depends_on.push(format!(
                "{dep_ns}/{}",
                f.string(d, "spec.dependsOn", "name")?
            ));
        }
        Ok(FluxKustomization {
            path: f.string(&spec, "spec", "path")?,
            target_namespace: f.string(&spec, "spec", "targetNamespace")?,
            name_prefix: f.string(&spec, "spec", "namePrefix")?,
            name_suffix: f.string(&spec, "spec", "nameSuffix")?,
            patches,
            images,
            components: f.strings(&spec, "spec", "components")?,
            ignore_missing_components: f.boolean(&spec, "spec", "ignoreMissingComponents")?,
            build_metadata: f.strings(&spec, "spec", "buildMetadata")?,
            common_labels: f.string_map(&common, "spec.commonMetadata", "labels")?,
            common_annotations: f.string_map(&common, "spec.commonMetadata", "annotations")?,
            post_build,
            depends_on,
            name,
            namespace,
            file: found.file.clone(),
        })
    }

    /// `namespace/name`.
    pub fn key(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }

    fn error(&self, message: impl std::fmt::Display) -> Error {
        Error::Object {
            kind: "Kustomization",
            name: self.key(),
            file: self.file.clone(),
            message: message.to_string(),
        }
    }

    /// The folder `spec.path` names, relative to the source root: `..`
    /// stops at the root and a leading `/` counts from it.
    pub fn folder(&self) -> PathBuf {
        let mut rel = PathBuf::new();
        for c in Path::new(&self.path).components() {
            match c {
                Component::Normal(name) => rel.push(name),
                Component::ParentDir => {
                    rel.pop();
                }
                _ => {}
            }
        }
        rel
    }

    /// Whether its folder exists on `side` (what `krusty diff` renders of
    /// the Kustomizations it finds).
    pub fn renders_here(&self, side: &Side) -> bool {
        side.top.join(self.folder()).is_dir()
    }

    /// Renders it on `side`, recording what was read.
    pub fn render(&self, side: &Side, settings: &Settings) -> Rendered {
        let mut inputs = Inputs::default();
        inputs.files.insert(self.file.clone());
        let rendering = match self.render_objects(side, settings, side.objects(), &mut inputs) {
            Ok(objects) => Rendering::Objects(objects),
            Err(e) => Rendering::Failed(side.relative_text(&e.to_string())),
        };
        Rendered { rendering, inputs }
    }

    fn render_objects(
        &self,
        side: &Side,
        settings: &Settings,
        index: &ObjectIndex,
        inputs: &mut Inputs,
    ) -> Result<Vec<Resource>> {
        let rel = self.folder();
        let dir = side.top.join(&rel);
        if !dir.is_dir() {
            return Err(self.error(format!(
                "kustomization path not found: stat {}: no such file or directory",
                dir.display()
            )));
        }
        // Recorded before anything can fail: a failed build has read them.
        for name in generate::FILE_NAMES {
            inputs.files.insert(rel.join(name));
        }
        if !generate::FILE_NAMES.iter().any(|n| dir.join(n).is_file()) {
            inputs.folders.insert(rel.clone());
        }
        if self
            .post_build
            .as_ref()
            .is_some_and(|p| !p.substitute_from.is_empty())
        {
            // substituteFrom searches every YAML file of the tree.
            inputs.folders.insert(PathBuf::new());
        }
        let text = generate::kustomization(&side.top, &dir, self).map_err(|e| self.error(e))?;
        let request = BuildRequest {
            kustomization: Some(text.into()),
            confine_to: Some(Arc::from(side.top.as_path())),
            ..BuildRequest::default()
        };
        let rendered = render_folder(side, &settings.engine, &rel, &request);
        inputs.files.extend(rendered.inputs.files);
        inputs.folders.extend(rendered.inputs.folders);
        let mut objects = match rendered.rendering {
            Rendering::Objects(objects) => objects,
            Rendering::Failed(e) => return Err(self.error(format!("kustomize build failed: {e}"))),
            Rendering::Absent => Vec::new(),
        };
        for r in &objects {
            let id = r.id();
            if id.name.is_empty() || id.gvk.kind.is_empty() || r.api_version().is_empty() {
                return Err(self.error(format!(
                    "failed to decode Kubernetes apiVersion, kind and name from: {}",
                    krusty_yaml::to_go_json(&r.node)
                )));
            }
        }
        if let Some(post_build) = &self.post_build {
            let vars = self.variables(post_build, index, settings, inputs)?;
            if !vars.is_empty() || post_build.always {
                check_names(&vars).map_err(|e| self.error(e))?;
                for r in objects.iter_mut() {
                    self.substitute(r, &vars, settings.strict)?;
                }
            }
        }
        for r in objects.iter_mut() {
            let Some(labels) = r
                .node
                .entry_map("metadata")
                .and_then(|m| m.entry_map("labels"))
            else {
                continue;
            };
            labels.set(
                "kustomize.toolkit.fluxcd.io/name",
                Node::string(self.name.as_str()),
            );
            labels.set(
                "kustomize.toolkit.fluxcd.io/namespace",
                Node::string(self.namespace.as_str()),
            );
            for (field, values) in [
                ("labels", &self.common_labels),
                ("annotations", &self.common_annotations),
            ] {
                if values.is_empty() {
                    continue;
                }
                if let Some(map) = r
                    .node
                    .entry_map("metadata")
                    .and_then(|m| m.entry_map(field))
                {
                    for (k, v) in values {
                        map.set(k, Node::string(v.as_str()));
                    }
                }
            }
        }
        Ok(objects)
    }

    /// The variables of `postBuild`: each `substituteFrom` in order (a
    /// later one wins), then `substitute` over them; newlines removed.
    fn variables(
        &self,
        post_build: &PostBuild,
        index: &ObjectIndex,
        settings: &Settings,
        inputs: &mut Inputs,
    ) -> Result<BTreeMap<String, String>> {
        let mut vars = BTreeMap::new();
        for from in &post_build.substitute_from {
            // The objects the user named win over those of the tree.
            let found = find_in(
                &settings.extra_objects,
                &from.kind,
                &self.namespace,
                &from.name,
            )
            .or_else(|| index.find(&from.kind, &self.namespace, &from.name));
            let Some((file, node)) = found else {
                if from.optional {
                    continue;
                }
                let plural = if from.kind == "Secret" {
                    "secrets"
                } else {
                    "configmaps"
                };
                return Err(self.error(format!(
                    "substitute from '{}/{}' error: {plural} \"{}\" not found",
                    from.kind, from.name, from.name
                )));
            };
            inputs.files.insert(file.clone());
            for (k, v) in data_of(&from.kind, &node)
                .map_err(|e| self.error(format!("{}: {e}", file.display())))?
            {
                vars.insert(k, v.replace('\n', ""));
            }
        }
        for (k, v) in &post_build.substitute {
            vars.insert(k.clone(), v.replace('\n', ""));
        }
        Ok(vars)
    }

    /// Substitutes the variables into one object's YAML and reads it back.
    fn substitute(
        &self,
        r: &mut Resource,
        vars: &BTreeMap<String, String>,
        strict: bool,
    ) -> Result<()> {
        let marked = |field: &str| {
            r.node
                .get_path(&["metadata", field, SUBSTITUTE_MARK])
                .and_then(Node::as_str)
                == Some("disabled")
        };
        if marked("labels") || marked("annotations") {
            return Ok(());
        }
        let id = r.id();
        let shown = format!(
            "{}.{}.{}/{}",
            id.gvk.kind,
            id.gvk.version,
            if id.gvk.group.is_empty() {
                "[noGrp]"
            } else {
                id.gvk.group.as_str()
            },
            id.name
        );
        let failed = |e: String| self.error(format!("post build failed for '{shown}': {e}"));
        let mut text = String::new();
        krusty_yaml::emit_document(&r.node, &mut text).map_err(|e| failed(e.to_string()))?;
        let substituted = envsubst::substitute(&text, vars, strict)
            .map_err(|e| failed(format!("envsubst error: variable substitution failed: {e}")))?;
        let mut root = krusty_yaml::parse_stream(&substituted)
            .map_err(|e| failed(format!("envsubst error: YAMLToJSON: {e}")))?
            .into_iter()
            .find_map(|d| d.root)
            .ok_or_else(|| failed("envsubst error: the object is empty".into()))?;
        yaml_1_1_booleans(&mut root);
        *r = Resource::from_node(root).map_err(|e| failed(format!("UnmarshalJSON: {e}")))?;
        Ok(())
    }
}

/// Flux reads the substituted text with YAML 1.1, where an unquoted
/// `yes`, `no`, `on`, `off`, `y` or `n` (in any of their spellings) is a
/// boolean; krusty's reader (YAML 1.2) reads them as strings, so they are
/// made booleans here. Before substitution every string that reads so was
/// quoted, so only substituted text is plain.
fn yaml_1_1_booleans(node: &mut Node) {
    const TRUE: [&str; 9] = ["y", "Y", "yes", "Yes", "YES", "on", "On", "ON", "True"];
    const FALSE: [&str; 9] = ["n", "N", "no", "No", "NO", "off", "Off", "OFF", "False"];
    if let Some(entries) = node.as_map_mut() {
        for (_, v) in entries.iter_mut() {
            yaml_1_1_booleans(v);
        }
    } else if let Some(items) = node.as_seq_mut() {
        for v in items.iter_mut() {
            yaml_1_1_booleans(v);
        }
    } else if node.style() == krusty_yaml::ScalarStyle::Plain && node.tag().is_none() {
        let text = node.as_str().unwrap_or_default();
        let value = if TRUE.contains(&text) {
            "true"
        } else if FALSE.contains(&text) {
            "false"
        } else {
            return;
        };
        let pos = node.pos();
        *node = Node::plain(value);
        node.set_pos(pos);
    }
}

/// A variable name Flux refuses.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
#[error("'{0}' var name is invalid, must match '^[_[:alpha:]][_[:alpha:][:digit:]]*$'")]
struct BadName(String);

/// A Secret's `data` value that is no base64 (its key).
#[derive(Debug, thiserror::Error)]
#[error("data.{0}: not base64")]
struct NotBase64(String);

/// A cycle among Kustomizations' `dependsOn` (the keys along it, the
/// first again at the end).
#[derive(Debug, thiserror::Error)]
#[error("circular dependency detected: {}", .0.join(" -> "))]
struct Cycle(Vec<String>);

/// Fails for a variable name Flux refuses.
fn check_names(vars: &BTreeMap<String, String>) -> std::result::Result<(), BadName> {
    for k in vars.keys() {
        let mut chars = k.chars();
        let good = chars
            .next()
            .is_some_and(|c| c == '_' || c.is_ascii_alphabetic())
            && chars.all(|c| c == '_' || c.is_ascii_alphanumeric());
        if !good {
            return Err(BadName(k.clone()));
        }
    }
    Ok(())
}

/// The variables a ConfigMap (`data`) or Secret (`data` decoded, then
/// `stringData` over it) holds.
fn data_of(kind: &str, node: &Node) -> std::result::Result<Vec<(String, String)>, NotBase64> {
    let pairs = |field: &str| -> Vec<(String, String)> {
        node.get(field)
            .and_then(Node::as_map)
            .into_iter()
            .flatten()
            .filter_map(|(k, v)| Some((k.as_str()?.to_string(), v.as_scalar()?.text.to_string())))
            .collect()
    };
    if kind != "Secret" {
        return Ok(pairs("data"));
    }
    let mut out = Vec::new();
    for (k, v) in pairs("data") {
        let bytes = krusty_yaml::decode_base64_bytes(&v).ok_or_else(|| NotBase64(k.clone()))?;
        out.push((k, String::from_utf8_lossy(&bytes).into_owned()));
    }
    out.extend(pairs("stringData"));
    Ok(out)
}

/// The ConfigMaps and Secrets of a tree, by kind, namespace and name.
#[derive(Debug, Default)]
pub struct ObjectIndex {
    objects: HashMap<(String, String), Vec<Found>>,
}

impl ObjectIndex {
    /// Every ConfigMap and Secret in the YAML files under `top`.
    pub fn of(top: &Path) -> Result<ObjectIndex> {
        let mut index = ObjectIndex::default();
        let kinds = ["ConfigMap", "Secret"];
        let found = crate::object::find_kinds(top, &[("", kinds[0]), ("", kinds[1])])?;
        for (kind, objects) in kinds.into_iter().zip(found) {
            for found in objects {
                let name = found
                    .node
                    .get_path(&["metadata", "name"])
                    .and_then(Node::as_str)
                    .unwrap_or_default();
                index
                    .objects
                    .entry((kind.to_string(), name.to_string()))
                    .or_default()
                    .push(found);
            }
        }
        Ok(index)
    }

    /// The object of `kind` named `name` in `namespace` (or with no
    /// namespace), and its file.
    fn find(&self, kind: &str, namespace: &str, name: &str) -> Option<(PathBuf, Node)> {
        find_in(
            self.objects.get(&(kind.to_string(), name.to_string()))?,
            kind,
            namespace,
            name,
        )
    }
}

fn find_in(objects: &[Found], kind: &str, namespace: &str, name: &str) -> Option<(PathBuf, Node)> {
    objects
        .iter()
        .find(|f| {
            let meta = |k: &str| {
                f.node
                    .get_path(&["metadata", k])
                    .and_then(Node::as_str)
                    .unwrap_or_default()
                    .to_string()
            };
            f.node.get("kind").and_then(Node::as_str) == Some(kind)
                && meta("name") == name
                && (meta("namespace").is_empty() || meta("namespace") == namespace)
        })
        .map(|f| (f.file.clone(), f.node.clone()))
}

/// Orders Kustomizations so each comes after those it depends on (in
/// their given order otherwise); a cycle is an error naming it.
pub fn in_dependency_order(list: Vec<FluxKustomization>) -> Result<Vec<FluxKustomization>> {
    let position: HashMap<String, usize> =
        list.iter().enumerate().map(|(i, k)| (k.key(), i)).collect();
    let mut state = vec![0u8; list.len()];
    let mut order = Vec::with_capacity(list.len());
    fn visit(
        i: usize,
        list: &[FluxKustomization],
        position: &HashMap<String, usize>,
        state: &mut [u8],
        path: &mut Vec<String>,
        order: &mut Vec<usize>,
    ) -> std::result::Result<(), Cycle> {
        match state[i] {
            2 => return Ok(()),
            1 => {
                let start = path.iter().position(|p| *p == list[i].key()).unwrap_or(0);
                let mut cycle: Vec<String> = path[start..].to_vec();
                cycle.push(list[i].key());
                return Err(Cycle(cycle));
            }
            _ => {}
        }
        state[i] = 1;
        path.push(list[i].key());
        for dep in &list[i].depends_on {
            if let Some(&j) = position.get(dep) {
                visit(j, list, position, state, path, order)?;
            }
        }
        path.pop();
        state[i] = 2;
        order.push(i);
        Ok(())
    }
    for i in 0..list.len() {
        visit(i, &list, &position, &mut state, &mut Vec::new(), &mut order)
            .map_err(|e| Error::Output(e.to_string()))?;
    }
    let mut slots: Vec<Option<FluxKustomization>> = list.into_iter().map(Some).collect();
    Ok(order.into_iter().filter_map(|i| slots[i].take()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variable_names_are_checked_as_flux_checks_them() {
        let ok: BTreeMap<String, String> = [("_a1".to_string(), String::new())].into();
        assert!(check_names(&ok).is_ok());
        let bad: BTreeMap<String, String> = [("app.name".to_string(), String::new())].into();
        assert_eq!(
            check_names(&bad).unwrap_err().to_string(),
            "'app.name' var name is invalid, must match '^[_[:alpha:]][_[:alpha:][:digit:]]*$'"
        );
    }
}
