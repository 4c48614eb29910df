//! OCI artifacts: one layer of an artifact in an OCI registry, named by
//! `oci://registry[:port]/repository[:tag]` or
//! `oci://registry[:port]/repository@sha256:<hex>`.
//!
//! The manifest is read, the first layer of an accepted media type is
//! taken, and its bytes are checked against the digest the manifest gives.
//! Manifests and layers are kept in the cache by digest (they never change
//! under a digest), and every read of one from the cache is bounded (a
//! layer by the size its manifest gives, a manifest as the registry's is)
//! and checked against that digest: a blob that does not match is pulled
//! again, and is an error with `--offline`. A tag is resolved to its
//! manifest digest on every build, and that digest is recorded so
//! `--offline` builds resolve it as it was last seen, as git refs are.
//!
//! Registries on loopback (`localhost`, `127.0.0.0/8`, `[::1]`) are spoken
//! to over plain HTTP, as docker does for them by default; every other
//! registry over HTTPS. Credentials come from the docker configuration
//! (`$DOCKER_CONFIG/config.json`, else `~/.docker/config.json`: `auths`,
//! `credHelpers` and `credsStore`); a registry that asks for a bearer
//! token gets one from its token service with them (the token service
//! over HTTPS, or plain HTTP on loopback).
//!
//! Every request goes through [`crate::http`]: one deadline for the whole
//! pull (token, manifest and layer; `--fetch-timeout`), manifests of at
//! most 4 MiB, token answers of at most 256 KiB and layers of at most the
//! size their manifest gives (and `--fetch-max-size`), each bound applied
//! before the bytes are buffered; redirects (blob stores) by the HTTP
//! layer's rules, the registry's credentials only to the registry.

use std::fmt;
use std::sync::Arc;

use sha2::{Digest, Sha256};

use crate::cache::{self, Cache, Kept};
use crate::error::FetchError;
use crate::http::{self, Answer, Deadline, Failure, Limits};

/// The media type of a layer holding a function catalog (KEP-2906).
pub const CATALOG_MEDIA_TYPE: &str =
    "application/vnd.cncf.kubernetes.krm-func-catalog.layer.v1+yaml";
/// The media type of a layer holding a function definition (KEP-2906).
pub const DEFINITION_MEDIA_TYPE: &str =
    "application/vnd.cncf.kubernetes.krm-func-definition.layer.v1+yaml";
/// The media type of a layer holding an exec function (a program, or a
/// tar or tar.gz archive holding it). KEP-2906's table gives the Starlark
/// type for exec functions too, which cannot tell them apart: krusty uses
/// this one.
pub const EXEC_MEDIA_TYPE: &str = "application/vnd.cncf.kubernetes.krm-func-runtime-exec.layer.v1";
/// The media type of a layer holding a Starlark function (KEP-2906).
pub const STARLARK_MEDIA_TYPE: &str =
    "application/vnd.cncf.kubernetes.krm-func-runtime-starlark.layer.v1";

/// The scheme of OCI references.
const SCHEME: &str = "oci://";

/// The largest exec program read from a file or unpacked from an
/// archive.
pub const MAX_LAYER_BYTES: u64 = 512 << 20;

/// The largest manifest read.
const MAX_MANIFEST_BYTES: u64 = 4 << 20;

/// The largest answer of a token service read.
const MAX_TOKEN_BYTES: u64 = 256 << 10;

/// Whether `text` is an `oci://` reference (scheme in any case).
pub fn is_oci_reference(text: &str) -> bool {
    text.get(..SCHEME.len())
        .is_some_and(|s| s.eq_ignore_ascii_case(SCHEME))
}

/// An artifact in an OCI registry.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct OciReference {
    /// `host[:port]`.
    pub registry: String,
    /// The repository path (`team/catalog`).
    pub repository: String,
    /// The tag (`latest` when neither tag nor digest is given).
    pub tag: Option<String>,
    /// `sha256:<hex>`, which wins over the tag when both are given.
    pub digest: Option<String>,
}

