//! ConfigMapGenerator and SecretGenerator: make a ConfigMap or Secret from
//! literals, files and env files.

use base64::Engine;
use krusty_resource::{Behavior, Resource};
use krusty_yaml::{Node, Pos, ThinVec, Value};

use super::kv;
use crate::error::{OpError, OpResult};
use crate::files::FileSource;
use crate::typed::{self, At};
use crate::version::KustomizeVersion;

/// Which object a generator makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GeneratedKind {
    /// A ConfigMap.
    ConfigMap,
    /// A Secret.
    Secret,
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
    pub fn from_node(node: &Node, path: &str) -> OpResult<GeneratorOptions> {
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
                _ => return Err(typed::unknown_field(k).into()),
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

/// Where a key/value pair comes from: a kustomization item, or a line
/// of an env file.
#[derive(Clone, Copy)]
enum PairAt<'a> {
    Item(Pos),
    EnvLine(&'a str, u32),
}

impl PairAt<'_> {
    /// `e`, located where the pair is written.
    fn locate(self, e: OpError) -> OpError {
        match self {
            PairAt::Item(pos) => e.located(None, pos),
            PairAt::EnvLine(file, line) => e.located(Some(file), Pos { line, col: 1 }),
        }
    }
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
    ) -> OpResult<GeneratorArgs> {
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
                _ => return Err(typed::unknown_field(k).into()),
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

    /// `e`, located at the entry in its kustomization (when known).
    pub fn locate(&self, e: OpError) -> OpError {
        e.located(None, self.written_at.entry)
    }

    /// Makes the object.
    pub fn generate(&self, files: &dyn FileSource) -> OpResult<Resource> {
        let what = match self.kind {
            GeneratedKind::ConfigMap => "configmap",
            GeneratedKind::Secret => "secret",
        };
        if self.name.is_empty() {
            return Err(self.locate(OpError::new(format!("a {what} must have a name"))));
        }
        let at = &self.written_at;
        let item = |list: &[Pos], i: usize| PairAt::Item(list.get(i).copied().unwrap_or_default());
        let mut pairs: Vec<kv::Pair> = Vec::new();
        let mut pairs_at: Vec<PairAt<'_>> = Vec::new();
        for (i, e) in self.envs.iter().enumerate() {
            let content = files
                .read_bytes(e)
                .map_err(|err| item(&at.envs, i).locate(err))?;
            let lines = kv::env_lines(&content)
                .map_err(|err| err.context(format!("env source file '{e}'")))?;
            for (line, pair) in lines {
                pairs.push(pair);
                pairs_at.push(PairAt::EnvLine(e, line));
            }
        }
        for (i, l) in self.literals.iter().enumerate() {
            pairs.push(kv::literal(l).map_err(|e| item(&at.literals, i).locate(e))?);
            pairs_at.push(item(&at.literals, i));
        }
        for (i, f) in self.files.iter().enumerate() {
            pairs.push(kv::file(files, f).map_err(|e| item(&at.files, i).locate(e))?);
            pairs_at.push(item(&at.files, i));
        }
        let mut seen = std::collections::HashSet::new();
        for ((k, _), pair_at) in pairs.iter().zip(&pairs_at) {
            if !seen.insert(k.as_str()) {
                return Err(pair_at.locate(OpError::new(format!(
                    "{what} {} illegally repeats the key `{k}`",
                    self.name
                ))));
            }
        }
        // Kustomize makes the resource from YAML text, where a `<<` key is
        // a merge key, and a string cannot be merged.
        if pairs.iter().any(|(k, _)| k == "<<") {
            return Err(OpError::new(
                "map[string]interface {}(nil): yaml: map merge requires map or sequence of maps as the value",
            ));
        }
        pairs.sort_by(|a, b| a.0.cmp(&b.0));

        let mut root = Node::map();
        root.set("apiVersion", Node::string("v1"));
        let kind = match self.kind {
            GeneratedKind::ConfigMap => "ConfigMap",
            GeneratedKind::Secret => "Secret",
        };
        root.set("kind", Node::string(kind));
        let mut meta = Node::map();
        meta.set("name", Node::string(self.name.as_str()));
        if !self.namespace.is_empty() {
            meta.set("namespace", Node::string(self.namespace.as_str()));
        }
        if !self.options.labels.is_empty() {
            meta.set("labels", pairs_node(&self.options.labels));
        }
        if !self.options.annotations.is_empty() {
            meta.set("annotations", pairs_node(&self.options.annotations));
        }
        root.set("metadata", meta);
        let b64 = wrapped_base64;
        match self.kind {
            GeneratedKind::ConfigMap => {
                // The keys are distinct (checked above): entries are
                // pushed, not looked up first.
                let mut data = ThinVec::with_capacity(pairs.len());
                let mut binary = ThinVec::new();
                for (k, v) in &pairs {
                    match std::str::from_utf8(v) {
                        Ok(text) => data.push((Node::plain(k), Node::string(text))),
                        Err(_) => binary.push((Node::plain(k), Node::string(b64(v)))),
                    }
                }
                if !data.is_empty() {
                    root.set("data", Node::new(Value::Map(data)));
                }
                if !binary.is_empty() {
                    root.set("binaryData", Node::new(Value::Map(binary)));
                }
            }
            GeneratedKind::Secret => {
                let t = if self.secret_type.is_empty() {
                    "Opaque"
                } else {
                    &self.secret_type
                };
                root.set("type", Node::string(t));
                // A Secret always has `data`, empty when it has no sources
                // (a ConfigMap then has none).
                let data = pairs
                    .iter()
                    .map(|(k, v)| (Node::plain(k), Node::string(b64(v))))
                    .collect();
                root.set("data", Node::new(Value::Map(data)));
            }
        }
        if self.options.immutable {
            root.set("immutable", Node::plain("true"));
        }
        let mut r = Resource::from_node(root)?;
        r.meta.generated = true;
        r.meta.needs_hash = !self.options.disable_name_suffix_hash;
        r.meta.behavior = self.behavior;
        Ok(r)
    }
}

/// Base64 as Kustomize writes generated data: lines of 70 characters, each
/// ending in a newline once the text is 70 characters or longer.
fn wrapped_base64(v: &[u8]) -> String {
    const LINE: usize = 70;
    let text = base64::engine::general_purpose::STANDARD.encode(v);
    if text.len() < LINE {
        return text;
    }
    let mut out = String::with_capacity(text.len() + text.len() / LINE + 1);
    for chunk in text.as_bytes().chunks(LINE) {
        out.push_str(std::str::from_utf8(chunk).unwrap_or_default());
        out.push('\n');
    }
    out
}

fn pairs_node(pairs: &[(String, String)]) -> Node {
    let mut m = Node::map();
    for (k, v) in pairs {
        m.set(k, Node::string(v.as_str()));
    }
    m
}
