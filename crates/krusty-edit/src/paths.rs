//! `edit add|remove resource|component|base|generator|transformer`: lists
//! of paths, with Kustomize's pattern expansion.

use std::path::{Component, Path, PathBuf};

use krusty_yaml::Node;

use crate::checks::Checks;
use crate::error::{EditError, EditResult};
use crate::file::KustomizationFile;
use crate::glob;
use crate::node::{items, strings};

/// A list of paths `edit add` appends to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathList {
    /// `resources`.
    Resources,
    /// `components`.
    Components,
    /// `generators`.
    Generators,
    /// `transformers`.
    Transformers,
}

impl PathList {
    /// The kustomization field.
    pub fn field(self) -> &'static str {
        match self {
            PathList::Resources => "resources",
            PathList::Components => "components",
            PathList::Generators => "generators",
            PathList::Transformers => "transformers",
        }
    }

    /// The word Kustomize's messages use.
    pub fn word(self) -> &'static str {
        match self {
            PathList::Resources => "resource",
            PathList::Components => "component",
            PathList::Generators => "generator",
            PathList::Transformers => "transformer",
        }
    }
}

/// Expands `patterns` in `dir` as `edit add resource|component` does: each
/// pattern's matches, or, with none, the pattern itself if it names a
/// directory or a remote target (fetched to check that its folder exists,
/// as Kustomize clones it); else Kustomize's error. `verify: false`
/// (`--no-verify`) takes the patterns as they are.
pub fn expand_checked(
    dir: &Path,
    patterns: &[String],
    verify: bool,
    checks: &dyn Checks,
) -> EditResult<Vec<String>> {
    let mut out = Vec::new();
    for pattern in patterns {
        if !verify {
            out.push(pattern.clone());
            continue;
        }
        let found = glob::glob(dir, pattern)
            .map_err(|e| EditError::new(format!("error checking the filesystem: {e}")))?;
        if !found.is_empty() {
            out.extend(found);
            continue;
        }
        let why = match checks.remote_target(pattern) {
            Some(checked) => checked.err().map(|e| e.to_string()),
            None => Some(not_a_root(dir, pattern)),
        };
        if let Some(why) = why {
            return Err(EditError::new(format!("{pattern} has no match: {why}")));
        }
        out.push(pattern.clone());
    }
    Ok(out)
}

/// Expands `patterns` as `edit add generator|transformer` does: a pattern
/// without matches is reported (in `notes`) and skipped.
pub fn expand(dir: &Path, patterns: &[String], notes: &mut Vec<String>) -> EditResult<Vec<String>> {
    let mut out = Vec::new();
    for pattern in patterns {
        let found = glob::glob(dir, pattern)?;
        if found.is_empty() {
            notes.push(format!("{pattern} has no match"));
        }
        out.extend(found);
    }
    Ok(out)
}

/// Why Kustomize's loader cannot open `pattern` as a kustomization root.
fn not_a_root(dir: &Path, pattern: &str) -> String {
    if pattern.is_empty() {
        return "new root cannot be empty".to_string();
    }
    if Path::new(pattern).is_absolute() {
        return format!("new root '{pattern}' cannot be absolute");
    }
    let abs = clean(
        &std::fs::canonicalize(dir)
            .unwrap_or_else(|_| dir.to_path_buf())
            .join(pattern),
    );
    let mut missing = PathBuf::new();
    for part in abs.components() {
        missing.push(part);
        if std::fs::symlink_metadata(&missing).is_err() {
            break;
        }
    }
    if std::fs::metadata(&abs).is_ok() {
        return format!("must build at directory: '{pattern}': file is not directory");
    }
    format!(
        "must build at directory: not a valid directory: evalsymlink failure on '{}' : lstat {}: no such file or directory",
        abs.display(),
        missing.display()
    )
}

/// `path` with `.` and `..` resolved by name, as Go's `filepath.Join`
/// cleans it.
fn clean(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// Appends `paths` to the list, skipping (with a note) those already
/// there and the kustomization file itself.
pub fn add(k: &mut KustomizationFile, list: PathList, paths: &[String], notes: &mut Vec<String>) {
    let own_name = k
        .path()
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default()
        .to_string();
    // `bases` have joined `resources` when the file was read.
    let mut present = strings(k.get(list.field()));
    let mut nodes = items(k.get(list.field()));
    for path in paths {
        if (list == PathList::Resources || list == PathList::Components) && *path == own_name {
            continue;
        }
        if present.contains(path) {
            notes.push(format!(
                "{} {path} already in kustomization file",
                list.word()
            ));
            continue;
        }
        present.push(path.clone());
        nodes.push(Node::string(path.as_str()));
    }
    k.set_or_remove(list.field(), Node::seq_of(nodes));
}

/// `edit add base`: the comma-separated directories must exist and not
/// be listed yet; they join `resources`.
pub fn add_bases(dir: &Path, k: &mut KustomizationFile, arg: &str) -> EditResult<()> {
    let mut present = strings(k.get("resources"));
    let mut nodes = items(k.get("resources"));
    for path in arg.split(',') {
        if !dir.join(path).exists() {
            return Err(EditError::new(format!("{path} does not exist")));
        }
        if present.iter().any(|p| p == path) {
            return Err(EditError::new(format!(
                "base {path} already in kustomization file"
            )));
        }
        present.push(path.to_string());
        nodes.push(Node::string(path));
    }
    k.set("resources", Node::seq_of(nodes));
    Ok(())
}

/// `edit remove resource|component|transformer`: removes the entries that
/// match a pattern; `false` when none does (the file is left as it is).
pub fn remove(k: &mut KustomizationFile, field: &str, patterns: &[String]) -> EditResult<bool> {
    let nodes = items(k.get(field));
    let mut doomed = vec![false; nodes.len()];
    for pattern in patterns {
        for (i, node) in nodes.iter().enumerate() {
            if let Some(text) = node.as_str() {
                doomed[i] |= glob::matches(pattern, text)?;
            }
        }
    }
    if !doomed.contains(&true) {
        return Ok(false);
    }
    let kept = nodes
        .into_iter()
        .zip(doomed)
        .filter(|(_, gone)| !gone)
        .map(|(n, _)| n);
    k.set_or_remove(field, Node::seq_of(kept));
    Ok(true)
}
