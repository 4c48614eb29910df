//! Writing build results: one YAML stream, or one file per resource.

use std::fs::{self, File, Metadata, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use krusty_api::interrupt;
use krusty_edit::replace::{keep_mode_and_owner, sync_dir, Staged};

use krusty_resource::Resource;
use rayon::prelude::*;

pub use krusty_api::Stream;

/// Renders every resource (in parallel) as one stream, so nothing is
/// written unless all of them render.
pub fn render(resources: &[Resource]) -> Result<Stream, String> {
    Stream::render(resources).map_err(|e| e.to_string())
}

/// Appends a resource as a YAML document to `text`.
fn render_into(r: &Resource, text: &mut String) -> Result<(), String> {
    krusty_yaml::emit_document(&r.node, text)
        .map_err(|e| format!("cannot print resource {}: {e}", r.id()))
}

/// Each resource as its own YAML document, in order (rendered in parallel).
fn render_each(resources: &[Resource]) -> Result<Vec<String>, String> {
    resources
        .par_iter()
        .map(|r| {
            let mut text = String::with_capacity(2048);
            render_into(r, &mut text)?;
            Ok(text)
        })
        .collect()
}

/// Writes a stream to stdout (its pieces are large: no buffer between).
pub fn write_stdout(stream: &Stream) -> Result<(), String> {
    widen_stdout_pipe(stream.len());
    stream
        .write_to(&mut std::io::stdout().lock())
        .map_err(|e| format!("writing output: {e}"))
}

/// Writes `text` to stdout.
pub fn write_stdout_text(text: &str) -> Result<(), String> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|e| format!("writing output: {e}"))
}

/// When stdout is a pipe, asks for a buffer that holds `len` bytes (up to
/// 1 MiB, what any user may ask for): a large output then crosses in a few
/// hand-overs to the reader instead of one per 64 KiB. Nothing changes if
/// the kernel refuses.
#[cfg(target_os = "linux")]
fn widen_stdout_pipe(len: usize) {
    use std::os::fd::AsRawFd;
    const MAX: usize = 1 << 20;
    let fd = std::io::stdout().as_raw_fd();
    let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
    // SAFETY: `fstat` writes a `stat` into the buffer it is given and
    // reads nothing else; F_SETPIPE_SZ only resizes the pipe's buffer.
    unsafe {
        if libc::fstat(fd, st.as_mut_ptr()) != 0 {
            return;
        }
        if st.assume_init().st_mode & libc::S_IFMT != libc::S_IFIFO {
            return;
        }
        let wanted = len.clamp(1, MAX) as libc::c_int;
        libc::fcntl(fd, libc::F_SETPIPE_SZ, wanted);
    }
}

#[cfg(not(target_os = "linux"))]
fn widen_stdout_pipe(_len: usize) {}

/// How a path is written, from what is at it now.
enum Destination {
    /// Nothing: a new file, made whole beside it and renamed into place,
    /// its mode from the umask.
    New,
    /// A regular file with no other hard link: replaced whole the same
    /// way, keeping its mode and owner.
    Replace(Metadata),
    /// Anything else (a device, a FIFO, a socket, a file with other hard
    /// links, a link to nothing yet): opened and written through, as
    /// Kustomize writes its output.
    Through,
}

/// What is at `path`, and the path to write: a link to a regular file is
/// followed, so the file it names is replaced and the link stays.
fn destination(path: &Path) -> io::Result<(PathBuf, Destination)> {
    let here = match fs::symlink_metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Ok((path.to_path_buf(), Destination::New))
        }
        Err(e) => return Err(e),
        Ok(m) => m,
    };
    let (target, meta) = if here.file_type().is_symlink() {
        match fs::metadata(path) {
            Ok(m) if m.is_file() => (fs::canonicalize(path)?, m),
            _ => return Ok((path.to_path_buf(), Destination::Through)),
        }
    } else {
        (path.to_path_buf(), here)
    };
    if meta.is_file() && meta.nlink() == 1 {
        Ok((target, Destination::Replace(meta)))
    } else {
        Ok((path.to_path_buf(), Destination::Through))
    }
}

/// Writes `path` with what `write` puts in a file, the way its
/// [`Destination`] asks: a regular file is replaced whole or not at all
/// ([`Staged`]: a temporary file with an unpredictable name, created
/// exclusively beside it, then renamed over it; removed on failure or
/// interrupt).
pub fn write_file(path: &Path, write: impl Fn(&mut File) -> io::Result<()>) -> Result<(), String> {
    let failed = |e: io::Error| format!("writing {}: {e}", path.display());
    let (target, destination) = destination(path).map_err(failed)?;
    let old = match destination {
        Destination::Through => return write_through(&target, &write).map_err(failed),
        Destination::New => None,
        Destination::Replace(meta) => Some(meta),
    };
    let mut staged = Staged::beside(&target).map_err(failed)?;
    if let Some(old) = &old {
        if !staged.take_mode_and_owner(old).map_err(failed)? {
            drop(staged);
            return write_through(&target, &write).map_err(failed);
        }
    }
    write(staged.file()).map_err(failed)?;
    staged.replace().map_err(failed)
}

