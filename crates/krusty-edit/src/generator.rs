//! `edit add|set|remove configmap|secret`: entries of `configMapGenerator`
//! and `secretGenerator`, checked by generating the object as a build
//! would.

use std::path::Path;

pub use krusty_schema::generator::GeneratedKind;
use krusty_yaml::Node;

use crate::checks::{CheckError, Checks};
use crate::error::{EditError, EditResult};
use crate::file::KustomizationFile;
use crate::glob;
use crate::node::{items, text};

/// `edit add configmap|secret`'s flags and name.
#[derive(Debug, Clone, Default)]
pub struct GeneratorFlags {
    /// The positional arguments (exactly one: the name).
    pub args: Vec<String>,
    /// `--from-file=[key=]source`, each a pattern.
    pub files: Vec<String>,
    /// `--from-literal=key=value`.
    pub literals: Vec<String>,
    /// `--from-env-file`.
    pub env_file: String,
    /// `--behavior` (configmaps).
    pub behavior: String,
    /// `--namespace`.
    pub namespace: String,
    /// `--disableNameSuffixHash`.
    pub disable_hash: bool,
    /// `--type` (secrets; `Opaque` by default).
    pub secret_type: String,
    /// `--new-namespace` (`edit set`).
    pub new_namespace: String,
}

fn word(kind: GeneratedKind) -> &'static str {
    match kind {
        GeneratedKind::ConfigMap => "configmap",
        GeneratedKind::Secret => "secret",
    }
}

/// The kind's name in Kubernetes' spelling.
fn kind_name(kind: GeneratedKind) -> &'static str {
    match kind {
        GeneratedKind::ConfigMap => "ConfigMap",
        GeneratedKind::Secret => "Secret",
    }
}

/// Expands `--from-file` patterns: `key=pattern` must name one file; a
/// pattern without matches is reported and skipped.
fn expand_files(dir: &Path, flags: &mut GeneratorFlags, notes: &mut Vec<String>) -> EditResult<()> {
    let mut out = Vec::new();
    for source in &flags.files {
        let parts: Vec<&str> = source.split('=').collect();
        let (key, pattern) = match parts.as_slice() {
            [key, pattern] => (Some(*key), *pattern),
            _ => (None, parts[0]),
        };
        let found = glob::glob(dir, pattern)?;
        if found.is_empty() {
            notes.push(format!("{pattern} has no match"));
        }
        match key {
            Some(key) => {
                if found.len() != 1 {
                    return Err(EditError::new(format!(
                        "'pattern '{source}' catches files [{}], should catch only one",
                        found.join(" ")
                    )));
                }
                out.push(format!("{key}={}", found[0]));
            }
            None => out.extend(found),
        }
    }
    flags.files = out;
    Ok(())
}

/// Kustomize's checks of the flags.
fn validate(flags: &GeneratorFlags) -> EditResult<String> {
    let [name] = flags.args.as_slice() else {
        return Err(EditError::new("name must be specified once"));
    };
    if flags.env_file.is_empty() && flags.files.is_empty() && flags.literals.is_empty() {
        return Err(EditError::new(
            "at least from-env-file, or from-file or from-literal must be set",
        ));
    }
    if !flags.env_file.is_empty() && (!flags.files.is_empty() || !flags.literals.is_empty()) {
        return Err(EditError::new(
            "from-env-file cannot be combined with from-file or from-literal",
        ));
    }
    if !flags.behavior.is_empty()
        && !matches!(flags.behavior.as_str(), "create" | "merge" | "replace")
    {
        return Err(EditError::new(
            r#"invalid behavior: must be one of "create", "merge", or "replace""#,
        ));
    }
    Ok(name.clone())
}

/// `default` and no namespace are the same namespace.
fn same_namespace(a: &str, b: &str) -> bool {
    let norm = |s: &str| if s.is_empty() { "default" } else { s }.to_string();
    norm(a) == norm(b)
}

