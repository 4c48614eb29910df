//! The inflated output of charts, kept in krusty's cache: a rebuild with
//! the same chart, values, flags and helm binary reads helm's output back
//! instead of running helm.
//!
//! The key is a digest of everything `helm template` reads: the helm
//! binary (its path, size, modification time and inode, so a new binary
//! at the same path is a new key), the arguments (with the values file's
//! text in place of its temporary path), the additional values files, and
//! every file of the chart's folder (names, kinds and contents).
//!
//! Charts pulled from a repository are kept there too, in `helm-charts/`,
//! published whole: those pulled at an exact version by the digest of
//! their archive (with a record of the digest each version had when last
//! pulled, for `--offline`), others by repository, name and version.

use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use krusty_fetch::Cache;
use sha2::{Digest, Sha256};

/// The version of the key's layout: a new one leaves old entries unused.
const LAYOUT: &[u8] = b"krusty-helm-output-v1\0";

/// A cache key in the making.
pub struct Key {
    hasher: Sha256,
}

impl Key {
    /// A key for the helm binary at `program`.
    pub fn new(program: &Path) -> io::Result<Key> {
        let mut key = Key {
            hasher: Sha256::new(),
        };
        key.hasher.update(LAYOUT);
        let m = std::fs::metadata(program)?;
        key.field(program.as_os_str().as_encoded_bytes());
        key.field(format!("{} {} {} {}", m.len(), m.mtime(), m.mtime_nsec(), m.ino()).as_bytes());
        Ok(key)
    }

    /// Adds one field (length-prefixed, so fields cannot run together).
    pub fn field(&mut self, bytes: &[u8]) {
        self.hasher.update((bytes.len() as u64).to_le_bytes());
        self.hasher.update(bytes);
    }

    /// Adds the file at `path`.
    pub fn file(&mut self, path: &Path) -> io::Result<()> {
        self.field(&std::fs::read(path)?);
        Ok(())
    }

    /// Adds every file under `dir` (in name order, symlinks followed).
    pub fn tree(&mut self, dir: &Path) -> io::Result<()> {
        self.tree_at(dir, dir, 0)
    }

    fn tree_at(&mut self, root: &Path, dir: &Path, depth: usize) -> io::Result<()> {
        if depth > 64 {
            return Err(io::Error::other("chart folders nest too deep"));
        }
        let mut entries: Vec<_> = std::fs::read_dir(dir)?.collect::<Result<_, _>>()?;
        entries.sort_by_key(|e| e.file_name());
        for entry in entries {
            let path = entry.path();
            let relative = path.strip_prefix(root).unwrap_or(&path);
            let m = std::fs::metadata(&path)?;
            self.field(relative.as_os_str().as_encoded_bytes());
            if m.is_dir() {
                self.field(b"dir");
                self.tree_at(root, &path, depth + 1)?;
            } else {
                self.field(b"file");
                self.file(&path)?;
            }
        }
        self.field(b"end");
        Ok(())
    }

    /// The entry's path in `cache`.
    pub fn entry(self, cache: &Cache) -> PathBuf {
        let digest = self.hasher.finalize();
        let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        cache.entry(&["helm", &hex[..2], &hex[2..]])
    }
}

/// The version of the pulled charts' layout.
const CHART_LAYOUT: &str = "krusty-helm-chart-v1";

/// The folder of krusty's cache holding the chart `name` at `version` (or
/// the latest, when empty) pulled from `repo`; the chart is the folder
/// `NAME` in it.
pub fn chart_entry(cache: &Cache, repo: &str, name: &str, version: &str) -> PathBuf {
    let digest = krusty_fetch::cache::key(&format!("{CHART_LAYOUT}\0{repo}\0{name}\0{version}"));
    cache.entry(&["helm-charts", &digest])
}

/// The version of the layout of charts kept by digest.
const VERIFIED_LAYOUT: &str = "krusty-helm-chart-v2";

/// The folder of krusty's cache holding the chart whose archive has the
/// digest `digest` (`sha256:<hex>`), unpacked as the folder `name` in it.
pub fn verified_chart_entry(cache: &Cache, digest: &str, name: &str) -> PathBuf {
    let key = krusty_fetch::cache::key(&format!("{VERIFIED_LAYOUT}\0{digest}\0{name}"));
    cache.entry(&["helm-charts", &key])
}

/// The file of krusty's cache recording the digest that the chart `name`
/// at `version` of `repo` had when last pulled (for `--offline`).
pub fn version_record(cache: &Cache, repo: &str, name: &str, version: &str) -> PathBuf {
    let key = krusty_fetch::cache::key(&format!("{VERIFIED_LAYOUT}\0{repo}\0{name}\0{version}"));
    cache.entry(&["helm-charts", "versions", &key])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree_key(dir: &Path) -> PathBuf {
        let mut key = Key::new(Path::new("/bin/sh")).unwrap();
        key.tree(dir).unwrap();
        key.entry(&Cache::at("/c".into()))
    }

    #[test]
    fn a_changed_file_or_name_changes_the_key() {
        let dir = super::super::run::TempDir::new().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("templates")).unwrap();
        std::fs::write(root.join("Chart.yaml"), "name: c\n").unwrap();
        std::fs::write(root.join("templates/a.yaml"), "a").unwrap();
        let first = tree_key(root);
        assert_eq!(first, tree_key(root));
        std::fs::write(root.join("templates/a.yaml"), "b").unwrap();
        let second = tree_key(root);
        assert_ne!(first, second);
        std::fs::rename(root.join("templates/a.yaml"), root.join("templates/b.yaml")).unwrap();
        assert_ne!(second, tree_key(root));
        assert!(first.starts_with("/c/helm/"));
    }

    #[test]
    fn pulled_charts_are_kept_by_repository_name_and_version() {
        let cache = Cache::at("/c".into());
        let a = chart_entry(&cache, "oci://r/charts", "app", "1.0.0");
        assert!(a.starts_with("/c/helm-charts/"));
        assert_eq!(a, chart_entry(&cache, "oci://r/charts", "app", "1.0.0"));
        assert_ne!(a, chart_entry(&cache, "oci://r/charts", "app", "1.0.1"));
        assert_ne!(a, chart_entry(&cache, "oci://r/other", "app", "1.0.0"));
        assert_ne!(a, chart_entry(&cache, "oci://r/charts", "app2", "1.0.0"));
    }

    #[test]
    fn fields_do_not_run_together() {
        let key = |parts: &[&str]| {
            let mut k = Key::new(Path::new("/bin/sh")).unwrap();
            for p in parts {
                k.field(p.as_bytes());
            }
            k.entry(&Cache::at("/c".into()))
        };
        assert_ne!(key(&["ab", "c"]), key(&["a", "bc"]));
    }
}
