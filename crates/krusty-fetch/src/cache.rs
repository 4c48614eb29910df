//! The cache folder: checkouts stored by commit, the commit each ref was
//! last seen at, the last copy of each remote file, OCI blobs by digest
//! and the digest each tag was last seen at, verified executables by
//! digest, and the results of idempotent functions by
//! [`function_result_key`].
//!
//! **Whose it is.** krusty builds from what the cache holds and runs the
//! programs it keeps, so a cache folder that anyone else could change
//! (writable by its group or others, owned by another user, or reached
//! through a folder or symlink someone else controls) is refused before
//! anything in it is read ([`Cache::open`]; the rules are in
//! `private_path.rs`).
//!
//! **Whose it is not.** A cache folder carries a `CACHEDIR.TAG`
//! (<https://bford.info/cachedir/>) naming krusty, written when krusty
//! makes it. A folder without one is used only when it holds nothing but
//! krusty's own layout ([`LAYOUT`]: an empty folder, or a cache an older
//! krusty left), and is tagged then; any other folder, or one tagged by
//! another program, is refused. [`Cache::clean`] removes only a tagged
//! folder.
//!
//! **How entries enter it.** Everything enters by `rename` from a private
//! staging folder, so a reader never sees half of an entry and a build
//! killed mid-fetch leaves only its staging folder behind. An entry that
//! is already there (another build's copy of the same content, or a
//! damaged one) is replaced in one step (`renameat2` with
//! `RENAME_EXCHANGE`), so a build reading it meanwhile reads the one or
//! the other, whole. Each staging folder holds a lock file, locked while
//! its owner lives; the folder gets its name only once its lock is held,
//! and the next process to stage removes the folders whose lock is free.
//!
//! **How entries are checked.** Small files are sealed
//! ([`Cache::write_sealed`]: a header with their length and sha256) and
//! read back only whole and matching ([`Cache::read_sealed`]); programs
//! and OCI blobs are named by their digest and checked against it
//! (`artifact.rs`, `oci.rs`); trees (checkouts, Helm charts) carry a
//! manifest of every file, made when they are published
//! ([`Cache::publish_tree`]) and checked when they are used
//! ([`Cache::tree`]); records (the commit or digest a name was last seen
//! at) are read up to a small bound ([`Cache::read_limited`]) and parsed.
//! Every read is bounded. What is found damaged is [`Kept::Damaged`],
//! never used.

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufRead, Read, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Once, OnceLock};
use std::time::Duration;

use sha2::{Digest, Sha256};

use crate::{manifest, private_path};

/// The environment variable naming the cache folder.
pub const CACHE_DIR_ENV: &str = "KRUSTY_CACHE_DIR";

/// The names krusty's code uses at the top of the cache folder (here and
/// in krusty-build's Helm cache): a folder holding only these (and
/// temporary files, whose names start with `.`) is krusty's.
pub const LAYOUT: &[&str] = &[
    "git",
    "http",
    "oci",
    "exec",
    "functions",
    "helm",
    "helm-charts",
    "tmp",
    TAG,
];

/// The cache directory tag's file name.
const TAG: &str = "CACHEDIR.TAG";

/// The signature every cache directory tag starts with.
const TAG_SIGNATURE: &str = "Signature: 8a477f597d28d172789f06886806bc55";

/// The tag krusty writes.
const TAG_TEXT: &str = "Signature: 8a477f597d28d172789f06886806bc55\n\
# This file is a cache directory tag created by krusty.\n\
# For information about cache directory tags, see:\n\
#\thttps://bford.info/cachedir/\n";

/// What marks a tag as krusty's: the line krusty writes, or the one
/// earlier versions wrote.
const TAG_MARKS: [&str; 2] = [
    "\n# This file is a cache directory tag created by krusty.\n",
    "\n# krusty's cache of remote repositories and files",
];

/// The most bytes of a tag read.
const MAX_TAG_BYTES: u64 = 4096;

/// A staging folder without its name yet, or without its lock, older than
/// this was left by a process that died making it.
const ABANDONED_AFTER: Duration = Duration::from_secs(60);