/// `edit add configmap|secret NAME --from-...`: adds the sources to the
/// entry of that name and namespace (a new entry at the end if there is
/// none), then generates it to check it.
pub fn add(
    dir: &Path,
    kind: GeneratedKind,
    mut flags: GeneratorFlags,
    checks: &dyn Checks,
) -> EditResult<Vec<String>> {
    let what = word(kind);
    let mut notes = Vec::new();
    expand_files(dir, &mut flags, &mut notes)
        .map_err(|e| EditError::new(format!("failed to expand file source: {e}")))?;
    let name =
        validate(&flags).map_err(|e| EditError::new(format!("failed to validate flags: {e}")))?;
    let mut k = KustomizationFile::find(dir)
        .map_err(|e| EditError::new(format!("failed to load kustomization file: {e}")))?;
    let mut list = items(k.get(kind.field()));
    let at = list.iter().position(|e| {
        text(e, "name") == name && same_namespace(text(e, "namespace"), &flags.namespace)
    });
    let entry = match at {
        Some(i) => &mut list[i],
        None => {
            list.push(new_entry(kind, &name, &flags));
            let last = list.len() - 1;
            &mut list[last]
        }
    };
    merge_flags(entry, &flags);
    merge_global_options(entry, k.get("generatorOptions"));
    checks
        .generate(dir, kind, entry)
        .map_err(|e| EditError::new(format!("failed to create {what}: {e}")))?;
    k.set(kind.field(), Node::seq_of(list));
    k.complete_type_meta();
    k.save()
        .map_err(|e| EditError::new(format!("failed to write kustomization file: {e}")))?;
    Ok(notes)
}

/// A new entry: its name, namespace and (secrets) type, keys in the
/// order Kustomize's writer sorts them.
fn new_entry(kind: GeneratedKind, name: &str, flags: &GeneratorFlags) -> Node {
    let mut entry = Node::map();
    entry.set("name", Node::string(name));
    if !flags.namespace.is_empty() {
        entry.set("namespace", Node::string(flags.namespace.as_str()));
    }
    if kind == GeneratedKind::Secret && !flags.secret_type.is_empty() {
        entry.set("type", Node::string(flags.secret_type.as_str()));
    }
    entry
}

/// Appends the flags' sources to the entry, sets its behavior, and with
/// `--disableNameSuffixHash` replaces its options.
fn merge_flags(entry: &mut Node, flags: &GeneratorFlags) {
    let mut append = |key: &str, values: &[String]| {
        if values.is_empty() {
            return;
        }
        let mut list = items(entry.get(key));
        list.extend(values.iter().map(|v| Node::string(v.as_str())));
        put_sorted(entry, key, Node::seq_of(list));
    };
    append("literals", &flags.literals);
    append("files", &flags.files);
    if !flags.env_file.is_empty() {
        append("envs", std::slice::from_ref(&flags.env_file));
    }
    if flags.disable_hash {
        let options = Node::map_of([(Node::plain("disableNameSuffixHash"), Node::plain("true"))]);
        put_sorted(entry, "options", options);
    }
    if !flags.behavior.is_empty() {
        put_sorted(entry, "behavior", Node::string(flags.behavior.as_str()));
    }
}

/// Copies the kustomization's `generatorOptions` into the entry's
/// `options`, as Kustomize's `add configmap|secret` does whenever the
/// field is there: labels and annotations the entry lacks join it, a true
/// `disableNameSuffixHash` or `immutable` wins over the entry's. The entry
/// gets `options` (`{}` if nothing is copied).
fn merge_global_options(entry: &mut Node, global: Option<&Node>) {
    let Some(global) = global.filter(|g| g.as_map().is_some()) else {
        return;
    };
    let mut local = entry
        .get("options")
        .filter(|o| o.as_map().is_some())
        .cloned()
        .unwrap_or_else(Node::map);
    for key in ["labels", "annotations"] {
        merge_map(&mut local, key, global.get(key));
    }
    for key in ["disableNameSuffixHash", "immutable"] {
        let on = global
            .get(key)
            .and_then(Node::as_str)
            .is_some_and(|v| v.eq_ignore_ascii_case("true"));
        if on {
            put_sorted(&mut local, key, Node::plain("true"));
        }
    }
    if entry.get("options") != Some(&local) {
        put_sorted(entry, "options", local);
    }
}

