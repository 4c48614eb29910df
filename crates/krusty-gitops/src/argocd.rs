//! Argo CD `Application`s with Kustomize sources, rendered as Argo CD's
//! repo-server renders them (docs/argocd.md lists every rule and its
//! source).
//!
//! The repo-server runs `kustomize edit` on its checkout in a fixed order
//! (name prefix, name suffix, images, replicas, labels, annotations,
//! namespace), appends the source's patches to the kustomization itself,
//! adds its components, then runs `kustomize build`. krusty makes the same
//! changes to the kustomization's text in memory, with the edit commands'
//! own code, and builds the folder with that text in place of its file:
//! the repository is never modified. Argo CD's tracking annotation is
//! added to every object but CustomResourceDefinitions, as manifest
//! generation adds it.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

use krusty_api::edit::{self, AddFlags, EditError, Kind, KustomizationFile, PathList, ScalarField};
use krusty_api::{BuildRequest, Engine, Inputs};
use krusty_resource::ResourceError;
use krusty_yaml::{EmitError, Node, YamlError};

use crate::diff::Rendering;
use crate::error::{Error, FileError, Result};
use crate::object::{Fields, Found};
use crate::target::{render_folder, Rendered, Side};

/// The API group of Argo CD's objects.
pub const GROUP: &str = "argoproj.io";

/// The kustomization file names, in the order Argo CD looks for them.
const KUSTOMIZATION_FILES: [&str; 3] = ["kustomization.yaml", "kustomization.yml", "Kustomization"];

/// The fields of `spec.source.kustomize`.
const KUSTOMIZE_FIELDS: [&str; 18] = [
    "namePrefix",
    "nameSuffix",
    "images",
    "commonLabels",
    "version",
    "commonAnnotations",
    "forceCommonLabels",
    "forceCommonAnnotations",
    "namespace",
    "commonAnnotationsEnvsubst",
    "replicas",
    "patches",
    "components",
    "ignoreMissingComponents",
    "labelWithoutSelector",
    "kubeVersion",
    "apiVersions",
    "labelIncludeTemplates",
];

/// How Argo CD marks the objects of an application.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Tracking {
    /// The `argocd.argoproj.io/tracking-id` annotation (Argo CD's
    /// default).
    #[default]
    Annotation,
    /// The `app.kubernetes.io/instance` label.
    Label,
    /// Both.
    AnnotationAndLabel,
    /// Neither: the objects as `kustomize build` prints them.
    None,
}

/// A tracking method Argo CD does not have (as written).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown tracking method '{0}': use annotation, label, annotation+label or none")]
pub struct UnknownTracking(pub String);

impl std::str::FromStr for Tracking {
    type Err = UnknownTracking;
    fn from_str(s: &str) -> std::result::Result<Tracking, UnknownTracking> {
        match s {
            "annotation" => Ok(Tracking::Annotation),
            "label" => Ok(Tracking::Label),
            "annotation+label" => Ok(Tracking::AnnotationAndLabel),
            "none" => Ok(Tracking::None),
            other => Err(UnknownTracking(other.to_string())),
        }
    }
}

