//! Finding a repository's kustomization roots, and its targets: the roots
//! no other kustomization reaches.
//!
//! A root is a folder holding a kustomization file (`kustomization.yaml`,
//! `kustomization.yml` or `Kustomization`) or a composition file
//! (`composition.yaml`, `composition.yml`). A kustomization reaches every
//! local folder it names in `resources:`, `bases:`, `components:`,
//! `generators:`, `transformers:` and `validators:` (those are built as
//! part of it). A target is a root that nothing reaches and that is not a
//! Component (a Component only builds inside a kustomization). Folders
//! whose name starts with `.` (`.git`, `.github`) are not searched, and
//! symlinks to folders are not followed.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// The names of a kustomization file, in the order Kustomize looks for
/// them.
pub const KUSTOMIZATION_FILES: [&str; 3] =
    ["kustomization.yaml", "kustomization.yml", "Kustomization"];

/// The names of a composition file.
pub const COMPOSITION_FILES: [&str; 2] = ["composition.yaml", "composition.yml"];

/// The fields of a kustomization that name folders built as part of it.
const REACHING_FIELDS: [&str; 6] = [
    "resources",
    "bases",
    "components",
    "generators",
    "transformers",
    "validators",
];

/// What a root folder holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RootKind {
    /// A Kustomization.
    Kustomization,
    /// A Component (`kind: Component`).
    Component,
    /// A composition.
    Composition,
}

/// A kustomization root found in the tree.
#[derive(Debug, Clone)]
pub struct Root {
    /// The folder, relative to the folder searched (`.` for that folder).
    pub dir: PathBuf,
    /// What it holds.
    pub kind: RootKind,
    /// The local folders it names, joined to it (not resolved).
    pub reaches: Vec<PathBuf>,
}

/// Every kustomization root under `top`, in path order.
pub fn roots(top: &Path) -> Result<Vec<Root>> {
    let mut found = Vec::new();
    walk(top, Path::new(""), &mut found)?;
    found.sort_by(|a, b| a.dir.cmp(&b.dir));
    Ok(found)
}

/// The targets under `top`: the roots that no kustomization in the tree
/// reaches, Components left out, relative to `top` (`.` for `top`
/// itself), in path order.
pub fn targets(top: &Path) -> Result<Vec<PathBuf>> {
    let roots = roots(top)?;
    let reached: HashSet<PathBuf> = roots
        .iter()
        .flat_map(|r| r.reaches.iter())
        .map(|p| resolved(&top.join(p)))
        .collect();
    Ok(roots
        .into_iter()
        .filter(|r| r.kind != RootKind::Component)
        .filter(|r| !reached.contains(&resolved(&top.join(&r.dir))))
        .map(|r| r.dir)
        .collect())
}

/// `path` with symlinks resolved where it exists, else cleaned lexically.
fn resolved(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| clean(path))
}

/// `path` with `.` and `..` resolved lexically.
pub(crate) fn clean(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            other => out.push(other),
        }
    }
    if out.as_os_str().is_empty() {
        out.push(".");
    }
    out
}

fn walk(top: &Path, rel: &Path, found: &mut Vec<Root>) -> Result<()> {
    let dir = top.join(rel);
    let listing = std::fs::read_dir(&dir).map_err(|e| Error::io(&dir, e))?;
    let mut folders = Vec::new();
    let mut names = HashSet::new();
    for entry in listing {
        let entry = entry.map_err(|e| Error::io(&dir, e))?;
        let name = entry.file_name();
        let file_type = entry.file_type().map_err(|e| Error::io(entry.path(), e))?;
        if file_type.is_dir() {
            if !name.to_string_lossy().starts_with('.') {
                folders.push(name);
            }
        } else {
            names.insert(name.to_string_lossy().into_owned());
        }
    }
    let shown = if rel.as_os_str().is_empty() {
        PathBuf::from(".")
    } else {
        rel.to_path_buf()
    };
    if let Some(name) = KUSTOMIZATION_FILES.iter().find(|n| names.contains(**n)) {
        let (kind, reaches) = read_kustomization(&dir.join(name), &shown);
        found.push(Root {
            dir: shown,
            kind,
            reaches,
        });
    } else if COMPOSITION_FILES.iter().any(|n| names.contains(*n)) {
        found.push(Root {
            dir: shown,
            kind: RootKind::Composition,
            reaches: Vec::new(),
        });
    }
    folders.sort();
    for name in folders {
        walk(top, &rel.join(name), found)?;
    }
    Ok(())
}

/// A kustomization file's kind and the local folders it names, joined to
/// `dir` (relative to the searched folder). A file that does not parse
/// names nothing: building it reports why.
fn read_kustomization(file: &Path, dir: &Path) -> (RootKind, Vec<PathBuf>) {
    let Ok(text) = std::fs::read_to_string(file) else {
        return (RootKind::Kustomization, Vec::new());
    };
    let Some(root) = krusty_yaml::parse_stream(&text)
        .ok()
        .and_then(|docs| docs.into_iter().next())
        .and_then(|d| d.root)
    else {
        return (RootKind::Kustomization, Vec::new());
    };
    let kind = match root.get("kind").and_then(|k| k.as_str()) {
        Some("Component") => RootKind::Component,
        _ => RootKind::Kustomization,
    };
    let reaches = REACHING_FIELDS
        .iter()
        .filter_map(|field| root.get(field).and_then(|v| v.as_seq()))
        .flat_map(|items| items.iter().filter_map(|i| i.as_str()))
        .filter(|entry| names_local_folder(entry))
        .map(|entry| clean(&dir.join(entry)))
        .collect();
    (kind, reaches)
}

/// Whether a list entry can name a local folder: not a URL, not a remote
/// reference, not inline YAML, not a resource file.
fn names_local_folder(entry: &str) -> bool {
    !(entry.contains("://")
        || entry.contains('\n')
        || entry.starts_with("git@")
        || entry.starts_with("github.com/")
        || entry.starts_with("gitlab.com/")
        || [".yaml", ".yml", ".json"]
            .iter()
            .any(|e| entry.ends_with(e)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &Path, path: &str, text: &str) {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn targets_are_the_roots_nothing_reaches_components_left_out() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, "base/kustomization.yaml", "resources:\n- cm.yaml\n");
        write(root, "base/cm.yaml", "kind: ConfigMap\n");
        write(root, "comp/kustomization.yaml", "kind: Component\n");
        write(
            root,
            "lonely-comp/kustomization.yaml",
            "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\n",
        );
        write(
            root,
            "envs/dev/kustomization.yaml",
            "resources:\n- ../../base/\ncomponents:\n- ../../comp\n",
        );
        write(
            root,
            "envs/prod/Kustomization",
            "resources:\n- ./../../base\n- https://example.com/x.yaml\n",
        );
        write(root, "mixins/kustomization.yml", "resources:\n- ../base\n");
        write(root, "envs/prod/sub/kustomization.yaml", "resources: []\n");
        write(root, ".github/kustomization.yaml", "resources: []\n");
        let listed: Vec<String> = targets(root)
            .unwrap()
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        assert_eq!(listed, ["envs/dev", "envs/prod", "envs/prod/sub", "mixins"]);
    }

    #[test]
    fn the_searched_folder_itself_is_listed_as_dot() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "kustomization.yaml", "resources:\n- app\n");
        write(dir.path(), "app/kustomization.yaml", "resources: []\n");
        let listed = targets(dir.path()).unwrap();
        assert_eq!(listed, [PathBuf::from(".")]);
    }
}
