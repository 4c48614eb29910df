//! `edit fix --vars`: each var becomes a replacement, as Kustomize converts
//! them. The files the kustomization reaches (its resources, the resources
//! of the kustomizations in its resource folders, and the files of its
//! `patches` with a `path`) are searched for `$(NAME)`; each occurrence
//! becomes a target (the object that holds it, or the patch's target for
//! a patch file) at its field path, with a delimiter and index when the
//! reference is part of a longer value; the var's object and field become
//! the source. The references in those files are then rewritten to
//! `NAME_PLACEHOLDER`, which the replacement overwrites. A var without
//! references gives no replacement.
//!
//! Those files are read and written as the kustomization file is
//! ([`crate::open`]): each must be a regular file (a FIFO or a device is
//! refused without blocking) in or below the folder of the kustomization
//! that names it, links resolved (a file or link leading out of it is
//! refused); each is locked from the read until its new version is in
//! place, replaced whole keeping its mode and owner, or written in place
//! when it has other hard links. Nothing is written until every new
//! version has been written beside its file.

use std::collections::{HashMap, HashSet};
use std::io;
use std::path::{Path, PathBuf};

use krusty_schema::path::clean;
use krusty_schema::var::{read_vars, Var};
use krusty_schema::FILE_NAMES;
use krusty_yaml::{Node, Value};

use crate::error::{EditError, EditResult};
use crate::file::KustomizationFile;
use crate::node::{items, strings, text};
use crate::open::{self, FileId, Opened, Opening, Pending};

/// A file the conversion reads, by its path relative to the kustomization
/// folder (as Kustomize names it).
struct Touched {
    path: PathBuf,
    /// Its documents (none when it does not read as YAML).
    objects: Vec<Node>,
}

/// A file the conversion may rewrite, open and locked: each file once,
/// however many names lead to it.
struct Held {
    /// The first name it was read by.
    path: PathBuf,
    text: String,
    opened: Opened,
}

/// A file a kustomization names, by its path relative to the top
/// kustomization's folder, with the folder of the kustomization that
/// names it (the one it must stay in).
struct Named {
    path: PathBuf,
    root: PathBuf,
}

/// The new versions of the files a conversion rewrites, written beside
/// them; [`Rewrites::commit`] puts them in place.
#[derive(Debug, Default)]
#[must_use = "nothing is written until the rewrites are committed"]
pub struct Rewrites(Vec<Pending>);

impl Rewrites {
    /// Puts every new version in place, in the order the files were named.
    pub fn commit(self) -> EditResult<()> {
        self.0.into_iter().try_for_each(Pending::commit)
    }
}

/// Turns the `vars` of `k` (a kustomization in `dir`, already fixed) into
/// `replacements` after those already there, and prepares the files'
/// rewritten references (written when the returned [`Rewrites`] are
/// committed). Nothing is written when a reference cannot be converted or
/// a file cannot be read or written.
pub fn to_replacements(dir: &Path, k: &mut KustomizationFile) -> EditResult<Rewrites> {
    let Some(declared) = k.get("vars") else {
        return Ok(Rewrites::default());
    };
    let vars = read_vars(declared).map_err(|e| EditError::new(e.to_string()))?;
    let mut named = Vec::new();
    let mut patches = HashMap::new();
    let mut visited = HashSet::new();
    touched_paths(
        dir,
        Path::new(""),
        k.get("resources"),
        k.get("patches"),
        &mut named,
        &mut patches,
        &mut visited,
    )?;
    let (files, held) = open_files(dir, named, k.file_id())?;
    let mut replacements = items(k.get("replacements"));
    for var in &vars {
        // A replacement without targets does not build; the var had no
        // reference to fill.
        replacements.extend(replacement(var, &files, &patches)?);
    }
    let rewrites = placeholders(held, &vars)?;
    k.remove("vars");
    k.set_or_remove("replacements", Node::seq_of(replacements));
    Ok(rewrites)
}

