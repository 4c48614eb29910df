//! Unpacking a packaged chart (`NAME-VERSION.tgz`, as `helm package`
//! writes it and chart repositories and OCI registries serve it) into a
//! folder, as `helm pull --untar` does: the archive's top folder is
//! dropped, regular files and folders are written, and anything else
//! (links, devices) is left out. A name that would lead out of the folder
//! is an error, and so is an archive past the size helm accepts.

use std::io::Read;
use std::path::{Component, Path, PathBuf};

use crate::error::{BuildError, BuildResult};

/// The most bytes a chart may hold once unpacked (helm's default limit).
pub const MAX_UNPACKED_BYTES: u64 = 100 << 20;

/// The most entries a chart archive may hold.
const MAX_ENTRIES: usize = 20_000;

/// Unpacks the gzipped tar `tgz` (the chart `chart`, for messages) into
/// the folder `into`, which exists and is empty.
pub fn unpack(tgz: &[u8], chart: &str, into: &Path) -> BuildResult<()> {
    let broken = |why: String| BuildError::new(format!("chart archive of {chart}: {why}"));
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(tgz));
    let mut written: u64 = 0;
    let mut has_chart_yaml = false;
    let entries = archive
        .entries()
        .map_err(|e| broken(format!("cannot read it: {e}")))?;
    for (n, entry) in entries.enumerate() {
        if n >= MAX_ENTRIES {
            return Err(broken(format!("it holds more than {MAX_ENTRIES} entries")));
        }
        let mut entry = entry.map_err(|e| broken(format!("cannot read it: {e}")))?;
        let name = entry
            .path()
            .map_err(|e| broken(format!("an entry has no usable name: {e}")))?
            .into_owned();
        let Some(relative) = inside(&name) else {
            return Err(broken(format!(
                "the entry '{}' would lead out of the chart's folder",
                name.display()
            )));
        };
        if relative.as_os_str().is_empty() {
            continue;
        }
        let dest = into.join(&relative);
        let kind = entry.header().entry_type();
        if kind.is_dir() {
            std::fs::create_dir_all(&dest).map_err(|e| write_error(&dest, e))?;
            continue;
        }
        if !(kind.is_file() || kind == tar::EntryType::Continuous) {
            continue;
        }
        if let Some(parent) = dest.parent() {
            std::fs::create_dir_all(parent).map_err(|e| write_error(parent, e))?;
        }
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&dest)
            .map_err(|e| write_error(&dest, e))?;
        let room = MAX_UNPACKED_BYTES - written;
        let copied = std::io::copy(&mut (&mut entry).take(room + 1), &mut file)
            .map_err(|e| broken(format!("cannot read it: {e}")))?;
        if copied > room {
            return Err(broken(format!(
                "it unpacks to more than {MAX_UNPACKED_BYTES} bytes"
            )));
        }
        written += copied;
        has_chart_yaml |= relative == Path::new("Chart.yaml");
    }
    if !has_chart_yaml {
        return Err(broken("it holds no Chart.yaml in its top folder".into()));
    }
    Ok(())
}

/// The path of an archive entry in the chart's folder (its top folder
/// dropped); `None` when it would lead elsewhere.
fn inside(name: &Path) -> Option<PathBuf> {
    let mut parts = name.components().filter(|c| *c != Component::CurDir);
    match parts.next()? {
        Component::Normal(_) => {}
        _ => return None,
    }
    let mut out = PathBuf::new();
    for part in parts {
        match part {
            Component::Normal(p) => out.push(p),
            _ => return None,
        }
    }
    Some(out)
}

fn write_error(path: &Path, e: std::io::Error) -> BuildError {
    BuildError::new(format!(
        "cannot unpack a chart into '{}': {e}",
        path.display()
    ))
}

#[cfg(test)]
mod tests {
    use super::super::run::TempDir;
    use super::*;
    use std::io::Write;

    fn tgz(entries: &[(&str, &[u8], tar::EntryType)]) -> Vec<u8> {
        let mut builder = tar::Builder::new(Vec::new());
        for (name, data, kind) in entries {
            let mut header = tar::Header::new_gnu();
            header.set_entry_type(*kind);
            header.set_size(data.len() as u64);
            header.set_mode(0o644);
            // Written raw: the builder refuses `..` itself.
            header.as_gnu_mut().unwrap().name[..name.len()].copy_from_slice(name.as_bytes());
            header.set_cksum();
            builder.append(&header, *data).unwrap();
        }
        let tar = builder.into_inner().unwrap();
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(&tar).unwrap();
        gz.finish().unwrap()
    }

    const FILE: tar::EntryType = tar::EntryType::Regular;

    #[test]
    fn the_top_folder_is_dropped_and_links_left_out() {
        let dir = TempDir::new().unwrap();
        let archive = tgz(&[
            ("c/", b"", tar::EntryType::Directory),
            ("c/Chart.yaml", b"name: c\n", FILE),
            ("c/templates/a.yaml", b"a", FILE),
            ("c/link", b"", tar::EntryType::Symlink),
        ]);
        unpack(&archive, "c", dir.path()).unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.path().join("templates/a.yaml")).unwrap(),
            "a"
        );
        assert!(dir.path().join("Chart.yaml").is_file());
        assert!(std::fs::symlink_metadata(dir.path().join("link")).is_err());
    }

    #[test]
    fn names_leading_out_and_archives_without_a_chart_fail() {
        for (entries, wanted) in [
            (
                &[("c/Chart.yaml", &b"x"[..], FILE), ("c/../../x", b"x", FILE)][..],
                "would lead out",
            ),
            (&[("/etc/x", &b"x"[..], FILE)][..], "would lead out"),
            (&[("c/values.yaml", &b"x"[..], FILE)][..], "no Chart.yaml"),
        ] {
            let dir = TempDir::new().unwrap();
            let e = unpack(&tgz(entries), "c", dir.path())
                .unwrap_err()
                .to_string();
            assert!(e.contains(wanted), "{e}");
        }
        let dir = TempDir::new().unwrap();
        let e = unpack(b"not gzip", "c", dir.path())
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("chart archive of c: "), "{e}");
    }
}
