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
    /// A file of resources, and its size when resolving it found out.
    File(PathBuf, Option<u64>),
}

/// A path resolved against a kustomization root.
struct Resolved {
    /// The path, with symlinks resolved.
    path: PathBuf,
    is_dir: bool,
    /// The size its `lstat` reported, when resolving took one.
    size: Option<u64>,
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
        let resolved = self.resolve(rel)?;
        if resolved.is_dir {
            return Ok(Entry::Dir(resolved.path));
        }
        self.check_restriction(&resolved.path)?;
        Ok(Entry::File(resolved.path, resolved.size))
    }

    /// `root/rel` with symlinks resolved, and whether it is a directory.
    /// A path of plain names with no symlink on the way (the usual case)
    /// costs one `lstat` per name; anything else is canonicalized.
    fn resolve(&self, rel: &str) -> BuildResult<Resolved> {
        let rel_path = Path::new(rel);
        let plain_names = rel_path.components().next().is_some()
            && rel_path
                .components()
                .all(|c| matches!(c, std::path::Component::Normal(_)));
        if plain_names {
            let mut path = self.root.clone();
            let mut last = None;
            for name in rel_path.components() {
                path.push(name);
                match std::fs::symlink_metadata(&path) {
                    Ok(m) if !m.file_type().is_symlink() => last = Some(m),
                    _ => {
                        last = None;
                        break;
                    }
                }
            }
            if let Some(m) = last {
                return Ok(Resolved {
                    path,
                    is_dir: m.is_dir(),
                    size: m.is_file().then_some(m.len()),
                });
            }
        }
        let path = canonical(&self.root.join(rel))?;
        let is_dir = path.is_dir();
        Ok(Resolved {
            path,
            is_dir,
            size: None,
        })
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

    /// Reads a file as UTF-8 text; `size` is what a stat of it reported,
    /// if known (see [`read_text`]).
    pub fn read(&self, path: &Path, size: Option<u64>) -> BuildResult<String> {
        read_text(path, size)
    }

    /// Resolves a file path named in the kustomization, subject to the
    /// load restrictor.
    pub fn file(&self, rel: &str) -> BuildResult<PathBuf> {
        let resolved = self.resolve(rel)?;
        self.check_restriction(&resolved.path)?;
        Ok(resolved.path)
    }
}

impl krusty_ops::FileSource for Loader {
    fn read_bytes(&self, rel: &str) -> krusty_ops::OpResult<Vec<u8>> {
        let resolved = self
            .resolve(rel)
            .and_then(|r| self.check_restriction(&r.path).map(|()| r))
            .map_err(|e| krusty_ops::OpError::new(e.0))?;
        let path = resolved.path;
        if resolved.is_dir {
            return Err(krusty_ops::OpError::new(format!(
                "'{}' is a directory, not a file",
                path.display()
            )));
        }
        read_whole(&path, resolved.size).map_err(|e| {
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

/// Reads a whole file in as few system calls as it can: with its size
/// known (`size`, from a stat; else one is taken), one read of a byte more
/// than that which comes back short exactly at that size has reached the
/// end, so no further read is needed to confirm it. Any other outcome (the
/// file changed since, or is not a regular file) reads on to the end.
pub fn read_whole(path: &Path, size: Option<u64>) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut file = std::fs::File::open(path)?;
    let size = match size {
        Some(size) => size,
        None => file.metadata()?.len(),
    };
    let expected = usize::try_from(size).unwrap_or(usize::MAX);
    let mut buf = vec![0u8; expected.saturating_add(1).min(1 << 30)];
    let mut filled = 0;
    loop {
        if filled == buf.len() {
            buf.resize(buf.len().saturating_mul(2), 0);
        }
        let n = match file.read(&mut buf[filled..]) {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        filled += n;
        if n == 0 || (filled == expected && filled < buf.len()) {
            break;
        }
    }
    buf.truncate(filled);
    Ok(buf)
}

/// Reads a file as UTF-8, reporting the line and column of invalid bytes;
/// `size` is what a stat of it reported, if known.
pub fn read_text(path: &Path, size: Option<u64>) -> BuildResult<String> {
    let bytes = read_whole(path, size).map_err(|e| {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A scratch file holding `content`, removed when dropped.
    struct Scratch(PathBuf);

    impl Scratch {
        fn new(name: &str, content: &[u8]) -> Scratch {
            let path =
                std::env::temp_dir().join(format!("krusty-loader-{}-{name}", std::process::id()));
            std::fs::write(&path, content).expect("scratch file");
            Scratch(path)
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }

    #[test]
    fn whole_files_are_read_whatever_size_was_given() {
        let content: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
        let file = Scratch::new("sizes", &content);
        let len = content.len() as u64;
        // The right size, none, and sizes a file that changed since its
        // stat would show: each reads the file as it is now.
        for size in [
            Some(len),
            None,
            Some(0),
            Some(1),
            Some(len - 1),
            Some(len + 1),
            Some(len * 3),
        ] {
            let read = read_whole(&file.0, size).expect("readable");
            assert!(
                read == content,
                "size hint {size:?} read {} bytes",
                read.len()
            );
        }
        let empty = Scratch::new("empty", b"");
        assert_eq!(read_whole(&empty.0, Some(0)).expect("readable"), b"");
        assert_eq!(read_whole(&empty.0, None).expect("readable"), b"");
    }

    #[test]
    fn reading_a_directory_fails() {
        assert!(read_whole(&std::env::temp_dir(), None).is_err());
    }
}
