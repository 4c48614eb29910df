//! The Kustomization file: which fields it has and what each holds.

use krusty_yaml::{Node, Value};

use crate::error::{SchemaError, SchemaResult};
use crate::fieldspec::{specs_from_node, FieldSpec};
use crate::generator::{GeneratedKind, GeneratorArgs, GeneratorOptions};
use crate::helm::{self as helm_config, ChartConfig, HelmGlobals};
use crate::image::ImageChange;
use crate::patch::{Json6902Entry, PatchEntry, PatchSource, TextPlace};
use crate::replacement::{self, ReplacementEntry};
use crate::selector::Selector;
use crate::typed::{self, At, Strictness};
use crate::var::{self as vars, Var};
use crate::version::KustomizeVersion;

/// The file names a kustomization may have, in the order Kustomize looks for them.
pub const FILE_NAMES: [&str; 3] = ["kustomization.yaml", "kustomization.yml", "Kustomization"];

/// Every field of the Kustomization API (v1beta1 and the Component kind),
/// and `catalogs` (KEP-2906, which Kustomize does not read).
const KNOWN_FIELDS: [&str; 35] = [
    "buildMetadata",
    "apiVersion",
    "kind",
    "metadata",
    "openapi",
    "namePrefix",
    "nameSuffix",
    "namespace",
    "commonLabels",
    "labels",
    "commonAnnotations",
    "patchesStrategicMerge",
    "patches",
    "patchesJson6902",
    "images",
    "imageTags",
    "replacements",
    "replicas",
    "vars",
    "sortOptions",
    "resources",
    "components",
    "crds",
    "bases",
    "configMapGenerator",
    "secretGenerator",
    "helmGlobals",
    "helmCharts",
    "helmChartInflationGenerator",
    "generatorOptions",
    "configurations",
    "generators",
    "transformers",
    "validators",
    "catalogs",
];

/// One `labels:` entry.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LabelsEntry {
    /// The labels.
    pub pairs: Vec<(String, String)>,
    /// Also add them to selectors (and templates).
    pub include_selectors: bool,
    /// Also add them to pod templates.
    pub include_templates: bool,
    /// Extra fields to add them to.
    pub fields: Vec<FieldSpec>,
}

/// `sortOptions`: how the final output is ordered.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum SortOptions {
    /// Kustomize's default kind-based order, with optional custom first/last kinds.
    #[default]
    Legacy,
    /// Legacy order with explicit lists.
    LegacyWith {
        /// Kinds printed first.
        order_first: Vec<String>,
        /// Kinds printed last.
        order_last: Vec<String>,
    },
    /// Input order.
    Fifo,
}