/// Opens and reads each named file: a name that leads nowhere or to a
/// folder is passed over, as Kustomize passes over what it cannot read,
/// and so is the kustomization file itself (`own`), which the edit writes.
/// A file reached by several names is opened once.
fn open_files(
    dir: &Path,
    named: Vec<Named>,
    own: Option<FileId>,
) -> EditResult<(Vec<Touched>, Vec<Held>)> {
    // The files held, by id: the kustomization file, then `held`.
    let mut ids: Vec<FileId> = own.into_iter().collect();
    let skipped = ids.len();
    let mut held: Vec<Held> = Vec::new();
    let mut files = Vec::new();
    for Named { path, root } in named {
        let full = dir.join(&path);
        match std::fs::metadata(&full) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Ok(meta) if meta.is_dir() => continue,
            _ => {}
        }
        let text = match open::open_unless_held(&full, &path, &dir.join(&root), &ids)? {
            Opening::New(opened, text) => {
                ids.push(opened.id()?);
                held.push(Held {
                    path: path.clone(),
                    text: text.clone(),
                    opened,
                });
                text
            }
            Opening::Held(id) => match ids.iter().position(|i| *i == id) {
                Some(at) if at >= skipped => held[at - skipped].text.clone(),
                _ => continue,
            },
        };
        let objects = krusty_yaml::parse_stream(&text)
            .map(|docs| docs.into_iter().filter_map(|d| d.root).collect())
            .unwrap_or_default();
        files.push(Touched { path, objects });
    }
    Ok((files, held))
}

/// Collects the files a kustomization reaches: each resource (and, for a
/// folder, the files its kustomization reaches), then its patch files,
/// recording each patch by its path.
fn touched_paths(
    dir: &Path,
    prefix: &Path,
    resources: Option<&Node>,
    patch_list: Option<&Node>,
    out: &mut Vec<Named>,
    patches: &mut HashMap<PathBuf, Node>,
    visited: &mut HashSet<PathBuf>,
) -> EditResult<()> {
    for resource in strings(resources) {
        let path = clean(&prefix.join(&resource));
        let folder = dir.join(&path);
        if folder.is_dir() && visited.insert(clean(&folder)) {
            let mut names: Vec<&str> = FILE_NAMES
                .iter()
                .copied()
                .filter(|n| folder.join(n).is_file())
                .collect();
            names.sort_unstable();
            for name in names {
                let Some(source) = open::read_regular(&folder.join(name)) else {
                    continue;
                };
                let root = parse_kustomization(&path.join(name), &source)?;
                touched_paths(
                    dir,
                    &path,
                    root.as_ref().and_then(|r| r.get("resources")),
                    root.as_ref().and_then(|r| r.get("patches")),
                    out,
                    patches,
                    visited,
                )?;
            }
        }
        out.push(Named {
            path,
            root: prefix.to_path_buf(),
        });
    }
    for patch in items(patch_list) {
        let file = text(&patch, "path");
        if !file.is_empty() {
            let path = clean(&prefix.join(file));
            out.push(Named {
                path: path.clone(),
                root: prefix.to_path_buf(),
            });
            patches.insert(path, patch.clone());
        }
    }
    Ok(())
}

/// The root of a kustomization file the conversion reads.
fn parse_kustomization(path: &Path, source: &str) -> EditResult<Option<Node>> {
    let docs = krusty_yaml::parse_stream(source)
        .map_err(|e| EditError::new(format!("{}: {e}", path.display())))?;
    Ok(docs.into_iter().next().and_then(|d| d.root))
}

/// The replacement for one var: its source, and a target for each
/// reference to it in `files`; none when there is no reference.
fn replacement(
    var: &Var,
    files: &[Touched],
    patches: &HashMap<PathBuf, Node>,
) -> EditResult<Option<Node>> {
    let reference = format!("$({})", var.name);
    let mut targets = Vec::new();
    for file in files {
        for object in &file.objects {
            let mut found = Vec::new();
            find_references(object, &reference, &mut Vec::new(), &mut found)
                .map_err(|e| EditError::new(format!("error with {}: {e}", file.path.display())))?;
            let patch = patches.get(&file.path);
            for (field_path, options) in found {
                targets.push(target(object, patch, field_path, options));
            }
        }
    }
    let (group, version) = split_api_version(&var.api_version);
    let source = sorted_map([
        (
            "fieldPath",
            Node::string(field_path(&var.field_path).as_str()),
        ),
        ("group", Node::string(group)),
        ("kind", Node::string(var.gvk.kind.as_str())),
        ("name", Node::string(var.object_name.as_str())),
        ("namespace", Node::string(var.namespace.as_str())),
        ("version", Node::string(version)),
    ]);
    if targets.is_empty() {
        return Ok(None);
    }
    let mut entry = Node::map();
    entry.set("source", source);
    entry.set("targets", Node::seq_of(targets));
    Ok(Some(entry))
}

