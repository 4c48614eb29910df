//! The kustomization Flux builds a folder with: the folder's own, with
//! the Flux Kustomization's fields merged in, or (where the folder has
//! none) one generated from the YAML files below it. The text is handed
//! to the build; nothing is written into the tree.

use std::path::{Path, PathBuf};

use krusty_yaml::{EmitError, Node, YamlError};

use super::{FluxKustomization, Image};
use crate::error::FileError;

/// Why Flux cannot make the kustomization of a folder, in its words.
#[derive(Debug, thiserror::Error)]
pub enum GenerateError {
    /// A file or folder cannot be read, or a file is not YAML.
    #[error(transparent)]
    File(#[from] FileError),
    /// A path leads out of the source root (through a symlink).
    #[error("fs-security-constraint {op} {}: path '{}' is not in or below '{}'", path.display(), resolved.display(), top.display())]
    Escapes {
        /// The operation (`abs`, `read`).
        op: &'static str,
        /// The path.
        path: PathBuf,
        /// Where it leads.
        resolved: PathBuf,
        /// The source root.
        top: PathBuf,
    },
    /// A YAML file of a folder without a kustomization holds no
    /// Kubernetes objects.
    #[error("failed to decode Kubernetes YAML from {}: {why}", path.display())]
    NotObjects {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        why: NotObjects,
    },
    /// A component that is no local relative path.
    #[error("component path '{0}' must be local and relative")]
    Component(String),
    /// The kustomization cannot be printed.
    #[error(transparent)]
    Emit(#[from] EmitError),
}

/// Why a YAML file holds no Kubernetes objects.
#[derive(Debug, thiserror::Error)]
pub enum NotObjects {
    /// It cannot be read.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// It is not YAML.
    #[error(transparent)]
    Yaml(#[from] YamlError),
    /// An object has no `kind`.
    #[error("missing kind in object")]
    MissingKind,
    /// An object (of the kind) has no `metadata.name`.
    #[error("missing metadata.name in object of kind {0}")]
    MissingName(String),
}

/// The kustomization file names, in the order Flux looks for them.
pub const FILE_NAMES: [&str; 3] = ["kustomization.yaml", "kustomization.yml", "Kustomization"];

/// Fails for a path that leads out of the source root `top` (through a
/// symlink), in the words of Flux's secure file system.
pub fn confined(top: &Path, path: &Path, op: &'static str) -> Result<(), GenerateError> {
    let resolved = std::fs::canonicalize(path).map_err(|source| FileError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    if resolved.starts_with(top) {
        Ok(())
    } else {
        Err(GenerateError::Escapes {
            op,
            path: path.to_path_buf(),
            resolved,
            top: top.to_path_buf(),
        })
    }
}

/// The kustomization text for `dir` (a folder of the source root `top`).
/// Every file read must lie in the root.
pub fn kustomization(
    top: &Path,
    dir: &Path,
    ks: &FluxKustomization,
) -> Result<String, GenerateError> {
    confined(top, dir, "abs")?;
    let existing = FILE_NAMES.iter().map(|n| dir.join(n)).find(|p| p.is_file());
    let mut root = match existing {
        Some(path) => {
            confined(top, &path, "read")?;
            let text = std::fs::read_to_string(&path).map_err(|source| FileError::Io {
                path: path.clone(),
                source,
            })?;
            let root = krusty_yaml::parse_stream(&text)
                .map_err(|source| FileError::Yaml {
                    path: path.clone(),
                    source,
                })?
                .into_iter()
                .find_map(|d| d.root)
                .filter(|r| r.as_map().is_some())
                .unwrap_or_else(Node::map);
            let mut root = with_type_meta(root);
            let resources = root
                .get("resources")
                .and_then(Node::as_seq)
                .map_or(0, |s| s.len());
            if resources == 0 {
                // Flux's own rule: a kustomization listing no resources
                // records where each object came from.
                root.set(
                    "buildMetadata",
                    Node::seq_of([Node::string("originAnnotations")]),
                );
            }
            root
        }
        None => generated(top, dir)?,
    };
    merge(&mut root, dir, ks)?;
    let mut text = String::new();
    krusty_yaml::emit_document(&root, &mut text)?;
    Ok(text)
}

/// `root` with `apiVersion` and `kind` first, as Flux's decoder fills
/// them in.
fn with_type_meta(root: Node) -> Node {
    let mut out = Node::map();
    for key in ["apiVersion", "kind"] {
        let value = root.get(key).cloned().unwrap_or_else(|| {
            Node::string(if key == "kind" {
                "Kustomization"
            } else {
                "kustomize.config.k8s.io/v1beta1"
            })
        });
        out.set(key, value);
    }
    for (k, v) in root.as_map().into_iter().flatten() {
        if let Some(key) = k.as_str().filter(|k| *k != "apiVersion" && *k != "kind") {
            out.set(key, v.clone());
        }
    }
    out
}

/// A kustomization listing every YAML file below `dir` (lexical order,
/// hidden ones too) and every subfolder that holds a kustomization
/// (without looking inside it); each file must hold Kubernetes objects.
fn generated(top: &Path, dir: &Path) -> Result<Node, GenerateError> {
    let mut resources = Vec::new();
    scan(top, dir, Path::new(""), &mut resources)?;
    let mut root = with_type_meta(Node::map());
    if resources.is_empty() {
        root.set("namespace", Node::string("_placeholder"));
    } else {
        root.set(
            "resources",
            Node::seq_of(
                resources
                    .iter()
                    .map(|r| Node::string(format!("./{}", r.display()))),
            ),
        );
    }
    Ok(root)
}

fn scan(root: &Path, top: &Path, rel: &Path, out: &mut Vec<PathBuf>) -> Result<(), GenerateError> {
    let dir = top.join(rel);
    let mut entries: Vec<(String, std::fs::FileType)> = std::fs::read_dir(&dir)
        .map_err(|source| FileError::Io {
            path: dir.clone(),
            source,
        })?
        .filter_map(|e| e.ok())
        .filter_map(|e| Some((e.file_name().to_str()?.to_string(), e.file_type().ok()?)))
        .collect();
    entries.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    for (name, kind) in entries {
        let path = rel.join(&name);
        if kind.is_dir() {
            if FILE_NAMES.iter().any(|n| top.join(&path).join(n).is_file()) {
                out.push(path);
            } else {
                scan(root, top, &path, out)?;
            }
        } else if kind.is_file() && (name.ends_with(".yaml") || name.ends_with(".yml")) {
            confined(root, &top.join(&path), "read")?;
            check_objects(&top.join(&path))?;
            out.push(path);
        }
    }
    Ok(())
}

/// Fails for a file that does not hold Kubernetes objects (each needs a
/// `kind`, and a `metadata.name` unless it is a List).
fn check_objects(path: &Path) -> Result<(), GenerateError> {
    let failed = |why: NotObjects| GenerateError::NotObjects {
        path: path.to_path_buf(),
        why,
    };
    let text = std::fs::read_to_string(path).map_err(|e| failed(e.into()))?;
    let docs = krusty_yaml::parse_stream(&text).map_err(|e| failed(e.into()))?;
    for root in docs
        .into_iter()
        .filter_map(|d| d.root)
        .filter(|r| !r.is_null())
    {
        let kind = root.get("kind").and_then(Node::as_str).unwrap_or_default();
        if kind.is_empty() {
            return Err(failed(NotObjects::MissingKind));
        }
        let named = root
            .get_path(&["metadata", "name"])
            .and_then(Node::as_str)
            .is_some_and(|n| !n.is_empty());
        if !kind.ends_with("List") && !named {
            return Err(failed(NotObjects::MissingName(kind.to_string())));
        }
    }
    Ok(())
}

/// Flux's fields merged into the kustomization, in Flux's order.
fn merge(root: &mut Node, dir: &Path, ks: &FluxKustomization) -> Result<(), GenerateError> {
    if !ks.target_namespace.is_empty() {
        root.set("namespace", Node::string(ks.target_namespace.as_str()));
    }
    if !ks.name_prefix.is_empty() {
        root.set("namePrefix", Node::string(ks.name_prefix.as_str()));
    }
    if !ks.name_suffix.is_empty() {
        root.set("nameSuffix", Node::string(ks.name_suffix.as_str()));
    }
    if !ks.patches.is_empty() {
        let added = ks.patches.iter().map(|(patch, target)| {
            let mut p = Node::map();
            p.set("patch", Node::string(patch.as_str()));
            if let Some(target) = target {
                p.set("target", target.clone());
            }
            p
        });
        append(root, "patches", added.collect());
    }
    let mut components = Vec::new();
    for c in &ks.components {
        if !is_local_relative(c) {
            return Err(GenerateError::Component(c.clone()));
        }
        if ks.ignore_missing_components && !dir.join(c).exists() {
            continue;
        }
        components.push(Node::string(c.as_str()));
    }
    if !components.is_empty() {
        append(root, "components", components);
    }
    for image in &ks.images {
        merge_image(root, image);
    }
    if !ks.build_metadata.is_empty() {
        root.set(
            "buildMetadata",
            Node::seq_of(ks.build_metadata.iter().map(|b| Node::string(b.as_str()))),
        );
    }
    Ok(())
}

fn append(root: &mut Node, field: &str, items: Vec<Node>) {
    match root.get_mut(field).and_then(Node::as_seq_mut) {
        Some(list) => list.extend(items),
        None => root.set(field, Node::seq_of(items)),
    }
}

/// A Flux image merged into `images:` by name: the first entry of that
/// name gets a new name when one is given, and a new tag and digest
/// together when either is given; without one, the image is appended.
fn merge_image(root: &mut Node, image: &Image) {
    let entry = root
        .get_mut("images")
        .and_then(Node::as_seq_mut)
        .and_then(|list| {
            list.iter_mut()
                .find(|e| e.get("name").and_then(Node::as_str) == Some(image.name.as_str()))
        });
    match entry {
        Some(entry) => {
            if !image.new_name.is_empty() {
                entry.set("newName", Node::string(image.new_name.as_str()));
            }
            if !image.new_tag.is_empty() || !image.digest.is_empty() {
                set_or_remove(entry, "newTag", &image.new_tag);
                set_or_remove(entry, "digest", &image.digest);
            }
        }
        None => {
            let mut e = Node::map();
            e.set("name", Node::string(image.name.as_str()));
            for (key, value) in [
                ("newName", &image.new_name),
                ("newTag", &image.new_tag),
                ("digest", &image.digest),
            ] {
                if !value.is_empty() {
                    e.set(key, Node::string(value.as_str()));
                }
            }
            append(root, "images", vec![e]);
        }
    }
}

fn set_or_remove(node: &mut Node, key: &str, value: &str) {
    if value.is_empty() {
        node.remove(key);
    } else {
        node.set(key, Node::string(value));
    }
}

/// Whether a component path is local and relative (not a remote
/// reference, not absolute).
fn is_local_relative(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    let remote = [
        "git::",
        "gh:",
        "ssh://",
        "https://",
        "http://",
        "git@",
        "github.com:",
        "github.com/",
    ]
    .iter()
    .any(|p| lower.starts_with(p) && lower.len() > p.len());
    !remote
        && !Path::new(path.trim_start_matches("file://")).is_absolute()
        && !Path::new(path).is_absolute()
}
