//! OCI artifacts: one layer of an artifact in an OCI registry, named by
//! `oci://registry[:port]/repository[:tag]` or
//! `oci://registry[:port]/repository@sha256:<hex>`.
//!
//! The manifest is read, the first layer of an accepted media type is
//! taken, and its bytes are checked against the digest the manifest gives.
//! Manifests and layers are kept in the cache by digest (they never change
//! under a digest); a tag is resolved to its manifest digest on every
//! build, and that digest is recorded so `--offline` builds resolve it as
//! it was last seen, as git refs are.
//!
//! Registries on loopback (`localhost`, `127.0.0.0/8`, `[::1]`) are spoken
//! to over plain HTTP, as docker does for them by default; every other
//! registry over HTTPS. Credentials come from the docker configuration
//! (`$DOCKER_CONFIG/config.json`, else `~/.docker/config.json`: `auths`,
//! `credHelpers` and `credsStore`); a registry that asks for a bearer
//! token gets one from its token service with them.

use std::fmt;
use std::sync::Arc;

use oci_client::client::{ClientConfig, ClientProtocol};
use oci_client::manifest::{IMAGE_MANIFEST_MEDIA_TYPE, OCI_IMAGE_MEDIA_TYPE};
use oci_client::secrets::RegistryAuth;
use oci_client::{Client, Reference};
use sha2::{Digest, Sha256};

use crate::cache::{self, Cache};
use crate::error::FetchError;

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

/// The largest layer pulled.
pub const MAX_LAYER_BYTES: u64 = 512 << 20;

/// The largest manifest read.
const MAX_MANIFEST_BYTES: usize = 4 << 20;

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

    fn client_reference(&self) -> Reference {
        match (&self.digest, &self.tag) {
            (Some(digest), _) => Reference::with_digest(
                self.registry.clone(),
                self.repository.clone(),
                digest.clone(),
            ),
            (None, tag) => Reference::with_tag(
                self.registry.clone(),
                self.repository.clone(),
                tag.clone().unwrap_or_else(|| "latest".to_string()),
            ),
        }
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
/// `accepted`, through `cache`; with `offline`, from the cache only.
pub(crate) fn pull_layer(
    cache: &Cache,
    offline: bool,
    reference: &OciReference,
    accepted: &[&str],
) -> Result<OciBlob, FetchError> {
    let mut registry = None;
    let manifest = manifest(cache, offline, reference, &mut registry)?;
    let layer = pick_layer(reference, &manifest, accepted)?;
    if let Some(bytes) = cached_blob(cache, &layer.digest) {
        return Ok(blob(layer, bytes));
    }
    if offline {
        return Err(offline_miss(cache, reference));
    }
    if layer.size > MAX_LAYER_BYTES {
        return Err(FetchError::Oci(format!(
            "{reference}: the layer {} is {} bytes, more than the {MAX_LAYER_BYTES} krusty pulls",
            layer.digest, layer.size
        )));
    }
    let registry = match registry {
        Some(r) => r,
        None => Registry::connect(reference)?,
    };
    let bytes = registry.blob(&layer)?;
    check_digest(reference, "layer", &layer.digest, &bytes)?;
    // The copy only spares later pulls; failing to keep it fails nothing.
    let _ = cache.write_file(&blob_path(cache, &layer.digest), &bytes);
    Ok(blob(layer, bytes))
}

fn blob(layer: Layer, bytes: Vec<u8>) -> OciBlob {
    OciBlob {
        media_type: layer.media_type,
        digest: layer.digest,
        bytes: Arc::from(bytes),
    }
}

/// The manifest of `reference`: from the cache when its digest is known
/// (named, or recorded for the tag with `offline`), else from the
/// registry (connected into `registry`).
fn manifest(
    cache: &Cache,
    offline: bool,
    reference: &OciReference,
    registry: &mut Option<Registry>,
) -> Result<Vec<u8>, FetchError> {
    let record = tag_record(cache, reference);
    if let Some(digest) = &reference.digest {
        if let Some(bytes) = cached_blob(cache, digest) {
            return Ok(bytes);
        }
    } else if offline {
        let recorded = cache
            .read_file(&record)
            .and_then(|d| String::from_utf8(d).ok())
            .and_then(|d| parse_digest(d.trim()));
        if let Some(bytes) = recorded.and_then(|d| cached_blob(cache, &d)) {
            return Ok(bytes);
        }
    }
    if offline {
        return Err(offline_miss(cache, reference));
    }
    let connected = registry.insert(Registry::connect(reference)?);
    let (bytes, digest) = connected.manifest()?;
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

/// The cached blob of `digest`, if it is there and intact.
fn cached_blob(cache: &Cache, digest: &str) -> Option<Vec<u8>> {
    let bytes = cache.read_file(&blob_path(cache, digest))?;
    (format!("sha256:{}", sha256_hex(&bytes)) == digest).then_some(bytes)
}

fn offline_miss(cache: &Cache, reference: &OciReference) -> FetchError {
    FetchError::Offline(format!(
        "--offline: '{reference}' is not in the cache ({}); build once without --offline to fetch it",
        cache.root().display()
    ))
}

/// A connection to one registry: the OCI client on a small runtime of
/// its own (krusty is not async elsewhere).
struct Registry {
    runtime: tokio::runtime::Runtime,
    client: Client,
    reference: Reference,
    display: String,
    auth: RegistryAuth,
}

impl Registry {
    fn connect(reference: &OciReference) -> Result<Registry, FetchError> {
        // reqwest's rustls needs a process-wide crypto provider: ring, which
        // ureq uses too. Another caller may have installed one already.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| {
                FetchError::Oci(format!("{reference}: cannot start the OCI client: {e}"))
            })?;
        let protocol = if reference.plain_http() {
            ClientProtocol::HttpsExcept(vec![reference.registry.clone()])
        } else {
            ClientProtocol::Https
        };
        let config = ClientConfig {
            protocol,
            connect_timeout: Some(crate::HTTP_TIMEOUT),
            read_timeout: Some(crate::HTTP_TIMEOUT),
            ..ClientConfig::default()
        };
        let client = Client::try_from(config).map_err(|e| {
            FetchError::Oci(format!("{reference}: cannot start the OCI client: {e}"))
        })?;
        Ok(Registry {
            runtime,
            client,
            reference: reference.client_reference(),
            display: reference.to_string(),
            auth: credentials(&reference.registry),
        })
    }

    /// The manifest's bytes and the digest the registry gives for them.
    fn manifest(&self) -> Result<(Vec<u8>, String), FetchError> {
        let accepted = [OCI_IMAGE_MEDIA_TYPE, IMAGE_MANIFEST_MEDIA_TYPE];
        let (bytes, digest) = self
            .runtime
            .block_on(
                self.client
                    .pull_manifest_raw(&self.reference, &self.auth, &accepted),
            )
            .map_err(|e| self.error("reading the manifest", e))?;
        if bytes.len() > MAX_MANIFEST_BYTES {
            return Err(FetchError::Oci(format!(
                "{}: the manifest is larger than {MAX_MANIFEST_BYTES} bytes",
                self.display
            )));
        }
        Ok((bytes.to_vec(), digest))
    }

    /// The bytes of `layer`, of at most the size the manifest gives.
    fn blob(&self, layer: &Layer) -> Result<Vec<u8>, FetchError> {
        let mut out = Bounded {
            bytes: Vec::with_capacity(usize::try_from(layer.size).unwrap_or(0)),
            limit: layer.size,
        };
        self.runtime
            .block_on(
                self.client
                    .pull_blob(&self.reference, layer.digest.as_str(), &mut out),
            )
            .map_err(|e| self.error(&format!("pulling the layer {}", layer.digest), e))?;
        Ok(out.bytes)
    }

    fn error(&self, doing: &str, e: oci_client::errors::OciDistributionError) -> FetchError {
        FetchError::Oci(format!("{}: {doing}: {e}", self.display))
    }
}

