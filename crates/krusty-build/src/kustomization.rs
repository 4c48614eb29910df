//! The Kustomization file: which fields it has and what each holds.

use std::path::Path;

use krusty_yaml::{Node, Value};

use crate::error::{BuildError, BuildResult};

/// The file names a kustomization may have, in the order Kustomize looks for them.
pub const FILE_NAMES: [&str; 3] = ["kustomization.yaml", "kustomization.yml", "Kustomization"];

/// Every field of the Kustomization API (v1beta1 and the Component kind).
const KNOWN_FIELDS: [&str; 33] = [
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
];

/// Fields krusty reads today; the others are reported as not supported yet
/// when they hold anything, rather than silently ignored.
const SUPPORTED_FIELDS: [&str; 6] = [
    "apiVersion",
    "kind",
    "metadata",
    "resources",
    "bases",
    "sortOptions",
];

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
    /// `sortOptions`, when given.
    pub sort_options: Option<SortOptions>,
    /// Warnings to print on stderr (deprecations).
    pub warnings: Vec<String>,
}

impl Kustomization {
    /// Finds and parses the kustomization file in `dir`.
    pub fn load(dir: &Path) -> BuildResult<(Kustomization, std::path::PathBuf)> {
        let found: Vec<_> = FILE_NAMES
            .iter()
            .map(|n| dir.join(n))
            .filter(|p| p.is_file())
            .collect();
        let path = match found.as_slice() {
            [one] => one.clone(),
            [] => {
                return Err(BuildError::new(format!(
                    "unable to find one of 'kustomization.yaml', 'kustomization.yml' or 'Kustomization' in directory '{}'",
                    dir.display()
                )))
            }
            _ => {
                return Err(BuildError::new(format!(
                    "Found multiple kustomization files under: {}",
                    dir.display()
                )))
            }
        };
        let text = crate::loader::read_text(&path)?;
        let k = Kustomization::parse(&text)
            .map_err(|e| e.context(format!("invalid kustomization file {}", path.display())))?;
        Ok((k, path))
    }

    /// Parses kustomization text.
    pub fn parse(text: &str) -> BuildResult<Kustomization> {
        let docs = krusty_yaml::parse_stream(text).map_err(|e| BuildError::new(e.to_string()))?;
        let root = match docs.into_iter().find_map(|d| d.root) {
            None => return Ok(Kustomization::with_kind("Kustomization")),
            Some(r) => r,
        };
        let Value::Map(entries) = &root.value else {
            return Err(BuildError::new("a kustomization must be a YAML mapping"));
        };
        let mut k = Kustomization::with_kind("Kustomization");
        for (key, value) in entries {
            let name = key.key_str().unwrap_or("");
            if !KNOWN_FIELDS.contains(&name) {
                return Err(BuildError::new(format!(
                    "json: unknown field \"{name}\" (line {})",
                    key.pos.line
                )));
            }
            if !SUPPORTED_FIELDS.contains(&name) && !is_empty(value) {
                return Err(BuildError::new(format!(
                    "the field '{name}' (line {}) is not supported by krusty yet",
                    key.pos.line
                )));
            }
            match name {
                "kind" => k.kind = value.as_str().unwrap_or("Kustomization").to_string(),
                "resources" => k.resources.extend(string_list(name, value)?),
                "bases" => {
                    k.warnings.push("# Warning: 'bases' is deprecated. Please use 'resources' instead. Run 'kustomize edit fix' to update your Kustomization automatically.".into());
                    k.resources.extend(string_list(name, value)?)
                }
                "sortOptions" => k.sort_options = Some(parse_sort_options(value)?),
                _ => {}
            }
        }
        let api_version = root.get("apiVersion").and_then(Node::as_str);
        if k.kind == "Component" && api_version != Some("kustomize.config.k8s.io/v1alpha1") {
            return Err(BuildError::new(
                "apiVersion for Component should be kustomize.config.k8s.io/v1alpha1",
            ));
        }
        Ok(k)
    }

    fn with_kind(kind: &str) -> Kustomization {
        Kustomization {
            kind: kind.to_string(),
            ..Default::default()
        }
    }
}

fn is_empty(n: &Node) -> bool {
    match &n.value {
        Value::Scalar(_) => n.is_null(),
        Value::Seq(s) => s.is_empty(),
        Value::Map(m) => m.is_empty(),
    }
}

fn string_list(field: &str, n: &Node) -> BuildResult<Vec<String>> {
    if n.is_null() {
        return Ok(Vec::new());
    }
    let Some(items) = n.as_seq() else {
        return Err(BuildError::new(format!(
            "the field '{field}' (line {}) must be a list of strings",
            n.pos.line
        )));
    };
    items
        .iter()
        .map(|i| {
            i.as_scalar().map(|s| s.text.clone()).ok_or_else(|| {
                BuildError::new(format!(
                    "the field '{field}' (line {}) must be a list of strings",
                    i.pos.line
                ))
            })
        })
        .collect()
}

fn parse_sort_options(n: &Node) -> BuildResult<SortOptions> {
    let order = n.get("order").and_then(Node::as_str).unwrap_or("");
    let legacy = n.get("legacySortOptions").filter(|l| !l.is_null());
    match order {
        "fifo" => {
            if legacy.is_some() {
                return Err(BuildError::new(
                    "the field 'sortOptions.legacySortOptions' is set but the selected sort order is 'fifo', not 'legacy'",
                ));
            }
            Ok(SortOptions::Fifo)
        }
        "legacy" => match legacy {
            None => Ok(SortOptions::Legacy),
            Some(l) => Ok(SortOptions::LegacyWith {
                order_first: match l.get("orderFirst") {
                    Some(v) => string_list("sortOptions.legacySortOptions.orderFirst", v)?,
                    None => Vec::new(),
                },
                order_last: match l.get("orderLast") {
                    Some(v) => string_list("sortOptions.legacySortOptions.orderLast", v)?,
                    None => Vec::new(),
                },
            }),
        },
        _ => Err(BuildError::new(
            "the field 'sortOptions.order' must be one of [fifo, legacy]",
        )),
    }
}