/// A parsed kustomization file.
#[derive(Debug, Clone, Default)]
pub struct Kustomization {
    /// `Kustomization` or `Component`.
    pub kind: String,
    /// `resources:` followed by the deprecated `bases:`.
    pub resources: Vec<String>,
    /// Where the entries of the list fields are written.
    pub positions: EntryPositions,
    /// `sortOptions`, when given.
    pub sort_options: Option<SortOptions>,
    /// Warnings to print on stderr (deprecations).
    pub warnings: Vec<String>,
    /// `namePrefix`.
    pub name_prefix: String,
    /// `nameSuffix`.
    pub name_suffix: String,
    /// `namespace`.
    pub namespace: String,
    /// `commonLabels`.
    pub common_labels: Vec<(String, String)>,
    /// `labels`.
    pub labels: Vec<LabelsEntry>,
    /// `commonAnnotations`.
    pub common_annotations: Vec<(String, String)>,
    /// `images` (and the older `imageTags`).
    pub images: Vec<ImageChange>,
    /// `replicas`: names, counts and where each entry is written.
    pub replicas: Vec<(String, i64, krusty_yaml::Pos)>,
    /// `configMapGenerator`.
    pub config_map_generator: Vec<GeneratorArgs>,
    /// `secretGenerator`.
    pub secret_generator: Vec<GeneratorArgs>,
    /// `generatorOptions`.
    pub generator_options: Option<GeneratorOptions>,
    /// `configurations`: transformer configuration files.
    pub configurations: Vec<String>,
    /// `crds`: CRD files whose schemas declare name references.
    pub crds: Vec<String>,
    /// `generators`: generator configs (paths or inline YAML).
    pub generators: Vec<String>,
    /// `transformers`: transformer configs (paths or inline YAML).
    pub transformers: Vec<String>,
    /// `validators`: validator configs (paths or inline YAML).
    pub validators: Vec<String>,
    /// `buildMetadata` options.
    pub build_metadata: Vec<String>,
    /// `helmGlobals`, when set (else those of the deprecated
    /// `helmChartInflationGenerator` entries, when they set any).
    pub helm_globals: Option<HelmGlobals>,
    /// `helmCharts`, then the charts of the deprecated
    /// `helmChartInflationGenerator` field.
    pub helm_charts: Vec<ChartConfig>,
    /// `patches:`.
    pub patches: Vec<PatchEntry>,
    /// `patchesStrategicMerge:` (inline patches or file paths).
    pub patches_strategic_merge: Vec<String>,
    /// `patchesJson6902:`.
    pub patches_json6902: Vec<Json6902Entry>,
    /// `vars:`.
    pub vars: Vec<Var>,
    /// `components:` (directories holding a `kind: Component`).
    pub components: Vec<String>,
    /// `replacements:`.
    pub replacements: Vec<ReplacementEntry>,
    /// `openapi:`: a custom schema file or a built-in version.
    pub openapi: Option<OpenApi>,
    /// `catalogs:`: function catalogs (paths, URLs, git or OCI
    /// references) this layer's function configs are looked up in.
    pub catalogs: Vec<String>,
}

/// Where the entries of a kustomization's list fields are written, in
/// entry order (empty when not known: a kustomization not read from a
/// file).
#[derive(Debug, Clone, Default)]
pub struct EntryPositions {
    /// `resources:` then `bases:`.
    pub resources: Vec<krusty_yaml::Pos>,
    /// `components:`.
    pub components: Vec<krusty_yaml::Pos>,
    /// `configurations:`.
    pub configurations: Vec<krusty_yaml::Pos>,
    /// `crds:`.
    pub crds: Vec<krusty_yaml::Pos>,
    /// `generators:`.
    pub generators: Vec<krusty_yaml::Pos>,
    /// `transformers:`.
    pub transformers: Vec<krusty_yaml::Pos>,
    /// `validators:`.
    pub validators: Vec<krusty_yaml::Pos>,
    /// `catalogs:`.
    pub catalogs: Vec<krusty_yaml::Pos>,
}

impl EntryPositions {
    /// Where entry `i` of a list is written (unknown: line 0).
    pub fn at(list: &[krusty_yaml::Pos], i: usize) -> krusty_yaml::Pos {
        list.get(i).copied().unwrap_or_default()
    }
}

/// The `openapi:` field.
#[derive(Debug, Clone, PartialEq)]
pub enum OpenApi {
    /// `path:` a custom OpenAPI document.
    Path(String),
    /// `version:` a built-in schema version.
    Version(String),
    /// Neither (resets to the default schema).
    Default,
}

impl Kustomization {
    /// Parses kustomization text as Kustomize release `version` reads it.
    pub fn parse(text: &str, version: KustomizeVersion) -> SchemaResult<Kustomization> {
        // Kustomize reads kustomization files with go-yaml v2, where a
        // repeated key silently replaces the earlier one.
        let limits = krusty_yaml::Limits::with_duplicate_keys(krusty_yaml::DuplicateKeys::LastWins);
        let docs = krusty_yaml::parse_stream_with(text, limits)?;
        // go-yaml reads the first document alone: an empty one (`---`
        // then `---`), or `null`, is an empty kustomization.
        match docs.into_iter().next().and_then(|d| d.root) {
            Some(root) => Kustomization::from_node(root, text, version),
            None => Err(SchemaError::new(EMPTY)),
        }
    }

