//! ConfigMapGenerator and SecretGenerator entries as written: the name,
//! the literals, files and env files, and the options. Making the object
//! is the operations' job.

use krusty_yaml::{Node, Pos};

use crate::error::SchemaResult;
use crate::typed::{self, At};
use crate::version::KustomizeVersion;

/// How a generated resource combines with an existing one of the same id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Behavior {
    /// Not a generated resource, or no behavior given.
    #[default]
    Unspecified,
    /// Must not exist yet.
    Create,
    /// Replaces the existing resource's content.
    Replace,
    /// Merges data into the existing resource.
    Merge,
}

impl Behavior {
    /// The name Kustomize records it by (`unspecified`, `create`,
    /// `replace`, `merge`).
    pub fn name(self) -> &'static str {
        match self {
            Behavior::Unspecified => "unspecified",
            Behavior::Create => "create",
            Behavior::Replace => "replace",
            Behavior::Merge => "merge",
        }
    }

    /// Reads a generator's `behavior` field as Kustomize does: a value
    /// other than `create`, `replace` and `merge` is no behavior (and the
    /// generator creates).
    pub fn parse(s: &str) -> Behavior {
        match s {
            "create" => Behavior::Create,
            "replace" => Behavior::Replace,
            "merge" => Behavior::Merge,
            _ => Behavior::Unspecified,
        }
    }
}

/// Which object a generator makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GeneratedKind {
    /// A ConfigMap.
    ConfigMap,
    /// A Secret.
    Secret,
}

impl GeneratedKind {
    /// The kustomization field that lists generators of the kind.
    pub fn field(self) -> &'static str {
        match self {
            GeneratedKind::ConfigMap => "configMapGenerator",
            GeneratedKind::Secret => "secretGenerator",
        }
    }
}

/// `options:` / `generatorOptions:`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct GeneratorOptions {
    /// Labels for the generated object.
    pub labels: Vec<(String, String)>,
    /// Annotations for the generated object.
    pub annotations: Vec<(String, String)>,
    /// No content-hash name suffix.
    pub disable_name_suffix_hash: bool,
    /// Sets `immutable: true`.
    pub immutable: bool,
}

impl GeneratorOptions {
    /// Reads an options mapping; `path` is its JSON path for errors.
    pub fn from_node(node: &Node, path: &str) -> SchemaResult<GeneratorOptions> {
        let mut o = GeneratorOptions::default();
        let field = |name: &str| format!("{path}.{name}");
        for (k, v) in typed::object(
            node,
            At {
                owner: "GeneratorArgs",
                path,
            },
            "GeneratorOptions",
        )? {
            let p = field(k.key_str().unwrap_or_default());
            let at = At {
                owner: "GeneratorOptions",
                path: &p,
            };
            let known = [
                "labels",
                "annotations",
                "disableNameSuffixHash",
                "immutable",
            ];
            match typed::canonical_field(k.key_str().unwrap_or_default(), &known) {
                "labels" => o.labels = typed::string_map(v, at)?,
                "annotations" => o.annotations = typed::string_map(v, at)?,
                "disableNameSuffixHash" => o.disable_name_suffix_hash = typed::boolean(v, at)?,
                "immutable" => o.immutable = typed::boolean(v, at)?,
                _ => return Err(typed::unknown_field(k)),
            }
        }
        Ok(o)
    }

    /// Kustomize's merge of kustomization-wide options into a generator's:
    /// the generator's own labels and annotations win; either flag set wins.
    pub fn with_global(mut self, global: &GeneratorOptions) -> GeneratorOptions {
        add_missing(&mut self.labels, &global.labels);
        add_missing(&mut self.annotations, &global.annotations);
        self.disable_name_suffix_hash |= global.disable_name_suffix_hash;
        self.immutable |= global.immutable;
        self
    }
}

/// Appends the pairs of `global` whose keys `local` does not have.
fn add_missing(local: &mut Vec<(String, String)>, global: &[(String, String)]) {
    for (k, v) in global {
        if !local.iter().any(|(lk, _)| lk == k) {
            local.push((k.clone(), v.clone()));
        }
    }
}

/// One generator's arguments.
#[derive(Debug, Clone, PartialEq)]
pub struct GeneratorArgs {
    /// ConfigMap or Secret.
    pub kind: GeneratedKind,
    /// Name of the generated object (before any hash suffix).
    pub name: String,
    /// Namespace, if given.
    pub namespace: String,
    /// How it combines with an existing object of the same id.
    pub behavior: Behavior,
    /// `key=value` literals.
    pub literals: Vec<String>,
    /// `[key=]path` files.
    pub files: Vec<String>,
    /// Env files.
    pub envs: Vec<String>,
    /// Options.
    pub options: GeneratorOptions,
    /// Secret `type` (default `Opaque`).
    pub secret_type: String,
    /// Where the entry and its sources are written in its kustomization,
    /// for messages (nowhere for an entry read from elsewhere).
    pub written_at: EntryAt,
}

