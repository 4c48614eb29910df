//! File access for a build: resolving paths against a kustomization root and
//! enforcing the load restrictor.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;

use krusty_resource::RemoteRoot;

use crate::error::{BuildError, BuildResult};
use crate::inputs::InputLog;

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
    /// The checkout of a remote repository this root lies in: its bases
    /// must stay inside it, and its files inside their root.
    pub checkout: Option<Arc<Path>>,
    /// The remote base this root belongs to, recorded in origins.
    pub remote: Option<Arc<RemoteRoot>>,
    /// Fetches the files named by `http(s)://` URL (generator `files:`,
    /// `envs:`, patch paths), as Kustomize's loader does; without one, a
    /// URL is an error.
    pub fetcher: Option<Arc<krusty_fetch::Fetcher>>,
    /// Where the files the build reads are recorded, when asked for (see
    /// [`crate::inputs`]).
    pub inputs: Option<Arc<InputLog>>,
    /// The folder every local file and base must lie in, whatever the
    /// restrictor (a Flux source root).
    pub confine: Option<Arc<Path>>,
    /// Where its reads are counted (see [`DiskReads`]), when anywhere.
    pub reads: Option<Arc<DiskReads>>,
}

/// What a path in `resources:` names.
pub enum Entry {
    /// A directory holding a kustomization.
    Dir(PathBuf),
    /// A file of resources.
    File(FoundFile),
}

/// A file found by resolving a path, with what resolving it learnt (its
/// size, and the file itself when it was opened to find out what it is).
pub struct FoundFile {
    /// The path, with symlinks resolved.
    pub path: PathBuf,
    size: Option<u64>,
    open: Option<std::fs::File>,
    /// The whole file, when resolving already read it (see [`read_if_whole`]).
    content: Option<Vec<u8>>,
}

/// A path resolved against a kustomization root.
struct Resolved {
    /// The path and what resolving it learnt.
    file: FoundFile,
    is_dir: bool,
}

impl FoundFile {
    /// A file read while it was found.
    fn read(path: PathBuf, content: Vec<u8>) -> FoundFile {
        FoundFile {
            path,
            size: None,
            open: None,
            content: Some(content),
        }
    }

    /// A file looked at, and kept open, while it was found.
    fn looked_at(path: PathBuf, size: Option<u64>, open: Option<std::fs::File>) -> FoundFile {
        FoundFile {
            path,
            size,
            open,
            content: None,
        }
    }

    /// Reads the whole file: from the file resolving opened, if it did.
    fn read_bytes(self, reads: Option<&DiskReads>) -> std::io::Result<Vec<u8>> {
        match (self.content, self.open) {
            (Some(content), _) => Ok(content),
            (None, Some(file)) => read_open(file, self.size, reads),
            (None, None) => read_open(std::fs::File::open(&self.path)?, self.size, reads),
        }
    }
}

/// How to look at the last name of a path being resolved.
#[derive(Clone, Copy, PartialEq)]
enum Probe {
    /// `lstat` it (directories, and paths only resolved, not read).
    Stat,
    /// Open it without following a symlink and read it (see
    /// [`read_if_whole`]), else `fstat` the open file: a file about to be
    /// read then needs no second path lookup.
    Open,
}

impl Loader {
    /// The documents of a YAML file named in a kustomization or a composition
    /// (empty ones left out), with the file's path and text.
    pub(crate) fn yaml_documents(
        &self,
        path: &str,
    ) -> BuildResult<(PathBuf, String, Vec<krusty_yaml::Node>)> {
        let file = self.file(path)?;
        let text = self.read(&file, None)?;
        let docs = krusty_yaml::parse_stream(&text).map_err(|e| {
            BuildError::new(format!(
                "{}:{}:{}: {}",
                file.display(),
                e.pos.line,
                e.pos.col,
                e.message
            ))
        })?;
        let roots = docs.into_iter().filter_map(|d| d.root).collect();
        Ok((file, text, roots))
    }

    /// A loader rooted at `dir` (which must exist and be a directory).
    pub fn new(dir: &Path, restrictor: LoadRestrictor) -> BuildResult<Loader> {
        let root = canonical(dir)?;
        if !root.is_dir() {
            return Err(BuildError::new(format!(
                "must build at directory: '{}': file is not directory",
                root.display()
            )));
        }
        Ok(Loader {
            root,
            restrictor,
            checkout: None,
            remote: None,
            fetcher: None,
            inputs: None,
            confine: None,
            reads: None,
        })
    }

    /// This loader, refusing every local file and base outside `root`.
    pub fn confined_to(mut self, root: Arc<Path>) -> Loader {
        self.confine = Some(root);
        self
    }

    /// This loader, counting its reads in `reads`.
    pub fn counting(mut self, reads: Arc<DiskReads>) -> Loader {
        self.reads = Some(reads);
        self
    }

    /// This loader, recording what it reads in `inputs`.
    pub fn recording(mut self, inputs: Arc<InputLog>) -> Loader {
        self.inputs = Some(inputs);
        self
    }

