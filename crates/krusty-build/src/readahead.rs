//! Reading ahead when a build's files come from disk.
//!
//! A build reads many small files, one after another on each worker. From
//! the page cache each costs microseconds; when the kernel has dropped them
//! (after a reboot, or on machines that page out memory left idle for a
//! while) each read waits for the disk in turn, and the disk serves one
//! small request at a time. The loader notices when most reads wait for
//! the disk ([`crate::loader::DiskReads::mostly_from_disk`]). From then on, each
//! kustomization the build parses hands what it names to a helper thread,
//! which asks the kernel to start reading those files
//! (`posix_fadvise(WILLNEED)`), so that the disk serves them together while
//! the workers go on. A directory named in `resources:` or `components:`
//! has its kustomization file announced first, then each other regular
//! file in it (usually the resources and patches it names). Directories
//! named before the loader noticed are remembered and announced then: by
//! that time the build has often parsed the kustomizations that name most
//! of its bases, and built few of them.
//!
//! Announcing a file only fills the page cache: what the build reads, and
//! the rules it reads by (the load restrictor), are unchanged. Files are
//! opened without following a final symlink and without blocking (a FIFO
//! is passed over), and at most [`MAX_BYTES`] of each is asked for.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender, TryRecvError};
use std::sync::{Arc, Mutex};

use crate::kustomization::{Kustomization, FILE_NAMES};
use crate::loader::{clean, is_within, names_resource_file, DiskReads, LoadRestrictor};

/// How much of one file is asked for: resource files are far smaller, and
/// a large file in a kustomization's directory is likely not one of them.
const MAX_BYTES: i64 = 1 << 20;

/// How many directories named before files were found to come from disk
/// are remembered.
const MAX_EARLIER: usize = 4096;

/// How many files of one directory are announced at most.
const MAX_FILES_PER_DIR: usize = 256;

/// Something a kustomization names.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Hint {
    /// A file it reads.
    File(PathBuf),
    /// A directory it builds (a base or a component).
    Dir(PathBuf),
}

/// The helper thread of one build, started the first time a kustomization
/// is parsed after files were found to come from disk (it stops when the
/// build drops this, after the batch or listing in hand), and
/// the directories named before that.
pub(crate) struct ReadAhead {
    state: Mutex<State>,
    stop: Arc<AtomicBool>,
    /// The engine's count of reads, which says when reading ahead pays.
    reads: Arc<DiskReads>,
}

#[derive(Default)]
struct State {
    /// Whether starting the helper was tried.
    started: bool,
    /// The helper, if it started.
    helper: Option<Sender<Vec<Hint>>>,
    /// Directories named before files were found to come from disk (up to
    /// [`MAX_EARLIER`]).
    earlier: Vec<Hint>,
}

impl ReadAhead {
    /// A read-ahead that starts once `reads` show files come from disk.
    pub(crate) fn new(reads: Arc<DiskReads>) -> ReadAhead {
        ReadAhead {
            state: Mutex::default(),
            stop: Arc::default(),
            reads,
        }
    }

    /// Announces the files kustomization `k` in `root` names, and the
    /// directories named before, if this process's files mostly come from
    /// disk; otherwise only remembers the directories it names.
    pub(crate) fn kustomization(&self, root: &Path, k: &Kustomization, restrictor: LoadRestrictor) {
        let from_disk = self.reads.mostly_from_disk();
        let hints = hints(root, k, restrictor, !from_disk);
        let Ok(mut state) = self.state.lock() else {
            return;
        };
        if !from_disk {
            let room = MAX_EARLIER.saturating_sub(state.earlier.len());
            state.earlier.extend(hints.into_iter().take(room));
            return;
        }
        let mut batch = std::mem::take(&mut state.earlier);
        batch.extend(hints);
        if batch.is_empty() {
            return;
        }
        if !state.started {
            state.started = true;
            state.helper = self.start();
        }
        if let Some(sender) = state.helper.as_ref() {
            // A helper that could not take it has stopped: the build goes on
            // reading the files itself.
            let _ = sender.send(batch);
        }
    }

