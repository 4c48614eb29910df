//! Remote targets of `edit add resource|component`: Kustomize clones a
//! target it reads as a git repository to check it; krusty fetches it
//! through its fetch layer (and cache) and checks the folder the same way.

use std::path::{Path, PathBuf};

use krusty_build::loader::{canonical, clean};
use krusty_build::BuildError;
use krusty_fetch::{FetchError, FetchOptions, Fetcher, GitUrl};

/// Why a remote target is no folder of its repository, in the words of
/// Kustomize's loader.
#[derive(Debug, thiserror::Error)]
pub enum RemoteError {
    /// The repository cannot be fetched.
    #[error(transparent)]
    Fetch(#[from] FetchError),
    /// A path in the checkout cannot be resolved.
    #[error(transparent)]
    Path(#[from] BuildError),
    /// The target is a file.
    #[error("'{}' refers to file '{}'; expecting directory", .0.display(), file_name(.0))]
    NotADirectory(PathBuf),
    /// The target leaves the repository.
    #[error("{:?} refers to directory outside of repo {:?}", .wanted.display().to_string(), .repo.display().to_string())]
    OutsideRepo {
        /// The target.
        wanted: PathBuf,
        /// The checkout.
        repo: PathBuf,
    },
}

/// Whether Kustomize's loader reads `target` as a remote git repository.
pub fn parse(target: &str) -> Option<GitUrl> {
    GitUrl::parse(target).ok()
}

/// Fetches the repository `url` names and checks that the folder it names
/// is a directory inside it; the error is Kustomize's loader's.
pub fn check(url: &GitUrl) -> Result<(), RemoteError> {
    let fetcher = Fetcher::new(FetchOptions::default());
    let checkout = fetcher.checkout(url)?;
    let repo = canonical(&checkout.dir)?;
    let wanted = clean(&repo.join(&url.root_path));
    let root = canonical(&wanted)?;
    if !root.is_dir() {
        return Err(RemoteError::NotADirectory(wanted));
    }
    if !root.starts_with(&repo) {
        return Err(RemoteError::OutsideRepo { wanted, repo });
    }
    Ok(())
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
}
