//! Verified executables: the program of an exec function's platform entry
//! (KEP-2906: `uri`, `sha256`, `bin`), fetched, checked against its
//! sha256 before anything is unpacked or run, unpacked when it is a tar or
//! tar.gz archive, and kept in the cache by digest.
//!
//! - `uri` is `https://` (`http://` only for a loopback host), `oci://`
//!   (the layer of type [`EXEC_MEDIA_TYPE`]) or `file://` (an absolute
//!   path, or one relative to the catalog's folder); nothing else.
//! - `sha256` is 64 hex digits, optionally after `sha256:`; it is the
//!   digest of the file `uri` names (the archive, for an archive).
//! - An archive (told by its first bytes, not its name) gives its regular
//!   file named `bin`; an archive with a link, or with a path that is
//!   absolute or climbs out with `..`, is refused, and so is one holding
//!   `bin` twice. Nothing else of it is written anywhere.
//! - The program is kept at `exec/<sha256>/…` in the cache, mode 0755:
//!   a later build with the same `sha256` and `bin` reads nothing from
//!   the network, offline or not. It is checked before each build runs
//!   it ([`kept`]): a program is used only while its sha256 is `sha256`
//!   (a plain program) or the one recorded beside it when it was
//!   unpacked (`NAME.sha256`, for a program from an archive); else it is
//!   fetched again, and offline that is an error.
//!
//! [`EXEC_MEDIA_TYPE`]: crate::oci::EXEC_MEDIA_TYPE

use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::path::{Component, Path, PathBuf};

use crate::cache::{self, Cache, Kept};
use crate::error::FetchError;
use crate::oci::{is_sha256_hex, sha256_hex, MAX_LAYER_BYTES};

/// The largest program (or archive, or unpacked program) accepted.
pub const MAX_PROGRAM_BYTES: u64 = MAX_LAYER_BYTES;

/// Where an executable comes from.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Source {
    /// An `http(s)://` URL.
    Http(String),
    /// An `oci://` reference.
    Oci(String),
    /// A local file.
    File(PathBuf),
}

/// The sha256 `text` gives (64 hex digits, optionally after `sha256:`),
/// in lowercase.
pub fn parse_sha256(uri: &str, text: &str) -> Result<String, FetchError> {
    let text = text.trim();
    if text.is_empty() {
        return Err(FetchError::Artifact(format!(
            "exec function '{uri}' has no sha256: krusty runs only executables whose sha256 is given"
        )));
    }
    let hex = text.strip_prefix("sha256:").unwrap_or(text);
    if !is_sha256_hex(hex) {
        return Err(FetchError::Artifact(format!(
            "exec function '{uri}': sha256 '{text}' is not a sha256 digest (64 hex digits)"
        )));
    }
    Ok(hex.to_ascii_lowercase())
}

/// Where `uri` points: an absolute `file://` path, or one relative to
/// `base_dir`.
pub(crate) fn source(uri: &str, base_dir: &Path) -> Result<Source, FetchError> {
    let (scheme, rest) = uri.split_once("://").unwrap_or(("", uri));
    match scheme.to_ascii_lowercase().as_str() {
        "https" if !rest.is_empty() => Ok(Source::Http(uri.to_string())),
        "http" if is_loopback_url(rest) => Ok(Source::Http(uri.to_string())),
        "http" => Err(FetchError::Artifact(format!(
            "exec function '{uri}': plain http:// is allowed only for a loopback host; use https://"
        ))),
        "oci" => Ok(Source::Oci(uri.to_string())),
        "file" if !rest.is_empty() => {
            let path = Path::new(rest);
            Ok(Source::File(if path.is_absolute() {
                path.to_path_buf()
            } else {
                base_dir.join(path)
            }))
        }
        _ => Err(FetchError::Artifact(format!(
            "exec function '{uri}': the uri must be https://, oci:// or file://"
        ))),
    }
}