    /// Starts the helper thread; `None` if the system refuses a thread.
    fn start(&self) -> Option<Sender<Vec<Hint>>> {
        let (sender, receiver) = channel::<Vec<Hint>>();
        let stop = Arc::clone(&self.stop);
        std::thread::Builder::new()
            .name("krusty-readahead".into())
            .spawn(move || run_helper(&receiver, &stop))
            .ok()?;
        Some(sender)
    }
}

impl Drop for ReadAhead {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// What kustomization `k` in `root` will read: its resource files and
/// directories, components, patch files and generator sources (only the
/// directories if `dirs_only`). Remote resources are left out, and files
/// outside `root` unless the load restrictor allows them.
fn hints(root: &Path, k: &Kustomization, restrictor: LoadRestrictor, dirs_only: bool) -> Vec<Hint> {
    let file = |rel: &str| {
        let path = clean(&root.join(rel));
        (restrictor == LoadRestrictor::None || is_within(&path, root)).then_some(Hint::File(path))
    };
    let mut out = Vec::new();
    for entry in &k.resources {
        let is_file = names_resource_file(entry);
        if (is_file && dirs_only) || crate::remote::is_remote(entry) {
            continue;
        }
        if is_file {
            out.extend(file(entry));
        } else {
            // Opening a path resolves its `..` as well as cleaning it would.
            out.push(Hint::Dir(root.join(entry)));
        }
    }
    for entry in &k.components {
        if !crate::remote::is_remote(entry) {
            out.push(Hint::Dir(root.join(entry)));
        }
    }
    if dirs_only {
        return out;
    }
    for patch in &k.patches {
        if let krusty_ops::patch::PatchSource::Path(rel) = &patch.source {
            out.extend(file(rel));
        }
    }
    for rel in &k.patches_strategic_merge {
        out.extend(file(rel));
    }
    for generator in k.config_map_generator.iter().chain(&k.secret_generator) {
        for source in &generator.files {
            // `[key=]path`
            let rel = source.split_once('=').map_or(source.as_str(), |(_, p)| p);
            out.extend(file(rel));
        }
        for rel in &generator.envs {
            out.extend(file(rel));
        }
    }
    out
}

/// The helper: announces what each kustomization names as it comes (its
/// files, and the usual kustomization file of each directory, found by
/// name: what the build reads next), and in between lists the directories
/// named, one at a time, to announce their other files (listing a
/// directory may itself wait for the disk, so it never holds up what was
/// named since). Returns when the build is over.
fn run_helper(batches: &Receiver<Vec<Hint>>, stop: &AtomicBool) {
    let mut to_list: VecDeque<PathBuf> = VecDeque::new();
    loop {
        if stop.load(Ordering::Relaxed) {
            return;
        }
        let batch = match batches.try_recv() {
            Ok(batch) => batch,
            Err(TryRecvError::Disconnected) => return,
            Err(TryRecvError::Empty) => match to_list.pop_front() {
                Some(dir) => {
                    announce_dir(&dir);
                    continue;
                }
                None => match batches.recv() {
                    Ok(batch) => batch,
                    Err(_) => return,
                },
            },
        };
        for hint in batch {
            match hint {
                Hint::File(path) => announce_file(&path),
                Hint::Dir(dir) => {
                    announce_file(&dir.join(FILE_NAMES[0]));
                    to_list.push_back(dir);
                }
            }
        }
    }
}

/// Announces the regular files of `dir` but its usual kustomization file
/// (announced already).
fn announce_dir(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    entries
        .filter_map(Result::ok)
        .filter(|e| e.file_name() != FILE_NAMES[0])
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .take(MAX_FILES_PER_DIR)
        .for_each(|e| announce_file(&e.path()));
}

/// Opens `path` (not following a final symlink, not waiting on a FIFO) and
/// asks for its first [`MAX_BYTES`]; anything that fails is passed over.
#[cfg(target_os = "linux")]
fn announce_file(path: &Path) {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::OpenOptionsExt;
    let Ok(file) = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
    else {
        return;
    };
    // SAFETY: `posix_fadvise` reads no memory of ours; the descriptor is
    // open for the duration of the call. An error (a FIFO, a file system
    // without read-ahead) only means nothing was read ahead.
    unsafe {
        libc::posix_fadvise(file.as_raw_fd(), 0, MAX_BYTES, libc::POSIX_FADV_WILLNEED);
    }
}

/// Elsewhere the loader cannot tell that files come from disk, so the
/// helper never starts.
#[cfg(not(target_os = "linux"))]
fn announce_file(_path: &Path) {}

#[cfg(test)]
mod tests {
    use super::*;

