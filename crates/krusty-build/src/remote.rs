//! Remote bases: folders of git repositories named in `resources:`,
//! `components:` or as the build's target, fetched through the fetch layer
//! and built as local folders rooted in their checkout.

use std::path::PathBuf;
use std::sync::Arc;

use krusty_fetch::{Fetcher, GitUrl};

use crate::error::{BuildError, BuildResult};
use crate::loader::{canonical, clean, is_within, Loader};
use krusty_resource::RemoteRoot;

/// The scheme of a repository on the build machine's own disk.
const FILE: &str = "file://";

/// How many remote references may be built one inside another.
const MAX_DEPTH: usize = 64;

/// The remote side of a build: the fetcher, and the remote references
/// being built (outermost first).
#[derive(Clone)]
pub(crate) struct Remotes {
    /// Fetches each remote once per build.
    pub fetcher: Arc<Fetcher>,
    /// The remote references being built, outermost first.
    pub chain: Vec<String>,
    /// Where the innermost remote reference's folders start in the
    /// build's chain of folders (cycles of folders are looked for from
    /// there: each checkout is a tree of its own).
    pub chain_floor: usize,
    /// Remote bases are refused (Flux's `--no-remote-bases`).
    pub refused: bool,
}

impl Remotes {
    /// No remote met yet.
    pub fn new(fetcher: Arc<Fetcher>) -> Remotes {
        Remotes {
            fetcher,
            chain: Vec::new(),
            chain_floor: 0,
            refused: false,
        }
    }

    /// A loader at the folder `url` names in its repository, fetched (or
    /// found in the cache). `as_base`: the folder is a base or component,
    /// whose resources record the repository as their origin.
    pub fn loader(&self, url: &GitUrl, as_base: bool) -> BuildResult<Loader> {
        if self.refused {
            return Err(BuildError::new(format!(
                "'{}': remote bases are refused (--no-remote-bases): every resource must be a local file of the source",
                url.raw
            )));
        }
        if let Some(previous) = self.chain.iter().find(|p| p.starts_with(&url.raw)) {
            return Err(BuildError::new(format!(
                "cycle detected: URI '{}' referenced by previous URI '{previous}'",
                url.raw
            )));
        }
        if self.chain.len() >= MAX_DEPTH {
            return Err(BuildError::new(format!(
                "'{}': more than {MAX_DEPTH} remote bases inside one another",
                url.raw
            )));
        }
        if url.host == FILE {
            // What a repository fetched from elsewhere names may not reach
            // the build machine's own repositories.
            let fetched = |raw: &&String| !GitUrl::parse(raw).is_ok_and(|u| u.host == FILE);
            if let Some(outer) = self.chain.iter().rev().find(fetched) {
                return Err(BuildError::new(format!(
                    "'{}': a remote base ('{outer}') may not name a local repository (file://)",
                    url.raw
                )));
            }
        }
        let checkout = self.fetcher.checkout(url)?;
        let repo = canonical(&checkout.dir)?;
        let wanted = clean(&repo.join(&url.root_path));
        let root = canonical(&wanted)?;
        if !root.is_dir() {
            return Err(BuildError::new(format!(
                "'{}' refers to file '{}'; expecting directory",
                wanted.display(),
                wanted
                    .file_name()
                    .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
            )));
        }
        if !is_within(&root, &repo) {
            return Err(BuildError::new(format!(
                "{:?} refers to directory outside of repo {:?}",
                wanted.display().to_string(),
                repo.display().to_string()
            )));
        }
        let remote = as_base.then(|| {
            let prefix = if url.root_path.is_empty() {
                // What Kustomize records for a repository's root folder.
                "notCloned"
            } else {
                &url.root_path
            };
            Arc::new(RemoteRoot {
                root: root.clone(),
                prefix: PathBuf::from(prefix),
                repo: krusty_fetch::redact(&url.clone_url()).into_owned(),
                reference: url.reference.clone(),
            })
        });
        Ok(Loader::in_checkout(root, Arc::from(repo.as_path()), remote)
            .with_fetcher(Arc::clone(&self.fetcher)))
    }
}

/// Whether a `resources:` entry names something remote (a URL, or a
/// reference Kustomize reads as a git repository) rather than a local path.
pub(crate) fn is_remote(entry: &str) -> bool {
    krusty_fetch::is_http_url(entry) || GitUrl::parse(entry).is_ok()
}