    /// Reads a kustomization from its YAML mapping (a file's first
    /// document, or a Composition's inline Kustomization) as Kustomize
    /// release `version` decodes it. `source` is the text `root` was read
    /// from, where the patches written in it are found for messages (any
    /// other text: they are not).
    pub fn from_node(
        mut root: Node,
        source: &str,
        version: KustomizeVersion,
    ) -> SchemaResult<Kustomization> {
        if root.is_null() {
            return Err(SchemaError::new(EMPTY));
        }
        krusty_yaml::retype_as_go_yaml_v2(&mut root);
        let Value::Map(entries) = &root.value else {
            return Err(SchemaError::new("a kustomization must be a YAML mapping"));
        };
        let mut k = Kustomization::with_kind("Kustomization");
        let mut anything_set = false;
        let mut deprecated_helm = None;
        // Kustomize turns the file into JSON before decoding it, and Go
        // writes a JSON object's keys sorted: fields are decoded in that
        // order. It matters where two keys name one field (Go matches
        // field names without regard to case): a list or string takes the
        // later key's value, a map gets the entries of both.
        let mut sorted: Vec<(&str, &Node, &Node)> = entries
            .iter()
            .map(|(key, value)| (key.key_str().unwrap_or(""), key, value))
            .collect();
        sorted.sort_by(|a, b| a.0.cmp(b.0));
        // The deprecated lists are joined to their successors after them.
        let (mut bases, mut image_tags) = (None, None);
        for (written, key, value) in sorted {
            let Some(&name) = KNOWN_FIELDS
                .iter()
                .find(|f| f.eq_ignore_ascii_case(written))
            else {
                return Err(typed::unknown_field(key));
            };
            anything_set |= !matches!(name, "apiVersion" | "kind") && !is_zero(value);
            k.warn_if_deprecated(name, value);
            match name {
                "helmChartInflationGenerator" => deprecated_helm = Some(value),
                "bases" => bases = Some(value),
                "imageTags" => image_tags = Some(value),
                _ => k.read_field(name, value, source, version)?,
            }
        }
        if !anything_set {
            return Err(SchemaError::new(EMPTY));
        }
        for (name, value) in [("bases", bases), ("imageTags", image_tags)] {
            if let Some(value) = value {
                k.read_field(name, value, source, version)?;
            }
        }
        if let Some(value) = deprecated_helm {
            k.add_deprecated_helm(value)?;
        }
        k.check_kind_and_api_version(&root)?;
        Ok(k)
    }

    /// Kustomize's checks of `kind` and `apiVersion` (each when set): the
    /// kind is `Kustomization` or `Component`, and the apiVersion is
    /// `v1alpha1` for a Component and `v1beta1` for anything else. Every
    /// problem found is reported, one per line, with where the field is
    /// written in `root`, the kustomization.
    fn check_kind_and_api_version(&self, root: &Node) -> SchemaResult<()> {
        let field = |name: &str| {
            let node = root.get(name);
            let at = node.map(typed::location).unwrap_or_default();
            (node.and_then(Node::as_str).unwrap_or_default(), at)
        };
        let (api_version, api_version_at) = field("apiVersion");
        let mut problems = Vec::new();
        if !matches!(self.kind.as_str(), "" | "Kustomization" | "Component") {
            let kind_at = field("kind").1;
            problems.push(format!(
                "kind should be Kustomization or Component{kind_at}"
            ));
        }
        let (wanted, of) = match self.kind.as_str() {
            "Component" => ("kustomize.config.k8s.io/v1alpha1", "Component"),
            "" => ("kustomize.config.k8s.io/v1beta1", "Kustomization"),
            other => ("kustomize.config.k8s.io/v1beta1", other),
        };
        if !api_version.is_empty() && api_version != wanted {
            problems.push(format!(
                "apiVersion for {of} should be {wanted}{api_version_at}"
            ));
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(SchemaError::new(problems.join("\n")))
        }
    }

