//! ConfigMapGenerator and SecretGenerator: make a ConfigMap or Secret from
//! literals, files and env files.

use base64::Engine;
use krusty_resource::Resource;
use krusty_yaml::{Node, Pos, ThinVec, Value};

use super::kv;
use crate::error::{OpError, OpResult};
use crate::files::FileSource;

pub use krusty_schema::generator::{EntryAt, GeneratedKind, GeneratorArgs, GeneratorOptions};

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

/// What an operation adds to [`GeneratorArgs`]: making the object.
pub trait Generate {
    /// `e`, located at the entry in its kustomization (when known).
    fn locate(&self, e: OpError) -> OpError;

    /// Makes the object.
    fn generate(&self, files: &dyn FileSource) -> OpResult<Resource>;
}

impl Generate for GeneratorArgs {
    fn locate(&self, e: OpError) -> OpError {
        e.located(None, self.written_at.entry)
    }

    fn generate(&self, files: &dyn FileSource) -> OpResult<Resource> {
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