/// One layer of an artifact, its digest checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OciBlob {
    /// The layer's media type (one of those accepted).
    pub media_type: String,
    /// `sha256:<hex>` of `bytes`.
    pub digest: String,
    /// The layer's content.
    pub bytes: Arc<[u8]>,
}

impl OciReference {
    /// Reads `oci://registry[:port]/repo[/more][:tag][@sha256:<hex>]`.
    pub fn parse(text: &str) -> Result<OciReference, FetchError> {
        let bad = |why: &str| FetchError::Oci(format!("invalid OCI reference '{text}': {why}"));
        if !is_oci_reference(text) {
            return Err(bad("it does not start with oci://"));
        }
        let rest = &text[SCHEME.len()..];
        let (name, digest) = match rest.split_once('@') {
            Some((name, digest)) => (
                name,
                Some(
                    parse_digest(digest)
                        .ok_or_else(|| bad("the digest must be sha256: and 64 hex digits"))?,
                ),
            ),
            None => (rest, None),
        };
        let (registry, path) = name
            .split_once('/')
            .ok_or_else(|| bad("it names no repository (oci://registry/repository:tag)"))?;
        if registry.is_empty() || !registry.bytes().all(is_registry_byte) {
            return Err(bad(
                "the registry must be a host name or address, with an optional port",
            ));
        }
        let last = path.rfind('/').map_or(0, |i| i + 1);
        let (repository, tag) = match path[last..].rfind(':') {
            Some(i) => (&path[..last + i], Some(&path[last + i + 1..])),
            None => (path, None),
        };
        if !repository.split('/').all(is_repository_component) {
            return Err(bad(
                "repository path components are lowercase letters and digits, separated by '.', '_' or '-'",
            ));
        }
        if let Some(tag) = tag {
            if !is_tag(tag) {
                return Err(bad("a tag is 1 to 128 letters, digits, '_', '.' or '-', not starting with '.' or '-'"));
            }
        }
        let tag = match (tag, &digest) {
            (Some(tag), _) => Some(tag.to_string()),
            (None, Some(_)) => None,
            (None, None) => Some("latest".to_string()),
        };
        Ok(OciReference {
            registry: registry.to_string(),
            repository: repository.to_string(),
            tag,
            digest,
        })
    }

    /// Whether the registry is on loopback, and so spoken to over plain
    /// HTTP.
    pub fn plain_http(&self) -> bool {
        let host = match self.registry.strip_prefix('[') {
            Some(v6) => v6.split(']').next().unwrap_or_default(),
            None => self.registry.split(':').next().unwrap_or_default(),
        };
        host.eq_ignore_ascii_case("localhost")
            || host
                .parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.is_loopback())
    }
}

impl fmt::Display for OciReference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{SCHEME}{}/{}", self.registry, self.repository)?;
        if let Some(tag) = &self.tag {
            write!(f, ":{tag}")?;
        }
        if let Some(digest) = &self.digest {
            write!(f, "@{digest}")?;
        }
        Ok(())
    }
}

fn is_registry_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b':' | b'[' | b']')
}

fn is_repository_component(c: &str) -> bool {
    let bytes = c.as_bytes();
    let alnum = |b: &u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    !bytes.is_empty()
        && bytes.first().is_some_and(alnum)
        && bytes.last().is_some_and(alnum)
        && bytes
            .iter()
            .all(|b| alnum(b) || matches!(b, b'.' | b'_' | b'-'))
}

fn is_tag(tag: &str) -> bool {
    let bytes = tag.as_bytes();
    (1..=128).contains(&bytes.len())
        && bytes
            .first()
            .is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_')
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

/// `sha256:<hex>` (hex in any case) as `sha256:<lowercase hex>`.
fn parse_digest(text: &str) -> Option<String> {
    let hex = text.strip_prefix("sha256:")?;
    is_sha256_hex(hex).then(|| format!("sha256:{}", hex.to_ascii_lowercase()))
}

/// Whether `hex` is 64 hex digits.
pub(crate) fn is_sha256_hex(hex: &str) -> bool {
    hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit())
}

/// The lowercase hex sha256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A layer as the manifest describes it.
#[derive(Debug)]
struct Layer {
    media_type: String,
    digest: String,
    size: u64,
}

