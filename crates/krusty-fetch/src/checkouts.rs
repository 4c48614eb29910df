//! Checkouts in the cache, by repository and commit:
//! `git/<repo>/checkouts/<commit>/` is a tree the cache checks on use
//! ([`Cache::publish_tree`], [`Cache::tree`]): the checkout without its
//! git data, and its manifest. A checkout is used only while it matches
//! its manifest; a build checks that once per checkout it uses.

use std::io;
use std::path::PathBuf;

use crate::cache::{Cache, Kept, Staging};
use crate::Checkout;

/// The folder of the checkout of `commit` in the repository `repo_key`.
pub(crate) fn entry(cache: &Cache, repo_key: &str, commit: &str) -> PathBuf {
    cache.entry(&["git", repo_key, "checkouts", commit])
}

/// The checkout of `commit`, if the cache holds it intact.
pub(crate) fn find(cache: &Cache, repo_key: &str, commit: &str) -> Kept<Checkout> {
    match cache.tree(&entry(cache, repo_key, commit)) {
        Kept::Intact(dir) => Kept::Intact(Checkout {
            dir,
            commit: commit.to_string(),
        }),
        Kept::Damaged(why) => Kept::Damaged(why),
        Kept::Missing => Kept::Missing,
    }
}

/// Publishes the checkout of `commit` made in `staging`'s
/// [`Staging::tree`] (its git data removed), replacing what the cache
/// held for it.
pub(crate) fn publish(
    cache: &Cache,
    staging: &Staging,
    repo_key: &str,
    commit: &str,
) -> io::Result<Checkout> {
    Ok(Checkout {
        dir: cache.publish_tree(staging, &entry(cache, repo_key, commit))?,
        commit: commit.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_checkout_is_found_only_while_it_matches_its_manifest() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::at(dir.path().join("c"));
        let commit = "a".repeat(40);
        assert_eq!(find(&cache, "k", &commit), Kept::Missing);
        let staging = cache.stage().unwrap();
        let tree = staging.tree().unwrap();
        std::fs::write(tree.join("kustomization.yaml"), "resources: []\n").unwrap();
        let published = publish(&cache, &staging, "k", &commit).unwrap();
        drop(staging);
        assert_eq!(find(&cache, "k", &commit), Kept::Intact(published.clone()));
        std::fs::write(published.dir.join("kustomization.yaml"), "resources: [x]\n").unwrap();
        assert_eq!(
            find(&cache, "k", &commit),
            Kept::Damaged("kustomization.yaml changed".into())
        );
        std::fs::remove_file(entry(&cache, "k", &commit).join("manifest")).unwrap();
        assert_eq!(
            find(&cache, "k", &commit),
            Kept::Damaged("its manifest is missing".into())
        );
        // Published again: the damaged entry is replaced.
        let staging = cache.stage().unwrap();
        let tree = staging.tree().unwrap();
        std::fs::write(tree.join("kustomization.yaml"), "resources: []\n").unwrap();
        publish(&cache, &staging, "k", &commit).unwrap();
        drop(staging);
        assert_eq!(find(&cache, "k", &commit), Kept::Intact(published));
    }
}