/// Whether the authority of an `http://` URL (what follows the scheme) is
/// a loopback host.
fn is_loopback_url(rest: &str) -> bool {
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host_port = authority.rsplit('@').next().unwrap_or_default();
    let host = match host_port.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or_default(),
        None => host_port.split(':').next().unwrap_or_default(),
    };
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// `bin` as the path of an archive entry: relative, without `.` or `..`
/// components.
pub(crate) fn entry_name(uri: &str, bin: &str) -> Result<PathBuf, FetchError> {
    let path = Path::new(bin);
    let mut name = PathBuf::new();
    for component in path.components() {
        match component {
            Component::Normal(part) => name.push(part),
            Component::CurDir => {}
            _ => {
                return Err(FetchError::Artifact(format!(
                    "exec function '{uri}': bin '{bin}' must be a relative path inside the archive"
                )))
            }
        }
    }
    if name.as_os_str().is_empty() {
        return Err(FetchError::Artifact(format!(
            "exec function '{uri}' names no bin"
        )));
    }
    Ok(name)
}

/// Where the program of digest `hex` and entry `bin` is kept.
pub(crate) fn cached_program(cache: &Cache, hex: &str, bin: &Path) -> PathBuf {
    let file = bin.file_name().unwrap_or(bin.as_os_str());
    cache
        .entry(&["exec", hex, &cache::key(&bin.to_string_lossy())])
        .join(file)
}

/// The most bytes of a program's recorded digest read.
const MAX_RECORD_BYTES: u64 = 128;

/// Where the sha256 of the program `dest`, unpacked from an archive, is
/// recorded (beside it; never the program's own name).
fn record_path(dest: &Path) -> PathBuf {
    let mut name = dest.file_name().unwrap_or_default().to_os_string();
    name.push(".sha256");
    dest.with_file_name(name)
}

/// Whether the program kept at `dest` (for the `uri` of digest
/// `expected`) is intact: a regular file whose sha256 is `expected`, or
/// the one recorded when it was unpacked.
pub(crate) fn kept(cache: &Cache, dest: &Path, expected: &str) -> Kept<()> {
    match std::fs::symlink_metadata(dest) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Kept::Missing,
        Err(e) => return Kept::Damaged(format!("cannot read it: {e}")),
        Ok(m) if !m.is_file() => return Kept::Damaged("it is not a regular file".into()),
        Ok(_) => {}
    }
    let actual = match cache::file_sha256(dest) {
        Ok(actual) => actual,
        Err(e) => return Kept::Damaged(format!("cannot read it: {e}")),
    };
    if actual == expected {
        return Kept::Intact(());
    }
    match cache.read_limited(&record_path(dest), MAX_RECORD_BYTES) {
        Kept::Intact(record) if record.trim_ascii() == actual.as_bytes() => Kept::Intact(()),
        Kept::Intact(record) => Kept::Damaged(format!(
            "its sha256 is {actual}, not the {} it was kept with",
            String::from_utf8_lossy(record.trim_ascii())
        )),
        Kept::Missing | Kept::Damaged(_) => {
            Kept::Damaged(format!("its sha256 is {actual}, not {expected}"))
        }
    }
}

/// Fails unless `bytes` have the sha256 `expected`.
pub(crate) fn verify(uri: &str, expected: &str, bytes: &[u8]) -> Result<(), FetchError> {
    let actual = sha256_hex(bytes);
    if actual == expected {
        return Ok(());
    }
    Err(FetchError::Verify(format!(
        "exec function '{uri}': sha256 mismatch: expected {expected}, got {actual}; it was not run"
    )))
}