    /// Reads field `name` from `value`; `text` is the file's text (where
    /// inline patches stand in it).
    fn read_field(
        &mut self,
        name: &str,
        value: &Node,
        text: &str,
        version: KustomizeVersion,
    ) -> SchemaResult<()> {
        let at = At {
            owner: "Kustomization",
            path: name,
        };
        match name {
            "kind" if value.is_null() => self.kind = "Kustomization".to_string(),
            "kind" | "apiVersion" => {
                // Kustomize v5.8.1's Go names the embedded `TypeMeta`.
                let path = match version {
                    KustomizeVersion::V5_5_0 => name.to_string(),
                    _ => format!("TypeMeta.{name}"),
                };
                let at = At {
                    owner: "Kustomization",
                    path: &path,
                };
                let text = typed::string(value, at)?;
                if name == "kind" {
                    self.kind = text;
                }
            }
            "resources" => {
                self.resources = typed::string_list(value, at)?;
                self.positions.resources = positions(value).collect();
            }
            // Read after `resources`, which it follows.
            "bases" => {
                self.resources.extend(typed::string_list(value, at)?);
                self.positions.resources.extend(positions(value));
            }
            // A null (e.g. its fields commented out) leaves Go's pointer nil.
            "sortOptions" if value.is_null() => {}
            "sortOptions" => {
                self.sort_options =
                    Some(parse_sort_options(value).map_err(|e| SchemaError::new(e.to_string()))?)
            }
            "namePrefix" => self.name_prefix = typed::string(value, at)?,
            "nameSuffix" => self.name_suffix = typed::string(value, at)?,
            "namespace" => self.namespace = typed::string(value, at)?,
            "commonLabels" => merge_map(&mut self.common_labels, typed::string_map(value, at)?),
            "commonAnnotations" => {
                merge_map(&mut self.common_annotations, typed::string_map(value, at)?)
            }
            "labels" => {
                self.labels.clear();
                for item in typed::array(value, at, "[]Label")? {
                    self.labels.push(read_labels_entry(item)?);
                }
            }
            "images" => {
                self.images = typed::array(value, at, "[]Image")?
                    .iter()
                    .map(|item| read_image(item, name))
                    .collect::<SchemaResult<_>>()?;
            }
            // Read after `images`, whose entries it follows.
            "imageTags" => {
                for item in typed::array(value, at, "[]Image")? {
                    self.images.push(read_image(item, name)?);
                }
            }
            "replicas" => {
                self.replicas.clear();
                for item in typed::array(value, at, "[]Replica")? {
                    self.replicas.push(read_replica(item)?);
                }
            }
            "configMapGenerator" | "secretGenerator" => {
                let kind = if name == "configMapGenerator" {
                    GeneratedKind::ConfigMap
                } else {
                    GeneratedKind::Secret
                };
                let list = typed::array(value, at, "[]GeneratorArgs")?
                    .iter()
                    .map(|g| GeneratorArgs::from_node(kind, g, name, true, version))
                    .collect::<SchemaResult<Vec<_>>>()?;
                match kind {
                    GeneratedKind::ConfigMap => self.config_map_generator = list,
                    GeneratedKind::Secret => self.secret_generator = list,
                }
            }
            "generatorOptions" if !value.is_null() => {
                self.generator_options = Some(GeneratorOptions::from_node(value, name)?)
            }
            "configurations" => {
                self.configurations = typed::string_list(value, at)?;
                self.positions.configurations = positions(value).collect();
            }
            "crds" => {
                self.crds = typed::string_list(value, at)?;
                self.positions.crds = positions(value).collect();
            }
            "components" => {
                self.components = typed::string_list(value, at)?;
                self.positions.components = positions(value).collect();
            }
            "helmGlobals" if !value.is_null() => {
                self.helm_globals = Some(helm_config::read_globals(value)?)
            }
            "helmCharts" => self.helm_charts = helm_config::read_charts(value, version)?,
            "generators" => {
                self.generators = typed::string_list(value, at)?;
                self.positions.generators = positions(value).collect();
            }
            "transformers" => {
                self.transformers = typed::string_list(value, at)?;
                self.positions.transformers = positions(value).collect();
            }
            "validators" => {
                self.validators = typed::string_list(value, at)?;
                self.positions.validators = positions(value).collect();
            }
            "catalogs" => {
                self.catalogs = typed::string_list(value, at)?;
                self.positions.catalogs = positions(value).collect();
            }
            "buildMetadata" => self.build_metadata = typed::string_list(value, at)?,
            "patches" => {
                self.patches.clear();
                for item in typed::array(value, at, "[]Patch")? {
                    let entry = read_patch(item, text, Trim::Both, version)?.ok_or_else(|| {
                        SchemaError::new(format!(
                            "must specify one of patch and path in\n{}",
                            krusty_yaml::to_kustomize_yaml(item).unwrap_or_default()
                        ))
                        .located(None, item.pos())
                    })?;
                    self.patches.push(entry);
                }
            }
            "patchesStrategicMerge" => {
                self.patches_strategic_merge = typed::string_list(value, at)?
            }
            "patchesJson6902" => {
                self.patches_json6902.clear();
                for item in typed::array(value, at, "[]Patch")? {
                    let entry = read_patch(item, text, Trim::No, version)?.ok_or_else(|| {
                        SchemaError::new("empty file path and empty jsonOp")
                            .located(None, item.pos())
                    })?;
                    self.patches_json6902.push(Json6902Entry {
                        target: entry.target.unwrap_or_default(),
                        source: entry.source,
                        text_at: entry.text_at,
                        written_at: item.pos(),
                    });
                }
            }
            "vars" => self.vars = vars::read_vars(value)?,
            "replacements" => {
                self.replacements.clear();
                for item in typed::array(value, at, "[]ReplacementField")? {
                    self.replacements.push(replacement::read_entry(
                        item,
                        Strictness::Strict,
                        version,
                    )?);
                }
            }
            // Only checked: the name it gives is not used.
            "metadata" if !value.is_null() => {
                let known = ["name", "namespace", "labels", "annotations"];
                typed::fields(value, &known, "ObjectMeta", Strictness::Strict)?;
                for (key, field) in value.as_map().map(|m| m.as_slice()).unwrap_or_default() {
                    let name = key.key_str().unwrap_or_default();
                    let path = format!("metadata.{name}");
                    let at = At {
                        owner: "ObjectMeta",
                        path: &path,
                    };
                    match name {
                        "name" | "namespace" => {
                            typed::string(field, at)?;
                        }
                        "labels" | "annotations" => {
                            typed::string_map(field, at)?;
                        }
                        _ => {}
                    }
                }
            }
            "openapi" => {
                let map = typed::string_map(value, at)?;
                let get = |k: &str| map.iter().find(|(key, _)| key == k).map(|(_, v)| v.clone());
                self.openapi = Some(match (get("path"), get("version")) {
                    (Some(_), Some(_)) => {
                        return Err(SchemaError::new(
                            "builtin version and custom schema provided, cannot use both",
                        ))
                    }
                    (Some(path), None) => OpenApi::Path(path),
                    (None, Some(version)) => OpenApi::Version(version),
                    (None, None) => OpenApi::Default,
                });
            }
            _ => {}
        }
        Ok(())
    }

