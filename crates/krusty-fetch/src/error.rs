//! What can go wrong while fetching, in Kustomize's words where it has them;
//! credentials in the URLs they name are redacted when shown.

/// A failed fetch.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FetchError {
    /// A git command failed (its command line and output are in the text).
    #[error("{0}")]
    Git(String),
    /// A git URL or ref that krusty does not hand to git (it could be read
    /// as an option, or is no valid ref name).
    #[error("{0}")]
    Reference(String),
    /// A git command ran out of time.
    #[error("{0}")]
    Timeout(String),
    /// An HTTP server answered with a status outside 2xx.
    #[error("HTTP Error: status code {code} ({reason})")]
    HttpStatus {
        /// The status code.
        code: u16,
        /// Its standard reason phrase.
        reason: String,
    },
    /// An HTTP request failed before an answer (name resolution,
    /// connection, TLS, a read).
    #[error("{0}")]
    HttpTransport(String),
    /// `--offline`, and the cache does not hold what is needed.
    #[error("{0}")]
    Offline(String),
    /// The cache folder could not be used.
    #[error("{0}")]
    Cache(String),
    /// An OCI reference is malformed, or the registry refused or failed
    /// a pull.
    #[error("{0}")]
    Oci(String),
    /// Content does not have the digest it was named by (nothing of it is
    /// kept or run).
    #[error("{0}")]
    Verify(String),
    /// An executable's source, hash or archive is unusable.
    #[error("{0}")]
    Artifact(String),
    /// An OCI artifact carries no signature by the `--verify-key` keys,
    /// or a key file is unusable.
    #[error("{0}")]
    Signature(String),
}

impl FetchError {
    /// Whether a git command ran out of time.
    pub fn is_timeout(&self) -> bool {
        matches!(self, FetchError::Timeout(_))
    }
}