/// Reads the local file `path`, of at most [`MAX_PROGRAM_BYTES`].
pub(crate) fn read_local(uri: &str, path: &Path) -> Result<Vec<u8>, FetchError> {
    let failed = |e: std::io::Error| {
        FetchError::Artifact(format!(
            "exec function '{uri}': cannot read {}: {e}",
            path.display()
        ))
    };
    let file = std::fs::File::open(path).map_err(failed)?;
    let mut bytes = Vec::new();
    file.take(MAX_PROGRAM_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(failed)?;
    if bytes.len() as u64 > MAX_PROGRAM_BYTES {
        return Err(too_large(uri));
    }
    Ok(bytes)
}

fn too_large(uri: &str) -> FetchError {
    FetchError::Artifact(format!(
        "exec function '{uri}': the program is larger than {MAX_PROGRAM_BYTES} bytes"
    ))
}

/// The program in `bytes` (verified already): the entry `bin` of a tar or
/// tar.gz archive, or `bytes` themselves.
pub(crate) fn unpack(uri: &str, bytes: Vec<u8>, bin: &Path) -> Result<Vec<u8>, FetchError> {
    if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut tar = Vec::new();
        flate2::read::GzDecoder::new(bytes.as_slice())
            .take(MAX_PROGRAM_BYTES + 1)
            .read_to_end(&mut tar)
            .map_err(|e| archive_error(uri, &format!("cannot gunzip it: {e}")))?;
        if tar.len() as u64 > MAX_PROGRAM_BYTES {
            return Err(too_large(uri));
        }
        if !is_tar(&tar) {
            return Err(archive_error(uri, "a gzip file that holds no tar archive"));
        }
        return from_tar(uri, &tar, bin);
    }
    if is_tar(&bytes) {
        return from_tar(uri, &bytes, bin);
    }
    Ok(bytes)
}

/// Whether `bytes` start with a ustar (POSIX or GNU) tar header.
fn is_tar(bytes: &[u8]) -> bool {
    bytes.get(257..262) == Some(b"ustar")
}

fn archive_error(uri: &str, why: &str) -> FetchError {
    FetchError::Artifact(format!("exec function '{uri}': archive refused: {why}"))
}

/// The regular file `bin` of the tar archive `tar`, after checking every
/// entry.
fn from_tar(uri: &str, tar: &[u8], bin: &Path) -> Result<Vec<u8>, FetchError> {
    let broken = |e: std::io::Error| archive_error(uri, &format!("cannot read it: {e}"));
    let mut archive = tar::Archive::new(tar);
    let mut found: Option<Vec<u8>> = None;
    let mut names = Vec::new();
    for entry in archive.entries().map_err(broken)? {
        let mut entry = entry.map_err(broken)?;
        let path = entry.path().map_err(broken)?.into_owned();
        let name = entry_path(uri, &path)?;
        let kind = entry.header().entry_type();
        if kind.is_symlink() || kind.is_hard_link() {
            return Err(archive_error(
                uri,
                &format!("'{}' is a link", path.display()),
            ));
        }
        if name != bin {
            if kind.is_file() && names.len() < 10 {
                names.push(name.display().to_string());
            }
            continue;
        }
        if !kind.is_file() {
            return Err(archive_error(
                uri,
                &format!("'{}' is not a regular file", bin.display()),
            ));
        }
        if found.is_some() {
            return Err(archive_error(
                uri,
                &format!("it holds '{}' twice", bin.display()),
            ));
        }
        let mut program = Vec::new();
        entry.read_to_end(&mut program).map_err(broken)?;
        found = Some(program);
    }
    found.ok_or_else(|| {
        archive_error(
            uri,
            &format!(
                "it has no file '{}' (its files: {})",
                bin.display(),
                if names.is_empty() {
                    "none".to_string()
                } else {
                    names.join(", ")
                }
            ),
        )
    })
}

/// The path of an archive entry without `.` components; an absolute path
/// or one with `..` is refused.
fn entry_path(uri: &str, path: &Path) -> Result<PathBuf, FetchError> {
    let mut name = PathBuf::new();
    for component in path.components() {
        match component {
            Component::Normal(part) => name.push(part),
            Component::CurDir => {}
            _ => {
                return Err(archive_error(
                    uri,
                    &format!("the entry '{}' leaves the archive's folder", path.display()),
                ))
            }
        }
    }
    Ok(name)
}

