//! What can go wrong while fetching, in Kustomize's words where it has them;
//! credentials in the URLs they name are redacted when shown.

use std::fmt;

/// A failed fetch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FetchError {
    /// A git command failed (its command line and output are in the text).
    Git(String),
    /// A git URL or ref that krusty does not hand to git (it could be read
    /// as an option, or is no valid ref name).
    Reference(String),
    /// A git command ran out of time.
    Timeout(String),
    /// An HTTP server answered with a status outside 2xx.
    HttpStatus {
        /// The status code.
        code: u16,
        /// Its standard reason phrase.
        reason: String,
    },
    /// An HTTP request failed before an answer (name resolution,
    /// connection, TLS, a read).
    HttpTransport(String),
    /// `--offline`, and the cache does not hold what is needed.
    Offline(String),
    /// The cache folder could not be used.
    Cache(String),
    /// An OCI reference is malformed, or the registry refused or failed
    /// a pull.
    Oci(String),
    /// Content does not have the digest it was named by (nothing of it is
    /// kept or run).
    Verify(String),
    /// An executable's source, hash or archive is unusable.
    Artifact(String),
    /// An OCI artifact carries no signature by the `--verify-key` keys,
    /// or a key file is unusable.
    Signature(String),
}

impl fmt::Display for FetchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FetchError::Git(text)
            | FetchError::Reference(text)
            | FetchError::Timeout(text)
            | FetchError::HttpTransport(text)
            | FetchError::Offline(text)
            | FetchError::Cache(text)
            | FetchError::Oci(text)
            | FetchError::Verify(text)
            | FetchError::Artifact(text)
            | FetchError::Signature(text) => f.write_str(text),
            FetchError::HttpStatus { code, reason } => {
                write!(f, "HTTP Error: status code {code} ({reason})")
            }
        }
    }
}

impl std::error::Error for FetchError {}

impl FetchError {
    /// Whether a git command ran out of time.
    pub fn is_timeout(&self) -> bool {
        matches!(self, FetchError::Timeout(_))
    }
}