/// The cache folder and the operations on it.
#[derive(Debug, Clone)]
pub struct Cache {
    root: PathBuf,
    /// Whether the folder was made (or found) safe, tagged, with its
    /// `tmp/`: once per cache, before the first write (the error is
    /// shared by every write that needs it).
    ready: Arc<OnceLock<Result<(), Arc<io::Error>>>>,
}

/// What the cache holds for an entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kept<T> {
    /// Nothing.
    Missing,
    /// An entry that does not match what was kept (why, in words).
    Damaged(String),
    /// The entry as it was kept.
    Intact(T),
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
    /// Where the cache is: `$KRUSTY_CACHE_DIR`, else
    /// `$XDG_CACHE_HOME/krusty`, else `$HOME/.cache/krusty`.
    pub fn location() -> io::Result<PathBuf> {
        let from_env = |name: &str| {
            std::env::var_os(name)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        from_env(CACHE_DIR_ENV)
            .or_else(|| from_env("XDG_CACHE_HOME").map(|d| d.join("krusty")))
            .or_else(|| from_env("HOME").map(|d| d.join(".cache").join("krusty")))
            .ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::NotFound,
                    format!("no cache folder: set ${CACHE_DIR_ENV}, $XDG_CACHE_HOME or $HOME"),
                )
            })
    }

    /// The cache at [`Cache::location`], checked as [`Cache::open`]
    /// checks it.
    pub fn locate() -> io::Result<Cache> {
        Cache::open(Cache::location()?)
    }

    /// The cache in `root`, once it is checked: the folder (if it is
    /// there) and every folder and symlink on the way to it are the
    /// user's alone, and it is krusty's (see the module's rules).
    pub fn open(root: PathBuf) -> io::Result<Cache> {
        let real = private_path::check(&root)?;
        match fs::metadata(&real) {
            Ok(m) if m.is_dir() => {
                krusty_folder(&real)?;
            }
            Ok(_) => return Err(not_a_folder(&real)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
        Ok(Cache::at(root))
    }

    /// The cache in `root`, unchecked until its first write (for a folder
    /// the caller made, as tests do; [`Cache::open`] checks it first).
    pub fn at(root: PathBuf) -> Cache {
        Cache {
            root,
            ready: Arc::default(),
        }
    }

    /// The cache folder.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Removes everything in the cache, when the folder carries krusty's
    /// tag (else it is left alone, and that is the error). Through a
    /// symlink, the folder it names is emptied and kept, and the link
    /// too; a folder krusty cannot remove (a mount point) stays, empty.
    pub fn clean(&self) -> io::Result<()> {
        let real = private_path::check(&self.root)?;
        match fs::metadata(&real) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(e),
            Ok(m) if !m.is_dir() => return Err(not_a_folder(&real)),
            Ok(_) => {}
        }
        if !read_tag(&real)?.is_some_and(|tag| is_krusty_tag(&tag)) {
            return Err(io::Error::other(format!(
                "it carries no {TAG} of krusty's, and krusty removes only its own cache folder"
            )));
        }
        for entry in fs::read_dir(&real)? {
            let entry = entry?;
            if entry.file_name() == TAG {
                continue;
            }
            let removed = if entry.file_type()?.is_dir() {
                fs::remove_dir_all(entry.path())
            } else {
                fs::remove_file(entry.path())
            };
            match removed {
                Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
                _ => {}
            }
        }
        fs::remove_file(real.join(TAG))?;
        let is_link = fs::symlink_metadata(&self.root).is_ok_and(|m| m.file_type().is_symlink());
        if !is_link {
            let _ = fs::remove_dir(&real);
        }
        Ok(())
    }

    /// The path of an entry (a checkout or a file) named by `parts`.
    pub fn entry(&self, parts: &[&str]) -> PathBuf {
        parts.iter().fold(self.root.clone(), |p, part| p.join(part))
    }

    /// Makes the cache folder ready for writing, once: checked, made
    /// (private to its owner: it may hold private repositories) if
    /// missing and checked again, tagged, with its `tmp/`.
    fn ensure(&self) -> io::Result<()> {
        match self.ready.get_or_init(|| self.prepare().map_err(Arc::new)) {
            Ok(()) => Ok(()),
            Err(e) => Err(io::Error::other(Arc::clone(e))),
        }
    }

    fn prepare(&self) -> io::Result<()> {
        let real = private_path::check(&self.root)?;
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&real)?;
        // What is there now, made here or by someone else meanwhile.
        let real = private_path::check(&self.root)?;
        if !krusty_folder(&real)? {
            write_atomically(&real.join(TAG), &[TAG_TEXT.as_bytes()])?;
        }
        match fs::DirBuilder::new().mode(0o700).create(real.join("tmp")) {
            Err(e) if e.kind() != io::ErrorKind::AlreadyExists => Err(e),
            _ => Ok(()),
        }
    }

    /// A new private staging folder; the first one of a process also
    /// removes the staging folders of processes that are gone.
    pub fn stage(&self) -> io::Result<Staging> {
        self.ensure()?;
        static REAPED: Once = Once::new();
        REAPED.call_once(|| self.reap());
        let tmp = self.root.join("tmp");
        let name = unique_name();
        // Made under a name the reaper leaves alone, and named once its
        // lock is held: a live staging folder is never taken for an
        // abandoned one.
        let making = tmp.join(format!(".{name}"));
        fs::DirBuilder::new().mode(0o700).create(&making)?;
        let dir = tmp.join(name);
        match lock_in(&making).and_then(|lock| fs::rename(&making, &dir).map(|()| lock)) {
            Ok(lock) => Ok(Staging { dir, _lock: lock }),
            Err(e) => {
                let _ = fs::remove_dir_all(&making);
                Err(e)
            }
        }
    }

    /// Removes staging folders whose lock no process holds (and those
    /// left half made long ago).
    fn reap(&self) {
        let Ok(entries) = fs::read_dir(self.root.join("tmp")) else {
            return;
        };
        for entry in entries.flatten() {
            let dir = entry.path();
            let old = || {
                entry
                    .metadata()
                    .and_then(|m| m.modified())
                    .ok()
                    .and_then(|t| t.elapsed().ok())
                    .is_some_and(|age| age > ABANDONED_AFTER)
            };
            // A folder being made is not touched (not even its lock,
            // which its maker is about to take) unless it is old.
            let being_made = entry.file_name().as_encoded_bytes().starts_with(b".");
            let abandoned = (!being_made || old())
                && match File::open(dir.join("lock")) {
                    // SAFETY: flock on a descriptor this function owns.
                    Ok(lock) => unsafe {
                        libc::flock(lock.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) == 0
                    },
                    Err(_) => old(),
                };
            if abandoned {
                let _ = fs::remove_dir_all(&dir);
            }
        }
    }

    /// Moves `staged` (a folder or file inside a staging folder) to
    /// `dest`. An entry already there (another process's copy of the same
    /// content, or a damaged one) is replaced in one step: it takes
    /// `staged`'s place and goes with the staging folder. Returns `dest`.
    pub fn publish(&self, staged: &Path, dest: &Path) -> io::Result<PathBuf> {
        self.ensure()?;
        if let Some(parent) = dest.parent() {
            fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(parent)?;
        }
        match fs::rename(staged, dest) {
            Ok(()) => {}
            Err(_) if fs::symlink_metadata(dest).is_ok() => replace(staged, dest)?,
            Err(e) => return Err(e),
        }
        Ok(dest.to_path_buf())
    }

    /// Replaces the small file `dest` with `content`, atomically.
    pub fn write_file(&self, dest: &Path, content: &[u8]) -> io::Result<()> {
        self.ensure()?;
        write_atomically(dest, &[content])
    }

    /// The file at `path`, of at most `max` bytes (a larger one is
    /// damaged).
    pub fn read_limited(&self, path: &Path, max: u64) -> Kept<Vec<u8>> {
        let file = match File::open(path) {
            Ok(file) => file,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Kept::Missing,
            Err(e) => return Kept::Damaged(format!("cannot read it: {e}")),
        };
        let mut bytes = Vec::new();
        if let Err(e) = file.take(max.saturating_add(1)).read_to_end(&mut bytes) {
            return Kept::Damaged(format!("cannot read it: {e}"));
        }
        if bytes.len() as u64 > max {
            return Kept::Damaged(format!("it is larger than {max} bytes"));
        }
        Kept::Intact(bytes)
    }

    /// Replaces the file `dest` with `bytes`, sealed: after a header with
    /// their length and sha256, so [`Cache::read_sealed`] tells a damaged
    /// or truncated copy.
    pub fn write_sealed(&self, dest: &Path, bytes: &[u8]) -> io::Result<()> {
        self.ensure()?;
        let header = format!("{SEAL} {} {}\n", bytes.len(), hex(&Sha256::digest(bytes)));
        write_atomically(dest, &[header.as_bytes(), bytes])
    }

    /// The bytes [`Cache::write_sealed`] kept at `path`, if they are all
    /// there, match their digest and are at most `max`.
    pub fn read_sealed(&self, path: &Path, max: u64) -> Kept<Vec<u8>> {
        let file = match File::open(path) {
            Ok(file) => file,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Kept::Missing,
            Err(e) => return Kept::Damaged(format!("cannot read it: {e}")),
        };
        let mut reader = io::BufReader::new(file);
        let mut header = Vec::new();
        let read = (&mut reader)
            .take(MAX_SEAL_HEADER)
            .read_until(b'\n', &mut header);
        let parsed = std::str::from_utf8(&header)
            .ok()
            .and_then(|h| h.strip_suffix('\n'))
            .and_then(|h| h.strip_prefix(SEAL))
            .and_then(|h| h.strip_prefix(' '))
            .and_then(|h| h.split_once(' '))
            .and_then(|(len, digest)| Some((len.parse::<u64>().ok()?, digest.to_string())));
        let Some((len, digest)) = parsed.filter(|_| read.is_ok()) else {
            return Kept::Damaged("it is not in krusty's format (kept by an older krusty?)".into());
        };
        if len > max {
            return Kept::Damaged(format!("it is larger than {max} bytes"));
        }
        let mut body = Vec::with_capacity(usize::try_from(len.min(16 << 20)).unwrap_or(0));
        if let Err(e) = reader.take(len.saturating_add(1)).read_to_end(&mut body) {
            return Kept::Damaged(format!("cannot read it: {e}"));
        }
        if body.len() as u64 != len {
            return Kept::Damaged(format!(
                "it holds {} bytes, not the {len} it was kept with",
                body.len()
            ));
        }
        let actual = hex(&Sha256::digest(&body));
        if actual != digest {
            return Kept::Damaged(format!(
                "its sha256 is {actual}, not the {digest} it was kept with"
            ));
        }
        Kept::Intact(body)
    }
}

