//! Writing build results: one YAML stream, or one file per resource.

use std::io::Write;
use std::path::Path;

use krusty_resource::Resource;
use rayon::prelude::*;

/// Resources rendered as one YAML stream, documents separated by `---` as
/// Kustomize prints them; held as consecutive pieces, each rendered on its
/// own thread.
pub struct Stream(Vec<String>);

/// Documents rendered together into one piece of a [`Stream`]: enough to
/// spread the work over the cores, few enough that each piece's buffer
/// grows a handful of times at most.
const DOCUMENTS_PER_PIECE: usize = 32;

impl Stream {
    /// Renders every resource (in parallel), so nothing is written unless
    /// all of them render.
    pub fn render(resources: &[Resource]) -> Result<Stream, String> {
        resources
            .par_chunks(DOCUMENTS_PER_PIECE)
            .enumerate()
            .map(|(piece, chunk)| {
                let mut text = String::with_capacity(chunk.len() * 2048);
                for (i, r) in chunk.iter().enumerate() {
                    if piece > 0 || i > 0 {
                        text.push_str("---\n");
                    }
                    render_into(r, &mut text)?;
                }
                Ok(text)
            })
            .collect::<Result<_, String>>()
            .map(Stream)
    }

    /// The stream's length in bytes.
    pub fn len(&self) -> usize {
        self.0.iter().map(String::len).sum()
    }

    /// Writes the stream.
    pub fn write_to(&self, out: &mut impl Write) -> std::io::Result<()> {
        for piece in &self.0 {
            out.write_all(piece.as_bytes())?;
        }
        out.flush()
    }
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

/// Writes a file by writing a temporary file beside it and renaming it into
/// place, so a failure never leaves a half-written file.
pub fn write_file_atomically(
    path: &Path,
    write: impl FnOnce(&mut std::fs::File) -> std::io::Result<()>,
) -> Result<(), String> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.krusty-tmp-{}", std::process::id()));
    let result = std::fs::File::create(&tmp)
        .and_then(|mut f| write(&mut f).and_then(|()| f.sync_all()))
        .and_then(|()| std::fs::rename(&tmp, path));
    result.map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        format!("writing {}: {e}", path.display())
    })
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

/// Writes one file per resource into an existing directory. Everything is
/// rendered before the first file is written.
pub fn write_dir(dir: &Path, resources: &[Resource]) -> Result<(), String> {
    let texts = render_each(resources)?;
    let namespaces: std::collections::HashSet<&str> =
        resources.iter().filter_map(output_namespace).collect();
    let prefixed = namespaces.len() > 1;
    let files: Vec<(String, String)> = resources
        .iter()
        .map(|r| file_name(r, prefixed))
        .zip(texts)
        .collect();
    for (name, text) in files {
        write_file_atomically(&dir.join(name), |f| f.write_all(text.as_bytes()))?;
    }
    Ok(())
}