/// Pulls the first layer of `reference` whose media type is one of
/// `accepted`, through `cache`, within `limits` (one deadline for the
/// whole pull); with `offline`, from the cache only.
pub(crate) fn pull_layer(
    cache: &Cache,
    offline: bool,
    reference: &OciReference,
    accepted: &[&str],
    limits: Limits,
) -> Result<OciBlob, FetchError> {
    let deadline = Deadline::after(limits.timeout);
    let connect = || Registry::connect(reference, deadline, limits.max_bytes);
    let mut registry = None;
    let manifest = manifest(
        cache,
        offline,
        reference,
        limits.max_bytes,
        &mut registry,
        connect,
    )?;
    let layer = pick_layer(reference, &manifest, accepted)?;
    if let Some(bytes) = kept_blob(cache, offline, reference, &layer.digest, layer.size)? {
        return Ok(blob(layer, bytes));
    }
    if layer.size > limits.max_bytes {
        return Err(FetchError::Oci(format!(
            "{reference}: the layer {} is {} bytes, more than the {} krusty pulls (--fetch-max-size)",
            layer.digest, layer.size, limits.max_bytes
        )));
    }
    let mut registry = registry.unwrap_or_else(connect);
    let bytes = registry.blob(&layer)?;
    check_digest(reference, "layer", &layer.digest, &bytes)?;
    // The copy only spares later pulls; failing to keep it fails nothing.
    let _ = cache.write_file(&blob_path(cache, &layer.digest), &bytes);
    Ok(blob(layer, bytes))
}

/// The manifest of `reference` as [`pull_layer`] reads it (a tag
/// resolved and recorded), of at most `limits.max_bytes`: for signature
/// checks ([`crate::signature`]), which need its digest.
pub(crate) fn pull_manifest(
    cache: &Cache,
    offline: bool,
    reference: &OciReference,
    limits: Limits,
) -> Result<Vec<u8>, FetchError> {
    let deadline = Deadline::after(limits.timeout);
    let connect = || Registry::connect(reference, deadline, limits.max_bytes);
    manifest(
        cache,
        offline,
        reference,
        limits.max_bytes,
        &mut None,
        connect,
    )
}

/// The blob `digest` (of `size` bytes) of `reference`'s repository, from
/// the cache or the registry, its digest checked: a signed payload
/// ([`crate::signature`]).
pub(crate) fn pull_blob(
    cache: &Cache,
    offline: bool,
    reference: &OciReference,
    digest: &str,
    size: u64,
    limits: Limits,
) -> Result<Vec<u8>, FetchError> {
    let digest = parse_digest(digest).ok_or_else(|| {
        FetchError::Oci(format!(
            "{reference}: the blob '{digest}' has no sha256 digest"
        ))
    })?;
    if let Some(bytes) = kept_blob(cache, offline, reference, &digest, size)? {
        return Ok(bytes);
    }
    let layer = Layer {
        media_type: String::new(),
        digest,
        size,
    };
    let deadline = Deadline::after(limits.timeout);
    let bytes = Registry::connect(reference, deadline, limits.max_bytes).blob(&layer)?;
    check_digest(reference, "blob", &layer.digest, &bytes)?;
    let _ = cache.write_file(&blob_path(cache, &layer.digest), &bytes);
    Ok(bytes)
}

fn blob(layer: Layer, bytes: Vec<u8>) -> OciBlob {
    OciBlob {
        media_type: layer.media_type,
        digest: layer.digest,
        bytes: Arc::from(bytes),
    }
}

