//! Replacing a file whole: the one way krusty writes a file over another
//! (a kustomization file an edit changes, `krusty build -o FILE`).
//!
//! The new content goes to a temporary file beside the old one, with an
//! unpredictable name, created with `O_CREAT | O_EXCL` (which does not
//! follow a link planted at that name). It gets the old file's mode and
//! owner, is flushed to disk, then renamed over the old file, so a reader
//! sees the old file or the new one, never a part. A failed write, or an
//! interrupt (SIGINT, SIGTERM, SIGHUP), removes the temporary file and
//! leaves the old one as it was.

use std::fs::{self, File, Metadata};
use std::io;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use krusty_process::interrupt;
use tempfile::NamedTempFile;

/// The new version of a file, written beside it and not yet in place.
/// Dropped without [`replace`](Staged::replace) or
/// [`create`](Staged::create), it is removed.
pub struct Staged {
    temp: NamedTempFile,
    target: PathBuf,
    _cleanup: interrupt::Registration,
}

impl Staged {
    /// A new, empty temporary file in `target`'s folder, named after it
    /// (`.NAME.RANDOM.krusty-tmp`), its mode from the umask.
    pub fn beside(target: &Path) -> io::Result<Staged> {
        let name = target.file_name().unwrap_or_default().to_string_lossy();
        let temp = tempfile::Builder::new()
            .prefix(&format!(".{name}."))
            .suffix(".krusty-tmp")
            .permissions(fs::Permissions::from_mode(0o666))
            .tempfile_in(folder(target))?;
        let temp_path = temp.path().to_path_buf();
        let cleanup = interrupt::on_interrupt(move || {
            let _ = fs::remove_file(&temp_path);
        });
        Ok(Staged {
            temp,
            target: target.to_path_buf(),
            _cleanup: cleanup,
        })
    }

    /// The temporary file, to write the new content into.
    pub fn file(&mut self) -> &mut File {
        self.temp.as_file_mut()
    }

    /// Gives the new file the mode and owner of `old`, the file it
    /// replaces; `false` when the owner cannot be kept (a user writing
    /// someone else's file), and the file must be written in place.
    pub fn take_mode_and_owner(&self, old: &Metadata) -> io::Result<bool> {
        keep_mode_and_owner(self.temp.as_file(), old)
    }

    /// Flushes the new file to disk and renames it over the target
    /// (replacing whatever is at that name; a link there is replaced,
    /// not followed).
    pub fn replace(self) -> io::Result<()> {
        self.temp.as_file().sync_all()?;
        let dir = folder(&self.target).to_path_buf();
        self.temp.persist(&self.target).map_err(|e| e.error)?;
        sync_dir(&dir);
        Ok(())
    }

    /// Flushes the new file to disk and moves it to the target's name
    /// only if nothing is there (not even a link to nothing): an
    /// `AlreadyExists` error otherwise.
    pub fn create(self) -> io::Result<()> {
        self.temp.as_file().sync_all()?;
        let dir = folder(&self.target).to_path_buf();
        self.temp
            .persist_noclobber(&self.target)
            .map_err(|e| e.error)?;
        sync_dir(&dir);
        Ok(())
    }
}

/// The folder a file is in (`.` for a bare name).
fn folder(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// Gives `file` the mode and owner of `old`. `false` when the owner
/// cannot be kept (a user writing someone else's file).
pub fn keep_mode_and_owner(file: &File, old: &Metadata) -> io::Result<bool> {
    let new = file.metadata()?;
    if (new.uid(), new.gid()) != (old.uid(), old.gid())
        && std::os::unix::fs::fchown(file, Some(old.uid()), Some(old.gid())).is_err()
    {
        return Ok(false);
    }
    file.set_permissions(fs::Permissions::from_mode(old.mode() & 0o7777))?;
    Ok(true)
}

/// Makes the renames in a folder durable; a file system that cannot
/// sync folders loses nothing by it.
pub fn sync_dir(dir: &Path) {
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn a_dropped_file_leaves_nothing_and_the_old_file_whole() {
        let dir = tempfile::tempdir().expect("tempdir");
        let target = dir.path().join("k.yaml");
        fs::write(&target, "old\n").expect("write");
        let mut staged = Staged::beside(&target).expect("staged");
        staged.file().write_all(b"half").expect("write");
        drop(staged);
        assert_eq!(fs::read_to_string(&target).expect("read"), "old\n");
        assert_eq!(fs::read_dir(dir.path()).expect("read dir").count(), 1);
    }

    #[test]
    fn create_does_not_replace_what_is_there() {
        let dir = tempfile::tempdir().expect("tempdir");
        let target = dir.path().join("k.yaml");
        std::os::unix::fs::symlink("elsewhere.yaml", &target).expect("symlink");
        let mut staged = Staged::beside(&target).expect("staged");
        staged.file().write_all(b"new\n").expect("write");
        let err = staged.create().expect_err("something is there");
        assert_eq!(err.kind(), io::ErrorKind::AlreadyExists);
        assert!(!dir.path().join("elsewhere.yaml").exists());
        assert_eq!(fs::read_dir(dir.path()).expect("read dir").count(), 1);
    }

    #[test]
    fn a_replacement_keeps_the_mode() {
        let dir = tempfile::tempdir().expect("tempdir");
        let target = dir.path().join("k.yaml");
        fs::write(&target, "old\n").expect("write");
        fs::set_permissions(&target, fs::Permissions::from_mode(0o640)).expect("chmod");
        let old = fs::metadata(&target).expect("stat");
        let mut staged = Staged::beside(&target).expect("staged");
        assert!(staged.take_mode_and_owner(&old).expect("mode"));
        staged.file().write_all(b"new\n").expect("write");
        staged.replace().expect("replaced");
        assert_eq!(fs::read_to_string(&target).expect("read"), "new\n");
        let mode = fs::metadata(&target).expect("stat").mode() & 0o7777;
        assert_eq!(mode, 0o640);
    }
}
