//! Remote targets of `edit add resource|component`: Kustomize clones a
//! target it reads as a git repository to check it; krusty fetches it
//! through its fetch layer (and cache) and checks the folder the same way.

use std::path::Path;

use krusty_build::loader::{canonical, clean};
use krusty_fetch::{FetchOptions, Fetcher, GitUrl};

/// Whether Kustomize's loader reads `target` as a remote git repository.
pub fn parse(target: &str) -> Option<GitUrl> {
    GitUrl::parse(target).ok()
}

/// Fetches the repository `url` names and checks that the folder it names
/// is a directory inside it; the error is Kustomize's loader's.
pub fn check(url: &GitUrl) -> Result<(), String> {
    let fetcher = Fetcher::new(FetchOptions::default());
    let checkout = fetcher.checkout(url).map_err(|e| e.to_string())?;
    let repo = canonical(&checkout.dir).map_err(|e| e.to_string())?;
    let wanted = clean(&repo.join(&url.root_path));
    let root = canonical(&wanted).map_err(|e| e.to_string())?;
    if !root.is_dir() {
        return Err(format!(
            "'{}' refers to file '{}'; expecting directory",
            wanted.display(),
            file_name(&wanted)
        ));
    }
    if !root.starts_with(&repo) {
        return Err(format!(
            "{:?} refers to directory outside of repo {:?}",
            wanted.display().to_string(),
            repo.display().to_string()
        ));
    }
    Ok(())
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
}