/// The manifest of `reference`, of at most `max_bytes` (and 4 MiB): from
/// the cache when its digest is known (named, or recorded for the tag
/// with `offline`), else from the registry (connected into `registry` by
/// `connect`, with the same bound).
fn manifest(
    cache: &Cache,
    offline: bool,
    reference: &OciReference,
    max_bytes: u64,
    registry: &mut Option<Registry>,
    connect: impl FnOnce() -> Registry,
) -> Result<Vec<u8>, FetchError> {
    let record = tag_record(cache, reference);
    let known = match &reference.digest {
        Some(digest) => Some(digest.clone()),
        None if offline => match cache.read_limited(&record, MAX_RECORD_BYTES) {
            Kept::Intact(bytes) => std::str::from_utf8(&bytes)
                .ok()
                .and_then(|d| parse_digest(d.trim())),
            Kept::Missing | Kept::Damaged(_) => None,
        },
        None => None,
    };
    if let Some(digest) = known {
        let max = max_bytes.min(MAX_MANIFEST_BYTES);
        if let Some(bytes) = kept_blob(cache, offline, reference, &digest, max)? {
            return Ok(bytes);
        }
    }
    if offline {
        return Err(offline_miss(cache, reference));
    }
    let connected = registry.insert(connect());
    let (bytes, digest) = connected.manifest(reference)?;
    if let Some(named) = &reference.digest {
        check_digest(reference, "manifest", named, &bytes)?;
    } else if let Some(told) = parse_digest(&digest) {
        check_digest(reference, "manifest", &told, &bytes)?;
    }
    let digest = format!("sha256:{}", sha256_hex(&bytes));
    let _ = cache.write_file(&blob_path(cache, &digest), &bytes);
    if reference.digest.is_none() {
        let _ = cache.write_file(&record, format!("{digest}\n").as_bytes());
    }
    Ok(bytes)
}

/// The first layer of `manifest` whose media type is accepted.
fn pick_layer(
    reference: &OciReference,
    manifest: &[u8],
    accepted: &[&str],
) -> Result<Layer, FetchError> {
    let bad = |why: String| FetchError::Oci(format!("{reference}: {why}"));
    let json: serde_json::Value = serde_json::from_slice(manifest)
        .map_err(|e| bad(format!("the manifest is not JSON: {e}")))?;
    let layers = json
        .get("layers")
        .and_then(|l| l.as_array())
        .ok_or_else(|| {
            bad("the manifest lists no layers (an image index is not an artifact)".into())
        })?;
    let mut found = Vec::new();
    for layer in layers {
        let field = |name: &str| layer.get(name).and_then(|v| v.as_str()).unwrap_or_default();
        let media_type = field("mediaType");
        if accepted.contains(&media_type) {
            let digest = parse_digest(field("digest")).ok_or_else(|| {
                bad(format!(
                    "the layer of type {media_type} has no sha256 digest"
                ))
            })?;
            let size = layer.get("size").and_then(|s| s.as_u64()).unwrap_or(0);
            return Ok(Layer {
                media_type: media_type.to_string(),
                digest,
                size,
            });
        }
        found.push(media_type.to_string());
    }
    Err(bad(format!(
        "no layer of media type {}; the artifact's layers are of type: {}",
        accepted.join(" or "),
        if found.is_empty() {
            "(none)".to_string()
        } else {
            found.join(", ")
        }
    )))
}

/// Fails unless `bytes` have the sha256 `digest` names.
fn check_digest(
    reference: &OciReference,
    what: &str,
    digest: &str,
    bytes: &[u8],
) -> Result<(), FetchError> {
    let actual = format!("sha256:{}", sha256_hex(bytes));
    if actual == digest {
        return Ok(());
    }
    Err(FetchError::Verify(format!(
        "{reference}: the {what}'s digest does not match: expected {digest}, got {actual}"
    )))
}

/// Where the blob (manifest or layer) of `digest` is kept.
fn blob_path(cache: &Cache, digest: &str) -> std::path::PathBuf {
    let hex = digest.strip_prefix("sha256:").unwrap_or(digest);
    cache.entry(&["oci", "blobs", "sha256", hex])
}

/// Where the digest a tag was last seen at is recorded.
fn tag_record(cache: &Cache, reference: &OciReference) -> std::path::PathBuf {
    let name = format!(
        "{}/{}:{}",
        reference.registry,
        reference.repository,
        reference.tag.as_deref().unwrap_or_default()
    );
    cache.entry(&["oci", "tags", &cache::key(&name)])
}

/// The most bytes of a tag's record read (a digest and a newline).
const MAX_RECORD_BYTES: u64 = 128;

