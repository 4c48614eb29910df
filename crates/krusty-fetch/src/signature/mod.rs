//! Signatures of OCI artifacts, in cosign's format, checked against the
//! keys the user gives (`--verify-key`).
//!
//! cosign keeps the signatures of the artifact whose manifest digest is
//! `sha256:HEX` in the artifact's own repository, under the tag
//! `sha256-HEX.sig`: an image manifest whose layers of type
//! [`SIMPLE_SIGNING_MEDIA_TYPE`] are signed payloads, each layer's
//! annotation `dev.cosignproject.cosign/signature` holding the base64
//! ASN.1 DER ECDSA P-256 signature (SHA-256) over the payload's bytes.
//! A payload names the manifest digest it is for
//! (`critical.image.docker-manifest-digest`).
//!
//! An artifact is trusted when one of its signatures is made by one of
//! the keys over a payload that names its digest. A tag is resolved to
//! its digest once, and the artifact is then read by that digest, so a
//! tag moved between the check and the pull changes nothing. The
//! signature manifest and payloads are read through the cache like any
//! OCI manifest and blob (a signature tag is resolved on every build and
//! recorded for `--offline`, which reads only the cache), within small
//! bounds: [`MAX_SIGNATURE_MANIFEST_BYTES`], [`MAX_PAYLOAD_BYTES`] and
//! [`MAX_SIGNATURES`] signatures per artifact.

mod image;
mod keys;
mod payload;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use base64::Engine;

pub use keys::Keys;

use crate::cache::Cache;
use crate::error::FetchError;
use crate::http::Limits;
use crate::oci::{self, sha256_hex, OciReference};

/// The media type of a layer holding a signed payload.
pub const SIMPLE_SIGNING_MEDIA_TYPE: &str = "application/vnd.dev.cosign.simplesigning.v1+json";

/// The annotation of a signature layer holding the signature.
pub const SIGNATURE_ANNOTATION: &str = "dev.cosignproject.cosign/signature";

/// The largest signature manifest read.
pub const MAX_SIGNATURE_MANIFEST_BYTES: u64 = 1 << 20;

/// The largest signed payload read.
pub const MAX_PAYLOAD_BYTES: u64 = 64 << 10;

/// The most signatures of one artifact checked.
pub const MAX_SIGNATURES: usize = 32;

/// The longest base64 signature read (a DER P-256 signature is at most
/// 72 bytes).
const MAX_SIGNATURE_CHARS: usize = 1024;

/// The tag cosign keeps the signatures of the manifest `digest` under.
pub fn signature_tag(digest: &str) -> String {
    format!("{}.sig", digest.replacen(':', "-", 1))
}

/// Where signatures are read from: manifests and blobs of a registry.
pub(crate) trait Registry {
    /// The manifest `reference` names (its tag resolved), of at most
    /// `max_bytes`.
    fn manifest(&self, reference: &OciReference, max_bytes: u64) -> Result<Vec<u8>, FetchError>;
    /// The blob `digest` of `reference`'s repository, of `size` bytes,
    /// its digest checked.
    fn blob(
        &self,
        reference: &OciReference,
        digest: &str,
        size: u64,
    ) -> Result<Vec<u8>, FetchError>;
}

/// The registries of a build, through its cache (see [`oci`]).
pub(crate) struct Pulls<'a> {
    /// The cache manifests and blobs are kept in.
    pub cache: &'a Cache,
    /// Read the cache only.
    pub offline: bool,
    /// The build's bounds (sizes are bounded further here).
    pub limits: Limits,
}

impl Registry for Pulls<'_> {
    fn manifest(&self, reference: &OciReference, max_bytes: u64) -> Result<Vec<u8>, FetchError> {
        let limits = Limits {
            max_bytes: max_bytes.min(self.limits.max_bytes),
            ..self.limits
        };
        oci::pull_manifest(self.cache, self.offline, reference, limits)
    }

    fn blob(
        &self,
        reference: &OciReference,
        digest: &str,
        size: u64,
    ) -> Result<Vec<u8>, FetchError> {
        oci::pull_blob(
            self.cache,
            self.offline,
            reference,
            digest,
            size,
            self.limits,
        )
    }
}

