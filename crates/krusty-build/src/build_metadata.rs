//! `buildMetadata`: origin annotations, transformation annotations and the
//! managed-by label, written onto the final resources.

use std::path::{Component, Path, PathBuf};

use krusty_ops::KustomizeVersion;
use krusty_resource::{BuildMeta, Origin, RemoteRoot, Resource};
use krusty_yaml::Node;

pub use krusty_runtime::records::{ORIGIN_ANNOTATION, TRANSFORMATIONS_ANNOTATION};
/// The label naming the tool that built a resource.
pub const MANAGED_BY_LABEL: &str = "app.kubernetes.io/managed-by";

/// The label's value: Kustomize v5.5.0's release builds name a
/// development version there, v5.8.1's their own release.
pub fn managed_by_value(version: KustomizeVersion) -> String {
    match version {
        KustomizeVersion::V5_5_0 => "kustomize-(devel)".to_string(),
        later => format!("kustomize-{later}"),
    }
}

/// Which records to write.
#[derive(Debug, Clone, Copy, Default)]
pub struct Records {
    /// `originAnnotations`.
    pub origins: bool,
    /// `transformerAnnotations`.
    pub transformations: bool,
    /// `managedByLabel` (or `--enable-managedby-label`).
    pub managed_by: bool,
}

impl Records {
    /// Reads the `buildMetadata` list. Options it does not know are
    /// ignored, as Kustomize ignores them.
    pub fn from_options(options: &[String]) -> Records {
        let mut r = Records::default();
        for o in options {
            match o.as_str() {
                "originAnnotations" => r.origins = true,
                "transformerAnnotations" => r.transformations = true,
                "managedByLabel" => r.managed_by = true,
                _ => {}
            }
        }
        r
    }

    /// The origin and transformation annotations `meta`'s records give
    /// (those these options record), paths shown relative to `root`.
    pub fn annotations(&self, meta: &BuildMeta, root: &Path) -> Vec<(&'static str, String)> {
        let mut out = Vec::new();
        if let Some(text) = self.origin_annotation(meta, root) {
            out.push((ORIGIN_ANNOTATION, text));
        }
        if self.transformations && !meta.transformations.is_empty() {
            let text: String = meta
                .transformations
                .iter()
                .map(|t| origin_text(t, root, "  ").replacen("  ", "- ", 1))
                .collect();
            out.push((TRANSFORMATIONS_ANNOTATION, text));
        }
        out
    }

    /// The origin annotation `meta`'s origin gives, when origins are
    /// recorded.
    pub fn origin_annotation(&self, meta: &BuildMeta, root: &Path) -> Option<String> {
        let origin = meta.origin.as_deref().filter(|_| self.origins)?;
        Some(origin_text(origin, root, ""))
    }

    /// Writes the records onto `resources` as release `version` writes
    /// them; paths are shown relative to `root`, or for what remote bases
    /// hold, as Kustomize shows them.
    pub fn apply(&self, resources: &mut [Resource], root: &Path, version: KustomizeVersion) {
        for r in resources {
            for (key, text) in self.annotations(&r.meta, root) {
                set_in(&mut r.node, "annotations", key, text);
            }
            if self.managed_by {
                set_in(
                    &mut r.node,
                    "labels",
                    MANAGED_BY_LABEL,
                    managed_by_value(version),
                );
            }
        }
    }
}

fn set_in(node: &mut Node, field: &str, key: &str, value: String) {
    if let Some(map) = node.entry_map("metadata").and_then(|m| m.entry_map(field)) {
        map.set(key, Node::string(value));
    }
}