/// The blob of `digest` (of at most `max` bytes) as the cache holds it,
/// checked against the digest.
fn cached_blob(cache: &Cache, digest: &str, max: u64) -> Kept<Vec<u8>> {
    match cache.read_limited(&blob_path(cache, digest), max) {
        Kept::Intact(bytes) => {
            let actual = format!("sha256:{}", sha256_hex(&bytes));
            if actual == digest {
                Kept::Intact(bytes)
            } else {
                Kept::Damaged(format!("its digest is {actual}"))
            }
        }
        other => other,
    }
}

/// The blob of `digest` of `reference` from the cache: `None` when it is
/// to be pulled (it is missing or damaged); with `offline`, a miss is an
/// error, and a damaged blob too, naming it.
fn kept_blob(
    cache: &Cache,
    offline: bool,
    reference: &OciReference,
    digest: &str,
    max: u64,
) -> Result<Option<Vec<u8>>, FetchError> {
    match cached_blob(cache, digest, max) {
        Kept::Intact(bytes) => Ok(Some(bytes)),
        Kept::Damaged(why) if offline => Err(FetchError::Offline(format!(
            "--offline: the cached blob {digest} of '{reference}' ({}) is damaged: {why}; build once without --offline to fetch it again",
            blob_path(cache, digest).display()
        ))),
        Kept::Missing if offline => Err(offline_miss(cache, reference)),
        Kept::Missing | Kept::Damaged(_) => Ok(None),
    }
}

fn offline_miss(cache: &Cache, reference: &OciReference) -> FetchError {
    FetchError::Offline(format!(
        "--offline: '{reference}' is not in the cache ({}); build once without --offline to fetch it",
        cache.root().display()
    ))
}

/// A connection to one registry, through the fetch layer's HTTP client
/// (its bounds and redirect rules): the distribution API's manifest and
/// blob GETs, with a bearer token from the registry's token service, or
/// the basic credentials, once the registry asks for them.
struct Registry {
    /// `http://host[:port]` or `https://host[:port]`.
    base: String,
    /// `/v2/REPOSITORY`.
    repository: String,
    /// The reference as written, for messages.
    display: String,
    /// The registry's `host:port`, as the docker configuration names it.
    registry: String,
    /// The `Authorization` value once the registry asked for one.
    authorization: Option<String>,
    deadline: Deadline,
    max_bytes: u64,
}

/// The media types of manifests asked for.
const MANIFEST_MEDIA_TYPES: &str =
    "application/vnd.oci.image.manifest.v1+json, application/vnd.docker.distribution.manifest.v2+json";

impl Registry {
    fn connect(reference: &OciReference, deadline: Deadline, max_bytes: u64) -> Registry {
        let scheme = if reference.plain_http() {
            "http"
        } else {
            "https"
        };
        // Docker Hub's API is not served at its name.
        let host = match reference.registry.as_str() {
            "docker.io" => "index.docker.io",
            other => other,
        };
        Registry {
            base: format!("{scheme}://{host}"),
            repository: format!("/v2/{}", reference.repository),
            display: reference.to_string(),
            registry: reference.registry.clone(),
            authorization: None,
            deadline,
            max_bytes,
        }
    }

    /// The manifest's bytes and the digest the registry gives for them.
    fn manifest(&mut self, reference: &OciReference) -> Result<(Vec<u8>, String), FetchError> {
        let name = reference
            .digest
            .clone()
            .or_else(|| reference.tag.clone())
            .unwrap_or_else(|| "latest".to_string());
        let max = self.max_bytes.min(MAX_MANIFEST_BYTES);
        let path = format!("{}/manifests/{name}", self.repository);
        let answer = self.get(&path, MANIFEST_MEDIA_TYPES, max, "reading the manifest")?;
        let digest = answer
            .header("docker-content-digest")
            .unwrap_or_default()
            .to_string();
        Ok((answer.body, digest))
    }

