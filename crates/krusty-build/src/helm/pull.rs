//! Charts pulled at an exact version (`version: 1.2.3` with `repo`), by
//! krusty's fetch layer rather than `helm pull`, so that every read is
//! bounded and verified and `--offline` holds:
//!
//! - from a chart repository (`http://`, `https://`), the repository's
//!   `index.yaml` is read on every build for the version's digest and
//!   archive URL; the archive is fetched and checked against that digest;
//! - from an OCI registry (`oci://`), the tag (the version, `+` written
//!   `_`, as helm pushes it) is resolved to its manifest on every build,
//!   and the chart's layer is checked against the manifest's digest.
//!
//! The chart is unpacked into krusty's cache by that digest, with a
//! manifest of its files, and the digest recorded for the version. A
//! version published again under the same number has a new digest: it is
//! fetched and used, as a moved git tag is. A chart in the cache is used
//! only while its files match its manifest: one changed is fetched again,
//! and is an error with `--offline`. With `--offline`, the recorded
//! digest names the chart, and a chart never pulled is an error.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use krusty_fetch::cache::Staging;
use krusty_fetch::{redact, Cache, FetchError, Fetcher, Kept};
use krusty_yaml::Node;

use super::archive;
use super::cache::{kept_chart, publish_chart, verified_chart_entry, version_record};
use crate::error::{BuildError, BuildResult};
use krusty_schema::helm::ChartConfig;

/// The media types of a chart's layer in an OCI registry (helm's, and the
/// one of helm before 3.8).
const CHART_LAYER_TYPES: [&str; 2] = [
    "application/vnd.cncf.helm.chart.content.v1.tar+gzip",
    "application/tar+gzip",
];

/// The folder of the chart `chart` (its `repo` and exact `version` set)
/// in `cache`, pulled into it when the repository's digest for the
/// version is not there yet.
pub fn chart(
    fetcher: &Fetcher,
    offline: bool,
    cache: &Cache,
    chart: &ChartConfig,
) -> BuildResult<Option<PathBuf>> {
    if offline {
        let entry = recorded(cache, chart);
        let kept = entry
            .as_ref()
            .map(|e| (e, kept_chart(cache, e, &chart.name)));
        return match kept {
            Some((_, Kept::Intact(dir))) => Ok(Some(dir)),
            Some((entry, Kept::Damaged(why))) => Err(damaged(chart, entry, &why)),
            Some((_, Kept::Missing)) | None => Err(BuildError::Fetch(FetchError::Offline(format!(
                "--offline: the chart {} {} of {} is not in the cache ({}); build once without --offline to pull it",
                chart.name,
                chart.version,
                redact(&chart.repo),
                cache.root().display()
            )))),
        };
    }
    let archive = if chart.repo.starts_with("oci://") {
        from_registry(fetcher, chart)?
    } else {
        from_repository(fetcher, chart)?
    };
    let record = version_record(cache, &chart.repo, &chart.name, &chart.version);
    let digest = archive.digest.clone();
    let entry = verified_chart_entry(cache, &digest, &chart.name);
    let dir = match kept_chart(cache, &entry, &chart.name) {
        Kept::Intact(dir) => dir,
        // Missing, or changed since it was kept: fetched (again).
        Kept::Missing | Kept::Damaged(_) => {
            let bytes = archive.bytes()?;
            // A cache that cannot be written: helm pulls into the chart
            // home.
            let Ok(staging) = cache.stage() else {
                return Ok(None);
            };
            keep(cache, &staging, &bytes, chart, &entry)?
        }
    };
    // The record only serves --offline builds; failing to keep it is no
    // reason to fail this one.
    let _ = cache.write_file(&record, format!("{digest}\n").as_bytes());
    Ok(Some(dir))
}

/// The most bytes of a version's record read (a digest and a newline).
const MAX_RECORD_BYTES: u64 = 128;

/// The entry in `cache` of the chart `chart` as last pulled at its
/// version, when its record names a digest and the entry is there (not
/// checked here: [`chart`] checks it before it is used).
pub fn recorded(cache: &Cache, chart: &ChartConfig) -> Option<PathBuf> {
    let record = version_record(cache, &chart.repo, &chart.name, &chart.version);
    let Kept::Intact(bytes) = cache.read_limited(&record, MAX_RECORD_BYTES) else {
        return None;
    };
    let digest = std::str::from_utf8(&bytes).ok()?.trim();
    let hex = digest.strip_prefix("sha256:")?;
    let valid = hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit());
    let entry = verified_chart_entry(cache, digest, &chart.name);
    (valid && entry.exists()).then_some(entry)
}

