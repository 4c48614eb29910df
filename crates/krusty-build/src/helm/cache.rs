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
//! The output is kept sealed (its length and sha256, see
//! [`Cache::write_sealed`]) and read back only whole, unchanged and
//! within `--helm-max-output` ([`output`]); anything else is rendered
//! again, which needs no connection.
//!
//! Charts pulled from a repository are kept there too, in `helm-charts/`,
//! published whole with a manifest of their files ([`publish_chart`]) and
//! used only while they match it ([`kept_chart`]): those pulled at an
//! exact version by the digest of their archive (with a record of the
//! digest each version had when last pulled, for `--offline`), others by
//! repository, name and version.

use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use krusty_fetch::cache::Staging;
use krusty_fetch::{Cache, Kept};
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

/// helm's output kept at `entry`, when it is there whole and unchanged
/// and of at most `max` bytes (else it is to be rendered again).
pub fn output(cache: &Cache, entry: &Path, max: u64) -> Option<Vec<u8>> {
    match cache.read_sealed(entry, max) {
        Kept::Intact(bytes) => Some(bytes),
        Kept::Missing | Kept::Damaged(_) => None,
    }
}

/// Keeps helm's output `out` at `entry`, sealed.
pub fn keep_output(cache: &Cache, entry: &Path, out: &[u8]) -> io::Result<()> {
    cache.write_sealed(entry, out)
}

/// Publishes the chart staged as the folder `name` of `staging`'s tree
/// ([`Staging::tree`]) at `entry`, with the manifest of its files;
/// returns the chart's folder.
pub fn publish_chart(
    cache: &Cache,
    staging: &Staging,
    entry: &Path,
    name: &str,
) -> io::Result<PathBuf> {
    Ok(cache.publish_tree(staging, entry)?.join(name))
}

/// The folder of the chart `name` that [`publish_chart`] put at `entry`,
/// while every file of it matches the manifest it was kept with (read
/// and checked here).
pub fn kept_chart(cache: &Cache, entry: &Path, name: &str) -> Kept<PathBuf> {
    match cache.tree(entry) {
        Kept::Intact(tree) if tree.join(name).is_dir() => Kept::Intact(tree.join(name)),
        Kept::Intact(_) => Kept::Damaged(format!("it holds no chart folder '{name}'")),
        Kept::Missing => Kept::Missing,
        Kept::Damaged(why) => Kept::Damaged(why),
    }
}

/// The version of the pulled charts' layout.
const CHART_LAYOUT: &str = "krusty-helm-chart-tree-v1";

/// The folder of krusty's cache holding the chart `name` at `version` (or
/// the latest, when empty) pulled from `repo`; the chart is the folder
/// `NAME` in it.
pub fn chart_entry(cache: &Cache, repo: &str, name: &str, version: &str) -> PathBuf {
    let digest = krusty_fetch::cache::key(&format!("{CHART_LAYOUT}\0{repo}\0{name}\0{version}"));
    cache.entry(&["helm-charts", &digest])
}

/// The version of the layout of charts kept by digest.
const VERIFIED_LAYOUT: &str = "krusty-helm-chart-tree-v2";

/// The version of the layout of version records.
const RECORD_LAYOUT: &str = "krusty-helm-chart-v2";

/// The folder of krusty's cache holding the chart whose archive has the
/// digest `digest` (`sha256:<hex>`), unpacked as the folder `name` in it.
pub fn verified_chart_entry(cache: &Cache, digest: &str, name: &str) -> PathBuf {
    let key = krusty_fetch::cache::key(&format!("{VERIFIED_LAYOUT}\0{digest}\0{name}"));
    cache.entry(&["helm-charts", &key])
}

/// The file of krusty's cache recording the digest that the chart `name`
/// at `version` of `repo` had when last pulled (for `--offline`).
pub fn version_record(cache: &Cache, repo: &str, name: &str, version: &str) -> PathBuf {
    let key = krusty_fetch::cache::key(&format!("{RECORD_LAYOUT}\0{repo}\0{name}\0{version}"));
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
    fn kept_output_and_charts_are_used_only_as_kept() {
        let dir = super::super::run::TempDir::new().unwrap();
        let cache = Cache::at(dir.path().join("c"));
        let entry = cache.entry(&["helm", "ab", "cd"]);
        keep_output(&cache, &entry, b"kind: A\n").unwrap();
        assert_eq!(
            output(&cache, &entry, 64).as_deref(),
            Some(&b"kind: A\n"[..])
        );
        assert_eq!(output(&cache, &entry, 4), None, "larger than the bound");
        let sealed = std::fs::read(&entry).unwrap();
        std::fs::write(&entry, [&sealed[..], b"kind: B\n"].concat()).unwrap();
        assert_eq!(output(&cache, &entry, 64), None, "changed");

        let chart = cache.entry(&["helm-charts", "k"]);
        assert_eq!(kept_chart(&cache, &chart, "app"), Kept::Missing);
        let staging = cache.stage().unwrap();
        let tree = staging.tree().unwrap();
        std::fs::create_dir_all(tree.join("app")).unwrap();
        std::fs::write(tree.join("app/Chart.yaml"), "name: app\n").unwrap();
        let published = publish_chart(&cache, &staging, &chart, "app").unwrap();
        assert_eq!(
            kept_chart(&cache, &chart, "app"),
            Kept::Intact(published.clone())
        );
        assert!(
            matches!(kept_chart(&cache, &chart, "other"), Kept::Damaged(why) if why.contains("no chart folder 'other'"))
        );
        std::fs::write(published.join("Chart.yaml"), "name: evil\n").unwrap();
        assert_eq!(
            kept_chart(&cache, &chart, "app"),
            Kept::Damaged("app/Chart.yaml changed".into())
        );
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