    /// The bytes of `layer`, of at most the size the manifest gives.
    fn blob(&mut self, layer: &Layer) -> Result<Vec<u8>, FetchError> {
        let path = format!("{}/blobs/{}", self.repository, layer.digest);
        let doing = format!("pulling the layer {}", layer.digest);
        Ok(self.get(&path, "*/*", layer.size, &doing)?.body)
    }

    /// GETs `path` of the registry, authenticating once when it asks; an
    /// answer outside 2xx is an error.
    fn get(
        &mut self,
        path: &str,
        accept: &str,
        max: u64,
        doing: &str,
    ) -> Result<Answer, FetchError> {
        let url = format!("{}{path}", self.base);
        let mut answer = self.send(&url, accept, max, doing)?;
        if answer.status == 401 && self.authorization.is_none() {
            if let Some(challenge) = answer.header("www-authenticate").map(str::to_string) {
                if self.authenticate(&challenge)? {
                    answer = self.send(&url, accept, max, doing)?;
                }
            }
        }
        if !(200..300).contains(&answer.status) {
            return Err(FetchError::Oci(format!(
                "{}: {doing}: {}",
                self.display,
                status_text(&answer)
            )));
        }
        Ok(answer)
    }

    fn send(&self, url: &str, accept: &str, max: u64, doing: &str) -> Result<Answer, FetchError> {
        let mut headers = vec![("Accept", accept.to_string())];
        if let Some(authorization) = &self.authorization {
            headers.push(("Authorization", authorization.clone()));
        }
        http::exchange(url, headers, crate::HTTP_TIMEOUT, self.deadline, max)
            .map_err(|f| self.failure(doing, max, f, url))
    }

    /// Answers the registry's challenge: a bearer token from its token
    /// service (with the docker configuration's credentials, if any), or
    /// those credentials themselves for a basic one. `false` when there is
    /// nothing to answer it with.
    fn authenticate(&mut self, challenge: &str) -> Result<bool, FetchError> {
        let (scheme, params) = parse_challenge(challenge);
        let credentials = credentials(&self.registry);
        if scheme.eq_ignore_ascii_case("basic") {
            self.authorization = credentials.map(|(u, p)| http::basic(&u, &p));
            return Ok(self.authorization.is_some());
        }
        if !scheme.eq_ignore_ascii_case("bearer") {
            return Ok(false);
        }
        let param = |name: &str| {
            params
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.as_str())
        };
        let doing = "getting a token";
        let bad = |why: String| FetchError::Oci(format!("{}: {doing}: {why}", self.display));
        let realm = param("realm").ok_or_else(|| bad("the challenge names no realm".into()))?;
        let mut url = url::Url::parse(realm)
            .map_err(|e| bad(format!("the realm {realm:?} is not a URL: {e}")))?;
        let loopback = url.host().is_some_and(|h| match h {
            url::Host::Domain(d) => d.eq_ignore_ascii_case("localhost"),
            url::Host::Ipv4(ip) => ip.is_loopback(),
            url::Host::Ipv6(ip) => ip.is_loopback(),
        });
        if url.scheme() != "https" && !(url.scheme() == "http" && loopback) {
            return Err(bad(format!(
                "the token service {:?} is not https:// (plain http only on loopback)",
                crate::redact(realm)
            )));
        }
        let scope = format!("repository:{}:pull", &self.repository["/v2/".len()..]);
        {
            let mut query = url.query_pairs_mut();
            query.append_pair("scope", param("scope").unwrap_or(&scope));
            if let Some(service) = param("service") {
                query.append_pair("service", service);
            }
        }
        let mut headers = Vec::new();
        if let Some((user, password)) = &credentials {
            headers.push(("Authorization", http::basic(user, password)));
        }
        let answer = http::exchange(
            url.as_str(),
            headers,
            crate::HTTP_TIMEOUT,
            self.deadline,
            MAX_TOKEN_BYTES,
        )
        .map_err(|f| self.failure(doing, MAX_TOKEN_BYTES, f, url.as_str()))?;
        if !(200..300).contains(&answer.status) {
            return Err(bad(status_text(&answer)));
        }
        let json: serde_json::Value = serde_json::from_slice(&answer.body)
            .map_err(|e| bad(format!("the token service's answer is not JSON: {e}")))?;
        let token = ["token", "access_token"]
            .iter()
            .find_map(|k| {
                json.get(k)
                    .and_then(|t| t.as_str())
                    .filter(|t| !t.is_empty())
            })
            .ok_or_else(|| bad("the token service's answer holds no token".into()))?;
        self.authorization = Some(format!("Bearer {token}"));
        Ok(true)
    }

    /// The error for an exchange with `url` that failed while `doing`.
    fn failure(&self, doing: &str, max: u64, failure: Failure, url: &str) -> FetchError {
        let why = match failure {
            Failure::TooLarge(_) if doing.starts_with("pulling the layer") => {
                format!("the registry sent more than the {max} bytes the manifest gives")
            }
            Failure::TooLarge(_) => format!("the answer is larger than {max} bytes"),
            other => other.into_error(url, None).to_string(),
        };
        FetchError::Oci(format!("{}: {doing}: {why}", self.display))
    }
}