    /// Records that the build read (or looked for) the file `path`.
    pub fn record(&self, path: &Path) {
        if let Some(inputs) = &self.inputs {
            inputs.file(path);
        }
    }

    /// Records that the build read everything under the folder `path`.
    pub fn record_folder(&self, path: &Path) {
        if let Some(inputs) = &self.inputs {
            inputs.folder(path);
        }
    }

    /// This loader, fetching files named by URL with `fetcher`.
    pub fn with_fetcher(mut self, fetcher: Arc<krusty_fetch::Fetcher>) -> Loader {
        self.fetcher = Some(fetcher);
        self
    }

    /// A loader rooted at `dir`, a directory path already resolved by
    /// [`Loader::entry`], under the same restrictions as `self`.
    pub fn below(&self, dir: PathBuf) -> Loader {
        Loader {
            root: dir,
            restrictor: self.restrictor,
            checkout: self.checkout.clone(),
            remote: self.remote.clone(),
            fetcher: self.fetcher.clone(),
            inputs: self.inputs.clone(),
            confine: self.confine.clone(),
            reads: self.reads.clone(),
        }
    }

    /// A loader rooted at the folder `dir` of a remote repository checked
    /// out in `checkout`: it reads nothing outside `dir` (whatever the
    /// user's restrictor) and builds no base outside the checkout.
    /// `remote`: the base it is, for origin records.
    pub fn in_checkout(
        dir: PathBuf,
        checkout: Arc<Path>,
        remote: Option<Arc<RemoteRoot>>,
    ) -> Loader {
        Loader {
            root: dir,
            restrictor: LoadRestrictor::RootOnly,
            checkout: Some(checkout),
            remote,
            fetcher: None,
            inputs: None,
            confine: None,
            reads: None,
        }
    }

    /// Fails for a base folder outside the remote checkout this loader's
    /// root lies in, in Kustomize's words.
    pub fn check_containment(&self, dir: &Path) -> BuildResult<()> {
        self.check_confined("abs", dir)?;
        match &self.checkout {
            Some(checkout) if !is_within(dir, checkout) => Err(BuildError::new(format!(
                "security; bases in kustomizations found in cloned git repos must be within the repo, but base '{}' is outside '{}'",
                dir.display(),
                checkout.display()
            ))),
            _ => Ok(()),
        }
    }

    /// Classifies a `resources:` path: a directory or a file (with symlinks
    /// resolved). Files are subject to the load restrictor.
    pub fn entry(&self, rel: &str) -> BuildResult<Entry> {
        // Names of resource files are opened straight away; others (most
        // often directories) are looked at first.
        let probe = if names_resource_file(rel) {
            Probe::Open
        } else {
            Probe::Stat
        };
        let resolved = self.resolve(rel, probe)?;
        if resolved.is_dir {
            return Ok(Entry::Dir(resolved.file.path));
        }
        self.check_restriction(&resolved.file.path)?;
        Ok(Entry::File(resolved.file))
    }

    /// `root/rel` with symlinks resolved, and whether it is a directory.
    /// A path of plain names with no symlink on the way (the usual case)
    /// costs one `lstat` per name (or, for the last, an `open` that does
    /// not follow symlinks and an `fstat`); anything else is canonicalized.
    fn resolve(&self, rel: &str, probe: Probe) -> BuildResult<Resolved> {
        let rel_path = Path::new(rel);
        let plain_names = rel_path.components().next().is_some()
            && rel_path
                .components()
                .all(|c| matches!(c, std::path::Component::Normal(_)));
        if plain_names {
            if let Some(resolved) = self.resolve_plain(rel_path, probe) {
                self.record(&resolved.file.path);
                return Ok(resolved);
            }
        }
        let named = self.root.join(rel);
        if self.inputs.is_some() {
            self.record(&clean(&named));
        }
        let path = canonical(&named)?;
        self.record(&path);
        let is_dir = path.is_dir();
        Ok(Resolved {
            file: FoundFile::looked_at(path, None, None),
            is_dir,
        })
    }

    /// [`Loader::resolve`] for a path of plain names; `None` when one of
    /// them is a symlink or cannot be looked at (the caller canonicalizes,
    /// which resolves the symlink or reports the error).
    fn resolve_plain(&self, rel: &Path, probe: Probe) -> Option<Resolved> {
        let mut path = self.root.clone();
        let mut names = rel.components().peekable();
        while let Some(name) = names.next() {
            path.push(name);
            if names.peek().is_none() && probe == Probe::Open {
                let file = open_no_follow(&path).ok()?;
                match read_if_whole(&file, self.reads.as_deref()) {
                    Ok(Some(content)) => {
                        return Some(Resolved {
                            file: FoundFile::read(path, content),
                            is_dir: false,
                        })
                    }
                    Err(e) if e.raw_os_error() == Some(libc::EISDIR) => {
                        return Some(Resolved {
                            file: FoundFile::looked_at(path, None, None),
                            is_dir: true,
                        })
                    }
                    _ => {}
                }
                let m = file.metadata().ok()?;
                let is_file = m.is_file();
                return Some(Resolved {
                    file: FoundFile::looked_at(
                        path,
                        is_file.then_some(m.len()),
                        is_file.then_some(file),
                    ),
                    is_dir: m.is_dir(),
                });
            }
            let m = std::fs::symlink_metadata(&path).ok()?;
            if m.file_type().is_symlink() {
                return None;
            }
            if names.peek().is_none() {
                return Some(Resolved {
                    file: FoundFile::looked_at(path, m.is_file().then_some(m.len()), None),
                    is_dir: m.is_dir(),
                });
            }
        }
        None
    }