    /// Adds the charts of the deprecated `helmChartInflationGenerator`
    /// field after `helmCharts`; the globals its entries set apply when
    /// `helmGlobals` is not set.
    fn add_deprecated_helm(&mut self, value: &Node) -> SchemaResult<()> {
        let (charts, globals) = helm_config::read_deprecated(value)?;
        if self.helm_globals.is_none() && globals != HelmGlobals::default() {
            self.helm_globals = Some(globals);
        }
        self.helm_charts.extend(charts);
        Ok(())
    }

    fn with_kind(kind: &str) -> Kustomization {
        Kustomization {
            kind: kind.to_string(),
            ..Default::default()
        }
    }
}

impl Kustomization {
    /// Kustomize's warning for a deprecated field that is set (not null:
    /// an empty list or map counts), once per field.
    fn warn_if_deprecated(&mut self, name: &str, value: &Node) {
        let Some((_, instead)) = DEPRECATED.iter().find(|(field, _)| *field == name) else {
            return;
        };
        let warning = match name {
            "vars" => "# Warning: 'vars' is deprecated. Please use 'replacements' instead. [EXPERIMENTAL] Run 'kustomize edit fix' to update your Kustomization automatically.".to_string(),
            _ => format!("# Warning: '{name}' is deprecated. Please use '{instead}' instead. Run 'kustomize edit fix' to update your Kustomization automatically."),
        };
        if !value.is_null() && !self.warnings.contains(&warning) {
            self.warnings.push(warning);
        }
    }
}

