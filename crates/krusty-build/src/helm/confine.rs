//! Where a chart's files may be. Under the default
//! `LoadRestrictionsRootOnly`, the chart's folder (so its chart home) and
//! `configHome` must lie in or below the kustomization's root, symlinks
//! resolved, and every file of the chart's folder too: helm reads them all
//! (templates, `.Files`), following symlinks, so a link leading out of
//! the root would hand helm a file the tree may not read. A chart's folder
//! never holds a FIFO, a device or a socket (helm, and krusty's digest of
//! the chart, would block reading it), whatever the restrictor.

use std::path::{Path, PathBuf};

use crate::error::{BuildError, BuildResult};
use crate::loader::{clean, is_within};

/// The deepest folder walked in a chart.
const MAX_DEPTH: usize = 64;

/// Checks that `path`, which the field `field` names (it may not exist
/// yet), resolves in or below `root`.
pub fn folder(field: &str, path: &Path, root: &Path) -> BuildResult<()> {
    let resolved = resolve_existing(path);
    if is_within(&resolved, root) {
        return Ok(());
    }
    Err(BuildError::new(format!(
        "security; {field} '{}' is not in or below '{}' (use --load-restrictor LoadRestrictionsNone to allow it)",
        resolved.display(),
        root.display()
    )))
}

/// `path` (absolute, cleaned) with symlinks resolved for as much of it as
/// exists.
fn resolve_existing(path: &Path) -> PathBuf {
    let path = clean(&std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf()));
    let mut rest = Vec::new();
    let mut existing = path.as_path();
    loop {
        if let Ok(real) = std::fs::canonicalize(existing) {
            return rest.iter().rev().fold(real, |p, name| p.join(name));
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                existing = parent;
            }
            _ => return path.clone(),
        }
    }
}

/// Checks every entry of the chart folder `dir`: no special file, and,
/// when `root` is given, every symlink resolving in or below it.
pub fn chart_tree(dir: &Path, root: Option<&Path>) -> BuildResult<()> {
    walk(dir, root, 0)
}

fn walk(dir: &Path, root: Option<&Path>, depth: usize) -> BuildResult<()> {
    if depth > MAX_DEPTH {
        return Err(BuildError::new(format!(
            "chart folder '{}' nests more than {MAX_DEPTH} folders deep (a symlink loop?)",
            dir.display()
        )));
    }
    let unreadable = |e: std::io::Error| {
        BuildError::new(format!("cannot read chart folder '{}': {e}", dir.display()))
    };
    for entry in std::fs::read_dir(dir).map_err(unreadable)? {
        let path = entry.map_err(unreadable)?.path();
        let Ok(link) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if link.file_type().is_symlink() {
            // A dangling link is helm's to report.
            let Ok(target) = std::fs::canonicalize(&path) else {
                continue;
            };
            if let Some(root) = root.filter(|root| !is_within(&target, root)) {
                return Err(BuildError::new(format!(
                    "security; chart file '{}' leads to '{}', which is not in or below '{}' (use --load-restrictor LoadRestrictionsNone to allow it)",
                    path.display(),
                    target.display(),
                    root.display()
                )));
            }
        }
        let Ok(meta) = std::fs::metadata(&path) else {
            continue;
        };
        if meta.is_dir() {
            walk(&path, root, depth + 1)?;
        } else if !meta.is_file() {
            return Err(BuildError::new(format!(
                "chart file '{}' is not a regular file (a FIFO, device or socket)",
                path.display()
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::run::TempDir;
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn folders_resolve_through_links_as_far_as_they_exist() {
        let tmp = TempDir::new().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap().join("root");
        std::fs::create_dir_all(root.join("charts")).unwrap();
        std::fs::create_dir_all(root.parent().unwrap().join("outside")).unwrap();
        symlink("../outside", root.join("out")).unwrap();
        assert!(folder("chartHome", &root.join("charts/not-yet/c"), &root).is_ok());
        let e = folder("chartHome", &root.join("out/c"), &root)
            .unwrap_err()
            .to_string();
        assert!(e.contains("outside/c' is not in or below"), "{e}");
        assert!(folder("chartHome", &root.join("../elsewhere"), &root).is_err());
    }

    #[test]
    fn chart_links_stay_in_the_root_and_special_files_are_refused() {
        let tmp = TempDir::new().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        let chart = root.join("charts/c");
        std::fs::create_dir_all(chart.join("files")).unwrap();
        std::fs::write(root.join("shared.txt"), "x").unwrap();
        symlink("../../../shared.txt", chart.join("files/in.txt")).unwrap();
        assert!(chart_tree(&chart, Some(&root)).is_ok());
        symlink("/etc/passwd", chart.join("files/out.txt")).unwrap();
        let e = chart_tree(&chart, Some(&root)).unwrap_err().to_string();
        assert!(e.contains("files/out.txt' leads to"), "{e}");
        assert!(chart_tree(&chart, None).is_ok());
        std::fs::remove_file(chart.join("files/out.txt")).unwrap();
        symlink("/dev/zero", chart.join("zero")).unwrap();
        let e = chart_tree(&chart, None).unwrap_err().to_string();
        assert!(e.contains("not a regular file"), "{e}");
    }
}
