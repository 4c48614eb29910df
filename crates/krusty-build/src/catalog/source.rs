//! Where a catalog comes from: a `catalogs:` entry read as a local path,
//! an `https://` URL, a git reference (the remote-base forms) or an
//! `oci://` artifact, and fetched through the build's fetch layer; and
//! what a trusted catalog's functions run (exec programs, Starlark
//! programs), fetched through it too.

use std::path::PathBuf;

use krusty_fetch::{Fetcher, GitUrl, CATALOG_MEDIA_TYPE, DEFINITION_MEDIA_TYPE};

use super::location::{plain_http_off_loopback, Location};
use crate::error::{BuildError, BuildResult};
use crate::loader::Loader;

/// What kind of place a `catalogs:` entry names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// A file, relative to the folder of the file naming it.
    Local(String),
    /// A file served over HTTP(S) (a git reference when no file is there).
    Http(String),
    /// A file in a git repository.
    Git(String),
    /// An OCI artifact: `oci://registry/repo:tag` or `@sha256:…`.
    Oci(String),
}

impl Source {
    /// Reads a `catalogs:` entry.
    pub fn of(written: &str) -> Source {
        if let Some(rest) = written.strip_prefix("oci://") {
            return Source::Oci(rest.to_string());
        }
        if krusty_fetch::is_http_url(written) {
            return Source::Http(written.to_string());
        }
        if GitUrl::parse(written).is_ok() {
            return Source::Git(written.to_string());
        }
        Source::Local(written.to_string())
    }
}

/// A catalog's text, what it was read from (for messages) and where it
/// is (for trust).
#[derive(Debug)]
pub struct Text {
    /// The file or URL it was read from.
    pub from: String,
    /// Its content.
    pub text: String,
    /// Where it is, as `--trusted-catalog` names it; `None` for a file of
    /// a remote repository built as the target, which no value names.
    pub location: Option<Location>,
}

/// The text of the catalog `written` names: `loader` resolves local paths
/// (under its load restrictions), `fetcher` fetches the rest. Plain
/// `http://` is refused for a host that is not loopback, for the catalog
/// and for the remote base a local one is read from.
pub fn read(written: &str, loader: &Loader, fetcher: &Fetcher) -> BuildResult<Text> {
    match Source::of(written) {
        Source::Local(path) => local(loader.file(&path)?, loader),
        Source::Git(reference) => {
            // A git reference may also be a local file (Kustomize's order).
            if let Ok(file) = loader.file(&reference) {
                return local(file, loader);
            }
            from_git(&reference, fetcher)
        }
        Source::Http(url) => from_http(&url, fetcher),
        Source::Oci(reference) => from_oci(&reference, fetcher),
    }
}

/// The local file `file` of `loader`'s tree. In the checkout of a remote
/// base it is where the base is: the file of that repository at its ref.
fn local(file: PathBuf, loader: &Loader) -> BuildResult<Text> {
    let location = match (&loader.checkout, &loader.remote) {
        (None, _) => Some(Location::File(file.clone())),
        (Some(checkout), Some(remote)) => {
            refuse_plain_http(&remote.repo)?;
            file.strip_prefix(checkout).ok().and_then(|rel| {
                Location::git_file(&remote.repo, &rel.to_string_lossy(), &remote.reference)
            })
        }
        (Some(_), None) => None,
    };
    let text = loader.read(&file, None)?;
    Ok(Text {
        from: file.display().to_string(),
        text,
        location,
    })
}

/// Fails for a plain `http://` URL whose host is not loopback.
fn refuse_plain_http(url: &str) -> BuildResult<()> {
    if plain_http_off_loopback(url) {
        return Err(BuildError::new(format!(
            "'{url}': plain http:// is refused for a host that is not loopback (127.0.0.0/8, ::1, localhost): anything on the way could change what it serves; use https://"
        )));
    }
    Ok(())
}

/// A file over HTTP(S); a git reference's file when the URL reads as one
/// and no file is served there.
fn from_http(url: &str, fetcher: &Fetcher) -> BuildResult<Text> {
    refuse_plain_http(url)?;
    let git = GitUrl::parse(url);
    let timeout = git
        .as_ref()
        .map_or(krusty_fetch::HTTP_TIMEOUT, |g| g.timeout);
    match fetcher.file(url, timeout) {
        Ok(body) => Ok(Text {
            from: url.to_string(),
            text: utf8(url, body.to_vec())?,
            location: Location::url(url),
        }),
        Err(e) => match git {
            Ok(_) if has_git_marks(url) => from_git(url, fetcher).map(|read| Text {
                location: Location::url(url),
                ..read
            }),
            _ => Err(BuildError::from(e)),
        },
    }
}

