//! Reading the GitOps objects krusty renders (Flux `Kustomization`, Argo
//! CD `Application`) out of a repository's YAML files: finding them, and
//! typed fields whose errors name the object, the file, the line and the
//! field.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use krusty_yaml::Node;

use crate::error::{Error, Result};

/// An object found in a file.
#[derive(Debug, Clone)]
pub struct Found {
    /// The file, relative to the side's top folder.
    pub file: PathBuf,
    /// The object.
    pub node: Node,
}

/// Every object in the YAML files under `top` (relative paths, `.`
/// folders left out) whose `apiVersion` has the group `group` (empty:
/// the core group) and whose kind is `kind`, in file order. A file is
/// parsed only when its text names the group and the kind; such a file
/// that does not parse is an error naming it, line and column (unless it
/// is a template holding `{{`, which is passed over).
pub fn find_all(top: &Path, group: &str, kind: &str) -> Result<Vec<Found>> {
    Ok(find_kinds(top, &[(group, kind)])?.pop().unwrap_or_default())
}

/// [`find_all`] for several `(group, kind)` pairs at once, in one walk
/// of the tree that reads and parses each file once: the objects of each
/// pair, in the pairs' order.
pub fn find_kinds(top: &Path, kinds: &[(&str, &str)]) -> Result<Vec<Vec<Found>>> {
    let mut files = Vec::new();
    yaml_files(top, Path::new(""), &mut files)?;
    files.sort();
    let mut found: Vec<Vec<Found>> = kinds.iter().map(|_| Vec::new()).collect();
    for rel in files {
        let Ok(text) = std::fs::read_to_string(top.join(&rel)) else {
            continue;
        };
        let named: Vec<usize> = (0..kinds.len())
            .filter(|&i| text.contains(kinds[i].0) && text.contains(kinds[i].1))
            .collect();
        if named.is_empty() {
            continue;
        }
        let docs = match krusty_yaml::parse_stream(&text) {
            Ok(docs) => docs,
            // A file that names a group's kind but does not parse is an
            // error, not a file without objects (a template, with `{{`,
            // is passed over, and so is any file for the core group).
            Err(e) if !text.contains("{{") && named.iter().any(|&i| !kinds[i].0.is_empty()) => {
                return Err(Error::Yaml {
                    path: rel,
                    message: e.to_string(),
                })
            }
            Err(_) => continue,
        };
        let roots: Vec<Node> = docs.into_iter().filter_map(|d| d.root).collect();
        for i in named {
            let (group, kind) = kinds[i];
            found[i].extend(
                roots
                    .iter()
                    .filter(|n| is_of(n, group, kind))
                    .map(|node| Found {
                        file: rel.clone(),
                        node: node.clone(),
                    }),
            );
        }
    }
    Ok(found)
}

/// The objects in the file `path` (as named) of the given group and
/// kind; the file must parse.
pub fn read_file(path: &Path, shown: &Path, group: &str, kind: &str) -> Result<Vec<Found>> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    krusty_yaml::parse_stream(&text).map_err(|e| Error::Yaml {
        path: shown.to_path_buf(),
        message: e.to_string(),
    })?;
    Ok(objects_in(&text, group, kind)
        .into_iter()
        .map(|node| Found {
            file: shown.to_path_buf(),
            node,
        })
        .collect())
}

fn objects_in(text: &str, group: &str, kind: &str) -> Vec<Node> {
    let Ok(docs) = krusty_yaml::parse_stream(text) else {
        return Vec::new();
    };
    docs.into_iter()
        .filter_map(|d| d.root)
        .filter(|n| is_of(n, group, kind))
        .collect()
}

/// Whether `node`'s `apiVersion` has the group `group` and its kind is
/// `kind`.
fn is_of(node: &Node, group: &str, kind: &str) -> bool {
    let api = node
        .get("apiVersion")
        .and_then(Node::as_str)
        .unwrap_or_default();
    api.split_once('/').map_or("", |(g, _)| g) == group
        && node.get("kind").and_then(Node::as_str) == Some(kind)
}

fn yaml_files(top: &Path, rel: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    let dir = top.join(rel);
    let listing = std::fs::read_dir(&dir).map_err(|e| Error::io(&dir, e))?;
    for entry in listing {
        let entry = entry.map_err(|e| Error::io(&dir, e))?;
        let name = entry.file_name();
        let text = name.to_string_lossy();
        if text.starts_with('.') {
            continue;
        }
        let file_type = entry.file_type().map_err(|e| Error::io(entry.path(), e))?;
        if file_type.is_dir() {
            yaml_files(top, &rel.join(&name), out)?;
        } else if file_type.is_file() && (text.ends_with(".yaml") || text.ends_with(".yml")) {
            out.push(rel.join(&name));
        }
    }
    Ok(())
}

/// Reads the fields of one object, naming it, its file and the line of a
/// field in every error.
pub struct Fields<'a> {
    kind: &'static str,
    name: String,
    file: &'a Path,
}

