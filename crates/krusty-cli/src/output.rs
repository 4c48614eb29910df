//! Writing build results: one YAML stream, or one file per resource.

use std::io::Write;
use std::path::Path;

use krusty_resource::Resource;
use rayon::prelude::*;

/// Resources rendered as YAML documents, ready to be written as one
/// stream separated by `---`, as Kustomize prints it.
pub struct Stream(Vec<String>);

impl Stream {
    /// Renders every resource (in parallel), so nothing is written unless
    /// all of them render.
    pub fn render(resources: &[Resource]) -> Result<Stream, String> {
        render_each(resources).map(Stream)
    }

    /// Writes the stream, documents separated by `---`.
    pub fn write_to(&self, out: &mut impl Write) -> std::io::Result<()> {
        for (i, text) in self.0.iter().enumerate() {
            if i > 0 {
                out.write_all(b"---\n")?;
            }
            out.write_all(text.as_bytes())?;
        }
        out.flush()
    }
}

/// Each resource as its own YAML document, in order (rendered in parallel).
fn render_each(resources: &[Resource]) -> Result<Vec<String>, String> {
    resources
        .par_iter()
        .map(|r| {
            let mut text = String::with_capacity(1024);
            krusty_yaml::emit_document(&r.node, &mut text)
                .map_err(|e| format!("cannot print resource {}: {e}", r.id()))?;
            Ok(text)
        })
        .collect()
}

/// Writes a stream to stdout.
pub fn write_stdout(stream: &Stream) -> Result<(), String> {
    let mut stdout = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    stream
        .write_to(&mut stdout)
        .map_err(|e| format!("writing output: {e}"))
}

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

/// The file name Kustomize gives a resource in directory output:
/// `[namespace_]group_version_kind_name.yaml`, lower-cased, where namespaced
/// resources without a namespace get the prefix `Default_`.
pub fn file_name(r: &Resource) -> String {
    let id = r.id();
    let mut parts = Vec::new();
    if !id.gvk.group.is_empty() {
        parts.push(id.gvk.group.to_lowercase());
    }
    parts.push(id.gvk.version.to_lowercase());
    parts.push(id.gvk.kind.to_lowercase());
    parts.push(id.name.to_lowercase());
    let base = parts.join("_");
    if id.gvk.is_cluster_scoped() {
        format!("{base}.yaml")
    } else if id.namespace.is_empty() {
        format!("Default_{base}.yaml")
    } else {
        format!("{}_{base}.yaml", id.namespace.to_lowercase())
    }
}

/// Writes one file per resource into an existing directory. Everything is
/// rendered before the first file is written.
pub fn write_dir(dir: &Path, resources: &[Resource]) -> Result<(), String> {
    let texts = render_each(resources)?;
    let files: Vec<(String, String)> = resources.iter().map(file_name).zip(texts).collect();
    for (name, text) in files {
        write_file_atomically(&dir.join(name), |f| f.write_all(text.as_bytes()))?;
    }
    Ok(())
}
