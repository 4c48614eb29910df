//! How the paths a kustomization lists are read: relative to its folder,
//! cleaned by name as Go's `filepath` package cleans them.

use std::path::{Component, Path, PathBuf};

/// `path` with `.` and `..` components resolved lexically (as Go's
/// `filepath.Clean` does).
pub fn clean(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            other => out.push(other),
        }
    }
    out
}
