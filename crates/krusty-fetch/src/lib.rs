//! The fetch layer: remote git repositories and files over HTTP(S),
//! brought into a content-addressed cache and served as local folders.
//! Remote bases use it; catalogs, Helm chart repositories and programs by
//! URL share it.
//!
//! A [`Fetcher`] serves one build: each remote it is asked for is fetched
//! once however many times (and from however many threads) it is named.
//! Git refs are resolved to commits on every build (`git ls-remote`), and
//! a commit's checkout, once in the [`Cache`], is not fetched again while
//! it matches the manifest it was kept with (checked once per build). With
//! `offline`, nothing goes to the network: refs resolve to the commit they
//! had when last fetched, and a miss, or an entry found damaged, is an
//! error.
//!
//! OCI artifacts ([`Fetcher::oci_layer`]) follow the same rules: a tag is
//! resolved to a manifest digest on every build, and blobs are kept by
//! digest. With [`FetchOptions::verify_keys`], an OCI artifact (and a
//! container image, [`Fetcher::verify_image`]) is used only once a
//! cosign signature by one of the keys is found for its digest
//! ([`signature`]). Exec functions' programs
//! ([`Fetcher::verified_executable`]) are checked against their sha256
//! before anything else and kept by it. The
//! cache also holds the results of idempotent functions
//! ([`Cache::function_result`]).

pub mod artifact;
pub mod cache;
mod checkouts;
mod error;
pub mod git;
pub mod git_url;
pub mod go;
pub mod http;
mod manifest;
pub mod oci;
mod private_path;
pub mod progress;
mod redact;
pub mod signature;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

pub use cache::{Cache, Kept};
pub use error::FetchError;
pub use git_url::{GitUrl, GitUrlError};
pub use http::{is_http_url, Limits};
pub use oci::{
    is_oci_reference, OciBlob, OciReference, CATALOG_MEDIA_TYPE, DEFINITION_MEDIA_TYPE,
    EXEC_MEDIA_TYPE, STARLARK_MEDIA_TYPE,
};
pub use redact::{redact, REDACTED};
pub use signature::Keys as VerifyKeys;

use crate::git::{is_commit_id, Git};
pub use crate::progress::Progress;

/// How a [`Fetcher`] works.
#[derive(Debug, Clone, Default)]
pub struct FetchOptions {
    /// Use only what the cache holds.
    pub offline: bool,
    /// Show a progress line on stderr while fetching.
    pub progress: bool,
    /// The cache folder (default: [`Cache::locate`]).
    pub cache_dir: Option<PathBuf>,
    /// Keep the results of idempotent functions in the cache and reuse
    /// them (see [`FetchOptions::function_cache`]).
    pub function_cache: bool,
    /// The time and size bounds on each download (`--fetch-timeout`,
    /// `--fetch-max-size`).
    pub limits: Limits,
    /// The keys one of which must have signed every OCI artifact pulled
    /// and every container image checked (`--verify-key`); none: no
    /// signature is checked. See [`signature`].
    pub verify_keys: VerifyKeys,
}

impl FetchOptions {
    /// The cache that holds function results: `None` when
    /// `function_cache` is off; an error (naming the folder) when the
    /// cache is refused or there is none, for the build to report once a
    /// function needs it.
    pub fn function_cache(&self) -> Option<Result<Cache, FetchError>> {
        self.function_cache.then(|| {
            match &self.cache_dir {
                Some(dir) => Cache::open(dir.clone()),
                None => Cache::locate(),
            }
            .map_err(|e| FetchError::Cache(e.to_string()))
        })
    }
}

/// A repository checked out at one commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checkout {
    /// The checkout's root folder (in the cache; never changes).
    pub dir: PathBuf,
    /// The commit checked out.
    pub commit: String,
}

type Shared<T> = Arc<OnceLock<Result<T, FetchError>>>;