    /// Fails for a path outside the folder the loader is confined to, in
    /// the words of Flux's secure file system (`op`: what was asked).
    fn check_confined(&self, op: &str, path: &Path) -> BuildResult<()> {
        match &self.confine {
            Some(root) if !is_within(path, root) => Err(BuildError::new(format!(
                "fs-security-constraint {op} {}: path '{}' is not in or below '{}'",
                path.display(),
                path.display(),
                root.display()
            ))),
            _ => Ok(()),
        }
    }

    fn check_restriction(&self, path: &Path) -> BuildResult<()> {
        self.check_confined("read", path)?;
        if self.restrictor == LoadRestrictor::RootOnly && !is_within(path, &self.root) {
            if self.checkout.is_some() {
                return Err(BuildError::new(format!(
                    "security; file '{}' is not in or below '{}'",
                    path.display(),
                    self.root.display()
                )));
            }
            return Err(BuildError::new(format!(
                "security; file '{}' is not in or below '{}' (use --load-restrictor LoadRestrictionsNone to allow it)",
                path.display(),
                self.root.display()
            )));
        }
        Ok(())
    }

    /// The kustomization file `name` in the root, if there is one: a
    /// regular file, or a symlink to one, followed under the load
    /// restrictor. A symlink to a file outside the root is an error saying
    /// why; the caller counts the name as missing, as Kustomize does. `open`
    /// opens and reads the file while finding it (see [`find_file`]);
    /// otherwise a stat finds it.
    pub(crate) fn kustomization_file(
        &self,
        name: &str,
        open: bool,
    ) -> BuildResult<Option<FoundFile>> {
        let look = |path: &Path| {
            if open {
                find_file(path, self.reads.as_deref())
            } else {
                stat_file(path)
            }
        };
        let path = self.root.join(name);
        self.record(&path);
        match look(&path) {
            Looked::File(found) => Ok(Some(found)),
            Looked::Nothing => Ok(None),
            Looked::Symlink => {
                // A dangling symlink is no file.
                let Ok(target) = std::fs::canonicalize(&path) else {
                    return Ok(None);
                };
                self.record(&target);
                self.check_restriction(&target)
                    .map_err(|e| e.context(name))?;
                Ok(match look(&target) {
                    Looked::File(found) => Some(FoundFile { path, ..found }),
                    Looked::Symlink | Looked::Nothing => None,
                })
            }
        }
    }

    /// Reads a file as UTF-8 text; `size` is what a stat of it reported,
    /// if known (see [`read_text`]).
    pub fn read(&self, path: &Path, size: Option<u64>) -> BuildResult<String> {
        self.record(path);
        let read =
            std::fs::File::open(path).and_then(|f| read_open(f, size, self.reads.as_deref()));
        text_of(path, read)
    }

    /// Reads a file that [`Loader::entry`] found, as UTF-8 text.
    pub fn read_found(&self, found: FoundFile) -> BuildResult<String> {
        read_found_text(found, self.reads.as_deref())
    }

    /// Resolves a file path named in the kustomization, subject to the
    /// load restrictor.
    pub fn file(&self, rel: &str) -> BuildResult<PathBuf> {
        let resolved = self.resolve(rel, Probe::Stat)?;
        self.check_restriction(&resolved.file.path)?;
        Ok(resolved.file.path)
    }
}

/// Whether a `resources:` path is named like a file of resources
/// (`*.yaml`, `*.yml`, `*.json`) rather than a directory.
pub(crate) fn names_resource_file(rel: &str) -> bool {
    [".yaml", ".yml", ".json"].iter().any(|e| rel.ends_with(e))
}

/// `path` is `dir` or lies below it, component by component (as
/// [`Path::starts_with`]). Paths built by joining names to a directory
/// (most) are answered by comparing bytes; others by components.
pub(crate) fn is_within(path: &Path, dir: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let (p, d) = (path.as_os_str().as_bytes(), dir.as_os_str().as_bytes());
    let lexically_below = p.starts_with(d)
        && !d.is_empty()
        && (p.len() == d.len() || p[d.len()] == b'/' || d.ends_with(b"/"));
    lexically_below || path.starts_with(dir)
}

/// Opens a file for reading without following a symlink as its last name
/// (which fails, so the caller can resolve it).
fn open_no_follow(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
}