/// `401 Unauthorized` and the registry's own error codes and messages.
fn status_text(answer: &Answer) -> String {
    let mut text = format!("{} {}", answer.status, http::reason_phrase(answer.status))
        .trim_end()
        .to_string();
    let errors: Vec<String> = serde_json::from_slice::<serde_json::Value>(&answer.body)
        .ok()
        .and_then(|j| j.get("errors").and_then(|e| e.as_array()).cloned())
        .unwrap_or_default()
        .iter()
        .map(|e| {
            let field = |k: &str| e.get(k).and_then(|v| v.as_str()).unwrap_or_default();
            format!("{} {}", field("code"), field("message"))
                .trim()
                .to_string()
        })
        .filter(|e| !e.is_empty())
        .collect();
    if !errors.is_empty() {
        text.push_str(": ");
        text.push_str(&errors.join("; "));
    }
    text
}

/// The scheme of a `WWW-Authenticate` challenge and its `key="value"`
/// parameters.
fn parse_challenge(challenge: &str) -> (String, Vec<(String, String)>) {
    let challenge = challenge.trim();
    let (scheme, mut rest) = challenge
        .split_once(char::is_whitespace)
        .unwrap_or((challenge, ""));
    let mut params = Vec::new();
    loop {
        rest = rest.trim_start_matches(|c: char| c == ',' || c.is_whitespace());
        let Some((key, after)) = rest.split_once('=') else {
            break;
        };
        let (value, after) = match after.strip_prefix('"') {
            Some(quoted) => {
                let mut value = String::new();
                let mut chars = quoted.char_indices();
                let mut end = quoted.len();
                while let Some((i, c)) = chars.next() {
                    match c {
                        '\\' => value.extend(chars.next().map(|(_, c)| c)),
                        '"' => {
                            end = i + 1;
                            break;
                        }
                        c => value.push(c),
                    }
                }
                (value, &quoted[end..])
            }
            None => {
                let end = after.find(',').unwrap_or(after.len());
                (after[..end].trim().to_string(), &after[end..])
            }
        };
        params.push((key.trim().to_string(), value));
        rest = after;
    }
    (scheme.to_string(), params)
}