/// The deprecated fields Kustomize warns about, and their successors.
const DEPRECATED: [(&str, &str); 6] = [
    ("bases", "resources"),
    ("commonLabels", "labels"),
    ("imageTags", "images"),
    ("patchesJson6902", "patches"),
    ("patchesStrategicMerge", "patches"),
    ("vars", "replacements"),
];

/// Adds `entries` to the map `into` as Go decodes a second object into a
/// map: a key already there takes the new value in its place.
fn merge_map(into: &mut Vec<(String, String)>, entries: Vec<(String, String)>) {
    for (key, value) in entries {
        match into.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = value,
            None => into.push((key, value)),
        }
    }
}

fn read_labels_entry(item: &Node) -> SchemaResult<LabelsEntry> {
    let mut e = LabelsEntry::default();
    for (k, v) in typed::object(
        item,
        At {
            owner: "Kustomization",
            path: "labels",
        },
        "Label",
    )? {
        let key = k.key_str().unwrap_or_default();
        let p = format!("labels.{key}");
        let at = At {
            owner: "Label",
            path: &p,
        };
        match typed::canonical_field(
            key,
            &["pairs", "includeSelectors", "includeTemplates", "fields"],
        ) {
            "pairs" => e.pairs = typed::string_map(v, at)?,
            "includeSelectors" => e.include_selectors = typed::boolean(v, at)?,
            "includeTemplates" => e.include_templates = typed::boolean(v, at)?,
            "fields" => e.fields = specs_from_node(v, "labels.fields", typed::Strictness::Strict)?,
            _ => return Err(typed::unknown_field(k)),
        }
    }
    Ok(e)
}

/// One `patches:` (or `patchesJson6902:`) entry; `None` when it has
/// neither `patch` nor `path`. `text` is the kustomization's text.
/// Whether an inline patch's text is trimmed: Kustomize trims a
/// `patches:` entry's, and hands a `patchesJson6902:` entry's to its
/// decoder as written (a leading blank keeps it from reading as JSON, a
/// final newline of a block scalar stays in the value).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Trim {
    Both,
    No,
}

/// A patch's `options` as Kustomize v5.8.1 reads them: a struct of two
/// booleans, its keys matched without regard to case in sorted order (the
/// last of two spellings wins), any other key an error.
fn read_patch_args(options: &Node, entry: &mut PatchEntry) -> SchemaResult<()> {
    let mut keys: Vec<&(Node, Node)> = typed::object(
        options,
        At {
            owner: "Patch",
            path: "patches.options",
        },
        "types.PatchArgs",
    )?
    .iter()
    .collect();
    keys.sort_by(|a, b| a.0.key_str().cmp(&b.0.key_str()));
    for (key, value) in keys {
        let field = typed::canonical_field(
            key.key_str().unwrap_or_default(),
            &["allowNameChange", "allowKindChange"],
        );
        let at = |path| At {
            owner: "PatchArgs",
            path,
        };
        match field {
            "allowNameChange" => {
                entry.allow_name_change =
                    typed::boolean(value, at("patches.options.allowNameChange"))?
            }
            "allowKindChange" => {
                entry.allow_kind_change =
                    typed::boolean(value, at("patches.options.allowKindChange"))?
            }
            _ => return Err(typed::unknown_field(key)),
        }
    }
    Ok(())
}