/// Keeps `program` (from the `uri` of digest `expected`) as the cached
/// executable `dest` (mode 0755), with its own digest recorded when it is
/// not `expected` (a program from an archive), by way of a staging
/// folder, replacing what was there; returns `dest`.
pub(crate) fn keep(
    cache: &Cache,
    program: &[u8],
    expected: &str,
    dest: &Path,
) -> Result<PathBuf, FetchError> {
    let failed = |e: std::io::Error| FetchError::Cache(format!("krusty's cache: {e}"));
    let (Some(dir), Some(file)) = (dest.parent(), dest.file_name()) else {
        return Err(FetchError::Cache(format!(
            "krusty's cache: no place for {}",
            dest.display()
        )));
    };
    let staging = cache.stage().map_err(failed)?;
    let staged = staging.dir().join("program");
    std::fs::create_dir(&staged).map_err(failed)?;
    let path = staged.join(file);
    std::fs::write(&path, program).map_err(failed)?;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).map_err(failed)?;
    let digest = sha256_hex(program);
    if digest != expected {
        std::fs::write(record_path(&path), format!("{digest}\n")).map_err(failed)?;
    }
    cache.publish(&staged, dir).map_err(failed)?;
    Ok(dest.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An archive entry: path, content, type.
    type Entry<'a> = (&'a str, &'a [u8], tar::EntryType);

    fn tar_of(entries: &[Entry<'_>]) -> Vec<u8> {
        let mut builder = tar::Builder::new(Vec::new());
        for (name, data, kind) in entries {
            let mut header = tar::Header::new_gnu();
            header.set_entry_type(*kind);
            header.set_size(data.len() as u64);
            header.set_mode(0o755);
            // Bypass the builder's own path checks to make hostile archives.
            let field = &mut header.as_old_mut().name;
            field[..name.len()].copy_from_slice(name.as_bytes());
            if kind.is_symlink() {
                header.set_link_name("/etc/passwd").unwrap();
            }
            header.set_cksum();
            builder.append(&header, *data).unwrap();
        }
        builder.into_inner().unwrap()
    }

    fn gzip(bytes: &[u8]) -> Vec<u8> {
        use std::io::Write;
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(bytes).unwrap();
        gz.finish().unwrap()
    }

    const REGULAR: tar::EntryType = tar::EntryType::Regular;

    #[test]
    fn sha256_is_required_and_well_formed() {
        let hex = "AB".repeat(32);
        assert_eq!(parse_sha256("u", &hex).unwrap(), "ab".repeat(32));
        assert_eq!(
            parse_sha256("u", &format!("sha256:{hex}")).unwrap(),
            "ab".repeat(32)
        );
        let missing = parse_sha256("u", " ").unwrap_err().to_string();
        assert!(missing.contains("has no sha256"), "{missing}");
        for bad in ["abc", "sha512:abc", &"g".repeat(64)] {
            let err = parse_sha256("u", bad).unwrap_err().to_string();
            assert!(err.contains("is not a sha256 digest"), "{err}");
        }
    }

    #[test]
    fn a_mismatch_names_both_digests() {
        let err = verify("u", &"0".repeat(64), b"x").unwrap_err().to_string();
        assert!(err.contains(&"0".repeat(64)), "{err}");
        assert!(err.contains(&sha256_hex(b"x")), "{err}");
    }

    #[test]
    fn sources_by_scheme() {
        let base = Path::new("/catalogs");
        assert_eq!(
            source("file://fns/f.tgz", base).unwrap(),
            Source::File(PathBuf::from("/catalogs/fns/f.tgz"))
        );
        assert_eq!(
            source("file:///opt/f", base).unwrap(),
            Source::File(PathBuf::from("/opt/f"))
        );
        assert!(matches!(
            source("https://h.example/f", base),
            Ok(Source::Http(_))
        ));
        assert!(matches!(
            source("http://127.0.0.1:8080/f", base),
            Ok(Source::Http(_))
        ));
        assert!(matches!(
            source("http://localhost/f", base),
            Ok(Source::Http(_))
        ));
        assert!(matches!(
            source("oci://r.example/f:v1", base),
            Ok(Source::Oci(_))
        ));
        for refused in ["http://h.example/f", "ftp://h/f", "/abs/f", "f", "file://"] {
            assert!(source(refused, base).is_err(), "{refused}");
        }
    }

    #[test]
    fn bin_must_stay_inside() {
        assert_eq!(
            entry_name("u", "./bin/fn").unwrap(),
            PathBuf::from("bin/fn")
        );
        for bad in ["", ".", "../fn", "/fn", "a/../../fn"] {
            assert!(entry_name("u", bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn plain_programs_are_taken_as_they_are() {
        let program = b"#!/bin/sh\necho hi\n".to_vec();
        assert_eq!(
            unpack("u", program.clone(), Path::new("fn")).unwrap(),
            program
        );
    }

    #[test]
    fn tar_and_tar_gz_give_their_bin() {
        let tar = tar_of(&[
            ("README", b"read me", REGULAR),
            ("./bin/fn", b"program", REGULAR),
        ]);
        assert_eq!(
            unpack("u", tar.clone(), Path::new("bin/fn")).unwrap(),
            b"program"
        );
        assert_eq!(
            unpack("u", gzip(&tar), Path::new("bin/fn")).unwrap(),
            b"program"
        );
        let err = unpack("u", tar, Path::new("fn")).unwrap_err().to_string();
        assert!(
            err.contains("has no file 'fn'") && err.contains("README"),
            "{err}"
        );
    }

    #[test]
    fn hostile_archives_are_refused() {
        let cases: [(&[Entry<'_>], &str); 5] = [
            (&[("../fn", b"x", REGULAR)], "leaves the archive"),
            (&[("/etc/fn", b"x", REGULAR)], "leaves the archive"),
            (&[("fn", b"", tar::EntryType::Symlink)], "is a link"),
            (
                &[("fn", b"", tar::EntryType::Directory)],
                "not a regular file",
            ),
            (&[("fn", b"a", REGULAR), ("./fn", b"b", REGULAR)], "twice"),
        ];
        for (entries, why) in cases {
            let err = unpack("u", tar_of(entries), Path::new("fn"))
                .unwrap_err()
                .to_string();
            assert!(err.contains(why), "{why}: {err}");
        }
        let err = unpack("u", gzip(b"not a tar"), Path::new("fn"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("holds no tar archive"), "{err}");
    }

    #[test]
    fn kept_programs_are_executable_and_checked() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::at(dir.path().join("c"));
        // From an archive (whose digest is not the program's): recorded.
        let archive = "a".repeat(64);
        let dest = cached_program(&cache, &archive, Path::new("bin/fn"));
        assert_eq!(kept(&cache, &dest, &archive), Kept::Missing);
        let path = keep(&cache, b"program", &archive, &dest).unwrap();
        assert_eq!(path.file_name().unwrap(), "fn");
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o755);
        assert_eq!(std::fs::read(&path).unwrap(), b"program");
        assert_eq!(kept(&cache, &dest, &archive), Kept::Intact(()));
        std::fs::write(&path, b"tampered").unwrap();
        let Kept::Damaged(why) = kept(&cache, &dest, &archive) else {
            panic!("a changed program is not intact");
        };
        assert!(why.contains(&sha256_hex(b"program")), "{why}");
        // A plain program: its digest is the one asked for, no record.
        let plain = sha256_hex(b"plain");
        let dest = cached_program(&cache, &plain, Path::new("fn"));
        keep(&cache, b"plain", &plain, &dest).unwrap();
        assert!(!record_path(&dest).exists());
        assert_eq!(kept(&cache, &dest, &plain), Kept::Intact(()));
        std::fs::write(&dest, b"").unwrap();
        assert!(matches!(kept(&cache, &dest, &plain), Kept::Damaged(_)));
    }
}