/// Fetches remotes for one build, each once.
#[derive(Debug, Default)]
pub struct Fetcher {
    options: FetchOptions,
    cache: OnceLock<Result<Cache, FetchError>>,
    checkouts: Mutex<HashMap<String, Shared<Checkout>>>,
    files: Mutex<HashMap<String, Shared<Arc<[u8]>>>>,
    layers: Mutex<HashMap<String, Shared<OciBlob>>>,
    /// The kept programs checked in this build.
    programs: Mutex<std::collections::HashSet<PathBuf>>,
    signatures: signature::Verifier,
}

impl Fetcher {
    /// A fetcher; nothing is touched until something is fetched.
    pub fn new(options: FetchOptions) -> Fetcher {
        Fetcher {
            signatures: signature::Verifier::new(options.verify_keys.clone()),
            options,
            ..Fetcher::default()
        }
    }

    /// The cache in use.
    pub fn cache(&self) -> Result<&Cache, FetchError> {
        self.cache
            .get_or_init(|| {
                match &self.options.cache_dir {
                    Some(dir) => Cache::open(dir.clone()),
                    None => Cache::locate(),
                }
                .map_err(|e| FetchError::Cache(e.to_string()))
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    /// The repository `url` names, checked out at its ref.
    pub fn checkout(&self, url: &GitUrl) -> Result<Checkout, FetchError> {
        let key = format!("{}\0{}\0{}", url.clone_url(), url.reference, url.submodules);
        let slot = shared_slot(&self.checkouts, key);
        slot.get_or_init(|| self.fetch_checkout(url)).clone()
    }

    /// The body of the file at the HTTP(S) `url`, with `timeout` on
    /// connecting and on each read.
    pub fn file(&self, url: &str, timeout: Duration) -> Result<Arc<[u8]>, FetchError> {
        let slot = shared_slot(&self.files, url.to_string());
        slot.get_or_init(|| self.fetch_file(url, timeout)).clone()
    }

    /// The first layer whose media type is one of `accepted_media_types`
    /// of the OCI artifact `reference` (`oci://registry[:port]/repo:tag` or
    /// `…@sha256:<hex>`), its digest checked. A tag is resolved on every
    /// build (recorded for `--offline`); blobs come from the cache by
    /// digest. See [`oci`] for the plain-HTTP and credential rules.
    pub fn oci_layer(
        &self,
        reference: &str,
        accepted_media_types: &[&str],
    ) -> Result<OciBlob, FetchError> {
        let key = format!("{reference}\0{}", accepted_media_types.join("\0"));
        let slot = shared_slot(&self.layers, key);
        slot.get_or_init(|| {
            let parsed = OciReference::parse(reference)?;
            let cache = self.cache()?;
            let _progress = Progress::start(self.options.progress, reference);
            let parsed = self.signatures.pin(&self.pulls(cache), &parsed)?;
            oci::pull_layer(
                cache,
                self.options.offline,
                &parsed,
                accepted_media_types,
                self.options.limits,
            )
        })
        .clone()
    }

    /// The program of an exec function's platform entry, ready to run:
    /// `uri` (`https://`, `http://` on loopback, `oci://`, or `file://`
    /// absolute or relative to `base_dir`) checked against `sha256` before
    /// anything else (a mismatch, or a missing or malformed hash, is an
    /// error and nothing is kept), unpacked when it is a tar or tar.gz
    /// archive (its file `bin`), mode 0755, kept in the cache by digest:
    /// once there, it is returned without any fetch, even offline. See
    /// [`artifact`].
    pub fn verified_executable(
        &self,
        uri: &str,
        sha256: &str,
        bin: &str,
        base_dir: &Path,
    ) -> Result<PathBuf, FetchError> {
        let expected = artifact::parse_sha256(uri, sha256)?;
        let entry = artifact::entry_name(uri, bin)?;
        let source = artifact::source(uri, base_dir)?;
        let cache = self.cache()?;
        // With --verify-key, a program from a registry is trusted by its
        // signature even when its bytes are already cached.
        let source = match source {
            artifact::Source::Oci(reference) if self.signatures.active() => {
                let parsed = OciReference::parse(&reference)?;
                let pinned = self.signatures.pin(&self.pulls(cache), &parsed)?;
                artifact::Source::Oci(pinned.to_string())
            }
            other => other,
        };
        let dest = artifact::cached_program(cache, &expected, &entry);
        if self.programs_checked(&dest) {
            return Ok(dest);
        }
        let damaged = match artifact::kept(cache, &dest, &expected) {
            Kept::Intact(()) => return Ok(self.program_checked(dest)),
            Kept::Damaged(why) => Some(why),
            Kept::Missing => None,
        };
        let bytes = match source {
            artifact::Source::File(path) => artifact::read_local(uri, &path)?,
            artifact::Source::Oci(reference) => self
                .oci_layer(&reference, &[EXEC_MEDIA_TYPE])?
                .bytes
                .to_vec(),
            artifact::Source::Http(url) => {
                if self.options.offline {
                    return Err(FetchError::Offline(match damaged {
                        Some(why) => format!(
                            "--offline: the cached program of exec function '{url}' ({}) is damaged: {why}; build once without --offline to fetch it again",
                            dest.display()
                        ),
                        None => format!(
                            "--offline: '{url}' is not in the cache ({}); build once without --offline to fetch it",
                            cache.root().display()
                        ),
                    }));
                }
                let _progress = Progress::start(self.options.progress, &url);
                http::download(&url, HTTP_TIMEOUT, self.options.limits)?
            }
        };
        artifact::verify(uri, &expected, &bytes)?;
        let program = artifact::unpack(uri, bytes, &entry)?;
        artifact::keep(cache, &program, &expected, &dest).map(|dest| self.program_checked(dest))
    }

    /// Whether the kept program `dest` was checked in this build.
    fn programs_checked(&self, dest: &Path) -> bool {
        let checked = self.programs.lock().unwrap_or_else(|e| e.into_inner());
        checked.contains(dest)
    }

    /// Notes that the kept program `dest` is checked; returns it.
    fn program_checked(&self, dest: PathBuf) -> PathBuf {
        let mut checked = self.programs.lock().unwrap_or_else(|e| e.into_inner());
        checked.insert(dest.clone());
        dest
    }

    /// Checks that the container image `image`
    /// (`[registry/]repository@sha256:HEX`) is signed by one of the
    /// `--verify-key` keys, reading its signatures from its registry
    /// (the image itself is not pulled); nothing when no keys are given.
    /// With keys, an image without a digest is an error.
    pub fn verify_image(&self, image: &str) -> Result<(), FetchError> {
        if !self.signatures.active() {
            return Ok(());
        }
        let cache = self.cache()?;
        let _progress = Progress::start(self.options.progress, image);
        self.signatures.image(&self.pulls(cache), image)
    }

    /// The registries, through `cache`, for signature checks.
    fn pulls<'a>(&self, cache: &'a Cache) -> signature::Pulls<'a> {
        signature::Pulls {
            cache,
            offline: self.options.offline,
            limits: self.options.limits,
        }
    }

    fn fetch_file(&self, url: &str, timeout: Duration) -> Result<Arc<[u8]>, FetchError> {
        let cache = self.cache()?;
        let copy = cache.entry(&["http", &cache::key(url)]);
        if self.options.offline {
            return match cache.read_sealed(&copy, self.options.limits.max_bytes) {
                Kept::Intact(body) => Ok(Arc::from(body)),
                Kept::Damaged(why) => Err(FetchError::Offline(format!(
                    "--offline: the cached copy of '{url}' ({}) is damaged: {why}; build once without --offline to fetch it again",
                    copy.display()
                ))),
                Kept::Missing => Err(FetchError::Offline(format!(
                    "--offline: '{url}' is not in the cache ({}); build once without --offline to fetch it",
                    cache.root().display()
                ))),
            };
        }
        let _progress = Progress::start(self.options.progress, url);
        let body = http::download(url, timeout, self.options.limits)?;
        // The copy only serves --offline builds; failing to keep it is no
        // reason to fail this one.
        let _ = cache.write_sealed(&copy, &body);
        Ok(Arc::from(body))
    }

    fn fetch_checkout(&self, url: &GitUrl) -> Result<Checkout, FetchError> {
        let cache = self.cache()?;
        let clone_url = url.clone_url();
        let repo_key = cache::key(&format!("{clone_url}\0{}", url.submodules));
        let reference = url.fetch_ref();
        let record = cache.entry(&["git", &repo_key, "refs", &cache::key(reference)]);
        // A checkout found damaged is fetched again; offline, that is the
        // error.
        let damaged = |commit: &str, why: String| {
            FetchError::Offline(format!(
                "--offline: the cached checkout of '{clone_url}' at {commit} ({}) is damaged: {why}; build once without --offline to fetch it again",
                checkouts::entry(cache, &repo_key, commit).display()
            ))
        };
        let offline = self.options.offline;
        let cached = |commit: String| match checkouts::find(cache, &repo_key, &commit) {
            Kept::Intact(hit) => Ok(Some(hit)),
            Kept::Damaged(why) if offline => Err(damaged(&commit, why)),
            Kept::Damaged(_) | Kept::Missing => Ok(None),
        };
        if is_commit_id(reference) {
            if let Some(hit) = cached(reference.to_ascii_lowercase())? {
                return Ok(hit);
            }
        }
        if offline {
            let recorded = match cache.read_limited(&record, MAX_RECORD_BYTES) {
                Kept::Intact(bytes) => Some(String::from_utf8_lossy(&bytes).trim().to_string()),
                Kept::Missing | Kept::Damaged(_) => None,
            };
            let hit = match recorded.filter(|c| is_commit_id(c)) {
                Some(commit) => cached(commit)?,
                None => None,
            };
            return hit.ok_or_else(|| {
                FetchError::Offline(format!(
                    "--offline: '{clone_url}' at '{reference}' is not in the cache ({}); build once without --offline to fetch it",
                    cache.root().display()
                ))
            });
        }
        let git = Git::find()?;
        let _progress =
            Progress::start(self.options.progress, &format!("{clone_url} ({reference})"));
        if !is_commit_id(reference) {
            // A remote that cannot be listed fails again in the fetch
            // below, with the message Kustomize gives.
            if let Ok(Some(commit)) = git.resolve(&clone_url, reference, url.timeout) {
                if let Some(hit) = cached(commit)? {
                    return Ok(hit);
                }
            }
        }
        let staging = cache.stage().map_err(cache_error)?;
        let tree = staging.tree().map_err(cache_error)?;
        let commit = git.checkout(&tree, &clone_url, reference, url.submodules, url.timeout)?;
        // The checkout is content only: its git data is never read again.
        std::fs::remove_dir_all(tree.join(".git")).map_err(cache_error)?;
        let checkout =
            checkouts::publish(cache, &staging, &repo_key, &commit).map_err(cache_error)?;
        let _ = cache.write_file(&record, format!("{commit}\n").as_bytes());
        Ok(checkout)
    }
}

/// The most bytes of a ref's record read (a commit id and a newline).
const MAX_RECORD_BYTES: u64 = 128;

/// The one slot for `key`, made on first use.
fn shared_slot<T>(map: &Mutex<HashMap<String, Shared<T>>>, key: String) -> Shared<T> {
    let mut map = map.lock().unwrap_or_else(|e| e.into_inner());
    Arc::clone(map.entry(key).or_default())
}

fn cache_error(e: std::io::Error) -> FetchError {
    FetchError::Cache(format!("krusty's cache: {e}"))
}

/// The limit on one HTTP request's connection and on each read.
pub const HTTP_TIMEOUT: Duration = git_url::DEFAULT_TIMEOUT;