type Checked = Arc<OnceLock<Result<(), FetchError>>>;

/// The signature checks of one build: each artifact (repository and
/// digest) is checked once.
#[derive(Debug, Default)]
pub(crate) struct Verifier {
    keys: Keys,
    checked: Mutex<HashMap<String, Checked>>,
}

impl Verifier {
    /// Checks with `keys`; none: checks nothing.
    pub(crate) fn new(keys: Keys) -> Verifier {
        Verifier {
            keys,
            checked: Mutex::new(HashMap::new()),
        }
    }

    /// Whether signatures are checked.
    pub(crate) fn active(&self) -> bool {
        !self.keys.is_empty()
    }

    /// `reference` named by the digest of its manifest, once a signature
    /// by one of the keys is found for that digest; `reference` as it is
    /// when no keys are given.
    pub(crate) fn pin(
        &self,
        registry: &dyn Registry,
        reference: &OciReference,
    ) -> Result<OciReference, FetchError> {
        if !self.active() {
            return Ok(reference.clone());
        }
        let manifest = registry.manifest(reference, u64::MAX)?;
        let digest = format!("sha256:{}", sha256_hex(&manifest));
        self.check(registry, &reference.to_string(), reference, &digest)?;
        Ok(OciReference {
            digest: Some(digest),
            ..reference.clone()
        })
    }

    /// Checks the container image `image` (named by digest) is signed by
    /// one of the keys, in its repository; nothing when no keys are given.
    pub(crate) fn image(&self, registry: &dyn Registry, image: &str) -> Result<(), FetchError> {
        if !self.active() {
            return Ok(());
        }
        let reference = image::reference(image)?;
        let digest = reference.digest.clone().unwrap_or_default();
        self.check(
            registry,
            &format!("container image '{image}'"),
            &reference,
            &digest,
        )
    }

    /// Checks `artifact` (`what` in messages) at `digest`, once per build.
    fn check(
        &self,
        registry: &dyn Registry,
        what: &str,
        artifact: &OciReference,
        digest: &str,
    ) -> Result<(), FetchError> {
        let key = format!("{}/{}@{digest}", artifact.registry, artifact.repository);
        let slot = {
            let mut map = self.checked.lock().unwrap_or_else(|e| e.into_inner());
            Arc::clone(map.entry(key).or_default())
        };
        slot.get_or_init(|| {
            verify(registry, &self.keys, artifact, digest).map_err(|why| {
                let what = if what.contains(digest) {
                    what.to_string()
                } else {
                    format!("{what} ({digest})")
                };
                FetchError::Signature(format!(
                    "{what}: no valid signature: {why}; with --verify-key ({}), an OCI artifact is trusted only when one of the keys signed it (cosign sign --key)",
                    self.keys.files()
                ))
            })
        })
        .clone()
    }
}

/// A signature layer as the signature manifest describes it.
#[derive(Debug)]
struct Signed {
    digest: String,
    size: u64,
    signature: Option<String>,
}

/// Why no signature of an artifact verifies with the keys.
#[derive(Debug, thiserror::Error)]
enum Unverified {
    /// The signature manifest cannot be read.
    #[error("its signatures ({at}) cannot be read: {source}")]
    Unreadable {
        /// Where the signatures are.
        at: Box<OciReference>,
        /// Why the pull failed.
        source: FetchError,
    },
    /// The signature manifest is unusable.
    #[error("{at}: {source}")]
    Manifest {
        /// Where the signatures are.
        at: Box<OciReference>,
        /// What is wrong with the manifest.
        source: ManifestError,
    },
    /// The signature manifest lists no signature layer.
    #[error("{at} holds no layer of type {SIMPLE_SIGNING_MEDIA_TYPE}")]
    NoSignatures {
        /// Where the signatures are.
        at: Box<OciReference>,
    },
    /// No signature verifies.
    #[error("{}", rejections(.rejected, *.unchecked))]
    Rejected {
        /// Each signature checked, and why it does not verify.
        rejected: Vec<Rejected>,
        /// How many signatures were left unchecked (beyond
        /// [`MAX_SIGNATURES`]).
        unchecked: usize,
    },
}