/// The largest tree manifest read (about two million files).
const MAX_MANIFEST_BYTES: u64 = 256 << 20;

impl Cache {
    /// Publishes the folder `staging` made with [`Staging::tree`] at
    /// `dest`, with its manifest (see `manifest.rs`), so that
    /// [`Cache::tree`] can tell when anything in it changed: `dest/tree`
    /// and `dest/manifest`, replacing what was at `dest`. Returns the
    /// tree's path.
    pub fn publish_tree(&self, staging: &Staging, dest: &Path) -> io::Result<PathBuf> {
        let staged = staging.dir.join(STAGED_ENTRY);
        let manifest = manifest::of(&staged.join("tree"))?;
        write_atomically(&staged.join("manifest"), &[manifest.as_bytes()])?;
        Ok(self.publish(&staged, dest)?.join("tree"))
    }

    /// The tree [`Cache::publish_tree`] put at `dest`, while it matches
    /// its manifest (checked here, reading every file).
    pub fn tree(&self, dest: &Path) -> Kept<PathBuf> {
        if fs::symlink_metadata(dest).is_err() {
            return Kept::Missing;
        }
        let recorded = match self.read_limited(&dest.join("manifest"), MAX_MANIFEST_BYTES) {
            Kept::Intact(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
            Kept::Missing => return Kept::Damaged("its manifest is missing".into()),
            Kept::Damaged(why) => return Kept::Damaged(format!("its manifest: {why}")),
        };
        let tree = dest.join("tree");
        match manifest::of(&tree) {
            Ok(actual) if actual == recorded => Kept::Intact(tree),
            Ok(actual) => Kept::Damaged(manifest::difference(&recorded, &actual)),
            Err(e) => Kept::Damaged(format!("cannot read its tree: {e}")),
        }
    }
}

/// The folder of a staging folder that [`Cache::publish_tree`] publishes.
const STAGED_ENTRY: &str = "entry";

/// The first word of a sealed file's header.
const SEAL: &str = "krusty-sealed-v1";

/// The most bytes of a sealed file's header read.
const MAX_SEAL_HEADER: u64 = 128;

/// The largest function result kept (twice the default output bound).
const MAX_FUNCTION_RESULT_BYTES: u64 = 1 << 30;

impl Cache {
    /// The output kept for the idempotent function call `key` (made by
    /// [`function_result_key`]); `None` when there is none, or the entry
    /// is damaged.
    pub fn function_result(&self, key: &str) -> Option<Vec<u8>> {
        match self.read_sealed(&self.function_result_path(key)?, MAX_FUNCTION_RESULT_BYTES) {
            Kept::Intact(bytes) => Some(bytes),
            Kept::Missing | Kept::Damaged(_) => None,
        }
    }