impl krusty_ops::FileSource for Loader {
    fn read_bytes(&self, rel: &str) -> krusty_ops::OpResult<Vec<u8>> {
        if krusty_fetch::is_http_url(rel) {
            return self.read_url(rel);
        }
        let resolved = self
            .resolve(rel, Probe::Open)
            .and_then(|r| self.check_restriction(&r.file.path).map(|()| r))
            .map_err(|e| krusty_ops::OpError::new(e.to_string()))?;
        let path = resolved.file.path.clone();
        if resolved.is_dir {
            return Err(krusty_ops::OpError::new(format!(
                "'{}' is a directory, not a file",
                path.display()
            )));
        }
        resolved
            .file
            .read_bytes(self.reads.as_deref())
            .map_err(|e| {
                krusty_ops::OpError::new(format!(
                    "{}: cannot read file: {}",
                    path.display(),
                    describe_io(&e)
                ))
            })
    }
}

impl Loader {
    /// The body of the file at the URL `url`, through the fetch layer (its
    /// cache, `--offline` and bounds), as Kustomize's loader reads a file
    /// named by URL.
    fn read_url(&self, url: &str) -> krusty_ops::OpResult<Vec<u8>> {
        let Some(fetcher) = &self.fetcher else {
            return Err(krusty_ops::OpError::new(format!(
                "'{}': files by URL are not read here",
                krusty_fetch::redact(url)
            )));
        };
        fetcher
            .file(url, krusty_fetch::HTTP_TIMEOUT)
            .map(|body| body.to_vec())
            .map_err(|e| krusty_ops::OpError::new(e.to_string()))
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

pub use krusty_schema::path::clean;

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
    read_open(std::fs::File::open(path)?, size, None)
}

/// [`read_whole`] for a file already open.
/// Reads counted in `reads` (none: not counted).
fn read_open(
    mut file: std::fs::File,
    size: Option<u64>,
    reads: Option<&DiskReads>,
) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let size = match size {
        Some(size) => size,
        None => file.metadata()?.len(),
    };
    let expected = usize::try_from(size).unwrap_or(usize::MAX);
    let mut buf = vec![0u8; expected.saturating_add(1).min(1 << 30)];
    let (mut filled, waited) = read_cached_first(&file, &mut buf)?;
    if let Some(waited) = waited {
        // A read that found only part of the file cached waited for the rest.
        note_read(reads, waited || (filled > 0 && filled < expected));
    }
    if filled == expected && filled < buf.len() {
        buf.truncate(filled);
        return Ok(buf);
    }
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

/// The most [`read_if_whole`] reads in its one read.
const WHOLE_IN_ONE_READ: usize = 64 << 10;

/// The whole of an open file, read in one read from its start that asks
/// only for what the page cache holds (`RWF_NOWAIT`), when that read alone
/// shows it has the whole file: without a stat to learn the size first.
///
/// Such a read stops early only at the end of the file or before a page
/// that is not cached, and pages start at multiples of 4,096 bytes; so a
/// read that comes back short of the buffer, with a length that is not a
/// multiple of 4,096, has reached the end. Any other outcome (an empty or
/// larger file, one whose size is a multiple of 4,096, pages missing, or
/// no such read on this system) is `Ok(None)`, and the file's position is
/// left at its start for an ordinary read. An error is the read's (e.g.
/// `EISDIR` for a directory).
#[cfg(target_os = "linux")]
pub(crate) fn read_if_whole(
    file: &std::fs::File,
    reads: Option<&DiskReads>,
) -> std::io::Result<Option<Vec<u8>>> {
    use std::os::fd::AsRawFd;
    const PAGE: usize = 4096;
    if NOWAIT_UNSUPPORTED.load(Ordering::Relaxed) {
        return Ok(None);
    }
    let mut buf: Vec<u8> = Vec::with_capacity(WHOLE_IN_ONE_READ);
    let iov = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: WHOLE_IN_ONE_READ,
    };
    // SAFETY: the one `iovec` describes `buf`'s allocated capacity, which
    // outlives the call; reading at offset 0 leaves the file's position
    // where it is.
    let n = unsafe { libc::preadv2(file.as_raw_fd(), &iov, 1, 0, libc::RWF_NOWAIT) };
    let Ok(n) = usize::try_from(n) else {
        let e = std::io::Error::last_os_error();
        return match e.raw_os_error() {
            Some(libc::EAGAIN | libc::EOPNOTSUPP | libc::EINVAL | libc::ENOSYS | libc::ESPIPE) => {
                Ok(None)
            }
            _ => Err(e),
        };
    };
    if n == 0 || n >= WHOLE_IN_ONE_READ || n % PAGE == 0 {
        return Ok(None);
    }
    // SAFETY: the kernel wrote the first `n` bytes of the capacity.
    unsafe { buf.set_len(n) };
    note_read(reads, false);
    // An allocation of the file's size; the 64 KiB buffer goes back to
    // the allocator for the next file.
    Ok(Some(buf.as_slice().to_vec()))
}