/// The credentials the docker configuration holds for `registry`; none
/// when it holds none (or cannot be read).
fn credentials(registry: &str) -> Option<(String, String)> {
    match docker_credential::get_credential(registry) {
        Ok(docker_credential::DockerCredential::UsernamePassword(user, password)) => {
            Some((user, password))
        }
        // An identity token is a refresh token for the registry's OAuth2
        // service, which is not used: go anonymous.
        Ok(docker_credential::DockerCredential::IdentityToken(_)) | Err(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEX: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

    fn reference(text: &str) -> OciReference {
        OciReference::parse(text).unwrap()
    }

    #[test]
    fn references_with_tags_digests_and_ports() {
        let r = reference("oci://127.0.0.1:5000/krm/catalog:v1");
        assert_eq!(r.registry, "127.0.0.1:5000");
        assert_eq!(r.repository, "krm/catalog");
        assert_eq!(r.tag.as_deref(), Some("v1"));
        assert_eq!(r.digest, None);
        assert_eq!(r.to_string(), "oci://127.0.0.1:5000/krm/catalog:v1");

        let r = reference(&format!(
            "oci://ghcr.io/org/a/b@sha256:{}",
            HEX.to_uppercase()
        ));
        assert_eq!(r.repository, "org/a/b");
        assert_eq!(r.tag, None);
        assert_eq!(r.digest, Some(format!("sha256:{HEX}")));

        let r = reference(&format!("OCI://reg.example/c:v2@sha256:{HEX}"));
        assert_eq!(r.tag.as_deref(), Some("v2"));
        assert!(r.digest.is_some());

        let r = reference("oci://reg.example/c");
        assert_eq!(r.tag.as_deref(), Some("latest"));
    }

    #[test]
    fn malformed_references_are_refused() {
        for text in [
            "https://reg.example/c:v1",
            "oci://reg.example",
            "oci:///c:v1",
            "oci://reg.example/C:v1",
            "oci://reg.example/c/:v1",
            "oci://reg.example/c:",
            "oci://reg.example/c:-x",
            "oci://reg.example/c@sha256:abc",
            "oci://reg.example/c@md5:0123",
            "oci://reg ex/c:v1",
            "oci://reg.example/c/../d:v1",
        ] {
            let err = OciReference::parse(text).unwrap_err().to_string();
            assert!(err.contains("invalid OCI reference"), "{text}: {err}");
        }
    }

    #[test]
    fn loopback_registries_use_plain_http() {
        for (registry, plain) in [
            ("localhost:5000", true),
            ("127.0.0.1:5000", true),
            ("127.1.2.3", true),
            ("[::1]:5000", true),
            ("reg.example", false),
            ("10.0.0.1:5000", false),
            ("localhost.example", false),
        ] {
            let r = reference(&format!("oci://{registry}/c:v1"));
            assert_eq!(r.plain_http(), plain, "{registry}");
        }
    }

    #[test]
    fn the_first_accepted_layer_is_picked() {
        let r = reference("oci://reg.example/c:v1");
        let manifest = format!(
            r#"{{"layers":[{{"mediaType":"text/plain","digest":"sha256:{HEX}","size":1}},{{"mediaType":"{CATALOG_MEDIA_TYPE}","digest":"sha256:{HEX}","size":7}}]}}"#
        );
        let layer = pick_layer(&r, manifest.as_bytes(), &[CATALOG_MEDIA_TYPE]).unwrap();
        assert_eq!(layer.media_type, CATALOG_MEDIA_TYPE);
        assert_eq!(layer.size, 7);
        let err = pick_layer(&r, manifest.as_bytes(), &[EXEC_MEDIA_TYPE])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(&format!("no layer of media type {EXEC_MEDIA_TYPE}"))
                && err.contains(&format!("text/plain, {CATALOG_MEDIA_TYPE}")),
            "{err}"
        );
    }

    #[test]
    fn a_cached_blob_is_read_up_to_its_size_and_checked_against_its_digest() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::at(dir.path().to_path_buf());
        let digest = format!("sha256:{}", sha256_hex(b"layer"));
        assert_eq!(cached_blob(&cache, &digest, 5), Kept::Missing);
        let path = blob_path(&cache, &digest);
        cache.write_file(&path, b"layer").unwrap();
        assert_eq!(
            cached_blob(&cache, &digest, 5),
            Kept::Intact(b"layer".to_vec())
        );
        let damaged = |max: u64, why: &str| match cached_blob(&cache, &digest, max) {
            Kept::Damaged(text) => assert!(text.contains(why), "{text}"),
            other => panic!("{other:?}"),
        };
        damaged(4, "larger than 4 bytes");
        cache.write_file(&path, b"other").unwrap();
        damaged(5, "its digest is sha256:");
        let r = reference("oci://127.0.0.1:1/c:v1");
        assert_eq!(kept_blob(&cache, false, &r, &digest, 5), Ok(None));
        let err = kept_blob(&cache, true, &r, &digest, 5)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("damaged") && err.contains(&path.display().to_string()),
            "{err}"
        );
    }
}