fn read_patch(
    item: &Node,
    text: &str,
    trim: Trim,
    version: KustomizeVersion,
) -> SchemaResult<Option<PatchEntry>> {
    let at = |path| At {
        owner: "Patch",
        path,
    };
    let mut patch = String::new();
    let mut patch_node = None;
    let mut path = String::new();
    let mut entry = PatchEntry {
        source: PatchSource::Inline(String::new()),
        target: None,
        allow_name_change: false,
        allow_kind_change: false,
        text_at: None,
        written_at: item.pos(),
    };
    for (k, v) in typed::object(item, at("patches"), "Patch")? {
        let key = k.key_str().unwrap_or_default();
        match typed::canonical_field(key, &["patch", "path", "target", "options"]) {
            "patch" => {
                patch = typed::string(v, at("patches.patch"))?;
                patch_node = Some(v);
            }
            "path" => path = typed::string(v, at("patches.path"))?,
            "target" if !v.is_null() => {
                let field = if trim == Trim::Both {
                    "patches.target"
                } else {
                    "patchesJson6902.target"
                };
                let target =
                    Selector::from_node_in(v, "Selector", field, Strictness::Strict, version)?;
                entry.target = Some(target.written_in(v));
            }
            "target" => {}
            "options" if version >= KustomizeVersion::V5_8_1 => read_patch_args(v, &mut entry)?,
            "options" => {
                for (ok, ov) in typed::object(v, at("patches.options"), "map[string]bool")? {
                    let value = typed::boolean(ov, at("patches.options"))?;
                    match ok.key_str().unwrap_or_default() {
                        "allowNameChange" => entry.allow_name_change = value,
                        "allowKindChange" => entry.allow_kind_change = value,
                        _ => {}
                    }
                }
            }
            _ => return Err(typed::unknown_field(k)),
        }
    }
    if trim == Trim::Both {
        patch = patch.trim().to_string();
    }
    entry.text_at = patch_node.and_then(|n| TextPlace::of_literal(n, text, &patch));
    entry.source = match (patch.is_empty(), path.is_empty()) {
        (false, false) => {
            return Err(SchemaError::new(format!(
                "patch and path can't be set at the same time\n{}",
                krusty_yaml::to_kustomize_yaml(item).unwrap_or_default()
            ))
            .located(None, item.pos()))
        }
        (true, false) => PatchSource::Path(path),
        (false, true) => PatchSource::Inline(patch),
        (true, true) => return Ok(None),
    };
    Ok(Some(entry))
}

fn read_image(item: &Node, field: &str) -> SchemaResult<ImageChange> {
    let mut image = ImageChange::default();
    for (k, v) in typed::object(
        item,
        At {
            owner: "Kustomization",
            path: field,
        },
        "Image",
    )? {
        let key = k.key_str().unwrap_or_default();
        let p = format!("{field}.{key}");
        let at = At {
            owner: "Image",
            path: &p,
        };
        let text = typed::string(v, at)?;
        let fields = ["name", "newName", "newTag", "tagSuffix", "digest"];
        match typed::canonical_field(key, &fields) {
            "name" => image.name = text,
            "newName" => image.new_name = text,
            "newTag" => image.new_tag = text,
            "tagSuffix" => image.tag_suffix = text,
            "digest" => image.digest = text,
            _ => return Err(typed::unknown_field(k)),
        }
    }
    Ok(image)
}