/// A relative path with `.` and `name/..` removed, as Go's
/// `filepath.Join` leaves it.
fn clean_relative(path: &Path) -> String {
    let mut out: Vec<&std::ffi::OsStr> = Vec::new();
    for c in path.components() {
        match c {
            Component::ParentDir if out.last().is_some_and(|l| *l != "..") => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out.iter()
        .map(|c| c.to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// The `repo:` and `ref:` lines of a record from a remote base.
fn remote_lines(remote: Option<&RemoteRoot>, lines: &mut Vec<String>) {
    if let Some(r) = remote {
        lines.push(format!("repo: {}", scalar(&r.repo)));
        if !r.reference.is_empty() {
            lines.push(format!("ref: {}", scalar(&r.reference)));
        }
    }
}

/// How a path is recorded: relative to the build's `root`, or for what a
/// remote base holds, from the folder its reference names (Kustomize
/// joins the reference's path and the relative one). A URL read as a
/// file is recorded as written.
fn shown(path: &Path, root: &Path, remote: Option<&RemoteRoot>) -> String {
    match remote {
        _ if path.is_relative() => path.to_string_lossy().into_owned(),
        None => relative(root, path),
        Some(r) => clean_relative(&r.prefix.join(relative(&r.root, path))),
    }
}

/// The YAML text of one origin record, each line prefixed with `indent`.
fn origin_text(origin: &Origin, root: &Path, indent: &str) -> String {
    let remote = match origin {
        Origin::Remote { remote, .. } => Some(remote.as_ref()),
        _ => None,
    };
    let mut lines: Vec<String> = Vec::new();
    match origin.local() {
        Origin::File(path) => {
            lines.push(format!("path: {}", scalar(&shown(path, root, remote))));
            remote_lines(remote, &mut lines);
        }
        Origin::Configured {
            configured_in,
            api_version,
            kind,
            name,
            namespace,
        } => {
            remote_lines(remote, &mut lines);
            lines.push(format!(
                "configuredIn: {}",
                scalar(&shown(configured_in, root, remote))
            ));
            lines.push("configuredBy:".into());
            lines.push(format!("  apiVersion: {}", scalar(api_version)));
            lines.push(format!("  kind: {}", scalar(kind)));
            if !name.is_empty() {
                lines.push(format!("  name: {}", scalar(name)));
            }
            if !namespace.is_empty() {
                lines.push(format!("  namespace: {}", scalar(namespace)));
            }
        }
        Origin::Remote { .. } => {}
    }
    lines.iter().map(|l| format!("{indent}{l}\n")).collect()
}

/// A YAML scalar, double-quoted when plain text would read differently.
fn scalar(s: &str) -> String {
    if krusty_yaml::resolve::needs_quotes(s) || s.contains(": ") || s.contains(" #") {
        let mut out = String::new();
        krusty_yaml::write_go_json_string(s, &mut out);
        out
    } else {
        s.to_string()
    }
}

/// `to` relative to the directory `from`, with `/` separators.
fn relative(from: &Path, to: &Path) -> String {
    let from: Vec<Component> = from.components().collect();
    let to_parts: Vec<Component> = to.components().collect();
    let common = from
        .iter()
        .zip(&to_parts)
        .take_while(|(a, b)| a == b)
        .count();
    let mut out = PathBuf::new();
    for _ in common..from.len() {
        out.push("..");
    }
    for c in &to_parts[common..] {
        out.push(c.as_os_str());
    }
    out.to_string_lossy().replace('\\', "/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths() {
        assert_eq!(
            relative(Path::new("/a/prod"), Path::new("/a/base/x.yaml")),
            "../base/x.yaml"
        );
        assert_eq!(relative(Path::new("/a"), Path::new("/a/x.yaml")), "x.yaml");
    }

    #[test]
    fn transformation_lists() {
        let o = Origin::Configured {
            configured_in: "/a/kustomization.yaml".into(),
            api_version: "builtin".into(),
            kind: "PrefixTransformer".into(),
            name: String::new(),
            namespace: String::new(),
        };
        assert_eq!(
            origin_text(&o, Path::new("/a"), "  ").replacen("  ", "- ", 1),
            "- configuredIn: kustomization.yaml\n  configuredBy:\n    apiVersion: builtin\n    kind: PrefixTransformer\n"
        );
    }
}