    fn kustomization(text: &str) -> Kustomization {
        Kustomization::parse(text, krusty_ops::KustomizeVersion::default())
            .expect("valid kustomization")
    }

    #[test]
    fn hints_name_what_a_kustomization_reads() {
        let k = kustomization(
            "resources:\n- deployment.yaml\n- ../base\n- https://example.com/x.yaml\n- sub/svc.yml\n\
             components:\n- ../comp\n\
             patches:\n- path: p.yaml\n- patch: '[]'\n  target: {kind: X}\n\
             patchesStrategicMerge:\n- ../outside.yaml\n\
             configMapGenerator:\n- name: c\n  files:\n  - key=config/a.properties\n  - b.txt\n  envs:\n  - e.env\n",
        );
        let root = Path::new("/r/overlay");
        let file = |p: &str| Hint::File(PathBuf::from(p));
        let dir = |p: &str| Hint::Dir(PathBuf::from(p));
        assert_eq!(
            hints(root, &k, LoadRestrictor::RootOnly, false),
            vec![
                file("/r/overlay/deployment.yaml"),
                dir("/r/overlay/../base"),
                file("/r/overlay/sub/svc.yml"),
                dir("/r/overlay/../comp"),
                file("/r/overlay/p.yaml"),
                file("/r/overlay/config/a.properties"),
                file("/r/overlay/b.txt"),
                file("/r/overlay/e.env"),
            ]
        );
        // Without the restrictor, a file outside the root is announced too.
        assert!(hints(root, &k, LoadRestrictor::None, false).contains(&file("/r/outside.yaml")));
        // Before files come from disk, only directories are remembered.
        assert_eq!(
            hints(root, &k, LoadRestrictor::RootOnly, true),
            vec![dir("/r/overlay/../base"), dir("/r/overlay/../comp")]
        );
    }

    #[test]
    fn announcing_passes_over_what_it_cannot_read_without_waiting() {
        let base = std::env::temp_dir().join(format!("krusty-readahead-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        std::fs::create_dir_all(base.join("sub")).expect("scratch dir");
        std::fs::write(base.join("a.yaml"), "a: 1\n").expect("scratch file");
        std::os::unix::fs::symlink("a.yaml", base.join("link.yaml")).expect("symlink");
        let fifo = std::ffi::CString::new(base.join("fifo").into_os_string().into_encoded_bytes())
            .expect("no NUL in a temporary path");
        // SAFETY: `mkfifo` reads the NUL-terminated path it is given.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0, "mkfifo");
        // A FIFO without a writer would block a plain open for reading: the
        // helper must come back from it, from a directory holding one, and
        // from paths that are missing, directories or symlinks.
        let (done, finished) = channel();
        let dir = base.clone();
        std::thread::spawn(move || {
            for file in ["fifo", "missing.yaml", "sub", "link.yaml"] {
                announce_file(&dir.join(file));
            }
            for listed in [dir.clone(), dir.join("missing")] {
                announce_dir(&listed);
            }
            // The helper itself, given both, ends when the build does.
            let (batches, helper) = channel();
            let _ = batches.send(vec![Hint::File(dir.join("fifo")), Hint::Dir(dir.clone())]);
            drop(batches);
            run_helper(&helper, &AtomicBool::new(false));
            let _ = done.send(true);
        });
        let came_back = finished.recv_timeout(std::time::Duration::from_secs(10));
        let _ = std::fs::remove_dir_all(&base);
        assert_eq!(came_back, Ok(true), "announcing blocked");
    }
}
