//! The fetch layer: remote git repositories and files over HTTP(S),
//! brought into a content-addressed cache and served as local folders.
//! Remote bases use it; catalogs, Helm chart repositories and programs by
//! URL share it.
//!
//! A [`Fetcher`] serves one build: each remote it is asked for is fetched
//! once however many times (and from however many threads) it is named.
//! Git refs are resolved to commits on every build (`git ls-remote`), and
//! a commit's checkout, once in the [`Cache`], is never fetched again. With
//! `offline`, nothing goes to the network: refs resolve to the commit they
//! had when last fetched, and a miss is an error.

pub mod cache;
mod error;
pub mod git;
pub mod git_url;
pub mod go;
pub mod http;
mod progress;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

pub use cache::Cache;
pub use error::FetchError;
pub use git_url::GitUrl;
pub use http::is_http_url;

use crate::git::{is_commit_id, Git};
use crate::progress::Progress;

/// How a [`Fetcher`] works.
#[derive(Debug, Clone, Default)]
pub struct FetchOptions {
    /// Use only what the cache holds.
    pub offline: bool,
    /// Show a progress line on stderr while fetching.
    pub progress: bool,
    /// The cache folder (default: [`Cache::locate`]).
    pub cache_dir: Option<PathBuf>,
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
}

impl Fetcher {
    /// A fetcher; nothing is touched until something is fetched.
    pub fn new(options: FetchOptions) -> Fetcher {
        Fetcher {
            options,
            ..Fetcher::default()
        }
    }

    /// The cache in use.
    pub fn cache(&self) -> Result<&Cache, FetchError> {
        self.cache
            .get_or_init(|| match &self.options.cache_dir {
                Some(dir) => Ok(Cache::at(dir.clone())),
                None => Cache::locate().map_err(|e| FetchError::Cache(e.to_string())),
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

    fn fetch_file(&self, url: &str, timeout: Duration) -> Result<Arc<[u8]>, FetchError> {
        let cache = self.cache()?;
        let copy = cache.entry(&["http", &cache::key(url)]);
        if self.options.offline {
            return cache.read_file(&copy).map(Arc::from).ok_or_else(|| {
                FetchError::Offline(format!(
                    "--offline: '{url}' is not in the cache ({}); build once without --offline to fetch it",
                    cache.root().display()
                ))
            });
        }
        let _progress = Progress::start(self.options.progress, url);
        let body = http::get(url, timeout, http::MAX_BYTES)?;
        // The copy only serves --offline builds; failing to keep it is no
        // reason to fail this one.
        let _ = cache.write_file(&copy, &body);
        Ok(Arc::from(body))
    }

    fn fetch_checkout(&self, url: &GitUrl) -> Result<Checkout, FetchError> {
        let cache = self.cache()?;
        let clone_url = url.clone_url();
        let repo_key = cache::key(&format!("{clone_url}\0{}", url.submodules));
        let reference = url.fetch_ref();
        let record = cache.entry(&["git", &repo_key, "refs", &cache::key(reference)]);
        let at = |commit: &str| cache.entry(&["git", &repo_key, commit]);
        let cached = |commit: String| {
            let dir = at(&commit);
            dir.is_dir().then_some(Checkout { dir, commit })
        };
        if is_commit_id(reference) {
            if let Some(hit) = cached(reference.to_ascii_lowercase()) {
                return Ok(hit);
            }
        }
        if self.options.offline {
            let recorded = cache
                .read_file(&record)
                .and_then(|c| String::from_utf8(c).ok())
                .map(|c| c.trim().to_string());
            return recorded.and_then(cached).ok_or_else(|| {
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
                if let Some(hit) = cached(commit) {
                    return Ok(hit);
                }
            }
        }
        let staging = cache.stage().map_err(cache_error)?;
        let tree = staging.dir().join("tree");
        std::fs::create_dir(&tree).map_err(cache_error)?;
        let commit = git.checkout(&tree, &clone_url, reference, url.submodules, url.timeout)?;
        // The checkout is content only: its git data is never read again.
        let _ = std::fs::remove_dir_all(tree.join(".git"));
        let dir = cache.publish(&tree, &at(&commit)).map_err(cache_error)?;
        let _ = cache.write_file(&record, format!("{commit}\n").as_bytes());
        Ok(Checkout { dir, commit })
    }
}

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