/// A buffer that refuses to grow past `limit` bytes (a registry sending
/// more than the manifest announced is cut off, not followed).
struct Bounded {
    bytes: Vec<u8>,
    limit: u64,
}

impl tokio::io::AsyncWrite for Bounded {
    fn poll_write(
        mut self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
        data: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        if (self.bytes.len() + data.len()) as u64 > self.limit {
            let limit = self.limit;
            return std::task::Poll::Ready(Err(std::io::Error::other(format!(
                "the registry sent more than the {limit} bytes the manifest gives"
            ))));
        }
        self.bytes.extend_from_slice(data);
        std::task::Poll::Ready(Ok(data.len()))
    }

    fn poll_flush(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn poll_shutdown(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }
}

/// The credentials the docker configuration holds for `registry`;
/// anonymous when it holds none (or cannot be read).
fn credentials(registry: &str) -> RegistryAuth {
    match docker_credential::get_credential(registry) {
        Ok(docker_credential::DockerCredential::UsernamePassword(user, password)) => {
            RegistryAuth::Basic(user, password)
        }
        // An identity token is a refresh token for the registry's OAuth2
        // service, which the client cannot exchange: go anonymous.
        Ok(docker_credential::DockerCredential::IdentityToken(_)) | Err(_) => {
            RegistryAuth::Anonymous
        }
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
    fn a_corrupt_cached_blob_is_a_miss() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::at(dir.path().to_path_buf());
        let digest = format!("sha256:{}", sha256_hex(b"layer"));
        cache
            .write_file(&blob_path(&cache, &digest), b"layer")
            .unwrap();
        assert_eq!(cached_blob(&cache, &digest).as_deref(), Some(&b"layer"[..]));
        cache
            .write_file(&blob_path(&cache, &digest), b"other")
            .unwrap();
        assert_eq!(cached_blob(&cache, &digest), None);
    }
}