#[cfg(not(target_os = "linux"))]
pub(crate) fn read_if_whole(
    _file: &std::fs::File,
    _reads: Option<&DiskReads>,
) -> std::io::Result<Option<Vec<u8>>> {
    Ok(None)
}

/// How many files read so far had to wait for the disk before
/// [`DiskReads::mostly_from_disk`] says so: a few misses are the page cache's
/// ordinary churn.
const MISSES_BEFORE_READING_AHEAD: u32 = 16;

/// How the files of an engine's builds fare in the page cache: how many
/// were read with the cache consulted first, how many of them were not
/// (all) there, and whether reading ahead pays (see
/// [`DiskReads::mostly_from_disk`]). The engine owns one for all its
/// builds; a loader counts into the one it is given.
#[derive(Debug, Default)]
pub struct DiskReads {
    read: AtomicU32,
    missed: AtomicU32,
    from_disk: AtomicBool,
}

impl DiskReads {
    /// Whether the files read so far mostly came from disk rather than
    /// from the page cache: at least [`MISSES_BEFORE_READING_AHEAD`]
    /// files, and half of those read, were not in it. Then the build
    /// reads ahead (`crate::readahead`): announcing a file costs about
    /// what reading a cached one does, so it pays only when most reads
    /// wait. Once set, it stays set (reading ahead makes the later reads
    /// hits).
    pub fn mostly_from_disk(&self) -> bool {
        self.from_disk.load(Ordering::Relaxed)
    }

    /// Counts one file read, and whether it waited for the disk.
    fn note(&self, waited: bool) {
        let read = self.read.fetch_add(1, Ordering::Relaxed).saturating_add(1);
        if waited {
            let missed = self
                .missed
                .fetch_add(1, Ordering::Relaxed)
                .saturating_add(1);
            if missed >= MISSES_BEFORE_READING_AHEAD && missed.saturating_mul(2) >= read {
                self.from_disk.store(true, Ordering::Relaxed);
            }
        }
    }
}

/// Counts a read in `reads`, when there is one.
fn note_read(reads: Option<&DiskReads>, waited: bool) {
    if let Some(reads) = reads {
        reads.note(waited);
    }
}

/// Set when the kernel cannot tell whether a read would wait for the disk:
/// a fact of the running kernel, the same for every engine.
static NOWAIT_UNSUPPORTED: AtomicBool = AtomicBool::new(false);

/// The first read of a file: one that returns only what the page cache
/// holds (`RWF_NOWAIT`), and when nothing is there, the ordinary read that
/// waits for the disk. Also says whether the page cache was consulted
/// (`Some`) and the read waited (`Some(true)`); `None` on kernels without
/// `RWF_NOWAIT`, where this is the ordinary read.
#[cfg(target_os = "linux")]
fn read_cached_first(
    file: &std::fs::File,
    buf: &mut [u8],
) -> std::io::Result<(usize, Option<bool>)> {
    use std::os::fd::AsRawFd;
    if !NOWAIT_UNSUPPORTED.load(Ordering::Relaxed) {
        let iov = libc::iovec {
            iov_base: buf.as_mut_ptr().cast(),
            iov_len: buf.len(),
        };
        // SAFETY: the one `iovec` describes `buf`, which outlives the call;
        // offset -1 reads at the file's position, as `read` does.
        let n = unsafe { libc::preadv2(file.as_raw_fd(), &iov, 1, -1, libc::RWF_NOWAIT) };
        if let Ok(n) = usize::try_from(n) {
            return Ok((n, Some(false)));
        }
        match std::io::Error::last_os_error().raw_os_error() {
            Some(libc::EAGAIN) => return Ok((read_retrying(file, buf)?, Some(true))),
            Some(libc::EOPNOTSUPP | libc::EINVAL | libc::ENOSYS) => {
                NOWAIT_UNSUPPORTED.store(true, Ordering::Relaxed);
            }
            _ => {}
        }
    }
    Ok((read_retrying(file, buf)?, None))
}

#[cfg(not(target_os = "linux"))]
fn read_cached_first(
    file: &std::fs::File,
    buf: &mut [u8],
) -> std::io::Result<(usize, Option<bool>)> {
    Ok((read_retrying(file, buf)?, None))
}

/// One `read`, retried when a signal interrupted it.
fn read_retrying(mut file: &std::fs::File, buf: &mut [u8]) -> std::io::Result<usize> {
    use std::io::Read;
    loop {
        match file.read(buf) {
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            other => return other,
        }
    }
}

/// What is at a path whose last name is not followed when it is a symlink.
pub(crate) enum Looked {
    /// A regular file.
    File(FoundFile),
    /// A symlink, for the caller to resolve and check.
    Symlink,
    /// No regular file.
    Nothing,
}