/// Where a generator entry, and its `envs`, `literals` and `files` items
/// (item by item), are written.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct EntryAt {
    /// Position of the entry.
    pub entry: Pos,
    /// Positions of the `envs` (and `env`) items.
    pub envs: Vec<Pos>,
    /// Positions of the `literals` items.
    pub literals: Vec<Pos>,
    /// Positions of the `files` items.
    pub files: Vec<Pos>,
}

/// The positions of the items of a list node (none when it is not one).
fn item_positions(node: &Node) -> Vec<Pos> {
    node.as_seq()
        .map(|items| items.iter().map(Node::pos).collect())
        .unwrap_or_default()
}

/// The fields of a generator's arguments (and of a builtin generator's
/// config, which adds `apiVersion`, `kind` and `metadata`).
const ARGS_FIELDS: [&str; 12] = [
    "name",
    "namespace",
    "behavior",
    "literals",
    "files",
    "envs",
    "env",
    "options",
    "type",
    "metadata",
    "apiVersion",
    "kind",
];

impl GeneratorArgs {
    /// Reads a generator entry; `path` is its JSON path for errors
    /// (`configMapGenerator`). `metadata` (of a builtin config) supplies the
    /// name and namespace when the entry has none.
    /// Kustomization entries are read strictly (unknown fields are errors);
    /// builtin configs are not, as in Kustomize.
    pub fn from_node(
        kind: GeneratedKind,
        node: &Node,
        path: &str,
        strict: bool,
        version: KustomizeVersion,
    ) -> SchemaResult<GeneratorArgs> {
        let mut a = GeneratorArgs {
            kind,
            name: String::new(),
            namespace: String::new(),
            behavior: Behavior::Unspecified,
            literals: Vec::new(),
            files: Vec::new(),
            envs: Vec::new(),
            options: GeneratorOptions::default(),
            secret_type: String::new(),
            written_at: EntryAt {
                entry: node.pos(),
                ..EntryAt::default()
            },
        };
        let args = match kind {
            GeneratedKind::ConfigMap => "ConfigMapArgs",
            GeneratedKind::Secret => "SecretArgs",
        };
        // A builtin config decodes into the plugin, which embeds the args.
        let (owner, embedding) = match (strict, kind) {
            (true, _) => (args, ""),
            (false, GeneratedKind::ConfigMap) => ("ConfigMapGeneratorPlugin", "ConfigMapArgs."),
            (false, GeneratedKind::Secret) => ("SecretGeneratorPlugin", "SecretArgs."),
        };
        let prefix = if path.is_empty() {
            String::new()
        } else {
            format!("{path}.")
        };
        let entries = typed::object(
            node,
            At {
                owner: "Kustomization",
                path,
            },
            args,
        )?;
        let mut meta_name = String::new();
        let mut meta_namespace = String::new();
        for (k, v) in entries {
            let key = k.key_str().unwrap_or_default();
            let field = typed::canonical_field(key, &ARGS_FIELDS);
            // Kustomize v5.8.1's Go names the embedded structs a field is
            // in (`GeneratorArgs.KvPairSources.literals`).
            let embedded = match field {
                _ if version < KustomizeVersion::V5_8_1 => String::new(),
                "name" | "namespace" | "behavior" | "options" => {
                    format!("{embedding}GeneratorArgs.")
                }
                "literals" | "files" | "envs" | "env" => {
                    format!("{embedding}GeneratorArgs.KvPairSources.")
                }
                _ => embedding.to_string(),
            };
            let p = format!("{prefix}{embedded}{key}");
            let at = At { owner, path: &p };
            match field {
                "name" => a.name = typed::string(v, at)?,
                "namespace" => a.namespace = typed::string(v, at)?,
                "behavior" => {
                    let text = typed::string(v, at)?;
                    a.behavior = Behavior::parse(&text)
                }
                "literals" => {
                    a.literals = typed::string_list(v, at)?;
                    a.written_at.literals = item_positions(v);
                }
                "files" => {
                    a.files = typed::string_list(v, at)?;
                    a.written_at.files = item_positions(v);
                }
                "envs" => {
                    a.envs.extend(typed::string_list(v, at)?);
                    a.written_at.envs.extend(item_positions(v));
                }
                "env" => {
                    let e = typed::string(v, at)?;
                    if !e.is_empty() {
                        a.envs.push(e);
                        a.written_at.envs.push(v.pos());
                    }
                }
                "options" => a.options = GeneratorOptions::from_node(v, &format!("{path}.{key}"))?,
                "type" if kind == GeneratedKind::Secret => a.secret_type = typed::string(v, at)?,
                "metadata" => {
                    let m = |f: &str| {
                        v.get(f)
                            .map(|n| typed::string(n, at))
                            .transpose()
                            .map(Option::unwrap_or_default)
                    };
                    meta_name = m("name")?;
                    meta_namespace = m("namespace")?;
                }
                "apiVersion" | "kind" => {}
                _ if !strict => {}
                _ => return Err(typed::unknown_field(k)),
            }
        }
        if a.name.is_empty() {
            a.name = meta_name;
        }
        if a.namespace.is_empty() {
            a.namespace = meta_namespace;
        }
        if !strict {
            // A builtin config's positions are in a file messages do not name.
            a.written_at = EntryAt::default();
        }
        Ok(a)
    }
}
