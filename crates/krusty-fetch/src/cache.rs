//! The cache folder: checkouts stored by commit, the commit each ref was
//! last seen at, the last copy of each remote file, OCI blobs by digest
//! and the digest each tag was last seen at, verified executables by
//! digest, and the results of idempotent functions by
//! [`function_result_key`].
//!
//! Everything enters by `rename` from a private staging folder, so a reader
//! never sees half of an entry and a build killed mid-fetch leaves only its
//! staging folder behind. Each staging folder holds a lock file, locked
//! while its owner lives; the next process to stage removes the folders
//! whose lock is free.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Once;

use sha2::{Digest, Sha256};

/// The environment variable naming the cache folder.
pub const CACHE_DIR_ENV: &str = "KRUSTY_CACHE_DIR";

/// The cache folder and the operations on it.
#[derive(Debug, Clone)]
pub struct Cache {
    root: PathBuf,
}

/// A private folder under the cache's `tmp/`, removed when dropped unless
/// its content was published.
#[derive(Debug)]
pub struct Staging {
    dir: PathBuf,
    /// Held (locked) for as long as the folder is in use.
    _lock: File,
}

impl Cache {
    /// The cache at `$KRUSTY_CACHE_DIR`, else `$XDG_CACHE_HOME/krusty`,
    /// else `$HOME/.cache/krusty`.
    pub fn locate() -> io::Result<Cache> {
        let from_env = |name: &str| {
            std::env::var_os(name)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        let root = from_env(CACHE_DIR_ENV)
            .or_else(|| from_env("XDG_CACHE_HOME").map(|d| d.join("krusty")))
            .or_else(|| from_env("HOME").map(|d| d.join(".cache").join("krusty")))
            .ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::NotFound,
                    format!("no cache folder: set ${CACHE_DIR_ENV}, $XDG_CACHE_HOME or $HOME"),
                )
            })?;
        Ok(Cache::at(root))
    }

    /// The cache in `root`.
    pub fn at(root: PathBuf) -> Cache {
        Cache { root }
    }

    /// The cache folder.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Removes everything in the cache.
    pub fn clean(&self) -> io::Result<()> {
        match fs::remove_dir_all(&self.root) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }

    /// The path of an entry (a checkout or a file) named by `parts`.
    pub fn entry(&self, parts: &[&str]) -> PathBuf {
        parts.iter().fold(self.root.clone(), |p, part| p.join(part))
    }

    /// Creates the cache folder (private to its owner: it may hold private
    /// repositories) with its `CACHEDIR.TAG` and `tmp/`.
    fn ensure(&self) -> io::Result<()> {
        let tmp = self.root.join("tmp");
        if tmp.is_dir() {
            return Ok(());
        }
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&tmp)?;
        let tag = self.root.join("CACHEDIR.TAG");
        if !tag.exists() {
            self.write_file(
                &tag,
                b"Signature: 8a477f597d28d172789f06886806bc55\n# krusty's cache of remote repositories and files (krusty cache clean)\n",
            )?;
        }
        Ok(())
    }

    /// A new private staging folder; the first one of a process also
    /// removes the staging folders of processes that are gone.
    pub fn stage(&self) -> io::Result<Staging> {
        self.ensure()?;
        static REAPED: Once = Once::new();
        REAPED.call_once(|| self.reap());
        let dir = self.root.join("tmp").join(unique_name());
        fs::DirBuilder::new().mode(0o700).create(&dir)?;
        let lock = OpenOptions::new()
            .create_new(true)
            .write(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(dir.join("lock"))?;
        // SAFETY: flock on a descriptor this function owns.
        if unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Staging { dir, _lock: lock })
    }

    /// Removes staging folders whose lock no process holds.
    fn reap(&self) {
        let Ok(entries) = fs::read_dir(self.root.join("tmp")) else {
            return;
        };
        for entry in entries.flatten() {
            let dir = entry.path();
            let abandoned = match File::open(dir.join("lock")) {
                // SAFETY: flock on a descriptor this function owns.
                Ok(lock) => unsafe {
                    libc::flock(lock.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) == 0
                },
                // A folder without its lock was left between its creation
                // and the lock's: old ones are abandoned.
                Err(_) => entry
                    .metadata()
                    .and_then(|m| m.modified())
                    .ok()
                    .and_then(|t| t.elapsed().ok())
                    .is_some_and(|age| age.as_secs() > 60),
            };
            if abandoned {
                let _ = fs::remove_dir_all(&dir);
            }
        }
    }

    /// Moves `staged` (a folder or file inside a staging folder) to `dest`,
    /// unless another process put an entry there first (the entries are
    /// the same). Returns `dest`.
    pub fn publish(&self, staged: &Path, dest: &Path) -> io::Result<PathBuf> {
        if let Some(parent) = dest.parent() {
            fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(parent)?;
        }
        match fs::rename(staged, dest) {
            Ok(()) => Ok(dest.to_path_buf()),
            Err(_) if dest.is_dir() => Ok(dest.to_path_buf()),
            Err(e) => Err(e),
        }
    }

    /// Replaces the small file `dest` with `content`, atomically.
    pub fn write_file(&self, dest: &Path, content: &[u8]) -> io::Result<()> {
        let parent = dest
            .parent()
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no parent folder"))?;
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(parent)?;
        let temp = parent.join(format!(".{}", unique_name()));
        let mut file = OpenOptions::new()
            .create_new(true)
            .write(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&temp)?;
        let written = file.write_all(content).and_then(|()| file.sync_data());
        if let Err(e) = written.and_then(|()| fs::rename(&temp, dest)) {
            let _ = fs::remove_file(&temp);
            return Err(e);
        }
        Ok(())
    }

    /// Reads a small file of the cache, if it is there.
    pub fn read_file(&self, path: &Path) -> Option<Vec<u8>> {
        fs::read(path).ok()
    }
}