/// Opens `path` for writing (creating it, emptying it) and writes it.
fn write_through(path: &Path, write: &impl Fn(&mut File) -> io::Result<()>) -> io::Result<()> {
    let mut file = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)?;
    write(&mut file)
}

/// Flushes every file written so far to the disk that holds `dir`: one
/// call for a whole folder of new files, not one per file.
#[cfg(target_os = "linux")]
fn sync_filesystem(dir: &Path) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let d = File::open(dir)?;
    // SAFETY: `syncfs` only reads the descriptor, which `d` keeps open.
    if unsafe { libc::syncfs(d.as_raw_fd()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(not(target_os = "linux"))]
fn sync_filesystem(_dir: &Path) -> io::Result<()> {
    // SAFETY: `sync` takes no arguments and cannot fail.
    unsafe { libc::sync() };
    Ok(())
}

/// The namespace a resource's file is grouped under in directory output:
/// none for cluster-scoped kinds; `default` for a namespaced resource
/// without one.
fn output_namespace(r: &Resource) -> Option<&str> {
    if r.gvk().is_cluster_scoped() {
        return None;
    }
    Some(match r.namespace() {
        "" => "default",
        ns => ns,
    })
}

/// The file name Kustomize gives a resource in directory output:
/// `group_version_kind_name.yaml` lower-cased (no group for the core
/// group), with `namespace_` in front of namespaced resources when they
/// span more than one namespace (`prefixed`).
pub fn file_name(r: &Resource, prefixed: bool) -> String {
    let id = r.id();
    let mut parts: Vec<&str> = Vec::new();
    if prefixed {
        if let Some(ns) = output_namespace(r) {
            parts.push(ns);
        }
    }
    if !id.gvk.group.is_empty() {
        parts.push(&id.gvk.group);
    }
    parts.extend([&*id.gvk.version, &*id.gvk.kind, &*id.name]);
    format!("{}.yaml", parts.join("_").to_lowercase())
}

/// Writes one file per resource into an existing directory, all or
/// nothing ([`write_all_or_nothing`]; a link at a file's name is
/// followed, as Kustomize follows it). Everything is rendered first.
/// Other files in the directory are left alone, as Kustomize leaves them.
pub fn write_dir(dir: &Path, resources: &[Resource]) -> Result<(), String> {
    let texts = render_each(resources)?;
    let namespaces: std::collections::HashSet<&str> =
        resources.iter().filter_map(output_namespace).collect();
    let prefixed = namespaces.len() > 1;
    let names: Vec<String> = resources.iter().map(|r| file_name(r, prefixed)).collect();
    let files: Vec<(&str, &[String])> = names
        .iter()
        .map(String::as_str)
        .zip(texts.iter().map(std::slice::from_ref))
        .collect();
    write_all_or_nothing(dir, &files, Links::Follow)
}

/// Writes one stream per target into `dir`, all or nothing
/// ([`write_all_or_nothing`]; a link at a target's name is replaced,
/// never written through: the names are krusty's own).
pub fn write_targets(dir: &Path, streams: &[(String, Stream)]) -> Result<(), String> {
    for (name, _) in streams {
        let path = dir.join(name);
        if fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir()) {
            return Err(format!("writing {}: it is a folder", path.display()));
        }
    }
    let files: Vec<(&str, &[String])> = streams
        .iter()
        .map(|(name, stream)| (name.as_str(), stream.pieces()))
        .collect();
    write_all_or_nothing(dir, &files, Links::Replace)
}

/// What a link at a file's name gets in [`write_all_or_nothing`].
#[derive(Clone, Copy, PartialEq, Eq)]
enum Links {
    /// It is followed: what it names is written through.
    Follow,
    /// It is replaced by the new file.
    Replace,
}

