//! `create`: a new kustomization file in a directory, from flags.

use std::path::{Path, PathBuf};

use krusty_schema::FILE_NAMES;

use crate::checks::Checks;
use krusty_yaml::Node;

use crate::error::{EditError, EditResult};
use crate::file::KustomizationFile;
use crate::metadata::{parse_pairs, Kind};
use crate::node::put_sorted;
use crate::paths::expand_checked;

/// `create`'s flags.
#[derive(Debug, Clone, Default)]
pub struct CreateArgs {
    /// `--resources`: comma-separated paths or patterns.
    pub resources: String,
    /// `--namespace`.
    pub namespace: String,
    /// `--nameprefix`.
    pub name_prefix: String,
    /// `--namesuffix`.
    pub name_suffix: String,
    /// `--labels`: `k:v,k:v`.
    pub labels: String,
    /// `--annotations`: `k:v,k:v`.
    pub annotations: String,
    /// `--autodetect`: add the resource files found in the directory.
    pub autodetect: bool,
    /// `--recursive`: autodetect in subdirectories too (a subdirectory
    /// with a kustomization file is added as a whole).
    pub recursive: bool,
}

/// Writes `dir/kustomization.yaml` from `args`; fails if `dir` has a
/// kustomization file already.
pub fn create(dir: &Path, args: &CreateArgs, checks: &dyn Checks) -> EditResult<PathBuf> {
    let mut resources = Vec::new();
    if !args.resources.is_empty() {
        let patterns: Vec<String> = args.resources.split(',').map(str::to_string).collect();
        resources = expand_checked(dir, &patterns, true, checks)?;
    }
    // A link to nothing counts: it is never written through.
    if FILE_NAMES
        .iter()
        .any(|name| std::fs::symlink_metadata(dir.join(name)).is_ok())
    {
        return Err(EditError::new("kustomization file already exists"));
    }
    if args.autodetect {
        for found in detect(dir, Path::new(""), args.recursive, checks)? {
            if !resources.contains(&found) {
                resources.push(found);
            }
        }
    }
    let annotations = to_map(&args.annotations, Kind::Annotation)?;
    let labels = to_map(&args.labels, Kind::Label)?;
    let path = dir.join(FILE_NAMES[0]);
    let mut k = KustomizationFile::new_at(path.clone());
    k.complete_type_meta();
    k.set_or_remove(
        "resources",
        Node::seq_of(resources.iter().map(|r| Node::string(r.as_str()))),
    );
    k.set_or_remove("namePrefix", Node::string(args.name_prefix.as_str()));
    k.set_or_remove("nameSuffix", Node::string(args.name_suffix.as_str()));
    k.set_or_remove("namespace", Node::string(args.namespace.as_str()));
    k.set_or_remove("commonLabels", labels);
    k.set_or_remove("commonAnnotations", annotations);
    k.save()?;
    Ok(path)
}

/// `k:v,k:v` as a mapping sorted by key in go-yaml's order (as Kustomize
/// writes it).
fn to_map(text: &str, kind: Kind) -> EditResult<Node> {
    let mut map = Node::map();
    if text.is_empty() {
        return Ok(map);
    }
    let args: Vec<String> = text.split(',').map(str::to_string).collect();
    for (key, value) in parse_pairs(&args, kind)? {
        put_sorted(
            &mut map,
            Node::string(key.as_str()),
            Node::string(value.as_str()),
        );
    }
    Ok(map)
}

/// The resource files of `dir/rel` in name order, and with `recursive`
/// those of its subdirectories (a subdirectory holding a kustomization file
/// counts as one entry and is not entered).
fn detect(dir: &Path, rel: &Path, recursive: bool, checks: &dyn Checks) -> EditResult<Vec<String>> {
    let full = dir.join(rel);
    let mut names: Vec<String> = std::fs::read_dir(&full)
        .map_err(|e| EditError::new(format!("{}: {e}", full.display())))?
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().into_string().ok())
        .collect();
    names.sort();
    let mut out = Vec::new();
    for name in names {
        let path = rel.join(&name);
        let shown = path.to_string_lossy().into_owned();
        let abs = dir.join(&path);
        if abs.is_dir() {
            if !recursive {
                continue;
            }
            if FILE_NAMES.iter().any(|f| abs.join(f).exists()) {
                out.push(shown);
            } else {
                out.extend(detect(dir, &path, recursive, checks)?);
            }
        } else if is_resource_file(&abs, checks) {
            out.push(shown);
        }
    }
    Ok(out)
}

/// The file is a regular file (a FIFO or device is passed over) that
/// reads as Kubernetes resources.
fn is_resource_file(path: &Path, checks: &dyn Checks) -> bool {
    crate::open::read_regular(path).is_some_and(|text| checks.reads_as_resources(&text, path))
}