/// One signature that does not verify.
#[derive(Debug, thiserror::Error)]
#[error("signature {number} ({digest}): {why}")]
struct Rejected {
    /// Its place in the manifest, from 1.
    number: usize,
    /// The digest of its payload.
    digest: String,
    /// Why it does not verify.
    #[source]
    why: BadSignature,
}

/// The reasons of [`Unverified::Rejected`], one after the other.
fn rejections(rejected: &[Rejected], unchecked: usize) -> String {
    let mut reasons: Vec<String> = rejected.iter().map(Rejected::to_string).collect();
    if unchecked > 0 {
        reasons.push(format!(
            "{unchecked} more not checked (at most {MAX_SIGNATURES} are)"
        ));
    }
    reasons.join("; ")
}

/// Why a signature manifest is unusable.
#[derive(Debug, thiserror::Error)]
enum ManifestError {
    /// It does not parse as JSON.
    #[error("the signature manifest is not JSON: {0}")]
    NotJson(#[source] serde_json::Error),
    /// It has no `layers` list.
    #[error("the signature manifest lists no layers")]
    NoLayers,
}

/// Why one signature does not verify.
#[derive(Debug, thiserror::Error)]
pub(crate) enum BadSignature {
    /// The layer carries no signature.
    #[error("the layer has no annotation {SIGNATURE_ANNOTATION}")]
    NoAnnotation,
    /// The signature is longer than any this format holds.
    #[error("the signature is longer than {MAX_SIGNATURE_CHARS} characters")]
    TooLong,
    /// The signature is not base64.
    #[error("the signature is not base64")]
    NotBase64,
    /// The signature is no DER ECDSA P-256 signature.
    #[error("the signature is not an ASN.1 DER ECDSA P-256 signature")]
    NotDer,
    /// The payload is larger than krusty reads (its size).
    #[error("the payload is {0} bytes, more than the {MAX_PAYLOAD_BYTES} krusty reads")]
    PayloadTooLarge(u64),
    /// The payload cannot be pulled.
    #[error("the payload cannot be read: {0}")]
    PayloadUnreadable(#[source] FetchError),
    /// None of the keys made the signature.
    #[error("it is not made by any of the keys over this payload")]
    NotByKeys,
    /// The signed payload is not for this artifact.
    #[error(transparent)]
    Payload(#[from] payload::PayloadError),
}

/// Why no signature of `artifact` at `digest` verifies with `keys`
/// (each signature's reason), or nothing when one does.
fn verify(
    registry: &dyn Registry,
    keys: &Keys,
    artifact: &OciReference,
    digest: &str,
) -> Result<(), Unverified> {
    let at = OciReference {
        tag: Some(signature_tag(digest)),
        digest: None,
        ..artifact.clone()
    };
    let manifest = match registry.manifest(&at, MAX_SIGNATURE_MANIFEST_BYTES) {
        Ok(manifest) => manifest,
        Err(source) => {
            return Err(Unverified::Unreadable {
                at: Box::new(at),
                source,
            })
        }
    };
    let layers = match signed_layers(&manifest) {
        Ok(layers) => layers,
        Err(source) => {
            return Err(Unverified::Manifest {
                at: Box::new(at),
                source,
            })
        }
    };
    if layers.is_empty() {
        return Err(Unverified::NoSignatures { at: Box::new(at) });
    }
    let mut rejected = Vec::new();
    for (i, layer) in layers.iter().take(MAX_SIGNATURES).enumerate() {
        match verify_one(registry, keys, &at, layer, digest) {
            Ok(()) => return Ok(()),
            Err(why) => rejected.push(Rejected {
                number: i + 1,
                digest: layer.digest.clone(),
                why,
            }),
        }
    }
    Err(Unverified::Rejected {
        rejected,
        unchecked: layers.len().saturating_sub(MAX_SIGNATURES),
    })
}

/// Checks one signature: made by one of `keys` over its payload, which
/// names `digest`. The payload is read only once the annotation holds a
/// signature; what it says counts only once the signature verifies.
fn verify_one(
    registry: &dyn Registry,
    keys: &Keys,
    at: &OciReference,
    layer: &Signed,
    digest: &str,
) -> Result<(), BadSignature> {
    let text = layer
        .signature
        .as_deref()
        .ok_or(BadSignature::NoAnnotation)?;
    if text.len() > MAX_SIGNATURE_CHARS {
        return Err(BadSignature::TooLong);
    }
    let der = base64::engine::general_purpose::STANDARD
        .decode(text.trim())
        .map_err(|_| BadSignature::NotBase64)?;
    if layer.size > MAX_PAYLOAD_BYTES {
        return Err(BadSignature::PayloadTooLarge(layer.size));
    }
    let payload = registry
        .blob(at, &layer.digest, layer.size)
        .map_err(BadSignature::PayloadUnreadable)?;
    if !keys.any_verifies(&payload, &der)? {
        return Err(BadSignature::NotByKeys);
    }
    Ok(payload::check(&payload, digest)?)
}

/// The signature layers of a signature manifest.
fn signed_layers(manifest: &[u8]) -> Result<Vec<Signed>, ManifestError> {
    let json: serde_json::Value =
        serde_json::from_slice(manifest).map_err(ManifestError::NotJson)?;
    let layers = json
        .get("layers")
        .and_then(|l| l.as_array())
        .ok_or(ManifestError::NoLayers)?;
    Ok(layers
        .iter()
        .filter(|l| l.get("mediaType").and_then(|m| m.as_str()) == Some(SIMPLE_SIGNING_MEDIA_TYPE))
        .map(|l| Signed {
            digest: l
                .get("digest")
                .and_then(|d| d.as_str())
                .unwrap_or_default()
                .to_string(),
            size: l.get("size").and_then(|s| s.as_u64()).unwrap_or(0),
            signature: l
                .get("annotations")
                .and_then(|a| a.get(SIGNATURE_ANNOTATION))
                .and_then(|s| s.as_str())
                .map(str::to_string),
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use p256::ecdsa::signature::Signer;
    use p256::ecdsa::{Signature, SigningKey};

    /// A signature layer to put: the payload and its annotation.
    type Layer = (String, Option<String>);

    /// A registry in memory: manifests by `repo:tag` or `repo@digest`,
    /// blobs by digest; counts what is asked.
    #[derive(Default)]
    struct Memory {
        manifests: HashMap<String, Vec<u8>>,
        blobs: HashMap<String, Vec<u8>>,
        asked: Mutex<Vec<String>>,
    }

    impl Memory {
        fn name(reference: &OciReference) -> String {
            match (&reference.digest, &reference.tag) {
                (Some(d), _) => format!("{}@{d}", reference.repository),
                (None, t) => format!("{}:{}", reference.repository, t.as_deref().unwrap_or("")),
            }
        }

        fn put_blob(&mut self, bytes: &[u8]) -> String {
            let digest = format!("sha256:{}", sha256_hex(bytes));
            self.blobs.insert(digest.clone(), bytes.to_vec());
            digest
        }

        /// Puts an artifact at `repo:tag`; its digest.
        fn put_artifact(&mut self, repo: &str, tag: &str) -> String {
            let manifest = format!(r#"{{"layers":[],"tag":"{tag}"}}"#).into_bytes();
            let digest = format!("sha256:{}", sha256_hex(&manifest));
            self.manifests
                .insert(format!("{repo}@{digest}"), manifest.clone());
            self.manifests.insert(format!("{repo}:{tag}"), manifest);
            digest
        }

        /// Puts a signature manifest for `digest` in `repo`: one layer
        /// per (payload, signature).
        fn put_signatures(&mut self, repo: &str, digest: &str, layers: &[Layer]) {
            let descriptors: Vec<String> = layers
                .iter()
                .map(|(payload, signature)| {
                    let blob = self.put_blob(payload.as_bytes());
                    let annotations = signature
                        .as_ref()
                        .map(|s| format!(r#","annotations":{{"{SIGNATURE_ANNOTATION}":"{s}"}}"#))
                        .unwrap_or_default();
                    format!(
                        r#"{{"mediaType":"{SIMPLE_SIGNING_MEDIA_TYPE}","digest":"{blob}","size":{}{annotations}}}"#,
                        payload.len()
                    )
                })
                .collect();
            let manifest = format!(r#"{{"layers":[{}]}}"#, descriptors.join(","));
            self.manifests.insert(
                format!("{repo}:{}", signature_tag(digest)),
                manifest.into_bytes(),
            );
        }
    }

    impl Registry for Memory {
        fn manifest(&self, r: &OciReference, max: u64) -> Result<Vec<u8>, FetchError> {
            let name = Memory::name(r);
            self.asked.lock().unwrap().push(name.clone());
            let bytes = self
                .manifests
                .get(&name)
                .cloned()
                .ok_or_else(|| FetchError::Oci(format!("{r}: 404 Not Found")))?;
            assert!(bytes.len() as u64 <= max);
            Ok(bytes)
        }

        fn blob(&self, r: &OciReference, digest: &str, size: u64) -> Result<Vec<u8>, FetchError> {
            self.asked.lock().unwrap().push(digest.to_string());
            let bytes = self
                .blobs
                .get(digest)
                .cloned()
                .ok_or_else(|| FetchError::Oci(format!("{r}: no blob {digest}")))?;
            assert_eq!(bytes.len() as u64, size);
            Ok(bytes)
        }
    }

    fn sign(key: &SigningKey, payload: &str) -> String {
        let signature: Signature = key.sign(payload.as_bytes());
        base64::engine::general_purpose::STANDARD.encode(signature.to_der().as_bytes())
    }

    fn reference(text: &str) -> OciReference {
        OciReference::parse(text).unwrap()
    }

    /// A verifier with the public keys of `seeds`, read from files
    /// `key0.pub`, `key1.pub`, ...
    fn verifier(seeds: &[u8]) -> Verifier {
        let dir = tempfile::tempdir().unwrap();
        let paths: Vec<std::path::PathBuf> = seeds
            .iter()
            .enumerate()
            .map(|(i, seed)| {
                let path = dir.path().join(format!("key{i}.pub"));
                std::fs::write(&path, keys::tests::key_pair(*seed).1).unwrap();
                path
            })
            .collect();
        Verifier::new(Keys::read(&paths).unwrap())
    }

    #[test]
    fn a_tag_is_pinned_to_the_digest_its_signature_names() {
        let (key, _) = keys::tests::key_pair(1);
        let mut registry = Memory::default();
        let digest = registry.put_artifact("krm/catalog", "v1");
        let payload = payload::for_digest("reg.example/krm/catalog", &digest);
        let signature = sign(&key, &payload);
        registry.put_signatures("krm/catalog", &digest, &[(payload, Some(signature))]);
        let r = reference("oci://reg.example/krm/catalog:v1");
        let verifier = verifier(&[2, 1]);
        let pinned = verifier.pin(&registry, &r).unwrap();
        assert_eq!(pinned.digest.as_deref(), Some(digest.as_str()));
        assert_eq!(pinned.tag.as_deref(), Some("v1"));
        let asked = registry.asked.lock().unwrap().len();
        verifier.pin(&registry, &pinned).unwrap();
        assert_eq!(
            registry.asked.lock().unwrap().len(),
            asked + 1,
            "a digest checked once is not checked again (only its manifest is read)"
        );
        let unchecked = Verifier::default();
        assert_eq!(
            unchecked.pin(&registry, &r).unwrap(),
            r,
            "no keys: as it is"
        );
    }

    #[test]
    fn each_failure_names_the_artifact_its_digest_and_the_reason() {
        let (key, _) = keys::tests::key_pair(1);
        let (other_key, _) = keys::tests::key_pair(2);
        let mut registry = Memory::default();
        let mut case = |tag: &str, layers: &dyn Fn(&str) -> Vec<Layer>| {
            let digest = registry.put_artifact("krm/c", tag);
            let made = layers(&digest);
            if !made.is_empty() {
                registry.put_signatures("krm/c", &digest, &made);
            }
            digest
        };
        let good = |digest: &str| payload::for_digest("krm/c", digest);
        let unsigned = case("unsigned", &|_| Vec::new());
        let by_other = case("other", &|d| {
            vec![(good(d), Some(sign(&other_key, &good(d))))]
        });
        let elsewhere = "sha256:".to_string() + &"9".repeat(64);
        let for_other = case("for-other", &|_| {
            let p = payload::for_digest("krm/c", &elsewhere);
            vec![(p.clone(), Some(sign(&key, &p)))]
        });
        let tampered = case("tampered", &|d| {
            vec![(
                good(d).replace("krm/c", "krm/x"),
                Some(sign(&key, &good(d))),
            )]
        });
        let bare = case("bare", &|d| vec![(good(d), None)]);
        let garbled = case("garbled", &|d| vec![(good(d), Some("%%%".into()))]);
        let second = case("second", &|d| {
            vec![
                (good(d), Some(sign(&other_key, &good(d)))),
                (good(d), Some(sign(&key, &good(d)))),
            ]
        });
        let verifier = verifier(&[1]);
        let check = |tag: &str| {
            verifier.pin(
                &registry,
                &reference(&format!("oci://reg.example/krm/c:{tag}")),
            )
        };
        assert_eq!(
            check("second").unwrap().digest,
            Some(second),
            "any one signature is enough"
        );
        for (tag, digest, why) in [
            (
                "unsigned",
                &unsigned,
                "its signatures (oci://reg.example/krm/c:sha256-",
            ),
            ("other", &by_other, "not made by any of the keys"),
            ("for-other", &for_other, "not for this artifact"),
            ("tampered", &tampered, "not made by any of the keys"),
            (
                "bare",
                &bare,
                "no annotation dev.cosignproject.cosign/signature",
            ),
            ("garbled", &garbled, "not base64"),
        ] {
            let err = check(tag).unwrap_err();
            assert!(matches!(err, FetchError::Signature(_)), "{err:?}");
            let err = err.to_string();
            assert!(
                err.starts_with(&format!(
                    "oci://reg.example/krm/c:{tag} ({digest}): no valid signature: "
                )) && err.contains(why)
                    && err.contains("with --verify-key (")
                    && err.contains("key0.pub"),
                "{tag}: {err}"
            );
        }
    }

    #[test]
    fn images_are_checked_by_their_digest_in_their_repository() {
        let (key, _) = keys::tests::key_pair(4);
        let mut registry = Memory::default();
        let digest = "sha256:".to_string() + &"c".repeat(64);
        let p = payload::for_digest("127.0.0.1:5000/krm/fn", &digest);
        registry.put_signatures("krm/fn", &digest, &[(p.clone(), Some(sign(&key, &p)))]);
        let verifier = verifier(&[4]);
        verifier
            .image(&registry, &format!("127.0.0.1:5000/krm/fn@{digest}"))
            .unwrap();
        let err = verifier
            .image(&registry, &format!("127.0.0.1:5000/krm/other@{digest}"))
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with(&format!(
                "container image '127.0.0.1:5000/krm/other@{digest}': no valid signature"
            )),
            "{err}"
        );
        assert!(Verifier::default().image(&registry, "no/digest:v1").is_ok());
        assert!(verifier.image(&registry, "no/digest:v1").is_err());
    }

    #[test]
    fn oversized_payloads_are_not_read() {
        let (key, _) = keys::tests::key_pair(1);
        let mut registry = Memory::default();
        let digest = registry.put_artifact("krm/big", "v1");
        let big = format!(
            "{}{}",
            payload::for_digest("krm/big", &digest),
            " ".repeat(MAX_PAYLOAD_BYTES as usize)
        );
        registry.put_signatures("krm/big", &digest, &[(big.clone(), Some(sign(&key, &big)))]);
        let err = verifier(&[1])
            .pin(&registry, &reference("oci://reg.example/krm/big:v1"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("more than the 65536 krusty reads"), "{err}");
        let blobs_read = registry
            .asked
            .lock()
            .unwrap()
            .iter()
            .filter(|a| a.starts_with("sha256:"))
            .count();
        assert_eq!(blobs_read, 0);
    }
}