/// Whether an HTTP URL also says it is a git reference: a `//` folder
/// separator after the host, a `ref=`/`version=` query or `.git`.
fn has_git_marks(url: &str) -> bool {
    let after_scheme = url.split_once("://").map_or(url, |(_, r)| r);
    after_scheme.contains("//")
        || url.contains("?ref=")
        || url.contains("&ref=")
        || url.contains("?version=")
        || url.contains(".git")
}

/// The file a git reference names in its repository (`catalog.yaml` when
/// it names a folder).
fn from_git(reference: &str, fetcher: &Fetcher) -> BuildResult<Text> {
    let url = GitUrl::parse(reference).map_err(|e| BuildError::new(e.to_string()))?;
    refuse_plain_http(&url.clone_url())?;
    let checkout = fetcher.checkout(&url)?;
    let repo = crate::loader::canonical(&checkout.dir)?;
    let mut path = crate::loader::clean(&repo.join(&url.root_path));
    let mut in_repo = url.root_path.clone();
    if path.is_dir() {
        path = path.join("catalog.yaml");
        in_repo.push_str("/catalog.yaml");
    }
    if !crate::loader::is_within(&path, &repo) {
        return Err(BuildError::new(format!(
            "'{}' is outside of the repository",
            url.root_path
        )));
    }
    let body = std::fs::read(&path).map_err(|e| {
        BuildError::new(format!(
            "'{}' in {} at {}: {e}",
            url.root_path,
            url.clone_url(),
            checkout.commit
        ))
    })?;
    Ok(Text {
        from: reference.to_string(),
        text: utf8(reference, body)?,
        location: Location::git_file(&url.clone_url(), &in_repo, &url.reference),
    })
}

/// The catalog (or definition) layer of an OCI artifact.
fn from_oci(reference: &str, fetcher: &Fetcher) -> BuildResult<Text> {
    let written = format!("oci://{reference}");
    let blob = fetcher
        .oci_layer(&written, &[CATALOG_MEDIA_TYPE, DEFINITION_MEDIA_TYPE])
        .map_err(BuildError::from)?;
    Ok(Text {
        text: utf8(&written, blob.bytes.to_vec())?,
        location: Location::oci(&written),
        from: written,
    })
}

fn utf8(name: &str, body: Vec<u8>) -> BuildResult<String> {
    String::from_utf8(body)
        .map_err(|_| BuildError::new(format!("{name}: the catalog is not UTF-8 text")))
}

/// The executable of an exec platform: `uri` fetched (`https://`, `oci://`
/// or `file://`), checked against `sha256`, unpacked when it is an archive
/// (`bin` names the executable in it), cached by digest.
pub fn executable(
    fetcher: &Fetcher,
    uri: &str,
    sha256: &str,
    bin: &str,
    dir: &std::path::Path,
) -> BuildResult<std::path::PathBuf> {
    fetcher
        .verified_executable(uri, sha256, bin, dir)
        .map_err(BuildError::from)
}

/// The largest Starlark program accepted (as for programs a tree names).
const MAX_STARLARK_BYTES: usize = 16 << 20;

/// The Starlark program at `url` (`https://`, `http://` on loopback)
/// and its digest (`sha256:HEX`), through the build's fetch layer:
/// fetched once per build, and with `--offline` only from krusty's cache
/// (no connection at all).
pub fn starlark_program(fetcher: &Fetcher, url: &str) -> BuildResult<(String, String)> {
    if !krusty_fetch::is_http_url(url) {
        return Err(BuildError::new(format!(
            "starlark program '{url}': only https:// URLs (http:// on loopback) are fetched"
        )));
    }
    refuse_plain_http(url)?;
    let body = fetcher
        .file(url, krusty_fetch::HTTP_TIMEOUT)
        .map_err(|e| BuildError::from(e).context(format!("starlark program '{url}'")))?;
    if body.len() > MAX_STARLARK_BYTES {
        return Err(BuildError::new(format!(
            "starlark program '{url}': larger than {MAX_STARLARK_BYTES} bytes"
        )));
    }
    let digest = format!("sha256:{}", krusty_fetch::oci::sha256_hex(&body));
    let text = String::from_utf8(body.to_vec()).map_err(|_| {
        BuildError::new(format!(
            "starlark program '{url}': the body is not UTF-8 text"
        ))
    })?;
    Ok((text, digest))
}