/// A var's field path in replacements' syntax: a list index in brackets
/// (`spec.ports[0].port`, which replacements do not read) becomes a path
/// segment (`spec.ports.0.port`).
fn field_path(var_path: &str) -> String {
    let mut out = String::with_capacity(var_path.len());
    let mut rest = var_path;
    while let Some(open) = rest.find('[') {
        let (before, after) = rest.split_at(open);
        let index = after[1..].find(']').map(|close| &after[1..=close]);
        match index.filter(|i| !i.is_empty() && i.bytes().all(|b| b.is_ascii_digit())) {
            Some(index) => {
                out.push_str(before);
                out.push('.');
                out.push_str(index);
                rest = &after[index.len() + 2..];
            }
            None => {
                out.push_str(&rest[..=open]);
                rest = &rest[open + 1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// Where a reference sits in a value: the delimiter and the index of the
/// reference among the parts it separates (none for a whole value).
type FieldOptions = Option<(String, usize)>;

/// Why a reference to a var cannot become a replacement's target.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
enum ReferenceError {
    /// It sits inside a value between two different characters.
    #[error("cannot convert all vars to replacements; {0} is not delimited")]
    NotDelimited(String),
    /// Its place among the value's parts is not found.
    #[error("internal error: could not get index of var {0}")]
    NoIndex(String),
}

/// The field paths (keys joined by `.`, a key holding a `.` in brackets,
/// list items by index) of the scalars of `node` that hold `reference`.
fn find_references(
    node: &Node,
    reference: &str,
    path: &mut Vec<String>,
    found: &mut Vec<(String, FieldOptions)>,
) -> Result<(), ReferenceError> {
    match &node.value {
        Value::Seq(list) => {
            for (i, item) in list.iter().enumerate() {
                path.push(i.to_string());
                find_references(item, reference, path, found)?;
                path.pop();
            }
        }
        Value::Map(pairs) => {
            for (key, value) in pairs.iter() {
                let key = key.key_str().unwrap_or_default().trim();
                path.push(if key.contains('.') {
                    format!("[{key}]")
                } else {
                    key.to_string()
                });
                find_references(value, reference, path, found)?;
                path.pop();
            }
        }
        Value::Scalar(scalar) if scalar.text.contains(reference) => {
            let options = field_options(&scalar.text, reference)?;
            found.push((path.join("."), options));
        }
        _ => {}
    }
    Ok(())
}

/// The delimiter and index of the first `reference` in `value`: the
/// character after it when it starts the value, the one before it when it
/// ends it, else the character on both sides (which must be the same).
fn field_options(value: &str, reference: &str) -> Result<FieldOptions, ReferenceError> {
    if value == reference {
        return Ok(None);
    }
    let bytes = value.as_bytes();
    let at = value.find(reference).unwrap_or_default();
    let end = at + reference.len();
    // One byte, read as a character (as Kustomize reads it).
    let delimiter_at = |i: usize| char::from(bytes[i]).to_string();
    let parts = |delimiter: &str| value.split(delimiter).collect::<Vec<_>>();
    let (delimiter, index) = if at == 0 {
        (delimiter_at(end), 0)
    } else if end >= value.len() {
        let delimiter = delimiter_at(at - 1);
        let index = parts(&delimiter).len() - 1;
        (delimiter, index)
    } else {
        let (before, after) = (delimiter_at(at - 1), delimiter_at(end));
        if before != after {
            return Err(ReferenceError::NotDelimited(reference.to_string()));
        }
        let index = parts(&before)
            .iter()
            .position(|p| *p == reference)
            .ok_or_else(|| ReferenceError::NoIndex(reference.to_string()))?;
        (before, index)
    };
    Ok(Some((delimiter, index)))
}

/// A target for one reference in `object`: the object itself, or, in a
/// patch file (unless the patch may change both name and kind), the
/// patch's target.
fn target(object: &Node, patch: Option<&Node>, field_path: String, options: FieldOptions) -> Node {
    let meta = |key: &str| {
        object
            .get("metadata")
            .map(|m| text(m, key).to_string())
            .unwrap_or_default()
    };
    let kind = text(object, "kind").to_string();
    let select =
        match patch.filter(|p| !(allows(p, "allowNameChange") && allows(p, "allowKindChange"))) {
            Some(patch) => {
                let mut pairs: Vec<(String, String)> = patch
                    .get("target")
                    .and_then(Node::as_map)
                    .map(|m| {
                        m.iter()
                            .filter_map(|(k, v)| {
                                Some((k.key_str()?.to_string(), v.as_str()?.to_string()))
                            })
                            .filter(|(k, v)| SELECTOR_KEYS.contains(&k.as_str()) && !v.is_empty())
                            .collect()
                    })
                    .unwrap_or_default();
                if allows(patch, "allowNameChange") {
                    put(&mut pairs, "name", meta("name"));
                }
                if allows(patch, "allowKindChange") {
                    put(&mut pairs, "kind", kind.clone());
                }
                put(&mut pairs, "namespace", meta("namespace"));
                pairs.sort();
                Node::map_of(
                    pairs
                        .into_iter()
                        .map(|(k, v)| (Node::plain(k.as_str()), Node::string(v.as_str()))),
                )
            }
            None => {
                let api_version = text(object, "apiVersion");
                let (group, version) = split_api_version(api_version);
                sorted_map([
                    ("group", Node::string(group)),
                    ("kind", Node::string(kind.as_str())),
                    ("name", Node::string(meta("name").as_str())),
                    ("namespace", Node::string(meta("namespace").as_str())),
                    ("version", Node::string(version)),
                ])
            }
        };
    let mut entry = Node::map();
    entry.set(
        "fieldPaths",
        Node::seq_of([Node::string(field_path.as_str())]),
    );
    if let Some((delimiter, index)) = options {
        let mut opts = Node::map();
        opts.set("delimiter", Node::string(delimiter.as_str()));
        if index != 0 {
            opts.set("index", Node::plain(index.to_string().as_str()));
        }
        entry.set("options", opts);
    }
    entry.set("select", select);
    entry
}

/// Whether the patch's `options` set `key` to true.
fn allows(patch: &Node, key: &str) -> bool {
    patch
        .get("options")
        .and_then(|o| o.get(key))
        .and_then(Node::as_str)
        == Some("true")
}

/// The fields of a patch's target a selector has.
const SELECTOR_KEYS: [&str; 7] = [
    "group",
    "version",
    "kind",
    "name",
    "namespace",
    "annotationSelector",
    "labelSelector",
];

/// Sets `key` of a selector's pairs when `value` is not empty.
fn put(pairs: &mut Vec<(String, String)>, key: &str, value: String) {
    if value.is_empty() {
        return;
    }
    pairs.retain(|(k, _)| k != key);
    pairs.push((key.to_string(), value));
}

/// A mapping of the pairs with a non-empty text, in the order given.
fn sorted_map<const N: usize>(pairs: [(&str, Node); N]) -> Node {
    Node::map_of(
        pairs
            .into_iter()
            .filter(|(_, v)| v.as_str().is_some_and(|t| !t.is_empty()))
            .map(|(k, v)| (Node::plain(k), v)),
    )
}

/// `group/version` split at its first `/` (no `/`: a version alone).
fn split_api_version(api_version: &str) -> (&str, &str) {
    api_version.split_once('/').unwrap_or(("", api_version))
}

/// Each file with `$(NAME)` rewritten to `NAME_PLACEHOLDER`, written
/// beside it.
fn placeholders(held: Vec<Held>, vars: &[Var]) -> EditResult<Rewrites> {
    let mut rewrites = Rewrites::default();
    for file in held {
        let mut text = file.text.clone();
        for var in vars {
            text = text.replace(
                &format!("$({})", var.name),
                &format!("{}_PLACEHOLDER", var.name),
            );
        }
        if text != file.text {
            rewrites.0.push(file.opened.prepare(&file.path, &text)?);
        }
    }
    Ok(rewrites)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bracket_indexes_become_segments() {
        assert_eq!(field_path("spec.ports[0].port"), "spec.ports.0.port");
        assert_eq!(field_path("a[12]"), "a.12");
        assert_eq!(field_path("metadata.name"), "metadata.name");
        assert_eq!(field_path("a.[b=c].d"), "a.[b=c].d");
    }

    #[test]
    fn references_inside_values_get_a_delimiter_and_index() {
        let r = "$(V)";
        assert_eq!(field_options("$(V)", r), Ok(None));
        assert_eq!(field_options("$(V):80", r), Ok(Some((":".into(), 0))));
        assert_eq!(field_options("--a=$(V)", r), Ok(Some(("=".into(), 1))));
        assert_eq!(field_options("x/$(V)/y", r), Ok(Some(("/".into(), 1))));
        assert_eq!(
            field_options("http://$(V):80", r),
            Err(ReferenceError::NotDelimited("$(V)".into()))
        );
    }
}