impl<'a> Fields<'a> {
    /// A reader for the object `node` of kind `kind` found in `file`.
    pub fn new(kind: &'static str, node: &Node, file: &'a Path) -> Fields<'a> {
        let meta = |k: &str| {
            node.get_path(&["metadata", k])
                .and_then(Node::as_str)
                .unwrap_or_default()
                .to_string()
        };
        let (namespace, name) = (meta("namespace"), meta("name"));
        let name = if namespace.is_empty() {
            name
        } else {
            format!("{namespace}/{name}")
        };
        Fields { kind, name, file }
    }

    /// The object's `namespace/name` (or `name`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// An error about the object.
    pub fn error(&self, message: impl Into<String>) -> Error {
        Error::Object {
            kind: self.kind,
            name: self.name.clone(),
            file: self.file.to_path_buf(),
            message: message.into(),
        }
    }

    /// An error about the field `field`, whose value is `at`.
    pub fn at(&self, at: &Node, field: &str, message: &str) -> Error {
        let pos = at.pos();
        self.error(format!("line {}: {field}: {message}", pos.line))
    }

    /// Fails for a key of the mapping `node` (the value of `field`) that
    /// is not among `known`.
    pub fn known(&self, node: &Node, field: &str, known: &[&str]) -> Result<()> {
        let Some(entries) = node.as_map() else {
            return Err(self.at(node, field, "must be a mapping"));
        };
        for (k, v) in entries {
            let key = k.as_str().unwrap_or_default();
            if !known.contains(&key) {
                return Err(self.at(v, &format!("{field}.{key}"), "unknown field"));
            }
        }
        Ok(())
    }

    /// The string at `key` of `node` (empty when missing or null).
    pub fn string(&self, node: &Node, field: &str, key: &str) -> Result<String> {
        match node.get(key) {
            None => Ok(String::new()),
            Some(v) if v.is_null() => Ok(String::new()),
            Some(v) => match v.as_scalar() {
                Some(s) => Ok(s.text.to_string()),
                None => Err(self.at(v, &join(field, key), "must be a string")),
            },
        }
    }

    /// The boolean at `key` of `node` (false when missing).
    pub fn boolean(&self, node: &Node, field: &str, key: &str) -> Result<bool> {
        match node.get(key) {
            None => Ok(false),
            Some(v) if v.is_null() => Ok(false),
            Some(v) => match v.as_str() {
                Some("true") => Ok(true),
                Some("false") => Ok(false),
                _ => Err(self.at(v, &join(field, key), "must be true or false")),
            },
        }
    }

    /// The list of strings at `key` of `node` (empty when missing).
    pub fn strings(&self, node: &Node, field: &str, key: &str) -> Result<Vec<String>> {
        let Some(v) = node.get(key).filter(|v| !v.is_null()) else {
            return Ok(Vec::new());
        };
        let Some(items) = v.as_seq() else {
            return Err(self.at(v, &join(field, key), "must be a list of strings"));
        };
        items
            .iter()
            .map(|i| match i.as_scalar() {
                Some(s) => Ok(s.text.to_string()),
                None => Err(self.at(i, &join(field, key), "must be a list of strings")),
            })
            .collect()
    }

    /// The mapping of strings to strings at `key` of `node`.
    pub fn string_map(
        &self,
        node: &Node,
        field: &str,
        key: &str,
    ) -> Result<BTreeMap<String, String>> {
        let Some(v) = node.get(key).filter(|v| !v.is_null()) else {
            return Ok(BTreeMap::new());
        };
        let Some(entries) = v.as_map() else {
            return Err(self.at(v, &join(field, key), "must be a mapping of strings"));
        };
        entries
            .iter()
            .map(|(k, v)| match (k.as_scalar(), v.as_scalar()) {
                (Some(k), Some(v)) => Ok((k.text.to_string(), v.text.to_string())),
                _ => Err(self.at(v, &join(field, key), "must be a mapping of strings")),
            })
            .collect()
    }

    /// The list of mappings at `key` of `node`.
    pub fn maps<'n>(&self, node: &'n Node, field: &str, key: &str) -> Result<Vec<&'n Node>> {
        let Some(v) = node.get(key).filter(|v| !v.is_null()) else {
            return Ok(Vec::new());
        };
        let Some(items) = v.as_seq() else {
            return Err(self.at(v, &join(field, key), "must be a list"));
        };
        items
            .iter()
            .map(|i| {
                if i.as_map().is_some() {
                    Ok(i)
                } else {
                    Err(self.at(i, &join(field, key), "each item must be a mapping"))
                }
            })
            .collect()
    }
}

/// `field.key`, or `key` at the top.
fn join(field: &str, key: &str) -> String {
    if field.is_empty() {
        key.to_string()
    } else {
        format!("{field}.{key}")
    }
}
