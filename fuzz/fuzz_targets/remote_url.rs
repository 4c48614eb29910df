//! Remote references as a tree writes them: git URLs (every spelling
//! Kustomize reads, with their query), OCI references and HTTP URLs are
//! read or refused, never a panic; what reads as a git URL has a clone
//! URL and a folder that stays inside the repository, and the check that
//! keeps git from reading a value as an option never panics either.
#![no_main]

use krusty_fetch::{git::check_arguments, is_http_url, is_oci_reference, GitUrl, OciReference};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = is_http_url(text);
    if let Ok(url) = GitUrl::parse(text) {
        let clone = url.clone_url();
        assert!(!clone.is_empty(), "{text:?}: an empty clone URL");
        assert!(
            stays_inside(&url.root_path),
            "{text:?}: the folder {:?} leaves the repository",
            url.root_path
        );
        let _ = check_arguments(&clone, url.fetch_ref());
    }
    if is_oci_reference(text) {
        let _ = OciReference::parse(text);
    }
});

/// Whether `path`, cleaned, never goes above where it starts.
fn stays_inside(path: &str) -> bool {
    let mut depth = 0usize;
    for name in path.split('/') {
        match name {
            "" | "." => {}
            ".." => match depth.checked_sub(1) {
                Some(d) => depth = d,
                None => return false,
            },
            _ => depth += 1,
        }
    }
    true
}