/// Adds to the map `key` of `local` the pairs of `global` whose keys it
/// lacks (a missing map is `global`'s, when that has pairs).
fn merge_map(local: &mut Node, key: &str, global: Option<&Node>) {
    let Some(pairs) = global.and_then(Node::as_map).filter(|m| !m.is_empty()) else {
        return;
    };
    let mut merged = local
        .get(key)
        .filter(|m| m.as_map().is_some())
        .cloned()
        .unwrap_or_else(Node::map);
    for (name, value) in pairs.iter() {
        let (Some(name), Some(value)) = (name.as_str(), value.as_str()) else {
            continue;
        };
        if merged.get(name).is_none() {
            put_sorted(&mut merged, name, Node::string(value));
        }
    }
    if local.get(key) != Some(&merged) {
        put_sorted(local, key, merged);
    }
}

/// Sets `key` in place, or inserts it before the first key that sorts
/// after it (an entry written by Kustomize has sorted keys).
fn put_sorted(entry: &mut Node, key: &str, value: Node) {
    crate::node::put_sorted(entry, Node::plain(key), value);
}

/// Why an entry cannot be set, in Kustomize's words.
#[derive(Debug, thiserror::Error)]
enum EntryError {
    /// No entry has the name (in the namespace).
    #[error("could not set new {what} value: unable to find {what} with name \"{name}\"")]
    NotFound {
        /// `ConfigMap` or `Secret`.
        what: &'static str,
        /// The name.
        name: String,
    },
    /// The new literals do not fit the entry.
    #[error("failed to update literal sources: failed to update resource: {0}")]
    Literals(#[source] LiteralError),
    /// The entry, changed, does not generate its object.
    #[error("failed to validate {what} structure: {source}")]
    Invalid {
        /// `ConfigMap` or `Secret`.
        what: &'static str,
        /// Why it does not generate.
        source: CheckError,
    },
}

/// Why a literal cannot be updated.
#[derive(Debug, thiserror::Error)]
enum LiteralError {
    /// A literal is no `key=value`.
    #[error("invalid format: literal values must be specified in the key=value format")]
    Format,
    /// The entry has no literal of the key.
    #[error("key '{0}' not found in resource")]
    Missing(String),
}

/// `edit set configmap|secret NAME [--from-literal=K=V]... [--namespace NS]
/// [--new-namespace NS]`: new values for literal keys the entry has, and a
/// new namespace.
pub fn set(
    dir: &Path,
    kind: GeneratedKind,
    mut flags: GeneratorFlags,
    checks: &dyn Checks,
) -> EditResult<Vec<String>> {
    let mut notes = Vec::new();
    expand_files(dir, &mut flags, &mut notes)
        .map_err(|e| EditError::new(format!("failed to expand file source: {e}")))?;
    let [name] = flags.args.as_slice() else {
        return Err(EditError::new(
            "failed to validate flags: name must be specified once",
        ));
    };
    if flags.literals.is_empty() && flags.new_namespace.is_empty() {
        return Err(EditError::new(
            "failed to validate flags: at least one of [--from-literal, --new-namespace] must be specified",
        ));
    }
    let mut k = KustomizationFile::find(dir)
        .map_err(|e| EditError::new(format!("failed to load kustomization file: {e}")))?;
    let mut list = items(k.get(kind.field()));
    set_entry(dir, kind, &mut list, name, &flags, checks)
        .map_err(|e| EditError::new(format!("failed to create {}: {e}", word(kind))))?;
    k.set(kind.field(), Node::seq_of(list));
    k.complete_type_meta();
    k.save()
        .map_err(|e| EditError::new(format!("failed to write kustomization file: {e}")))?;
    Ok(notes)
}

/// Finds the entry, changes its literals and namespace, and checks it.
fn set_entry(
    dir: &Path,
    kind: GeneratedKind,
    list: &mut [Node],
    name: &str,
    flags: &GeneratorFlags,
    checks: &dyn Checks,
) -> Result<(), EntryError> {
    let what = kind_name(kind);
    let entry = list
        .iter_mut()
        .find(|e| text(e, "name") == name && same_namespace(&flags.namespace, text(e, "namespace")))
        .ok_or_else(|| EntryError::NotFound {
            what,
            name: name.to_string(),
        })?;
    if !flags.literals.is_empty() {
        update_literals(entry, &flags.literals).map_err(EntryError::Literals)?;
    }
    if !flags.new_namespace.is_empty() {
        let value = crate::node::replacing(entry.get("namespace"), &flags.new_namespace);
        put_sorted(entry, "namespace", value);
    }
    checks
        .generate(dir, kind, entry)
        .map_err(|source| EntryError::Invalid { what, source })
}

/// `key=value` with exactly one `=`.
fn literal_pair(source: &str) -> Result<(&str, &str), LiteralError> {
    if source.matches('=').count() != 1 {
        return Err(LiteralError::Format);
    }
    Ok(source.split_once('=').unwrap_or((source, "")))
}

/// Each `key=value` replaces the entry's literal of that key, which must
/// be there.
fn update_literals(entry: &mut Node, updates: &[String]) -> Result<(), LiteralError> {
    let mut literals = items(entry.get("literals"));
    for node in &literals {
        literal_pair(node.as_str().unwrap_or_default())?;
    }
    for update in updates {
        let (key, _) = literal_pair(update)?;
        let slot = literals
            .iter_mut()
            .find(|n| {
                n.as_str()
                    .and_then(|s| s.split_once('='))
                    .is_some_and(|(k, _)| k == key)
            })
            .ok_or_else(|| LiteralError::Missing(key.to_string()))?;
        *slot = crate::node::replacing(Some(slot), update);
    }
    put_sorted(entry, "literals", Node::seq_of(literals));
    Ok(())
}

/// `edit remove configmap|secret NAME[,NAME] [--namespace NS]`: removes
/// the entries of those names in that namespace.
pub fn remove(
    dir: &Path,
    kind: GeneratedKind,
    args: &[String],
    namespace: &str,
) -> EditResult<Vec<String>> {
    let what = word(kind);
    let names: Vec<&str> = match args {
        [] => return Err(EditError::new(format!("at least one {what} name must be specified"))),
        [one] => one.split(',').collect(),
        many => {
            return Err(EditError::new(format!(
                "too many arguments: [{}]; to provide multiple {what}s to remove, please separate {what} names by commas",
                many.join(" ")
            )))
        }
    };
    let mut k = KustomizationFile::find(dir)
        .map_err(|e| EditError::new(format!("could not read kustomization file: {e}")))?;
    let mut found: Vec<String> = Vec::new();
    let kept: Vec<Node> = items(k.get(kind.field()))
        .into_iter()
        .filter(|e| {
            let name = text(e, "name");
            let gone = names.contains(&name) && same_namespace(text(e, "namespace"), namespace);
            if gone {
                found.push(name.to_string());
            }
            !gone
        })
        .collect();
    if found.is_empty() {
        return Err(EditError::new(format!(
            "no specified {what}(s) were found in the kustomization.yaml file"
        )));
    }
    let notes = names
        .iter()
        .filter(|n| !found.iter().any(|f| f == *n))
        .map(|n| format!("{what} {n} doesn't exist in kustomization file"))
        .collect();
    k.set_or_remove(kind.field(), Node::seq_of(kept));
    k.complete_type_meta();
    k.save()
        .map_err(|e| EditError::new(format!("failed to write kustomization file: {e}")))?;
    Ok(notes)
}