/// The error of `--offline` for the chart `chart` kept at `entry` and
/// found changed since (`why`).
pub fn damaged(chart: &ChartConfig, entry: &Path, why: &str) -> BuildError {
    let version = match chart.version.as_str() {
        "" => String::new(),
        v => format!(" {v}"),
    };
    BuildError::Fetch(FetchError::Offline(format!(
        "--offline: the cached chart {}{version} of {} ({}) is damaged: {why}; build once without --offline to pull it again",
        chart.name,
        redact(&chart.repo),
        entry.display()
    )))
}

/// A chart's archive: its digest, and how to get its bytes.
struct Archive<'a> {
    /// `sha256:<hex>`.
    digest: String,
    /// The bytes, fetched only when the cache does not hold the chart.
    fetch: Box<dyn FnOnce() -> BuildResult<Arc<[u8]>> + 'a>,
}

impl Archive<'_> {
    fn bytes(self) -> BuildResult<Arc<[u8]>> {
        (self.fetch)()
    }
}

/// The chart's archive in an OCI registry: its layer, digest checked by
/// the fetch layer.
fn from_registry<'a>(fetcher: &'a Fetcher, chart: &ChartConfig) -> BuildResult<Archive<'a>> {
    let reference = format!(
        "{}/{}:{}",
        chart.repo.trim_end_matches('/'),
        chart.name,
        chart.version.replace('+', "_")
    );
    let layer = fetcher
        .oci_layer(&reference, &CHART_LAYER_TYPES)
        .map_err(|e| {
            BuildError::new(format!(
                "cannot pull the chart {} {} from {}: {e}",
                chart.name,
                chart.version,
                redact(&chart.repo)
            ))
        })?;
    let bytes = layer.bytes;
    Ok(Archive {
        digest: layer.digest,
        fetch: Box::new(move || Ok(bytes)),
    })
}

/// The chart's archive in a chart repository: the digest and URL its
/// index gives the version; the archive, when fetched, checked against
/// the digest (an index without one: the archive's own, fetched now).
fn from_repository<'a>(fetcher: &'a Fetcher, chart: &ChartConfig) -> BuildResult<Archive<'a>> {
    let base = chart.repo.trim_end_matches('/');
    let index_url = format!("{base}/index.yaml");
    let index = fetcher
        .file(&index_url, krusty_fetch::HTTP_TIMEOUT)
        .map_err(|e| {
            BuildError::new(format!(
                "looks like \"{}\" is not a valid chart repository or cannot be reached: {e}",
                redact(&chart.repo)
            ))
        })?;
    let version = find_version(&index, chart)?;
    let url = archive_url(base, &version.url).ok_or_else(|| {
        BuildError::new(format!(
            "the index of {} gives the chart {} {} the URL '{}', which is not http:// or https://",
            redact(&chart.repo),
            chart.name,
            chart.version,
            redact(&version.url)
        ))
    })?;
    let get = move || {
        fetcher.file(&url, krusty_fetch::HTTP_TIMEOUT).map_err(|e| {
            BuildError::new(format!(
                "cannot fetch the chart archive {}: {e}",
                redact(&url)
            ))
        })
    };
    let Some(digest) = version.digest else {
        let bytes = get()?;
        return Ok(Archive {
            digest: sha256(&bytes),
            fetch: Box::new(move || Ok(bytes)),
        });
    };
    let name = format!("{} {}", chart.name, chart.version);
    let expected = digest.clone();
    Ok(Archive {
        digest,
        fetch: Box::new(move || {
            let bytes = get()?;
            let got = sha256(&bytes);
            if got != expected {
                return Err(BuildError::Fetch(FetchError::Verify(format!(
                    "the archive of the chart {name} has the digest {got}, not the {expected} the repository's index gives it"
                ))));
            }
            Ok(bytes)
        }),
    })
}

/// A version of a chart as the repository's index lists it.
struct IndexedVersion {
    /// `sha256:<hex>`, when the index gives one.
    digest: Option<String>,
    /// The first of its URLs.
    url: String,
}