/// The regular file at `path`, opened and read whole when one read can
/// (see [`read_if_whole`]), else kept open with its size. A file that
/// cannot be opened (no permission, say) is found by a stat, as it would
/// be without this, and fails when it is read. The file is opened without
/// blocking, so a FIFO is passed over as a stat would pass it, and without
/// following a symlink, which the stat then reports.
pub(crate) fn find_file(path: &Path, reads: Option<&DiskReads>) -> Looked {
    use std::os::unix::fs::OpenOptionsExt;
    let opened = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW)
        .open(path);
    let Ok(file) = opened else {
        return stat_file(path);
    };
    if let Ok(Some(content)) = read_if_whole(&file, reads) {
        return Looked::File(FoundFile::read(path.to_path_buf(), content));
    }
    match file.metadata() {
        Ok(m) if m.is_file() => Looked::File(FoundFile::looked_at(
            path.to_path_buf(),
            Some(m.len()),
            Some(file),
        )),
        _ => Looked::Nothing,
    }
}

/// The regular file at `path`, found by a stat that does not follow a
/// symlink.
pub(crate) fn stat_file(path: &Path) -> Looked {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => Looked::Symlink,
        Ok(m) if m.is_file() => Looked::File(FoundFile::looked_at(
            path.to_path_buf(),
            Some(m.len()),
            None,
        )),
        _ => Looked::Nothing,
    }
}

/// The UTF-8 text of a file found by [`Loader::entry`] or
/// [`Loader::kustomization_file`].
pub(crate) fn read_found_text(found: FoundFile, reads: Option<&DiskReads>) -> BuildResult<String> {
    let path = found.path.clone();
    text_of(&path, found.read_bytes(reads))
}

/// The text of a file that starts with a UTF-16 byte order mark (as
/// Windows tools write them), which YAML readers decode as go-yaml does;
/// `None` for any other file.
fn utf16_text(path: &Path, bytes: &[u8]) -> Option<BuildResult<String>> {
    let decode: fn([u8; 2]) -> u16 = match bytes {
        [0xff, 0xfe, ..] => u16::from_le_bytes,
        [0xfe, 0xff, ..] => u16::from_be_bytes,
        _ => return None,
    };
    let body = &bytes[2..];
    let units = body.chunks(2).map(|pair| match pair {
        [a, b] => decode([*a, *b]),
        // An odd byte at the end: no valid character.
        _ => 0xdc00,
    });
    Some(
        char::decode_utf16(units)
            .collect::<Result<String, _>>()
            .map_err(|_| {
                BuildError::new(format!(
                    "{}: invalid UTF-16: the file starts with a UTF-16 byte order mark but is not UTF-16 text",
                    path.display()
                ))
            }),
    )
}

/// Reads a file as UTF-8, reporting the line and column of invalid bytes;
/// `size` is what a stat of it reported, if known.
pub fn read_text(path: &Path, size: Option<u64>) -> BuildResult<String> {
    text_of(path, read_whole(path, size))
}

