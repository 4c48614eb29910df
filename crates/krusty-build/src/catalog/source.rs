//! Where a catalog comes from: a `catalogs:` entry read as a local path,
//! an `https://` URL, a git reference (the remote-base forms) or an
//! `oci://` artifact, and fetched through the build's fetch layer.

use krusty_fetch::{Fetcher, GitUrl, CATALOG_MEDIA_TYPE, DEFINITION_MEDIA_TYPE};

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

/// The text of the catalog `written` names, and what it was read from
/// (for messages): `loader` resolves local paths (under its load
/// restrictions), `fetcher` fetches the rest.
pub fn read(written: &str, loader: &Loader, fetcher: &Fetcher) -> BuildResult<(String, String)> {
    match Source::of(written) {
        Source::Local(path) => {
            // A git reference may also be a local file (Kustomize's order).
            let file = loader.file(&path)?;
            let text = loader.read(&file, None)?;
            Ok((file.display().to_string(), text))
        }
        Source::Git(reference) => {
            if let Ok(file) = loader.file(&reference) {
                let text = loader.read(&file, None)?;
                return Ok((file.display().to_string(), text));
            }
            from_git(&reference, fetcher)
        }
        Source::Http(url) => from_http(&url, fetcher),
        Source::Oci(reference) => from_oci(&reference, fetcher),
    }
}

/// A file over HTTP(S); a git reference's file when the URL reads as one
/// and no file is served there.
fn from_http(url: &str, fetcher: &Fetcher) -> BuildResult<(String, String)> {
    let git = GitUrl::parse(url);
    let timeout = git
        .as_ref()
        .map_or(krusty_fetch::HTTP_TIMEOUT, |g| g.timeout);
    match fetcher.file(url, timeout) {
        Ok(body) => Ok((url.to_string(), utf8(url, body.to_vec())?)),
        Err(e) => match git {
            Ok(_) if has_git_marks(url) => from_git(url, fetcher),
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
fn from_git(reference: &str, fetcher: &Fetcher) -> BuildResult<(String, String)> {
    let url = GitUrl::parse(reference).map_err(BuildError::new)?;
    let checkout = fetcher.checkout(&url)?;
    let repo = crate::loader::canonical(&checkout.dir)?;
    let mut path = crate::loader::clean(&repo.join(&url.root_path));
    if path.is_dir() {
        path = path.join("catalog.yaml");
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
    Ok((reference.to_string(), utf8(reference, body)?))
}

/// The catalog (or definition) layer of an OCI artifact.
fn from_oci(reference: &str, fetcher: &Fetcher) -> BuildResult<(String, String)> {
    let written = format!("oci://{reference}");
    let blob = fetcher
        .oci_layer(&written, &[CATALOG_MEDIA_TYPE, DEFINITION_MEDIA_TYPE])
        .map_err(BuildError::from)?;
    let text = utf8(&written, blob.bytes.to_vec())?;
    Ok((written, text))
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