/// Writes `files` (each a name and its text in pieces) into `dir`, all
/// or nothing. The files are written into a fresh private folder inside
/// it (an unpredictable name, mode 0700), a file that replaces another
/// with that file's mode and owner, flushed to disk with one call, then
/// renamed into place in one step that an interrupt waits for. What must
/// be written in place (devices, FIFOs, files with other hard links or
/// whose owner cannot be kept, and with [`Links::Follow`] what links
/// name) is opened before anything is moved and written last, as
/// [`write_file`] writes it. On failure or interrupt the private folder
/// is removed and nothing else changed.
fn write_all_or_nothing(
    dir: &Path,
    files: &[(&str, &[String])],
    links: Links,
) -> Result<(), String> {
    let failed = |path: &Path, e: io::Error| format!("writing {}: {e}", path.display());
    let staging = tempfile::Builder::new()
        .prefix(".krusty-")
        .tempdir_in(dir)
        .map_err(|e| failed(dir, e))?;
    let staging_path = staging.path().to_path_buf();
    let _cleanup = interrupt::on_interrupt(move || {
        let _ = fs::remove_dir_all(&staging_path);
    });

    let mut staged: Vec<(PathBuf, PathBuf)> = Vec::new();
    let mut staged_names = std::collections::HashSet::new();
    let mut through: Vec<(PathBuf, &[String])> = Vec::new();
    for &(name, pieces) in files {
        let path = dir.join(name);
        let is_link = || fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink());
        let (target, destination) = if links == Links::Replace && is_link() {
            (path.clone(), Destination::New)
        } else {
            destination(&path).map_err(|e| failed(&path, e))?
        };
        let old = match destination {
            // A link is written through: what it names may be anywhere.
            _ if target != path => {
                through.push((path, pieces));
                continue;
            }
            Destination::Through => {
                through.push((target, pieces));
                continue;
            }
            Destination::New => None,
            Destination::Replace(meta) => Some(meta),
        };
        let staged_path = staging.path().join(name);
        let mut file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o666)
            .open(&staged_path)
            .map_err(|e| failed(&path, e))?;
        if let Some(old) = &old {
            if !keep_mode_and_owner(&file, old).map_err(|e| failed(&path, e))? {
                drop(file);
                let _ = fs::remove_file(&staged_path);
                through.push((target, pieces));
                continue;
            }
        }
        write_pieces(&mut file, pieces).map_err(|e| failed(&path, e))?;
        if staged_names.insert(name) {
            staged.push((staged_path, target));
        }
    }
    let mut opened = Vec::with_capacity(through.len());
    for (path, pieces) in through {
        let file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|e| failed(&path, e))?;
        opened.push((path, file, pieces));
    }
    sync_filesystem(staging.path()).map_err(|e| failed(dir, e))?;

    let _whole = interrupt::critical();
    for (from, to) in &staged {
        fs::rename(from, to).map_err(|e| failed(to, e))?;
    }
    for (path, mut file, pieces) in opened {
        let regular = file.metadata().map(|m| m.is_file()).unwrap_or(false);
        if regular {
            file.set_len(0).map_err(|e| failed(&path, e))?;
        }
        write_pieces(&mut file, pieces).map_err(|e| failed(&path, e))?;
    }
    sync_dir(dir);
    Ok(())
}

/// Writes a file's text, given in pieces.
fn write_pieces(file: &mut File, pieces: &[String]) -> io::Result<()> {
    pieces.iter().try_for_each(|p| file.write_all(p.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh folder for one test.
    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("krusty-output-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).expect("scratch dir");
        dir
    }

    #[test]
    fn a_link_planted_where_a_temporary_file_could_be_receives_nothing() {
        let dir = scratch("planted");
        let stolen = dir.join("stolen");
        fs::write(&stolen, "").expect("write");
        // Links at the names a predictable temporary file would have (the
        // output's name with this process's id), pointing at a file the
        // planter can read.
        for name in [
            format!(".out.yaml.krusty-tmp-{}", std::process::id()),
            format!(".out.yaml.{}.krusty-tmp", std::process::id()),
            ".out.yaml.krusty-tmp".to_string(),
        ] {
            std::os::unix::fs::symlink(&stolen, dir.join(name)).expect("plant");
        }
        let out = dir.join("out.yaml");
        write_file(&out, |f| f.write_all(b"kind: Secret\n")).expect("written");
        assert_eq!(fs::read(&out).expect("read"), b"kind: Secret\n");
        assert!(fs::symlink_metadata(&out).expect("stat").is_file());
        assert_eq!(fs::read(&stolen).expect("read"), b"", "nothing leaked");
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_failed_write_leaves_the_old_file_and_no_temporary_file() {
        let dir = scratch("failed");
        let out = dir.join("out.yaml");
        fs::write(&out, "old\n").expect("write");
        let err = write_file(&out, |f| {
            f.write_all(b"half")?;
            Err(io::Error::other("disk full"))
        })
        .expect_err("fails");
        assert!(
            err.contains("out.yaml") && err.contains("disk full"),
            "{err}"
        );
        assert_eq!(fs::read_to_string(&out).expect("read"), "old\n");
        assert_eq!(fs::read_dir(&dir).expect("read dir").count(), 1);
        let _ = fs::remove_dir_all(&dir);
    }
}