/// The first line of a kept function result, before its digest.
const RESULT_HEADER: &str = "krusty-function-result v1 ";

impl Cache {
    /// The output kept for the idempotent function call `key` (made by
    /// [`function_result_key`]); `None` when there is none, or the entry
    /// is damaged.
    pub fn function_result(&self, key: &str) -> Option<Vec<u8>> {
        let mut bytes = self.read_file(&self.function_result_path(key)?)?;
        let newline = bytes.iter().position(|&b| b == b'\n')?;
        let body = bytes.split_off(newline + 1);
        let header = std::str::from_utf8(&bytes[..newline]).ok()?;
        let digest = header.strip_prefix(RESULT_HEADER)?;
        (digest == hex(&Sha256::digest(&body))).then_some(body)
    }

    /// Keeps `bytes` as the output of the idempotent function call `key`,
    /// atomically.
    pub fn store_function_result(&self, key: &str, bytes: &[u8]) -> io::Result<()> {
        let path = self.function_result_path(key).ok_or_else(|| {
            io::Error::new(io::ErrorKind::InvalidInput, "a function result key is hex")
        })?;
        let mut content = format!("{RESULT_HEADER}{}\n", hex(&Sha256::digest(bytes))).into_bytes();
        content.extend_from_slice(bytes);
        self.write_file(&path, &content)
    }

    /// Where the result of `key` is kept; `None` for a key that is not a
    /// hex digest.
    fn function_result_path(&self, key: &str) -> Option<PathBuf> {
        let valid = key.len() >= 16 && key.bytes().all(|b| b.is_ascii_hexdigit());
        valid.then(|| self.entry(&["functions", &key[..2], key]))
    }
}

/// The key of an idempotent function call: a sha256 over the digest that
/// names its runtime exactly, the rest of what decides how it runs
/// (`runtime`: its arguments and environment, as text), and `sent`, the
/// ResourceList exactly as it is written to the function (its items and
/// its `functionConfig`).
pub fn function_result_key(digest: &str, runtime: &str, sent: &str) -> String {
    let mut hasher = Sha256::new();
    for part in [digest, runtime, sent] {
        hasher.update((part.len() as u64).to_le_bytes());
        hasher.update(part.as_bytes());
    }
    hex(&hasher.finalize())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

impl Staging {
    /// The staging folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.dir);
    }
}

/// A short hex digest naming a cache entry after `text`.
pub fn key(text: &str) -> String {
    hex(&Sha256::digest(text.as_bytes())[..16])
}

/// A name no other process or thread uses at the same time.
fn unique_name() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    format!(
        "{}-{nanos:x}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_published_entry_is_kept_against_a_second_publisher() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::at(dir.path().join("c"));
        let dest = cache.entry(&["git", "k", "commit"]);
        for content in ["first", "second"] {
            let staging = cache.stage().unwrap();
            let tree = staging.dir().join("tree");
            fs::create_dir(&tree).unwrap();
            fs::write(tree.join("f"), content).unwrap();
            assert_eq!(cache.publish(&tree, &dest).unwrap(), dest);
        }
        assert_eq!(fs::read_to_string(dest.join("f")).unwrap(), "first");
        assert_eq!(fs::read_dir(cache.root().join("tmp")).unwrap().count(), 0);
    }

    #[test]
    fn function_results_round_trip_and_damage_is_a_miss() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::at(dir.path().join("c"));
        let key = function_result_key("sha256:ab", "exec", "items: []\n");
        assert_ne!(
            key,
            function_result_key("sha256:ab", "exec", "items: [x]\n")
        );
        assert_ne!(key, function_result_key("sha256:ac", "exec", "items: []\n"));
        assert_eq!(cache.function_result(&key), None);
        cache.store_function_result(&key, b"out\n").unwrap();
        assert_eq!(cache.function_result(&key).as_deref(), Some(&b"out\n"[..]));
        let path = cache.function_result_path(&key).unwrap();
        let mut damaged = fs::read(&path).unwrap();
        damaged.push(b'x');
        fs::write(&path, damaged).unwrap();
        assert_eq!(cache.function_result(&key), None);
        assert_eq!(cache.function_result("../../etc/passwd"), None);
        assert!(cache.store_function_result("../x", b"").is_err());
    }

    #[test]
    fn abandoned_staging_folders_are_reaped_and_live_ones_kept() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::at(dir.path().join("c"));
        let live = cache.stage().unwrap();
        let dead = cache.root().join("tmp").join("1-dead-0");
        fs::create_dir(&dead).unwrap();
        fs::write(dead.join("lock"), "").unwrap();
        cache.reap();
        assert!(live.dir().is_dir());
        assert!(!dead.exists());
    }
}
