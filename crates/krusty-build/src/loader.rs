//! File access for a build: resolving paths against a kustomization root and
//! enforcing the load restrictor.

use std::path::{Path, PathBuf};

use crate::error::{BuildError, BuildResult};

/// Which files a kustomization may read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LoadRestrictor {
    /// Only files in or below the kustomization's directory (Kustomize's default).
    #[default]
    RootOnly,
    /// Any file.
    None,
}

impl std::str::FromStr for LoadRestrictor {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "LoadRestrictionsRootOnly" | "rootOnly" => Ok(LoadRestrictor::RootOnly),
            "LoadRestrictionsNone" | "none" => Ok(LoadRestrictor::None),
            other => Err(format!(
                "invalid load restrictor '{other}': use LoadRestrictionsRootOnly or LoadRestrictionsNone"
            )),
        }
    }
}

/// Reads files relative to one kustomization root.
#[derive(Debug, Clone)]
pub struct Loader {
    /// The kustomization's directory, with symlinks resolved.
    pub root: PathBuf,
    /// The file restriction in force.
    pub restrictor: LoadRestrictor,
}

/// What a path in `resources:` names.
pub enum Entry {
    /// A directory holding a kustomization.
    Dir(PathBuf),
    /// A file of resources.
    File(PathBuf),
}

impl Loader {
    /// A loader rooted at `dir` (which must exist and be a directory).
    pub fn new(dir: &Path, restrictor: LoadRestrictor) -> BuildResult<Loader> {
        let root = canonical(dir)?;
        if !root.is_dir() {
            return Err(BuildError::new(format!(
                "must build at directory: '{}': file is not directory",
                root.display()
            )));
        }
        Ok(Loader { root, restrictor })
    }

    /// A loader rooted at `dir`, a directory path already resolved by
    /// [`Loader::entry`].
    pub fn at_resolved(dir: PathBuf, restrictor: LoadRestrictor) -> Loader {
        Loader {
            root: dir,
            restrictor,
        }
    }

    /// Classifies a `resources:` path: a directory or a file (with symlinks
    /// resolved). Files are subject to the load restrictor.
    pub fn entry(&self, rel: &str) -> BuildResult<Entry> {
        let (path, is_dir) = self.resolve(rel)?;
        if is_dir {
            return Ok(Entry::Dir(path));
        }
        self.check_restriction(&path)?;
        Ok(Entry::File(path))
    }

    /// `root/rel` with symlinks resolved, and whether it is a directory.
    /// A path of plain names with no symlink on the way (the usual case)
    /// costs one `lstat` per name; anything else is canonicalized.
    fn resolve(&self, rel: &str) -> BuildResult<(PathBuf, bool)> {
        let rel_path = Path::new(rel);
        let plain_names = rel_path.components().next().is_some()
            && rel_path
                .components()
                .all(|c| matches!(c, std::path::Component::Normal(_)));
        if plain_names {
            let mut path = self.root.clone();
            let mut is_dir = false;
            let mut resolved = true;
            for name in rel_path.components() {
                path.push(name);
                match std::fs::symlink_metadata(&path) {
                    Ok(m) if !m.file_type().is_symlink() => is_dir = m.is_dir(),
                    _ => {
                        resolved = false;
                        break;
                    }
                }
            }
            if resolved {
                return Ok((path, is_dir));
            }
        }
        let path = canonical(&self.root.join(rel))?;
        let is_dir = path.is_dir();
        Ok((path, is_dir))
    }

    fn check_restriction(&self, path: &Path) -> BuildResult<()> {
        if self.restrictor == LoadRestrictor::RootOnly && !path.starts_with(&self.root) {
            return Err(BuildError::new(format!(
                "security; file '{}' is not in or below '{}' (use --load-restrictor LoadRestrictionsNone to allow it)",
                path.display(),
                self.root.display()
            )));
        }
        Ok(())
    }

    /// Reads a file as UTF-8 text.
    pub fn read(&self, path: &Path) -> BuildResult<String> {
        read_text(path)
    }

    /// Resolves a file path named in the kustomization, subject to the
    /// load restrictor.
    pub fn file(&self, rel: &str) -> BuildResult<PathBuf> {
        let (path, _) = self.resolve(rel)?;
        self.check_restriction(&path)?;
        Ok(path)
    }
}

impl krusty_ops::FileSource for Loader {
    fn read_bytes(&self, rel: &str) -> krusty_ops::OpResult<Vec<u8>> {
        let path = self.file(rel).map_err(|e| krusty_ops::OpError::new(e.0))?;
        if path.is_dir() {
            return Err(krusty_ops::OpError::new(format!(
                "'{}' is a directory, not a file",
                path.display()
            )));
        }
        std::fs::read(&path).map_err(|e| {
            krusty_ops::OpError::new(format!(
                "{}: cannot read file: {}",
                path.display(),
                describe_io(&e)
            ))
        })
    }
}

/// Resolves symlinks, with Kustomize's wording when the path does not exist.
pub fn canonical(path: &Path) -> BuildResult<PathBuf> {
    std::fs::canonicalize(path).map_err(|e| {
        BuildError::new(format!(
            "evalsymlink failure on '{}' : lstat {}: {}",
            path.display(),
            first_missing(path).display(),
            describe_io(&e)
        ))
    })
}

/// `path` with `.` and `..` components resolved lexically (as Go's
/// `filepath.Clean` does).
pub fn clean(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            other => out.push(other),
        }
    }
    out
}

/// The first prefix of `path` that does not exist (where Go's symlink
/// resolution stops), or `path` itself.
fn first_missing(path: &Path) -> PathBuf {
    let mut prefix = PathBuf::new();
    for component in path.components() {
        prefix.push(component);
        if std::fs::symlink_metadata(&prefix).is_err() {
            return prefix;
        }
    }
    path.to_path_buf()
}

fn describe_io(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file or directory".into(),
        std::io::ErrorKind::PermissionDenied => "permission denied".into(),
        _ => e.to_string(),
    }
}

/// Reads a file as UTF-8, reporting the line and column of invalid bytes.
pub fn read_text(path: &Path) -> BuildResult<String> {
    let bytes = std::fs::read(path).map_err(|e| {
        BuildError::new(format!(
            "{}: cannot read file: {}",
            path.display(),
            describe_io(&e)
        ))
    })?;
    String::from_utf8(bytes).map_err(|e| {
        let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let line = valid.iter().filter(|&&b| b == b'\n').count() + 1;
        let line_start = valid.iter().rposition(|&b| b == b'\n').map_or(0, |p| p + 1);
        let col = String::from_utf8_lossy(&valid[line_start..])
            .chars()
            .count()
            + 1;
        BuildError::new(format!(
            "{}:{line}:{col}: invalid UTF-8: the file must be UTF-8 encoded text",
            path.display()
        ))
    })
}
