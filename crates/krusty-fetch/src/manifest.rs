//! The manifest of a checkout: every entry of its tree (path, kind, mode;
//! a file's size and sha256; a symlink's target), one line each, in path
//! order. It is made when the checkout enters the cache and made again
//! from the tree when a build first uses it: any file changed, truncated,
//! removed or added, or a mode or link changed, makes the two differ, and
//! [`difference`] names the first path that does.
//!
//! Paths and link targets are written with every byte outside printable
//! ASCII, a space and `\` as `\xHH`, so a line's fields never run into
//! each other.

use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// The first line of a manifest: its format.
const HEADER: &str = "krusty-tree v1\n";

/// The deepest folder nesting walked (git's own trees stay far below).
const MAX_DEPTH: usize = 256;

/// The manifest of the tree at `root`.
pub(crate) fn of(root: &Path) -> io::Result<String> {
    let mut out = String::from(HEADER);
    walk(root, &mut Vec::new(), &mut out, 0)?;
    Ok(out)
}

/// Adds the entries of the folder `root/prefix` to `out`.
fn walk(root: &Path, prefix: &mut Vec<u8>, out: &mut String, depth: usize) -> io::Result<()> {
    if depth > MAX_DEPTH {
        return Err(io::Error::other(format!(
            "folders nest deeper than {MAX_DEPTH} levels"
        )));
    }
    let folder = root.join(std::ffi::OsStr::from_bytes(prefix));
    let mut names: Vec<_> = fs::read_dir(&folder)?
        .map(|e| e.map(|e| e.file_name()))
        .collect::<Result<_, _>>()?;
    names.sort();
    for name in names {
        let length = prefix.len();
        if length > 0 {
            prefix.push(b'/');
        }
        prefix.extend_from_slice(name.as_bytes());
        let path = folder.join(&name);
        let meta = fs::symlink_metadata(&path)?;
        let mode = meta.mode() & 0o7777;
        let shown = escape(prefix);
        let kind = meta.file_type();
        if kind.is_dir() {
            out.push_str(&format!("{shown} d {mode:o}\n"));
            walk(root, prefix, out, depth + 1)?;
        } else if kind.is_symlink() {
            let target = fs::read_link(&path)?;
            let target = escape(target.as_os_str().as_bytes());
            out.push_str(&format!("{shown} l {target}\n"));
        } else if kind.is_file() {
            let digest = crate::cache::file_sha256(&path)?;
            out.push_str(&format!("{shown} f {mode:o} {} {digest}\n", meta.len()));
        } else {
            out.push_str(&format!("{shown} o {mode:o}\n"));
        }
        prefix.truncate(length);
    }
    Ok(())
}

/// `bytes` with every byte outside `!`..=`~`, and `\`, as `\xHH`.
fn escape(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for &b in bytes {
        if b.is_ascii_graphic() && b != b'\\' {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    out
}

/// What differs first between the manifest `recorded` and `actual` (of
/// the same tree): a path changed, missing or added, or the manifest
/// itself unreadable.
pub(crate) fn difference(recorded: &str, actual: &str) -> String {
    let Some(recorded_lines) = recorded.strip_prefix(HEADER) else {
        return "its manifest is not in krusty's format".to_string();
    };
    let entries = |text: &'_ str| -> BTreeMap<String, String> {
        text.lines()
            .map(|line| match line.split_once(' ') {
                Some((path, rest)) => (path.to_string(), rest.to_string()),
                None => (line.to_string(), String::new()),
            })
            .collect()
    };
    let before = entries(recorded_lines);
    let after = entries(actual.strip_prefix(HEADER).unwrap_or(actual));
    let paths = before
        .keys()
        .chain(after.keys())
        .collect::<std::collections::BTreeSet<_>>();
    for path in paths {
        match (before.get(path), after.get(path)) {
            (Some(_), None) => return format!("{path} is missing"),
            (None, Some(_)) => return format!("{path} was added"),
            (Some(a), Some(b)) if a != b => return format!("{path} changed"),
            _ => {}
        }
    }
    "its manifest differs from the tree".to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_manifest_names_what_changed() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        fs::create_dir_all(root.join("app/sub")).unwrap();
        fs::write(root.join("app/cm.yaml"), "a: 1\n").unwrap();
        fs::write(root.join("app/sub/odd name\n"), "x").unwrap();
        std::os::unix::fs::symlink("/tmp", root.join("escape")).unwrap();
        let first = of(root).unwrap();
        assert!(first.contains("app/sub/odd\\x20name\\x0a f "), "{first}");
        assert!(first.contains("escape l /tmp\n"), "{first}");
        assert_eq!(of(root).unwrap(), first);

        fs::write(root.join("app/cm.yaml"), "a: 2\n").unwrap();
        assert_eq!(
            difference(&first, &of(root).unwrap()),
            "app/cm.yaml changed"
        );
        fs::remove_file(root.join("app/cm.yaml")).unwrap();
        assert_eq!(
            difference(&first, &of(root).unwrap()),
            "app/cm.yaml is missing"
        );
        fs::write(root.join("app/cm.yaml"), "a: 1\n").unwrap();
        fs::write(root.join("app/new.yaml"), "").unwrap();
        assert_eq!(
            difference(&first, &of(root).unwrap()),
            "app/new.yaml was added"
        );
        fs::remove_file(root.join("app/new.yaml")).unwrap();
        fs::remove_file(root.join("escape")).unwrap();
        std::os::unix::fs::symlink("/etc", root.join("escape")).unwrap();
        assert_eq!(difference(&first, &of(root).unwrap()), "escape changed");
        assert_eq!(
            difference("garbage", &first),
            "its manifest is not in krusty's format"
        );
    }
}