/// Why an application's source cannot be rendered, in Argo CD's words
/// where it has them.
#[derive(Debug, thiserror::Error)]
enum SourceError {
    /// A file or folder cannot be read, or a file is not YAML.
    #[error(transparent)]
    File(#[from] FileError),
    /// A list's member is no object.
    #[error("{}: items member is not an object", .0.display())]
    NotAnObject(PathBuf),
    /// A document is no resource.
    #[error("{}: {source}", path.display())]
    Resource {
        /// The file.
        path: PathBuf,
        /// Why the document is no resource.
        source: ResourceError,
    },
    /// `kubeVersion` is no version (as written).
    #[error("could not parse kubernetes version {raw}: {why}")]
    KubeVersion {
        /// The value as written.
        raw: String,
        /// What is wrong with it.
        why: VersionError,
    },
    /// `spec.source.path` names no folder of the repository.
    #[error("spec.source.path '{path}': {why}")]
    AppPath {
        /// The path as written.
        path: String,
        /// What is wrong with it.
        why: AppPathError,
    },
    /// The application's folder cannot be resolved.
    #[error("{0}")]
    Resolve(#[source] std::io::Error),
    /// The folder has no kustomization file.
    #[error("Missing kustomization file 'kustomization.yaml'.")]
    NoKustomization,
    /// The folder has no kustomization file, and the patches are all
    /// Argo CD changes.
    #[error("kustomization file not found in the path")]
    NoKustomizationForPatches,
    /// The folder has several kustomization files (their names).
    #[error("Found multiple kustomization file: [{}]", .0.join(" "))]
    SeveralKustomizations(Vec<&'static str>),
    /// A replica count is no integer (as written).
    #[error("expected integer value for count. Received: {0}")]
    Count(String),
    /// A `kustomize edit` change fails.
    #[error(transparent)]
    Edit(#[from] EditError),
    /// The changed kustomization does not read back.
    #[error("failed to unmarshal kustomization.yaml: {0}")]
    Unmarshal(#[source] YamlError),
    /// The changed kustomization is no mapping.
    #[error(
        "expected kustomization.yaml to be type map[string]any, but got map[string]interface {{}}"
    )]
    NotAMap,
    /// The kustomization's `patches` is no list (Go's name for what it
    /// is).
    #[error("expected 'patches' field in kustomization.yaml to be []any, but got {0}")]
    PatchesNotAList(&'static str),
    /// The changed kustomization cannot be printed.
    #[error(transparent)]
    Emit(#[from] EmitError),
}

/// Why a `kubeVersion` is no version, in apimachinery's words.
#[derive(Debug, thiserror::Error)]
enum VersionError {
    /// It does not start with two numbers (the trimmed text).
    #[error("could not parse \"{0}\" as version")]
    NotAVersion(String),
    /// Its first number has a leading zero.
    #[error("illegal zero-prefixed version component \"{part}\" in \"{text}\"")]
    ZeroPrefixed {
        /// The number.
        part: String,
        /// The trimmed text.
        text: String,
    },
}

/// Why `spec.source.path` names no folder of the repository.
#[derive(Debug, thiserror::Error)]
enum AppPathError {
    /// It is absolute.
    #[error("app path is absolute")]
    Absolute,
    /// It leads out of the repository.
    #[error("app path outside root")]
    OutsideRoot,
    /// Nothing is there.
    #[error("app path does not exist")]
    Missing,
    /// It is no folder.
    #[error("app path is not a directory")]
    NotADirectory,
}

/// How Applications are rendered: the engine (built from argocd-cm's
/// `kustomize.buildOptions`), the tracking method, and the namespace of
/// the Argo CD control plane.
#[derive(Debug)]
pub struct Settings {
    /// Builds the applications' folders.
    pub engine: Engine,
    /// How objects are marked.
    pub tracking: Tracking,
    /// The namespace Argo CD runs in: an Application elsewhere is named
    /// `namespace_name`.
    pub control_plane_namespace: String,
}

/// The `kustomize:` section of a source.
#[derive(Debug, Clone, Default)]
struct Overrides {
    name_prefix: String,
    name_suffix: String,
    images: Vec<String>,
    replicas: Vec<(String, Node)>,
    common_labels: BTreeMap<String, String>,
    common_annotations: BTreeMap<String, String>,
    annotations_envsubst: bool,
    force_labels: bool,
    force_annotations: bool,
    label_without_selector: bool,
    label_include_templates: bool,
    namespace: String,
    patches: Vec<Node>,
    components: Vec<String>,
    ignore_missing_components: bool,
    kube_version: String,
    api_versions: Vec<String>,
}

/// One source of an Application.
#[derive(Debug, Clone)]
struct Source {
    repo_url: String,
    path: String,
    target_revision: String,
    is_chart: bool,
    /// The `kustomize:` section as written (`None` when absent).
    kustomize: Option<Node>,
    /// `directory.recurse`: a Directory source reads its subfolders too.
    recurse: bool,
}

/// An Argo CD Application, as read from its file.
#[derive(Debug, Clone)]
pub struct Application {
    /// `metadata.name`.
    pub name: String,
    /// `metadata.namespace` (may be empty).
    pub namespace: String,
    /// The file it was read from, relative to the side's top.
    pub file: PathBuf,
    project: String,
    destination_namespace: String,
    sources: Vec<Source>,
}

impl Application {
    /// Reads an Application found in a file.
    pub fn read(found: &Found) -> Result<Application> {
        let node = &found.node;
        let f = Fields::new("Application", node, &found.file);
        let meta = node.get("metadata").cloned().unwrap_or_else(Node::map);
        let name = f.string(&meta, "metadata", "name")?;
        if !is_dns_subdomain(&name) {
            return Err(f.error(format!(
                "metadata.name '{name}': must be a lowercase RFC 1123 subdomain (letters, digits, '-' and '.', at most 253)"
            )));
        }
        let spec = node.get("spec").cloned().unwrap_or_else(Node::map);
        let destination = spec.get("destination").cloned().unwrap_or_else(Node::map);
        let source_nodes: Vec<&Node> = match f.maps(&spec, "spec", "sources")? {
            many if !many.is_empty() => many,
            _ => spec.get("source").into_iter().collect(),
        };
        let mut sources = Vec::new();
        for s in source_nodes {
            let kustomize = s.get("kustomize").filter(|k| !k.is_null()).cloned();
            if let Some(k) = &kustomize {
                f.known(k, "spec.source.kustomize", &KUSTOMIZE_FIELDS)?;
            }
            let directory = s.get("directory").filter(|d| !d.is_null());
            if let Some(d) = directory {
                f.known(d, "spec.source.directory", &["recurse"])?;
            }
            sources.push(Source {
                recurse: match directory {
                    Some(d) => f.boolean(d, "spec.source.directory", "recurse")?,
                    None => false,
                },
                repo_url: f.string(s, "spec.source", "repoURL")?,
                path: f.string(s, "spec.source", "path")?,
                target_revision: f.string(s, "spec.source", "targetRevision")?,
                is_chart: !f.string(s, "spec.source", "chart")?.is_empty(),
                kustomize,
            });
        }
        let namespace = f.string(&meta, "metadata", "namespace")?;
        if !namespace.is_empty() && (namespace.contains('.') || !is_dns_subdomain(&namespace)) {
            return Err(f.error(format!(
                "metadata.namespace '{namespace}': must be a lowercase RFC 1123 label"
            )));
        }
        Ok(Application {
            name,
            namespace,
            file: found.file.clone(),
            project: f.string(&spec, "spec", "project")?,
            destination_namespace: f.string(&destination, "spec.destination", "namespace")?,
            sources,
        })
    }

    /// Its name as listed: `namespace/name`, or `name`.
    pub fn shown_name(&self) -> String {
        if self.namespace.is_empty() {
            self.name.clone()
        } else {
            format!("{}/{}", self.namespace, self.name)
        }
    }

    /// The name Argo CD gives the application's objects: `name`, or
    /// `namespace_name` outside the control plane's namespace.
    fn instance_name(&self, control_plane_namespace: &str) -> String {
        if self.namespace.is_empty() || self.namespace == control_plane_namespace {
            self.name.clone()
        } else {
            format!("{}_{}", self.namespace, self.name)
        }
    }

    /// Whether one of its sources is a folder of this repository (what
    /// `krusty diff` renders of the Applications it finds).
    pub fn renders_here(&self, side: &Side) -> bool {
        self.sources.iter().any(|s| {
            !s.is_chart && !Path::new(&s.path).is_absolute() && side.top.join(&s.path).is_dir()
        })
    }

    /// Renders every source (their objects one after another, as Argo CD
    /// joins them), recording what was read.
    pub fn render(&self, side: &Side, settings: &Settings) -> Rendered {
        let mut inputs = Inputs::default();
        inputs.files.insert(self.file.clone());
        let mut objects = Vec::new();
        for source in &self.sources {
            if source.is_chart || (self.sources.len() > 1 && source.path.is_empty()) {
                continue;
            }
            match self.render_source(source, side, settings, &mut inputs) {
                Ok(more) => objects.extend(more),
                Err(e) => {
                    return Rendered {
                        rendering: Rendering::Failed(side.relative_text(&e.to_string())),
                        inputs,
                    }
                }
            }
        }
        Rendered {
            rendering: Rendering::Objects(objects),
            inputs,
        }
    }

    fn error(&self, message: impl std::fmt::Display) -> Error {
        Error::Object {
            kind: "Application",
            name: self.shown_name(),
            file: self.file.clone(),
            message: message.to_string(),
        }
    }

    fn render_source(
        &self,
        source: &Source,
        side: &Side,
        settings: &Settings,
        inputs: &mut Inputs,
    ) -> Result<Vec<krusty_resource::Resource>> {
        if let Some(link) = side.escaping_link() {
            // Argo CD's repo-server refuses such a checkout outright.
            inputs.folders.insert(PathBuf::new());
            return Err(self.error(format!(
                "repository contains out-of-bounds symlinks. file: {}",
                link.display()
            )));
        }
        let app_dir = app_path(side, &source.path).map_err(|e| self.error(e))?;
        let rel_dir = app_dir
            .strip_prefix(&side.top)
            .unwrap_or(Path::new(""))
            .to_path_buf();
        let instance = self.instance_name(&settings.control_plane_namespace);
        let mut source = source.clone();
        merge_source_parameters(&mut source, &app_dir, &rel_dir, &instance, inputs)
            .map_err(|e| self.error(e))?;
        for name in KUSTOMIZATION_FILES {
            inputs.files.insert(rel_dir.join(name));
        }
        if !is_kustomize(&source, &app_dir) {
            let mut objects = directory_objects(&app_dir, &rel_dir, source.recurse, inputs)
                .map_err(|e| self.error(e))?;
            track(
                &mut objects,
                settings.tracking,
                &instance,
                &self.destination_namespace,
            );
            return Ok(objects);
        }
        let env = BuildEnv::new(self, &source, &instance, side);
        if source
            .kustomize
            .as_ref()
            .is_some_and(|k| krusty_yaml::to_go_json(k).contains("ARGOCD_APP_REVISION"))
        {
            // The rendering names the revision: every change touches it.
            inputs.folders.insert(PathBuf::new());
        }
        let overrides = match &source.kustomize {
            Some(k) => read_overrides(&Fields::new("Application", k, &self.file), k)?,
            None => Overrides::default(),
        };
        let text = match &source.kustomize {
            Some(_) => edited_kustomization(
                &overrides,
                &app_dir,
                &side.top,
                &env,
                settings.engine.options().kustomize_version,
            )
            .map_err(|e| self.error(e))?,
            None => None,
        };
        let kube_version = kube_version(&overrides.kube_version).map_err(|e| self.error(e))?;
        let request = BuildRequest {
            kustomization: text.map(Into::into),
            ..BuildRequest::default()
        };
        // With Helm on, the source's Kubernetes and API versions are Helm
        // flags of its build (Argo CD passes them to Kustomize v5.3.0 and
        // later only then).
        let helm = &settings.engine.options().helm;
        let own_engine = (helm.enabled
            && (!kube_version.is_empty() || !overrides.api_versions.is_empty()))
        .then(|| {
            let mut options = settings.engine.options().clone();
            if !kube_version.is_empty() {
                options.helm.kube_version = kube_version.clone();
            }
            if !overrides.api_versions.is_empty() {
                options.helm.api_versions = overrides.api_versions.clone();
            }
            Engine::new(options)
        });
        let engine = own_engine.as_ref().unwrap_or(&settings.engine);
        let rendered = render_folder(side, engine, &rel_dir, &request);
        inputs.files.extend(rendered.inputs.files);
        inputs.folders.extend(rendered.inputs.folders);
        let mut objects = match rendered.rendering {
            Rendering::Objects(objects) => objects,
            Rendering::Failed(e) => return Err(self.error(e)),
            Rendering::Absent => Vec::new(),
        };
        track(
            &mut objects,
            settings.tracking,
            &instance,
            &self.destination_namespace,
        );
        Ok(objects)
    }
}

/// The objects of a Directory source: every `.yaml`, `.yml` and `.json`
/// file of the folder (and, with `recurse`, of its subfolders, names
/// starting with `.` left out), in path order, each file's objects in
/// order; the files are inputs.
fn directory_objects(
    dir: &Path,
    rel_dir: &Path,
    recurse: bool,
    inputs: &mut Inputs,
) -> std::result::Result<Vec<krusty_resource::Resource>, SourceError> {
    inputs.folders.insert(rel_dir.to_path_buf());
    let mut files = Vec::new();
    let mut folders = vec![PathBuf::new()];
    while let Some(rel) = folders.pop() {
        let listing = std::fs::read_dir(dir.join(&rel)).map_err(|source| FileError::Io {
            path: rel_dir.join(&rel),
            source,
        })?;
        for entry in listing.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() && recurse && !name.starts_with('.') {
                folders.push(rel.join(&name));
            } else if kind.is_file() && [".yaml", ".yml", ".json"].iter().any(|e| name.ends_with(e))
            {
                files.push(rel.join(&name));
            }
        }
    }
    files.sort();
    let mut objects = Vec::new();
    for rel in files {
        let shown = rel_dir.join(&rel);
        let text = std::fs::read_to_string(dir.join(&rel)).map_err(|source| FileError::Io {
            path: shown.clone(),
            source,
        })?;
        let docs = krusty_yaml::parse_stream(&text).map_err(|source| FileError::Yaml {
            path: shown.clone(),
            source,
        })?;
        for root in docs
            .into_iter()
            .filter_map(|d| d.root)
            .filter(|r| !r.is_null())
        {
            // An object with an `items` list is a list: its items are the
            // objects (Argo CD's `IsList`).
            let items = match root.get("items").and_then(Node::as_seq) {
                Some(items) => items.iter().cloned().collect(),
                None => vec![root],
            };
            for item in items {
                if item.as_map().is_none() {
                    return Err(SourceError::NotAnObject(shown));
                }
                let r = krusty_resource::Resource::from_node(item).map_err(|source| {
                    SourceError::Resource {
                        path: shown.clone(),
                        source,
                    }
                })?;
                objects.push(r);
            }
        }
    }
    Ok(objects)
}

/// A `kubeVersion` as Argo CD reads it (apimachinery's `ParseGeneric`,
/// printed back): an optional `v`, two or more dot-separated numbers (the
/// first without a leading zero), anything after them dropped; empty
/// stays empty.
fn kube_version(raw: &str) -> std::result::Result<String, SourceError> {
    let text = raw.trim();
    if text.is_empty() {
        return Ok(String::new());
    }
    let bad = |why: VersionError| SourceError::KubeVersion {
        raw: raw.to_string(),
        why,
    };
    let numbers = text.strip_prefix('v').unwrap_or(text);
    let end = numbers
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(numbers.len());
    let parts: Vec<&str> = numbers[..end].split('.').collect();
    if parts.len() < 2 || parts.iter().any(|p| p.is_empty()) {
        return Err(bad(VersionError::NotAVersion(text.to_string())));
    }
    if parts[0].len() > 1 && parts[0].starts_with('0') {
        return Err(bad(VersionError::ZeroPrefixed {
            part: parts[0].to_string(),
            text: text.to_string(),
        }));
    }
    Ok(parts.join("."))
}

/// Whether `name` is a valid Kubernetes object name (RFC 1123 subdomain).
fn is_dns_subdomain(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 253
        && name.split('.').all(|label| {
            !label.is_empty()
                && label
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
                && !label.starts_with('-')
                && !label.ends_with('-')
        })
}

/// Whether a source is a Kustomize app: it has a `kustomize:` section, or
/// its folder holds a kustomization file.
fn is_kustomize(source: &Source, app_dir: &Path) -> bool {
    source.kustomize.is_some()
        || KUSTOMIZATION_FILES
            .iter()
            .any(|n| app_dir.join(n).is_file())
}

/// The application's folder: `path` joined to the top (cleaned), which
/// must stay inside it, exist and be a folder.
fn app_path(side: &Side, path: &str) -> std::result::Result<PathBuf, SourceError> {
    let bad = |why: AppPathError| SourceError::AppPath {
        path: path.to_string(),
        why,
    };
    if Path::new(path).is_absolute() {
        return Err(bad(AppPathError::Absolute));
    }
    let mut dir = side.top.clone();
    for c in Path::new(path).components() {
        match c {
            Component::Normal(name) => dir.push(name),
            Component::ParentDir => {
                if dir == side.top {
                    return Err(bad(AppPathError::OutsideRoot));
                }
                dir.pop();
            }
            _ => {}
        }
    }
    if !dir.exists() {
        return Err(bad(AppPathError::Missing));
    }
    if !dir.is_dir() {
        return Err(bad(AppPathError::NotADirectory));
    }
    let resolved = std::fs::canonicalize(&dir).map_err(SourceError::Resolve)?;
    if !resolved.starts_with(&side.top) {
        return Err(bad(AppPathError::OutsideRoot));
    }
    Ok(dir)
}

/// Merges `.argocd-source.yaml`, then `.argocd-source-<app>.yaml`, of the
/// application's folder into the source as JSON merge patches; the
/// source's repository, path, chart and revision stay as they were.
fn merge_source_parameters(
    source: &mut Source,
    app_dir: &Path,
    rel_dir: &Path,
    instance: &str,
    inputs: &mut Inputs,
) -> std::result::Result<(), SourceError> {
    for name in [
        ".argocd-source.yaml".to_string(),
        format!(".argocd-source-{instance}.yaml"),
    ] {
        let path = app_dir.join(&name);
        inputs.files.insert(rel_dir.join(&name));
        if !path.is_file() {
            continue;
        }
        let text = std::fs::read_to_string(&path).map_err(|source| FileError::Io {
            path: PathBuf::from(&name),
            source,
        })?;
        let root = krusty_yaml::parse_stream(&text)
            .map_err(|source| FileError::Yaml {
                path: PathBuf::from(&name),
                source,
            })?
            .into_iter()
            .find_map(|d| d.root);
        let Some(patch) = root else { continue };
        if let Some(k) = patch.get("kustomize") {
            let mut current = source.kustomize.take().unwrap_or_else(Node::map);
            if k.is_null() {
                source.kustomize = None;
                continue;
            }
            merge_patch(&mut current, k);
            source.kustomize = Some(current);
        }
    }
    Ok(())
}

/// RFC 7386: mappings merge key by key, `null` removes, anything else
/// replaces.
fn merge_patch(target: &mut Node, patch: &Node) {
    let Some(entries) = patch.as_map() else {
        *target = patch.clone();
        return;
    };
    if target.as_map().is_none() {
        *target = Node::map();
    }
    for (k, v) in entries {
        let Some(key) = k.as_str() else { continue };
        if v.is_null() {
            target.remove(key);
            continue;
        }
        match target.get_mut(key) {
            Some(existing) if v.as_map().is_some() => merge_patch(existing, v),
            _ if v.as_map().is_some() => {
                let mut value = Node::map();
                merge_patch(&mut value, v);
                target.set(key, value);
            }
            _ => target.set(key, v.clone()),
        }
    }
}

fn read_overrides(f: &Fields, k: &Node) -> Result<Overrides> {
    let field = "spec.source.kustomize";
    let mut replicas = Vec::new();
    for r in f.maps(k, field, "replicas")? {
        let name = f.string(r, "spec.source.kustomize.replicas", "name")?;
        let count = r.get("count").cloned().unwrap_or_else(Node::null);
        replicas.push((name, count));
    }
    Ok(Overrides {
        name_prefix: f.string(k, field, "namePrefix")?,
        name_suffix: f.string(k, field, "nameSuffix")?,
        images: f.strings(k, field, "images")?,
        replicas,
        common_labels: f.string_map(k, field, "commonLabels")?,
        common_annotations: f.string_map(k, field, "commonAnnotations")?,
        annotations_envsubst: f.boolean(k, field, "commonAnnotationsEnvsubst")?,
        force_labels: f.boolean(k, field, "forceCommonLabels")?,
        force_annotations: f.boolean(k, field, "forceCommonAnnotations")?,
        label_without_selector: f.boolean(k, field, "labelWithoutSelector")?,
        label_include_templates: f.boolean(k, field, "labelIncludeTemplates")?,
        namespace: f.string(k, field, "namespace")?,
        patches: f.maps(k, field, "patches")?.into_iter().cloned().collect(),
        components: f.strings(k, field, "components")?,
        ignore_missing_components: f.boolean(k, field, "ignoreMissingComponents")?,
        kube_version: f.string(k, field, "kubeVersion")?,
        api_versions: f.strings(k, field, "apiVersions")?,
    })
}

/// The build environment Argo CD substitutes into images, label values
/// and (when asked) annotation values.
struct BuildEnv(Vec<(&'static str, String)>);

impl BuildEnv {
    fn new(app: &Application, source: &Source, instance: &str, side: &Side) -> BuildEnv {
        let revision = side.revision.clone();
        let short = |n: usize| revision.chars().take(n).collect::<String>();
        BuildEnv(vec![
            ("ARGOCD_APP_NAME", instance.to_string()),
            ("ARGOCD_APP_NAMESPACE", app.destination_namespace.clone()),
            ("ARGOCD_APP_PROJECT_NAME", app.project.clone()),
            ("ARGOCD_APP_REVISION", revision.clone()),
            ("ARGOCD_APP_REVISION_SHORT", short(7)),
            ("ARGOCD_APP_REVISION_SHORT_8", short(8)),
            ("ARGOCD_APP_SOURCE_REPO_URL", source.repo_url.clone()),
            ("ARGOCD_APP_SOURCE_PATH", source.path.clone()),
            (
                "ARGOCD_APP_SOURCE_TARGET_REVISION",
                source.target_revision.clone(),
            ),
        ])
    }

    fn lookup(&self, name: &str) -> String {
        if name == "$" {
            return "$".into();
        }
        self.0
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.clone())
            .unwrap_or_default()
    }

    /// `text` with `$NAME` and `${NAME}` replaced as Go's `os.Expand`
    /// replaces them (unknown names by nothing, `$$` by `$`).
    fn substitute(&self, text: &str) -> String {
        let bytes = text.as_bytes();
        let mut out = String::with_capacity(text.len());
        let mut i = 0;
        let mut literal_from = 0;
        while i < bytes.len() {
            if bytes[i] != b'$' || i + 1 >= bytes.len() {
                i += 1;
                continue;
            }
            out.push_str(&text[literal_from..i]);
            let (name, width) = shell_name(&text[i + 1..]);
            if name.is_none() && width == 0 {
                // `$` before a character that starts no name stays.
                out.push('$');
            } else if let Some(name) = name {
                out.push_str(&self.lookup(name));
            }
            i += 1 + width;
            literal_from = i;
        }
        out.push_str(&text[literal_from..]);
        out
    }
}

/// The name after a `$` as Go's `os.Expand` reads it, and how many bytes
/// it spans: `{...}` up to the first `}`, one special character, or the
/// longest run of letters, digits and `_`. `(None, 2)` for a bad `${`.
fn shell_name(s: &str) -> (Option<&str>, usize) {
    let bytes = s.as_bytes();
    let special =
        |c: u8| matches!(c, b'*' | b'#' | b'$' | b'@' | b'!' | b'?' | b'-') || c.is_ascii_digit();
    if bytes[0] == b'{' {
        if bytes.len() > 2 && special(bytes[1]) && bytes[2] == b'}' {
            return (Some(&s[1..2]), 3);
        }
        return match s[1..].find('}') {
            Some(0) => (None, 2),
            Some(end) => (Some(&s[1..1 + end]), end + 2),
            None => (None, 1),
        };
    }
    if special(bytes[0]) {
        return (Some(&s[..1]), 1);
    }
    let end = bytes
        .iter()
        .position(|c| !(c.is_ascii_alphanumeric() || *c == b'_'))
        .unwrap_or(bytes.len());
    if end == 0 {
        (None, 0)
    } else {
        (Some(&s[..end]), end)
    }
}

/// The kustomization text after Argo CD's changes, or `None` when the
/// section asks for none (the folder builds as it is).
fn edited_kustomization(
    o: &Overrides,
    app_dir: &Path,
    top: &Path,
    env: &BuildEnv,
    release: krusty_api::KustomizeVersion,
) -> std::result::Result<Option<String>, SourceError> {
    let nothing = o.name_prefix.is_empty()
        && o.name_suffix.is_empty()
        && o.images.is_empty()
        && o.replicas.is_empty()
        && o.common_labels.is_empty()
        && o.common_annotations.is_empty()
        && o.namespace.is_empty()
        && o.patches.is_empty()
        && o.components.is_empty();
    if nothing {
        return Ok(None);
    }
    let edits = !(o.name_prefix.is_empty()
        && o.name_suffix.is_empty()
        && o.images.is_empty()
        && o.replicas.is_empty()
        && o.common_labels.is_empty()
        && o.common_annotations.is_empty()
        && o.namespace.is_empty());
    let mut file = Kustomization::open(app_dir).map_err(|e| match e {
        // With no edit before them, the patches are Argo CD's own step,
        // in its own words.
        SourceError::NoKustomization if !edits && !o.patches.is_empty() => {
            SourceError::NoKustomizationForPatches
        }
        e => e,
    })?;
    if !o.name_prefix.is_empty() {
        file.edit(|k| edit::scalar::set(k, ScalarField::NamePrefix, &o.name_prefix))?;
    }
    if !o.name_suffix.is_empty() {
        file.edit(|k| edit::scalar::set(k, ScalarField::NameSuffix, &o.name_suffix))?;
    }
    if !o.images.is_empty() {
        let images: Vec<String> = o.images.iter().map(|i| env.substitute(i)).collect();
        let parsed = edit::image::parse_args(&images)?;
        file.edit(|k| edit::image::set(k, &parsed))?;
    }
    if !o.replicas.is_empty() {
        let mut args = Vec::new();
        for (name, count) in &o.replicas {
            let text = count.as_str().unwrap_or_default();
            let n: i64 = text
                .trim_start_matches('+')
                .parse()
                .map_err(|_| SourceError::Count(text.to_string()))?;
            args.push(format!("{name}={n}"));
        }
        let counts = edit::replicas::parse_args(&args)?;
        file.edit(|k| edit::replicas::set(k, &counts))?;
    }
    if !o.common_labels.is_empty() {
        let args: Vec<String> = o
            .common_labels
            .iter()
            .map(|(k, v)| format!("{k}:{}", env.substitute(v)))
            .collect();
        let flags = AddFlags {
            force: o.force_labels,
            without_selector: o.label_without_selector,
            include_templates: o.label_include_templates,
            release,
        };
        file.add_metadata(Kind::Label, &args, flags)?;
    }
    if !o.common_annotations.is_empty() {
        let args: Vec<String> = o
            .common_annotations
            .iter()
            .map(|(k, v)| {
                let v = if o.annotations_envsubst {
                    env.substitute(v)
                } else {
                    v.clone()
                };
                format!("{k}:{v}")
            })
            .collect();
        let flags = AddFlags {
            force: o.force_annotations,
            release,
            ..AddFlags::default()
        };
        file.add_metadata(Kind::Annotation, &args, flags)?;
    }
    if !o.namespace.is_empty() {
        file.edit(|k| edit::scalar::set(k, ScalarField::Namespace, &o.namespace))?;
    }
    if !o.patches.is_empty() {
        file.append_patches(&o.patches)?;
    }
    let components = present_components(o, app_dir, top);
    if !components.is_empty() {
        let paths = edit::paths::expand_checked(
            app_dir,
            &components,
            true,
            &krusty_api::EditChecks::default(),
        )?;
        file.edit(|k| {
            let mut notes = Vec::new();
            edit::paths::add(k, PathList::Components, &paths, &mut notes);
        })?;
    }
    file.text().map(Some)
}

/// The components to add: all of them, or (with
/// `ignoreMissingComponents`) those that exist, relative to the
/// application's folder and inside the repository.
fn present_components(o: &Overrides, app_dir: &Path, top: &Path) -> Vec<String> {
    if !o.ignore_missing_components {
        return o.components.clone();
    }
    o.components
        .iter()
        .filter(|c| {
            let joined = crate::discover::clean(&app_dir.join(c.trim_start_matches('/')));
            joined.starts_with(top)
                && std::fs::canonicalize(&joined).is_ok_and(|p| p.starts_with(top))
        })
        .cloned()
        .collect()
}

/// The application's kustomization, being changed in memory as Argo CD
/// changes the file.
struct Kustomization {
    file: KustomizationFile,
    dir: PathBuf,
}

impl Kustomization {
    /// The kustomization file of `dir`, read as `kustomize edit` reads it.
    fn open(dir: &Path) -> std::result::Result<Kustomization, SourceError> {
        let found: Vec<&str> = KUSTOMIZATION_FILES
            .iter()
            .copied()
            .filter(|n| dir.join(n).exists())
            .collect();
        let name = match found.as_slice() {
            [] => return Err(SourceError::NoKustomization),
            [one] => *one,
            many => return Err(SourceError::SeveralKustomizations(many.to_vec())),
        };
        let path = dir.join(name);
        let text = std::fs::read_to_string(&path).map_err(|source| FileError::Io {
            path: path.clone(),
            source,
        })?;
        Kustomization::parse(path, &text, dir)
    }

    fn parse(
        path: PathBuf,
        text: &str,
        dir: &Path,
    ) -> std::result::Result<Kustomization, SourceError> {
        let mut file = KustomizationFile::parse(path, text)?;
        edit::fix::fold_deprecated(&mut file);
        Ok(Kustomization {
            file,
            dir: dir.to_path_buf(),
        })
    }

    /// One `kustomize edit` command's change.
    fn edit(
        &mut self,
        change: impl FnOnce(&mut KustomizationFile),
    ) -> std::result::Result<(), SourceError> {
        change(&mut self.file);
        self.file.complete_type_meta();
        Ok(())
    }

    /// `kustomize edit add label|annotation [flags] PAIRS`.
    fn add_metadata(
        &mut self,
        kind: Kind,
        args: &[String],
        flags: AddFlags,
    ) -> std::result::Result<(), SourceError> {
        let pairs = edit::metadata::check_add(args, kind, flags)?;
        edit::metadata::add(&mut self.file, kind, &pairs, flags)?;
        self.file.complete_type_meta();
        Ok(())
    }

    /// Argo CD's own change: the source's patches after the file's.
    fn append_patches(&mut self, patches: &[Node]) -> std::result::Result<(), SourceError> {
        let text = self.text()?;
        let root = krusty_yaml::parse_stream(&text)
            .map_err(SourceError::Unmarshal)?
            .into_iter()
            .find_map(|d| d.root);
        let Some(mut root) = root.filter(|r| r.as_map().is_some()) else {
            return Err(SourceError::NotAMap);
        };
        match root.get_mut("patches") {
            Some(list) => match list.as_seq_mut() {
                Some(items) => items.extend(patches.iter().cloned()),
                None => {
                    let got = if list.is_null() {
                        "<nil>"
                    } else {
                        "map[string]interface {}"
                    };
                    return Err(SourceError::PatchesNotAList(got));
                }
            },
            None => root.set("patches", Node::seq_of(patches.iter().cloned())),
        }
        let mut out = String::new();
        krusty_yaml::emit_document(&root, &mut out)?;
        let path = self.file.path().to_path_buf();
        *self = Kustomization::parse(path, &out, &self.dir.clone())?;
        Ok(())
    }

    /// The text the changed file would have.
    fn text(&self) -> std::result::Result<String, SourceError> {
        Ok(self.file.render()?)
    }
}

/// Marks every object but CustomResourceDefinitions as Argo CD's manifest
/// generation does: the tracking id `app:group/Kind:namespace/name` (the
/// destination namespace for an object without one), or the instance
/// label.
fn track(
    objects: &mut [krusty_resource::Resource],
    tracking: Tracking,
    instance: &str,
    destination_namespace: &str,
) {
    if tracking == Tracking::None {
        return;
    }
    for r in objects.iter_mut() {
        let id = r.id();
        if id.gvk.group == "apiextensions.k8s.io" && id.gvk.kind == "CustomResourceDefinition" {
            continue;
        }
        if matches!(
            tracking,
            Tracking::Annotation | Tracking::AnnotationAndLabel
        ) {
            let namespace = if id.namespace.is_empty() {
                destination_namespace
            } else {
                id.namespace.as_str()
            };
            let value = format!(
                "{instance}:{}/{}:{namespace}/{}",
                id.gvk.group, id.gvk.kind, id.name
            );
            r.set_annotation("argocd.argoproj.io/tracking-id", &value);
        }
        if matches!(tracking, Tracking::Label | Tracking::AnnotationAndLabel) {
            let value = if tracking == Tracking::AnnotationAndLabel {
                truncate_label(instance)
            } else {
                instance.to_string()
            };
            if let Some(labels) = r
                .node
                .entry_map("metadata")
                .and_then(|m| m.entry_map("labels"))
            {
                labels.set("app.kubernetes.io/instance", Node::string(value));
            }
        }
    }
}

/// A label value cut to 63 characters, without trailing characters that
/// are not letters or digits.
fn truncate_label(value: &str) -> String {
    let cut: String = value.chars().take(63).collect();
    cut.trim_end_matches(|c: char| !c.is_ascii_alphanumeric())
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env() -> BuildEnv {
        BuildEnv(vec![("ARGOCD_APP_NAME", "guestbook".into())])
    }

    #[test]
    fn kube_versions_are_read_as_argo_cd_reads_them() {
        assert_eq!(kube_version("v1.27.3+k3s1").unwrap(), "1.27.3");
        assert_eq!(kube_version("5.6.7+something").unwrap(), "5.6.7");
        assert_eq!(kube_version("1.27").unwrap(), "1.27");
        assert_eq!(kube_version("").unwrap(), "");
        assert!(kube_version("1").is_err());
        assert!(kube_version("abc").is_err());
        assert!(kube_version("01.2").is_err());
    }

    #[test]
    fn substitution_follows_go_os_expand() {
        let e = env();
        assert_eq!(e.substitute("${ARGOCD_APP_NAME}-x"), "guestbook-x");
        assert_eq!(e.substitute("$ARGOCD_APP_NAME.y"), "guestbook.y");
        assert_eq!(e.substitute("$$ARGOCD_APP_NAME"), "$ARGOCD_APP_NAME");
        assert_eq!(e.substitute("${unknown}"), "");
        assert_eq!(e.substitute("a$"), "a$");
        assert_eq!(e.substitute("a$/b"), "a$/b");
        assert_eq!(e.substitute("x${}y"), "xy");
        assert_eq!(e.substitute("${X:-y}"), "");
        assert_eq!(e.substitute("$1a"), "a");
    }
}
