//! Writing build results: one YAML stream, or one file per resource.

use std::io::Write;
use std::path::Path;

use krusty_resource::Resource;

/// Renders resources as one stream separated by `---`, as Kustomize prints it.
pub fn render_stream(resources: &[Resource]) -> Result<String, String> {
    let mut out = String::with_capacity(resources.len() * 512);
    for (i, r) in resources.iter().enumerate() {
        if i > 0 {
            out.push_str("---\n");
        }
        krusty_yaml::emit_document(&r.node, &mut out)
            .map_err(|e| format!("cannot print resource {}: {e}", r.id()))?;
    }
    Ok(out)
}

/// Writes to stdout in one piece.
pub fn write_stdout(text: &str) -> Result<(), String> {
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
        .map_err(|e| format!("writing output: {e}"))
}

/// Writes a file by writing a temporary file beside it and renaming it into
/// place, so a failure never leaves a half-written file.
pub fn write_file_atomically(path: &Path, bytes: &[u8]) -> Result<(), String> {
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
        .and_then(|mut f| f.write_all(bytes).and_then(|()| f.sync_all()))
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
    let mut files = Vec::with_capacity(resources.len());
    for r in resources {
        let mut text = String::new();
        krusty_yaml::emit_document(&r.node, &mut text)
            .map_err(|e| format!("cannot print resource {}: {e}", r.id()))?;
        files.push((file_name(r), text));
    }
    for (name, text) in files {
        write_file_atomically(&dir.join(name), text.as_bytes())?;
    }
    Ok(())
}
