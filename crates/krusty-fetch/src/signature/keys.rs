//! The public keys signatures are checked with (`--verify-key`): PEM
//! files holding one `PUBLIC KEY` (PKIX) of an ECDSA P-256 key, as
//! `cosign generate-key-pair` and `openssl ec -pubout` write them.

use std::fmt;
use std::io::Read;
use std::path::PathBuf;
use std::sync::Arc;

use p256::ecdsa::signature::Verifier as _;
use p256::ecdsa::{Signature, VerifyingKey};
use p256::pkcs8::DecodePublicKey;

use super::BadSignature;
use crate::error::FetchError;

/// The largest key file read.
const MAX_KEY_BYTES: u64 = 64 << 10;

/// One key and the file it was read from.
#[derive(Clone)]
struct Key {
    file: String,
    key: VerifyingKey,
}

/// The keys a build checks signatures with. Empty (the default): no
/// signature is checked.
#[derive(Clone, Default)]
pub struct Keys {
    keys: Arc<[Key]>,
}

impl fmt::Debug for Keys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.keys.iter().map(|k| &k.file))
            .finish()
    }
}

impl Keys {
    /// The keys in the PEM files `paths` (`--verify-key`, in order). A
    /// file that cannot be read, or that holds no ECDSA P-256 public key,
    /// is an error naming it.
    pub fn read(paths: &[PathBuf]) -> Result<Keys, FetchError> {
        let keys = paths
            .iter()
            .map(|path| {
                let file = path.display().to_string();
                let text = read_bounded(path).map_err(|why| bad_key(&file, why))?;
                parse(&file, &text)
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Keys { keys: keys.into() })
    }

    /// The key in the PEM text `pem`, named `file` in messages.
    pub fn from_pem(file: &str, pem: &str) -> Result<Keys, FetchError> {
        Ok(Keys {
            keys: Arc::from([parse(file, pem)?]),
        })
    }

    /// Whether there is no key (signatures are not checked).
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// The key files, for messages: `a.pub, b.pub`.
    pub(crate) fn files(&self) -> String {
        let files: Vec<&str> = self.keys.iter().map(|k| k.file.as_str()).collect();
        files.join(", ")
    }

    /// Whether one of the keys made `der` (an ASN.1 DER ECDSA signature
    /// over the SHA-256 of `payload`); an error when `der` is no such
    /// signature at all.
    pub(crate) fn any_verifies(&self, payload: &[u8], der: &[u8]) -> Result<bool, BadSignature> {
        let signature = Signature::from_der(der).map_err(|_| BadSignature::NotDer)?;
        Ok(self
            .keys
            .iter()
            .any(|k| k.key.verify(payload, &signature).is_ok()))
    }
}

/// Why a key file cannot be read.
#[derive(Debug, thiserror::Error)]
enum KeyFileError {
    /// Opening or reading it failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// It is larger than [`MAX_KEY_BYTES`].
    #[error("larger than {MAX_KEY_BYTES} bytes")]
    TooLarge,
    /// It is not UTF-8 text.
    #[error("not PEM text")]
    NotText,
}

/// The text of the file at `path`, of at most [`MAX_KEY_BYTES`].
fn read_bounded(path: &std::path::Path) -> Result<String, KeyFileError> {
    let file = std::fs::File::open(path)?;
    let mut bytes = Vec::new();
    file.take(MAX_KEY_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_KEY_BYTES {
        return Err(KeyFileError::TooLarge);
    }
    String::from_utf8(bytes).map_err(|_| KeyFileError::NotText)
}

/// The key in `pem`, read from `file`.
fn parse(file: &str, pem: &str) -> Result<Key, FetchError> {
    let key = VerifyingKey::from_public_key_pem(pem.trim()).map_err(|_| {
        bad_key(
            file,
            "it holds no PEM public key (-----BEGIN PUBLIC KEY-----) of an ECDSA P-256 key",
        )
    })?;
    Ok(Key {
        file: file.to_string(),
        key,
    })
}

fn bad_key(file: &str, why: impl fmt::Display) -> FetchError {
    FetchError::Signature(format!("--verify-key '{file}': {why}"))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use p256::ecdsa::signature::Signer;
    use p256::ecdsa::SigningKey;
    use p256::pkcs8::{EncodePublicKey, LineEnding};

    /// A signing key from a fixed secret, and its public key as PEM.
    pub(crate) fn key_pair(seed: u8) -> (SigningKey, String) {
        let secret = SigningKey::from_bytes(&[seed; 32].into()).unwrap();
        let pem = secret
            .verifying_key()
            .to_public_key_pem(LineEnding::LF)
            .unwrap();
        (secret, pem)
    }

    #[test]
    fn a_signature_verifies_with_its_key_only() {
        let (secret, pem) = key_pair(1);
        let (_, other) = key_pair(2);
        let signature: Signature = secret.sign(b"payload");
        let der = signature.to_der();
        let keys = Keys::from_pem("k.pub", &pem).unwrap();
        assert!(keys.any_verifies(b"payload", der.as_bytes()).unwrap());
        assert!(!keys.any_verifies(b"payloaD", der.as_bytes()).unwrap());
        let others = Keys::from_pem("o.pub", &other).unwrap();
        assert!(!others.any_verifies(b"payload", der.as_bytes()).unwrap());
        let err = keys.any_verifies(b"payload", b"\x30\x02").unwrap_err();
        assert!(matches!(err, BadSignature::NotDer), "{err}");
        assert!(err.to_string().contains("not an ASN.1 DER"), "{err}");
    }

    #[test]
    fn files_without_a_p256_public_key_are_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let (_, pem) = key_pair(3);
        std::fs::write(dir.path().join("good.pub"), format!("\n{pem}\n")).unwrap();
        let keys = Keys::read(&[dir.path().join("good.pub")]).unwrap();
        assert!(!keys.is_empty());
        assert!(keys.files().ends_with("good.pub"));
        for (name, text) in [
            (
                "private.pem",
                "-----BEGIN EC PRIVATE KEY-----\nAAAA\n-----END EC PRIVATE KEY-----\n".to_string(),
            ),
            ("garbage.pub", "not a key".to_string()),
            ("big.pub", "x".repeat(MAX_KEY_BYTES as usize + 1)),
        ] {
            let path = dir.path().join(name);
            std::fs::write(&path, text).unwrap();
            let err = Keys::read(&[path]).unwrap_err().to_string();
            assert!(
                err.starts_with("--verify-key '") && err.contains(name),
                "{err}"
            );
        }
        let err = Keys::read(&[dir.path().join("missing.pub")])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("missing.pub") && err.contains("No such file"),
            "{err}"
        );
        assert!(Keys::default().is_empty());
    }
}