/// The entry of the chart's version in the index `text`, as helm finds
/// it (the version as written, or with a `v` more or less).
fn find_version(text: &[u8], chart: &ChartConfig) -> BuildResult<IndexedVersion> {
    let not_valid = |why: String| {
        BuildError::new(format!(
            "looks like \"{}\" is not a valid chart repository or cannot be reached: {why}",
            redact(&chart.repo)
        ))
    };
    let text = std::str::from_utf8(text).map_err(|_| not_valid("its index is not UTF-8".into()))?;
    let docs = krusty_yaml::parse_stream(text).map_err(|e| not_valid(e.to_string()))?;
    let root = docs
        .into_iter()
        .find_map(|d| d.root)
        .unwrap_or_else(Node::map);
    let bare = |v: &str| v.strip_prefix('v').unwrap_or(v).to_string();
    let wanted = bare(&chart.version);
    let found = root
        .get("entries")
        .and_then(|e| e.get(&chart.name))
        .and_then(Node::as_seq)
        .and_then(|versions| {
            versions
                .iter()
                .find(|v| v.get("version").and_then(Node::as_str) == Some(&chart.version))
                .or_else(|| {
                    versions.iter().find(|v| {
                        v.get("version").and_then(Node::as_str).map(bare) == Some(wanted.clone())
                    })
                })
        })
        .ok_or_else(|| {
            BuildError::new(format!(
                "chart \"{}\" version \"{}\" not found in {} repository",
                chart.name,
                chart.version,
                redact(&chart.repo)
            ))
        })?;
    let url = found
        .get("urls")
        .and_then(Node::as_seq)
        .and_then(|urls| urls.first())
        .and_then(Node::as_str)
        .ok_or_else(|| {
            not_valid(format!(
                "its index gives the chart {} {} no URL",
                chart.name, chart.version
            ))
        })?;
    let digest = match found.get("digest").and_then(Node::as_str) {
        None | Some("") => None,
        Some(hex) if hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit()) => {
            Some(format!("sha256:{}", hex.to_ascii_lowercase()))
        }
        Some(other) => {
            return Err(not_valid(format!(
                "its index gives the chart {} {} the digest '{other}', which is not sha256",
                chart.name, chart.version
            )))
        }
    };
    Ok(IndexedVersion {
        digest,
        url: url.to_string(),
    })
}

/// The absolute URL of an archive the index at `base` names `url`
/// (absolute, or relative to the repository); `None` for another scheme.
fn archive_url(base: &str, url: &str) -> Option<String> {
    let absolute = if url.contains("://") {
        url.to_string()
    } else if let Some(path) = url.strip_prefix('/') {
        let (scheme, rest) = base.split_once("://")?;
        let host = rest.split('/').next()?;
        format!("{scheme}://{host}/{path}")
    } else {
        format!("{base}/{url}")
    };
    krusty_fetch::is_http_url(&absolute).then_some(absolute)
}

/// `sha256:<hex>` of `bytes`.
fn sha256(bytes: &[u8]) -> String {
    format!("sha256:{}", krusty_fetch::oci::sha256_hex(bytes))
}

/// Unpacks the archive `bytes` of `chart` in `staging`, and publishes it
/// whole as `entry` of the cache (see [`publish_chart`]); returns the
/// chart's folder.
fn keep(
    cache: &Cache,
    staging: &Staging,
    bytes: &[u8],
    chart: &ChartConfig,
    entry: &Path,
) -> BuildResult<PathBuf> {
    let cache_error = |e: std::io::Error| {
        BuildError::new(format!(
            "cannot keep the chart {} in krusty's cache ({}): {e}",
            chart.name,
            entry.display()
        ))
    };
    let dir = staging.tree().map_err(cache_error)?.join(&chart.name);
    std::fs::create_dir_all(&dir).map_err(cache_error)?;
    archive::unpack(bytes, &chart.name, &dir)?;
    publish_chart(cache, staging, entry, &chart.name).map_err(cache_error)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chart(version: &str) -> ChartConfig {
        ChartConfig {
            name: "app".into(),
            repo: "https://charts.example/stable".into(),
            version: version.into(),
            ..ChartConfig::default()
        }
    }

    const INDEX: &str = "apiVersion: v1\nentries:\n  app:\n  - version: 1.2.4\n    urls: [https://cdn.example/app-1.2.4.tgz]\n  - version: v1.2.3\n    digest: ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef0123456789\n    urls: [app-1.2.3.tgz]\n";

    #[test]
    fn the_index_gives_the_version_digest_and_url() {
        let found = find_version(INDEX.as_bytes(), &chart("1.2.3")).unwrap();
        assert_eq!(
            found.digest.as_deref(),
            Some("sha256:abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789")
        );
        assert_eq!(found.url, "app-1.2.3.tgz");
        let found = find_version(INDEX.as_bytes(), &chart("1.2.4")).unwrap();
        assert!(found.digest.is_none());
        let e = find_version(INDEX.as_bytes(), &chart("9.9.9"))
            .err()
            .unwrap()
            .to_string();
        assert_eq!(
            e,
            "chart \"app\" version \"9.9.9\" not found in https://charts.example/stable repository"
        );
    }

    #[test]
    fn archive_urls_are_resolved_against_the_repository() {
        let base = "https://charts.example/stable";
        assert_eq!(
            archive_url(base, "app-1.tgz").unwrap(),
            "https://charts.example/stable/app-1.tgz"
        );
        assert_eq!(
            archive_url(base, "/dl/app-1.tgz").unwrap(),
            "https://charts.example/dl/app-1.tgz"
        );
        assert_eq!(
            archive_url(base, "http://mirror/app-1.tgz").unwrap(),
            "http://mirror/app-1.tgz"
        );
        assert!(archive_url(base, "file:///etc/passwd").is_none());
    }
}