fn read_replica(item: &Node) -> SchemaResult<(String, i64, krusty_yaml::Pos)> {
    let mut name = String::new();
    let mut count = 0;
    for (k, v) in typed::object(
        item,
        At {
            owner: "Kustomization",
            path: "replicas",
        },
        "Replica",
    )? {
        let key = k.key_str().unwrap_or_default();
        let p = format!("replicas.{key}");
        let at = At {
            owner: "Replica",
            path: &p,
        };
        match typed::canonical_field(key, &["name", "count"]) {
            "name" => name = typed::string(v, at)?,
            "count" => count = typed::integer(v, at)?,
            _ => return Err(typed::unknown_field(k)),
        }
    }
    Ok((name, count, item.pos()))
}

/// Kustomize's error for a kustomization that sets nothing.
const EMPTY: &str = "kustomization.yaml is empty";

/// `true` for a value Go decodes to its zero value (null, "", false, 0);
/// an empty list or map is not zero.
fn is_zero(n: &Node) -> bool {
    match &n.value {
        Value::Scalar(s) => match typed::json_type(n) {
            "null" => true,
            "string" => s.text.is_empty(),
            "bool" => matches!(
                krusty_yaml::resolve_input(n),
                krusty_yaml::Resolved::Bool(false)
            ),
            _ => matches!(krusty_yaml::resolve_input(n), krusty_yaml::Resolved::Int(0)),
        },
        _ => false,
    }
}

fn string_list(field: &str, n: &Node) -> SchemaResult<Vec<String>> {
    if n.is_null() {
        return Ok(Vec::new());
    }
    let Some(items) = n.as_seq() else {
        return Err(SchemaError::new(format!(
            "the field '{field}' (line {}) must be a list of strings",
            n.pos().line
        )));
    };
    items
        .iter()
        .map(|i| {
            i.as_scalar().map(|s| s.text.to_string()).ok_or_else(|| {
                SchemaError::new(format!(
                    "the field '{field}' (line {}) must be a list of strings",
                    i.pos().line
                ))
            })
        })
        .collect()
}

fn parse_sort_options(n: &Node) -> SchemaResult<SortOptions> {
    let fields = typed::fields(
        n,
        &["order", "legacySortOptions"],
        "SortOptions",
        Strictness::Strict,
    )?;
    let field = |name: &str| fields.iter().find(|(k, _)| *k == name).map(|(_, v)| *v);
    let order_node = field("order");
    let order = order_node.and_then(Node::as_str).unwrap_or("");
    let legacy = field("legacySortOptions").filter(|l| !l.is_null());
    match order {
        "fifo" => {
            if let Some(legacy) = legacy {
                return Err(SchemaError::new(
                    "the field 'sortOptions.legacySortOptions' is set but the selected sort order is 'fifo', not 'legacy'",
                )
                .located(None, legacy.pos()));
            }
            Ok(SortOptions::Fifo)
        }
        "legacy" => match legacy {
            None => Ok(SortOptions::Legacy),
            Some(l) => {
                let known = ["orderFirst", "orderLast"];
                let lists = typed::fields(l, &known, "LegacySortOptions", Strictness::Strict)?;
                let list = |name: &str| -> SchemaResult<Vec<String>> {
                    match lists.iter().find(|(k, _)| *k == name) {
                        Some((_, v)) => {
                            string_list(&format!("sortOptions.legacySortOptions.{name}"), v)
                        }
                        None => Ok(Vec::new()),
                    }
                };
                Ok(SortOptions::LegacyWith {
                    order_first: list("orderFirst")?,
                    order_last: list("orderLast")?,
                })
            }
        },
        _ => Err(
            SchemaError::new("the field 'sortOptions.order' must be one of [fifo, legacy]")
                .located(None, order_node.unwrap_or(n).pos()),
        ),
    }
}

/// Where each item of a list is written (none for a null).
fn positions(list: &Node) -> impl Iterator<Item = krusty_yaml::Pos> + '_ {
    list.as_seq()
        .into_iter()
        .flat_map(|items| items.iter().map(Node::pos))
}