    /// Keeps `bytes` as the output of the idempotent function call `key`,
    /// atomically.
    pub fn store_function_result(&self, key: &str, bytes: &[u8]) -> io::Result<()> {
        let path = self.function_result_path(key).ok_or_else(|| {
            io::Error::new(io::ErrorKind::InvalidInput, "a function result key is hex")
        })?;
        self.write_sealed(&path, bytes)
    }

    /// Where the result of `key` is kept; `None` for a key that is not a
    /// hex digest.
    fn function_result_path(&self, key: &str) -> Option<PathBuf> {
        let valid = key.len() >= 16 && key.bytes().all(|b| b.is_ascii_hexdigit());
        valid.then(|| self.entry(&["functions", &key[..2], key]))
    }
}

/// Whether the existing folder `dir` is krusty's cache: `true` when it
/// carries krusty's tag, `false` when it has none and holds only
/// [`LAYOUT`]; anything else is an error naming what it holds.
fn krusty_folder(dir: &Path) -> io::Result<bool> {
    match read_tag(dir)? {
        Some(tag) if is_krusty_tag(&tag) => return Ok(true),
        Some(_) => {
            return Err(io::Error::other(format!(
                "{} is not krusty's cache: its {TAG} is another program's; use a folder of krusty's own (${CACHE_DIR_ENV})",
                dir.display()
            )))
        }
        None => {}
    }
    for entry in fs::read_dir(dir)? {
        let name = entry?.file_name();
        let known = name
            .to_str()
            .is_some_and(|n| LAYOUT.contains(&n) || n.starts_with('.'));
        if !known {
            return Err(io::Error::other(format!(
                "{} is not krusty's cache: it holds '{}' and no {TAG} of krusty's; use a new or empty folder (${CACHE_DIR_ENV})",
                dir.display(),
                name.to_string_lossy()
            )));
        }
    }
    Ok(false)
}

/// The start of the tag in `dir`, if it has one.
fn read_tag(dir: &Path) -> io::Result<Option<String>> {
    let file = match OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(dir.join(TAG))
    {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let mut bytes = Vec::new();
    file.take(MAX_TAG_BYTES).read_to_end(&mut bytes)?;
    Ok(Some(String::from_utf8_lossy(&bytes).into_owned()))
}

fn not_a_folder(path: &Path) -> io::Error {
    io::Error::other(format!(
        "krusty's cache folder {} is not a folder",
        path.display()
    ))
}

fn is_krusty_tag(tag: &str) -> bool {
    tag.starts_with(TAG_SIGNATURE) && TAG_MARKS.iter().any(|mark| tag.contains(mark))
}

/// Writes `parts` to `dest` through a new file beside it, renamed over it.
fn write_atomically(dest: &Path, parts: &[&[u8]]) -> io::Result<()> {
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
    let written = parts
        .iter()
        .try_for_each(|part| file.write_all(part))
        .and_then(|()| file.sync_data());
    if let Err(e) = written.and_then(|()| fs::rename(&temp, dest)) {
        let _ = fs::remove_file(&temp);
        return Err(e);
    }
    Ok(())
}

/// A new lock file in `dir`, locked.
fn lock_in(dir: &Path) -> io::Result<File> {
    let lock = OpenOptions::new()
        .create_new(true)
        .write(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(dir.join("lock"))?;
    // SAFETY: flock on a descriptor this function owns.
    if unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(lock)
}

/// Puts `staged` at `dest` and what was at `dest` at `staged`, in one step
/// where the file system can (else moving the old entry aside first).
fn replace(staged: &Path, dest: &Path) -> io::Result<()> {
    match exchange(staged, dest) {
        Err(e) if matches!(e.raw_os_error(), Some(libc::EINVAL | libc::ENOSYS)) => {
            let aside = staged.with_extension("replaced");
            fs::rename(dest, &aside)?;
            fs::rename(staged, dest)?;
            fs::rename(&aside, staged)
        }
        done => done,
    }
}

/// Swaps `a` and `b` atomically (`renameat2` with `RENAME_EXCHANGE`).
#[cfg(target_os = "linux")]
fn exchange(a: &Path, b: &Path) -> io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let c = |p: &Path| {
        std::ffi::CString::new(p.as_os_str().as_bytes())
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a path holds a NUL byte"))
    };
    let (a, b) = (c(a)?, c(b)?);
    // SAFETY: renameat2 reads two NUL-terminated paths that outlive the
    // call.
    let done = unsafe {
        libc::syscall(
            libc::SYS_renameat2,
            libc::AT_FDCWD,
            a.as_ptr(),
            libc::AT_FDCWD,
            b.as_ptr(),
            libc::RENAME_EXCHANGE,
        )
    };
    if done == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// No atomic exchange here: [`replace`] moves the old entry aside.
#[cfg(not(target_os = "linux"))]
fn exchange(_: &Path, _: &Path) -> io::Result<()> {
    Err(io::Error::from_raw_os_error(libc::ENOSYS))
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

/// The sha256 of the file at `path` (not followed if it is a symlink),
/// read in pieces of 64 KiB, in hex.
pub(crate) fn file_sha256(path: &Path) -> io::Result<String> {
    let mut file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)?;
    let mut hasher = Sha256::new();
    let mut piece = vec![0; 64 << 10];
    loop {
        match file.read(&mut piece) {
            Ok(0) => return Ok(hex(&hasher.finalize())),
            Ok(n) => hasher.update(&piece[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

impl Staging {
    /// The staging folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// A new empty folder in the staging folder, for a tree to publish
    /// with [`Cache::publish_tree`].
    pub fn tree(&self) -> io::Result<PathBuf> {
        let tree = self.dir.join(STAGED_ENTRY).join("tree");
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&tree)?;
        Ok(tree)
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

/// A name no other process or thread uses at the same time (processes in
/// other PID namespaces included).
fn unique_name() -> String {
    use std::hash::{BuildHasher, Hasher};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let random = std::collections::hash_map::RandomState::new()
        .build_hasher()
        .finish();
    format!(
        "{}-{random:016x}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cache in a fresh private folder (the folder kept by the caller).
    fn cache() -> (tempfile::TempDir, Cache) {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::at(dir.path().join("c"));
        (dir, cache)
    }

    #[test]
    fn a_second_publisher_replaces_the_entry_in_one_step() {
        let (_dir, cache) = cache();
        let dest = cache.entry(&["git", "k", "commit"]);
        for content in ["first", "second"] {
            let staging = cache.stage().unwrap();
            let tree = staging.dir().join("tree");
            fs::create_dir(&tree).unwrap();
            fs::write(tree.join("f"), content).unwrap();
            assert_eq!(cache.publish(&tree, &dest).unwrap(), dest);
            assert_eq!(fs::read_to_string(dest.join("f")).unwrap(), content);
        }
        assert_eq!(fs::read_dir(cache.root().join("tmp")).unwrap().count(), 0);
    }

    #[test]
    fn a_new_cache_is_private_and_tagged() {
        let (_dir, cache) = cache();
        cache.stage().unwrap();
        let mode = fs::metadata(cache.root()).unwrap().permissions();
        assert_eq!(
            std::os::unix::fs::PermissionsExt::mode(&mode) & 0o777,
            0o700
        );
        let tag = fs::read_to_string(cache.root().join(TAG)).unwrap();
        assert_eq!(tag, TAG_TEXT);
        assert!(is_krusty_tag(&tag));
        let older = "Signature: 8a477f597d28d172789f06886806bc55\n# krusty's cache of remote repositories and files (krusty cache clean)\n";
        assert!(is_krusty_tag(older));
        assert!(!is_krusty_tag(
            "Signature: 8a477f597d28d172789f06886806bc55\n# by pip\n"
        ));
        assert!(!is_krusty_tag(&TAG_TEXT.replace("8a47", "0000")));
    }

    #[test]
    fn sealed_files_are_read_whole_and_matching_only() {
        let (_dir, cache) = cache();
        let path = cache.entry(&["http", "k"]);
        assert_eq!(cache.read_sealed(&path, 100), Kept::Missing);
        cache.write_sealed(&path, b"body\n").unwrap();
        assert_eq!(
            cache.read_sealed(&path, 100),
            Kept::Intact(b"body\n".to_vec())
        );
        let damaged = |why: &str| match cache.read_sealed(&path, 100) {
            Kept::Damaged(text) => assert!(text.contains(why), "{text}"),
            other => panic!("{other:?}"),
        };
        assert!(matches!(cache.read_sealed(&path, 4), Kept::Damaged(_)));
        let sealed = fs::read(&path).unwrap();
        fs::write(&path, &sealed[..sealed.len() - 1]).unwrap();
        damaged("holds 4 bytes, not the 5");
        let mut longer = sealed.clone();
        longer.push(b'x');
        fs::write(&path, longer).unwrap();
        damaged("holds 6 bytes");
        fs::write(
            &path,
            String::from_utf8(sealed).unwrap().replace("body", "bodY"),
        )
        .unwrap();
        damaged("its sha256 is");
        fs::write(&path, "body\n").unwrap();
        damaged("not in krusty's format");
    }

    #[test]
    fn function_results_round_trip_and_damage_is_a_miss() {
        let (_dir, cache) = cache();
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
        let (_dir, cache) = cache();
        let live = cache.stage().unwrap();
        let dead = cache.root().join("tmp").join("1-dead-0");
        fs::create_dir(&dead).unwrap();
        fs::write(dead.join("lock"), "").unwrap();
        let young = cache.root().join("tmp").join(".1-young-0");
        fs::create_dir(&young).unwrap();
        fs::write(young.join("lock"), "").unwrap();
        cache.reap();
        assert!(live.dir().is_dir());
        assert!(!dead.exists());
        assert!(young.is_dir(), "a folder being made is left to its maker");
    }

    #[test]
    fn a_staging_folder_being_made_is_never_reaped() {
        let (_dir, cache) = cache();
        cache.stage().unwrap();
        let done = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|s| {
            s.spawn(|| {
                while !done.load(Ordering::Relaxed) {
                    cache.reap();
                }
            });
            // A few thousand folders, or three seconds of them (the race
            // this guards against showed within the first second).
            let deadline = std::time::Instant::now() + Duration::from_secs(3);
            let failed = (0..3000)
                .take_while(|_| std::time::Instant::now() < deadline)
                .map(|_| {
                    let staging = cache.stage()?;
                    fs::create_dir(staging.dir().join("tree"))
                })
                .find_map(Result::err);
            done.store(true, Ordering::Relaxed);
            assert!(
                failed.is_none(),
                "a live staging folder was reaped: {failed:?}"
            );
        });
    }

    #[test]
    fn only_krustys_folders_are_used_and_cleaned() {
        let dir = tempfile::tempdir().unwrap();
        let foreign = dir.path().join("foreign");
        fs::create_dir(&foreign).unwrap();
        fs::write(foreign.join("notes.txt"), "mine").unwrap();
        let err = Cache::open(foreign.clone()).unwrap_err().to_string();
        assert!(
            err.contains("is not krusty's cache: it holds 'notes.txt'"),
            "{err}"
        );
        let err = Cache::at(foreign.clone()).stage().unwrap_err().to_string();
        assert!(err.contains("is not krusty's cache"), "{err}");
        assert!(Cache::at(foreign.clone()).clean().is_err());
        assert!(foreign.join("notes.txt").is_file());

        // An older krusty's cache: used, and tagged then.
        let older = dir.path().join("older");
        fs::create_dir_all(older.join("git/k")).unwrap();
        fs::create_dir_all(older.join("tmp")).unwrap();
        let cache = Cache::open(older.clone()).unwrap();
        assert!(cache.clean().is_err(), "not tagged yet");
        cache.stage().unwrap();
        assert!(older.join(TAG).is_file());
        cache.clean().unwrap();
        assert!(!older.exists());
    }
}