/// The UTF-8 text of what was read from `path`, or why there is none.
fn text_of(path: &Path, read: std::io::Result<Vec<u8>>) -> BuildResult<String> {
    let bytes = read.map_err(|e| {
        BuildError::new(format!(
            "{}: cannot read file: {}",
            path.display(),
            describe_io(&e)
        ))
    })?;
    if let Some(text) = utf16_text(path, &bytes) {
        return text;
    }
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
    #[test]
    fn is_within_agrees_with_components() {
        let paths = [
            "/",
            "/a",
            "/a/",
            "/a/b",
            "/a/b/",
            "/a/bc",
            "/a//b/c",
            "/a/./b",
            "/a/b/../c",
            "a",
            "a/b",
            "./a/b",
            "a/.",
            "a/.b",
            "",
            "/ab",
            "/a/b/c/d",
        ];
        for p in paths {
            for d in paths {
                let (p, d) = (Path::new(p), Path::new(d));
                assert_eq!(is_within(p, d), p.starts_with(d), "{p:?} within {d:?}");
            }
        }
    }

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

    /// A scratch tree: `outside.yaml` beside a root holding a file, a
    /// symlink to it, a symlink out of the root, a directory named like a
    /// file, and a directory reached directly and through a symlink.
    fn tree(name: &str) -> PathBuf {
        let base =
            std::env::temp_dir().join(format!("krusty-loader-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        let root = base.join("root");
        std::fs::create_dir_all(root.join("config")).expect("scratch dirs");
        std::fs::create_dir_all(root.join("d.yaml")).expect("scratch dirs");
        std::fs::write(base.join("outside.yaml"), "out: 1\n").expect("scratch file");
        std::fs::write(root.join("a.yaml"), "a: 1\n").expect("scratch file");
        std::fs::write(root.join("config/x.properties"), "x=1\n").expect("scratch file");
        std::os::unix::fs::symlink("a.yaml", root.join("link.yaml")).expect("symlink");
        std::os::unix::fs::symlink("../outside.yaml", root.join("out.yaml")).expect("symlink");
        std::os::unix::fs::symlink("config", root.join("config-link")).expect("symlink");
        base
    }

    fn read_entry(loader: &Loader, rel: &str) -> Result<(PathBuf, String), String> {
        match loader.entry(rel).map_err(|e| e.to_string())? {
            Entry::Dir(dir) => Err(format!("directory {}", dir.display())),
            Entry::File(found) => {
                let path = found.path.clone();
                Ok((path, loader.read_found(found).map_err(|e| e.to_string())?))
            }
        }
    }

    #[test]
    fn files_opened_while_resolving_follow_the_same_rules() {
        use krusty_ops::FileSource;
        let base = tree("probe");
        let root = std::fs::canonicalize(base.join("root")).expect("root");
        let loader = Loader::new(&root, LoadRestrictor::RootOnly).expect("loader");
        assert_eq!(
            read_entry(&loader, "a.yaml"),
            Ok((root.join("a.yaml"), "a: 1\n".to_string()))
        );
        // A symlink is resolved to what it names.
        assert_eq!(
            read_entry(&loader, "link.yaml"),
            Ok((root.join("a.yaml"), "a: 1\n".to_string()))
        );
        let escape = read_entry(&loader, "out.yaml").expect_err("outside the root");
        assert!(escape.starts_with("security; file"), "{escape}");
        assert_eq!(
            read_entry(&loader, "d.yaml"),
            Err(format!("directory {}", root.join("d.yaml").display()))
        );
        let missing = read_entry(&loader, "missing.yaml").expect_err("missing");
        assert!(missing.starts_with("evalsymlink failure on"), "{missing}");
        for rel in ["config/x.properties", "config-link/x.properties"] {
            assert_eq!(
                loader.read_bytes(rel).map_err(|e| e.to_string()),
                Ok(b"x=1\n".to_vec()),
                "{rel}"
            );
        }
        assert!(loader.read_bytes("d.yaml").is_err());
        let open = Loader::new(&root, LoadRestrictor::None).expect("loader");
        let outside = std::fs::canonicalize(base.join("outside.yaml")).expect("outside");
        assert_eq!(
            read_entry(&open, "out.yaml"),
            Ok((outside, "out: 1\n".to_string()))
        );
        let _ = std::fs::remove_dir_all(&base);
    }

    /// What [`Loader::kustomization_file`] finds under `name`, both ways.
    fn kustomization_at(loader: &Loader, name: &str) -> Result<Option<PathBuf>, String> {
        let stat = loader
            .kustomization_file(name, false)
            .map_err(|e| e.to_string())?;
        let open = loader
            .kustomization_file(name, true)
            .map_err(|e| e.to_string())?;
        let (stat, open) = (stat.map(|f| f.path), open.map(|f| f.path));
        assert_eq!(stat, open, "{name}");
        Ok(open)
    }

    #[test]
    fn kustomization_files_follow_symlinks_under_the_restrictor() {
        let base = tree("kustomization");
        let root = std::fs::canonicalize(base.join("root")).expect("root");
        let loader = Loader::new(&root, LoadRestrictor::RootOnly).expect("loader");
        assert_eq!(
            kustomization_at(&loader, "a.yaml"),
            Ok(Some(root.join("a.yaml")))
        );
        // Found under the name it has in the root.
        assert_eq!(
            kustomization_at(&loader, "link.yaml"),
            Ok(Some(root.join("link.yaml")))
        );
        let escape = kustomization_at(&loader, "out.yaml").expect_err("outside the root");
        assert!(escape.starts_with("out.yaml: security; file"), "{escape}");
        for none in ["missing.yaml", "d.yaml", "config-link"] {
            assert_eq!(kustomization_at(&loader, none), Ok(None), "{none}");
        }
        let open = Loader::new(&root, LoadRestrictor::None).expect("loader");
        assert_eq!(
            kustomization_at(&open, "out.yaml"),
            Ok(Some(root.join("out.yaml")))
        );
        let _ = std::fs::remove_dir_all(&base);
    }

    #[test]
    fn files_read_from_disk_are_read_whole_and_counted() {
        use std::os::fd::AsRawFd;
        let content: Vec<u8> = (0..300_000u32).map(|i| (i % 241) as u8).collect();
        let file = Scratch::new("evicted", &content);
        let reads = DiskReads::default();
        for size in [Some(content.len() as u64), None, Some(10)] {
            let opened = std::fs::File::open(&file.0).expect("scratch file");
            opened.sync_all().expect("written back");
            // SAFETY: `posix_fadvise` reads no memory of ours; the file is
            // open. Dropping the file's pages makes the first read wait.
            unsafe {
                libc::posix_fadvise(opened.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED);
            }
            let before = reads.read.load(Ordering::Relaxed);
            let opened = std::fs::File::open(&file.0).expect("scratch file");
            let read = read_open(opened, size, Some(&reads)).expect("readable");
            assert!(
                read == content,
                "size hint {size:?} read {} bytes",
                read.len()
            );
            if !NOWAIT_UNSUPPORTED.load(Ordering::Relaxed) {
                assert!(reads.read.load(Ordering::Relaxed) > before);
            }
        }
    }

    /// The bytes [`find_file`] finds at `path`, read through
    /// [`read_found_text`]'s path (as bytes: the content is binary).
    fn found_bytes(path: &Path) -> Option<Vec<u8>> {
        match find_file(path, None) {
            Looked::File(found) => Some(found.read_bytes(None).expect("readable")),
            Looked::Symlink | Looked::Nothing => None,
        }
    }

    #[test]
    fn files_are_found_whole_at_every_size() {
        for len in [
            0usize, 1, 100, 4095, 4096, 4097, 8191, 8192, 8193, 65535, 65536, 65537, 200_000,
        ] {
            let content: Vec<u8> = (0..len).map(|i| (i % 253) as u8).collect();
            let file = Scratch::new(&format!("whole-{len}"), &content);
            let read = found_bytes(&file.0).expect("a regular file");
            assert!(read == content, "{len} bytes: read {}", read.len());
            // Through the loader too, as a resource file is read.
            let name = file.0.file_name().and_then(|n| n.to_str()).expect("name");
            let yaml = Scratch::new(&format!("{name}.yaml"), &content);
            let dir = yaml.0.parent().expect("temp dir");
            let loader = Loader {
                root: dir.to_path_buf(),
                restrictor: LoadRestrictor::None,
                checkout: None,
                remote: None,
                fetcher: None,
                inputs: None,
                confine: None,
                reads: None,
            };
            let rel = yaml.0.file_name().and_then(|n| n.to_str()).expect("name");
            let Ok(Entry::File(found)) = loader.entry(rel) else {
                panic!("{len} bytes: not found as a file");
            };
            let read = found.read_bytes(None).expect("readable");
            assert!(
                read == content,
                "{len} bytes through the loader: read {}",
                read.len()
            );
        }
    }

    #[test]
    fn one_read_is_taken_as_whole_only_when_it_shows_the_end() {
        let sizes = [
            (4097usize, true),
            (100, true),
            (4096, false),
            (8192, false),
            (0, false),
        ];
        for (len, whole) in sizes {
            let content = vec![b'x'; len];
            let file = Scratch::new(&format!("one-read-{len}"), &content);
            let opened = std::fs::File::open(&file.0).expect("scratch file");
            let read = read_if_whole(&opened, None).expect("readable");
            if NOWAIT_UNSUPPORTED.load(Ordering::Relaxed) {
                continue;
            }
            assert_eq!(read.is_some(), whole, "{len} bytes");
        }
    }

    #[test]
    fn a_file_with_pages_missing_from_the_cache_is_read_whole() {
        use std::os::fd::AsRawFd;
        let content: Vec<u8> = (0..40_007).map(|i| (i % 249) as u8).collect();
        let file = Scratch::new("middle-page", &content);
        let opened = std::fs::File::open(&file.0).expect("scratch file");
        opened.sync_all().expect("written back");
        // SAFETY: `posix_fadvise` reads no memory of ours; the file is
        // open. The pages from 8 KiB on are dropped (as far as the page
        // cache splits the file there): a read that asks for cached pages
        // only stops at a multiple of 4,096 bytes short of the end.
        unsafe {
            libc::posix_fadvise(opened.as_raw_fd(), 8192, 0, libc::POSIX_FADV_DONTNEED);
        }
        let read = found_bytes(&file.0).expect("a regular file");
        assert!(read == content, "read {} bytes", read.len());
    }

    #[test]
    fn a_fifo_is_not_taken_for_a_file() {
        let path = std::env::temp_dir().join(format!("krusty-loader-{}-fifo", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let c_path = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).expect("path");
        // SAFETY: `mkfifo` reads the NUL-terminated path it is given.
        assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
        // Opened without blocking, and passed over as a stat passes it.
        assert!(matches!(find_file(&path, None), Looked::Nothing));
        let _ = std::fs::remove_file(&path);
    }

    #[test]
    fn utf16_files_are_decoded_by_their_byte_order_mark() {
        let path = Path::new("x.yaml");
        let le: Vec<u8> = [0xff, 0xfe]
            .into_iter()
            .chain("a: é\n".encode_utf16().flat_map(u16::to_le_bytes))
            .collect();
        let be: Vec<u8> = [0xfe, 0xff]
            .into_iter()
            .chain("a: é\n".encode_utf16().flat_map(u16::to_be_bytes))
            .collect();
        assert_eq!(
            text_of(path, Ok(le.clone())).map_err(|e| e.to_string()),
            Ok("a: é\n".to_string())
        );
        assert_eq!(
            text_of(path, Ok(be)).map_err(|e| e.to_string()),
            Ok("a: é\n".to_string())
        );
        let odd = [&le[..], &[0x41]].concat();
        assert!(text_of(path, Ok(odd)).is_err());
        assert_eq!(
            text_of(path, Ok(b"a: 1\n".to_vec())).map_err(|e| e.to_string()),
            Ok("a: 1\n".to_string())
        );
    }

    #[test]
    fn reading_a_directory_fails() {
        assert!(read_whole(&std::env::temp_dir(), None).is_err());
    }
}
