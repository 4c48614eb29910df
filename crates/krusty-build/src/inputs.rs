//! What a build read: every local file it opened or looked for, and every
//! folder it read as a whole (a Helm chart), recorded when asked for (see
//! [`crate::Engine::build_with`]).
//!
//! The record is what decides whether a change can alter a build: a build
//! is a function of the files it reads, so a change that touches none of
//! them (nor anything under a folder it read whole) leaves its output as
//! it was. Files looked for and not found (the kustomization file names a
//! folder is searched for) are recorded too: creating one changes the
//! build. Files read from remote checkouts and URLs are not: they are not
//! part of the tree.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The local paths one build read.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Inputs {
    /// Files read or looked for, as absolute paths (both the path as the
    /// tree names it and, where a symlink lies on the way, the file it
    /// resolves to).
    pub files: BTreeSet<PathBuf>,
    /// Folders read as a whole: any path under one is an input.
    pub folders: BTreeSet<PathBuf>,
}

impl Inputs {
    /// Whether `path` (absolute) is one of the inputs, or lies under a
    /// folder read whole.
    pub fn contains(&self, path: &Path) -> bool {
        self.files.contains(path) || path.ancestors().any(|a| self.folders.contains(a))
    }

    /// Every input below `root`, relative to it, files and folders.
    pub fn relative_to(&self, root: &Path) -> Inputs {
        let below = |set: &BTreeSet<PathBuf>| {
            set.iter()
                .filter_map(|p| p.strip_prefix(root).ok().map(Path::to_path_buf))
                .collect()
        };
        Inputs {
            files: below(&self.files),
            folders: below(&self.folders),
        }
    }
}

/// Where a recording build writes down what it reads; shared by the
/// loaders of one build.
#[derive(Debug, Default)]
pub struct InputLog {
    seen: Mutex<Inputs>,
}

impl InputLog {
    /// Records that the file `path` was read or looked for.
    pub fn file(&self, path: &Path) {
        if let Ok(mut seen) = self.seen.lock() {
            if !seen.files.contains(path) {
                seen.files.insert(path.to_path_buf());
            }
        }
    }

    /// Records that everything under `path` was read.
    pub fn folder(&self, path: &Path) {
        if let Ok(mut seen) = self.seen.lock() {
            seen.folders.insert(path.to_path_buf());
        }
    }

    /// Records everything `inputs` holds.
    pub fn extend(&self, inputs: &Inputs) {
        if let Ok(mut seen) = self.seen.lock() {
            seen.files.extend(inputs.files.iter().cloned());
            seen.folders.extend(inputs.folders.iter().cloned());
        }
    }

    /// What has been recorded.
    pub fn take(&self) -> Inputs {
        self.seen
            .lock()
            .map(|mut seen| std::mem::take(&mut *seen))
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_is_an_input_when_recorded_or_under_a_folder_read_whole() {
        let log = InputLog::default();
        log.file(Path::new("/r/app/kustomization.yaml"));
        log.folder(Path::new("/r/charts/web"));
        let inputs = log.take();
        assert!(inputs.contains(Path::new("/r/app/kustomization.yaml")));
        assert!(inputs.contains(Path::new("/r/charts/web/templates/a.yaml")));
        assert!(!inputs.contains(Path::new("/r/app/other.yaml")));
        assert!(!inputs.contains(Path::new("/r/charts/webapp/values.yaml")));
        let relative = inputs.relative_to(Path::new("/r"));
        assert!(relative.files.contains(Path::new("app/kustomization.yaml")));
        assert!(relative.folders.contains(Path::new("charts/web")));
    }
}
