//! Opening a file an edit changes (the kustomization file, and the
//! resource and patch files `edit fix --vars` rewrites), and writing it
//! back.
//!
//! Only a regular file is edited: a FIFO or a device is refused as soon
//! as it is opened (without blocking), and links are followed only to a
//! file in or below the folder of the kustomization the file belongs to.
//! The file stays locked (`flock`, exclusive) from the read until the new
//! version is in place, so edits of one file take turns and none loses
//! another's change. The new version replaces the file whole
//! ([`crate::replace`]), keeping its mode and owner; a file with other
//! hard links, or whose owner cannot be kept, is written in place instead
//! (under the same lock).

use std::fs::{self, File, FileType, OpenOptions};
use std::io::{self, Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use crate::error::{EditError, EditResult};
use crate::replace::Staged;

/// How many times the file may be replaced under us (by another edit
/// that held the lock) before an edit gives up.
const TRIES: usize = 100;

/// A file open for an edit, locked until dropped.
#[derive(Debug)]
pub(crate) struct Opened {
    /// The file the name leads to, links resolved.
    target: PathBuf,
    /// The file, open for reading and locked.
    file: File,
}

/// Which file a descriptor is open on: its device and inode.
pub(crate) type FileId = (u64, u64);

/// The new version of a file, written beside it (or, for a file written
/// in place, still to be written), not yet in place.
pub(crate) struct Pending {
    opened: Opened,
    /// The file's name in errors.
    shown: PathBuf,
    how: Put,
}

/// How a new version goes in place.
enum Put {
    /// Renamed over the file.
    Replace(Staged),
    /// Written into the file (open for writing), under its lock.
    InPlace(File, String),
}

/// What [`open_unless_held`] found.
pub(crate) enum Opening {
    /// The file, locked, and its text.
    New(Opened, String),
    /// One of the files already held.
    Held(FileId),
}

/// Opens, locks and reads `path`, the kustomization file of `dir`.
pub(crate) fn open(path: &Path, dir: &Path) -> EditResult<(Opened, String)> {
    match open_unless_held(path, path, dir, &[])? {
        Opening::New(opened, text) => Ok((opened, text)),
        Opening::Held(_) => Err(EditError::new(format!(
            "{}: already open for this edit",
            path.display()
        ))),
    }
}

/// Opens, locks and reads `path` (`shown` in errors), a file that belongs
/// to the kustomization in `root`, unless it is one of `held` (already
/// open and locked by this edit: locking it again would wait for ever).
pub(crate) fn open_unless_held(
    path: &Path,
    shown: &Path,
    root: &Path,
    held: &[FileId],
) -> EditResult<Opening> {
    let failed = |e: io::Error| EditError::new(format!("{}: {e}", shown.display()));
    let target = target(path, shown, root)?;
    for _ in 0..TRIES {
        let file = open_nonblocking(&target, OpenOptions::new().read(true)).map_err(failed)?;
        let meta = file.metadata().map_err(failed)?;
        if !meta.is_file() {
            return Err(not_regular(shown, meta.file_type()));
        }
        let id = (meta.dev(), meta.ino());
        if held.contains(&id) {
            return Ok(Opening::Held(id));
        }
        lock(&file).map_err(failed)?;
        // Another edit may have replaced the file while we waited: then
        // the lock is on the old one, and the new one is opened again.
        match fs::symlink_metadata(&target) {
            Ok(now) if (now.dev(), now.ino()) == (meta.dev(), meta.ino()) => {
                let mut text = String::new();
                (&file).read_to_string(&mut text).map_err(failed)?;
                return Ok(Opening::New(Opened { target, file }, text));
            }
            Ok(_) => continue,
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(e) => return Err(failed(e)),
        }
    }
    Err(EditError::new(format!(
        "{}: replaced by another program {TRIES} times while waiting to edit it",
        shown.display()
    )))
}

/// The file `path` (`shown` in errors) leads to, links resolved, which
/// must be in or below `root`.
fn target(path: &Path, shown: &Path, root: &Path) -> EditResult<PathBuf> {
    let failed = |e: io::Error| EditError::new(format!("{}: {e}", shown.display()));
    let is_link = fs::symlink_metadata(path)
        .map_err(failed)?
        .file_type()
        .is_symlink();
    let target = fs::canonicalize(path).map_err(failed)?;
    let root = fs::canonicalize(root).map_err(failed)?;
    if target.starts_with(&root) {
        return Ok(target);
    }
    Err(EditError::new(if is_link {
        format!(
            "{}: a link to {} outside its folder; an edit does not write through it",
            shown.display(),
            target.display()
        )
    } else {
        format!(
            "{}: leads to {}, outside the folder of its kustomization ({}); an edit does not write there",
            shown.display(),
            target.display(),
            root.display()
        )
    }))
}

/// Opens `path` without following a link at its last component and
/// without waiting for a FIFO's other end or a device.
fn open_nonblocking(path: &Path, options: &mut OpenOptions) -> io::Result<File> {
    options
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
}

/// Takes the exclusive lock on `file`, waiting for it.
fn lock(file: &File) -> io::Result<()> {
    loop {
        // SAFETY: flock only reads the descriptor, which `file` keeps open.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } == 0 {
            return Ok(());
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// The error for a kustomization file that is not a regular file.
fn not_regular(path: &Path, kind: FileType) -> EditError {
    let what = if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_char_device() {
        "a character device"
    } else if kind.is_block_device() {
        "a block device"
    } else if kind.is_socket() {
        "a socket"
    } else {
        "not a file"
    };
    EditError::new(format!(
        "{}: not a regular file ({what}); an edit reads and writes only regular files",
        path.display()
    ))
}

impl Opened {
    /// Writes `text` as the file's new content; `shown` is the name the
    /// errors give it.
    pub(crate) fn write(&self, shown: &Path, text: &str) -> EditResult<()> {
        let how = self.stage(shown, text)?;
        self.put(shown, how)
    }

    /// Which file this is.
    pub(crate) fn id(&self) -> EditResult<FileId> {
        let meta = self
            .file
            .metadata()
            .map_err(|e| EditError::new(format!("{}: {e}", self.target.display())))?;
        Ok((meta.dev(), meta.ino()))
    }

    /// Prepares `text` as the file's new content (written beside it and
    /// flushed, for a file replaced whole); [`Pending::commit`] puts it in
    /// place.
    pub(crate) fn prepare(self, shown: &Path, text: &str) -> EditResult<Pending> {
        let how = self.stage(shown, text)?;
        Ok(Pending {
            opened: self,
            shown: shown.to_path_buf(),
            how,
        })
    }

    /// Checks that the file may still be written, and writes `text` beside
    /// it when it is to be replaced whole.
    fn stage(&self, shown: &Path, text: &str) -> EditResult<Put> {
        let failed = |e: io::Error| EditError::new(format!("{}: {e}", shown.display()));
        // Opening it for writing checks that the file may be written, as
        // an edit that writes in place would find.
        let writer =
            open_nonblocking(&self.target, OpenOptions::new().write(true)).map_err(failed)?;
        let meta = self.file.metadata().map_err(failed)?;
        let same = writer
            .metadata()
            .is_ok_and(|m| (m.dev(), m.ino()) == (meta.dev(), meta.ino()));
        if !same {
            return Err(failed(io::Error::other("replaced during the edit")));
        }
        if meta.nlink() == 1 {
            let mut staged = Staged::beside(&self.target).map_err(failed)?;
            if staged.take_mode_and_owner(&meta).map_err(failed)? {
                staged
                    .file()
                    .write_all(text.as_bytes())
                    .and_then(|()| staged.file().sync_all())
                    .map_err(failed)?;
                return Ok(Put::Replace(staged));
            }
        }
        Ok(Put::InPlace(writer, text.to_string()))
    }

    /// Puts a staged version in place.
    fn put(&self, shown: &Path, how: Put) -> EditResult<()> {
        let failed = |e: io::Error| EditError::new(format!("{}: {e}", shown.display()));
        match how {
            Put::Replace(staged) => staged.replace().map_err(failed),
            Put::InPlace(mut writer, text) => writer
                .set_len(0)
                .and_then(|()| writer.write_all(text.as_bytes()))
                .and_then(|()| writer.sync_all())
                .map_err(failed),
        }
    }
}

impl Pending {
    /// Puts the new version in place (and releases the file's lock).
    pub(crate) fn commit(self) -> EditResult<()> {
        self.opened.put(&self.shown, self.how)
    }
}

impl std::fmt::Debug for Pending {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pending")
            .field("file", &self.shown)
            .finish_non_exhaustive()
    }
}

/// Writes `text` as a new file at `path`; fails if anything is there (a
/// link to nothing included).
pub(crate) fn create(path: &Path, text: &str) -> EditResult<()> {
    let failed = |e: io::Error| EditError::new(format!("{}: {e}", path.display()));
    let mut staged = Staged::beside(path).map_err(failed)?;
    staged.file().write_all(text.as_bytes()).map_err(failed)?;
    staged.create().map_err(failed)
}

/// The text of `path` if it is a regular file (a link followed); `None`
/// for anything else (a FIFO or a device is not opened for long enough
/// to block).
pub(crate) fn read_regular(path: &Path) -> Option<String> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let mut text = String::new();
    (&file).read_to_string(&mut text).ok()?;
    Some(text)
}
