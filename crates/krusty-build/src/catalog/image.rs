//! A catalog's container images: run by digest when the catalog gives a
//! `sha256`, and refused without one when the tag is a semantic version
//! (KEP-2906: the digest "is required only when the image is using
//! semver").

use crate::error::{BuildError, BuildResult};

/// `image` named by its digest: `repo@sha256:HEX` (a tag is dropped; a
/// digest already written must be the same).
pub(crate) fn by_digest(image: &str, hex: &str) -> BuildResult<String> {
    if let Some((repo, written)) = image.split_once('@') {
        if written.strip_prefix("sha256:") != Some(hex) {
            return Err(BuildError::new(format!(
                "image '{image}' names a digest other than its sha256 ({hex})"
            )));
        }
        return Ok(format!("{repo}@sha256:{hex}"));
    }
    let (repo, _) = split_tag(image);
    Ok(format!("{repo}@sha256:{hex}"))
}

/// The image a catalog without a `sha256` runs: as written, unless its
/// tag is a semantic version and no digest is written in it.
pub(crate) fn without_sha256(image: &str) -> BuildResult<String> {
    if !image.contains('@') {
        if let (_, Some(tag)) = split_tag(image) {
            if is_semver(tag) {
                return Err(BuildError::new(format!(
                    "image '{image}' has the semantic-version tag '{tag}' and the catalog gives no sha256: a versioned image runs only by its digest (KEP-2906); add container.sha256 (`podman image inspect --format '{{{{.Digest}}}}' {image}`)"
                )));
            }
        }
    }
    Ok(image.to_string())
}

/// `image` split into the repository and its tag (if it has one): the
/// tag follows the last `:` after the last `/`, so a registry's port is
/// not one.
fn split_tag(image: &str) -> (&str, Option<&str>) {
    let name_start = image.rfind('/').map_or(0, |i| i + 1);
    match image[name_start..].rfind(':') {
        Some(colon) => (
            &image[..name_start + colon],
            Some(&image[name_start + colon + 1..]),
        ),
        None => (image, None),
    }
}

/// Whether `tag` is a semantic version (semver 2.0.0, with an optional
/// leading `v`): `MAJOR.MINOR.PATCH`, numbers without leading zeros, and
/// an optional `-` pre-release of dot-separated identifiers (letters,
/// digits and `-`; numeric ones without leading zeros). Build metadata
/// (`+…`) cannot be written in an image tag. `v1` and `1.2` are not
/// semantic versions (floating tags).
pub(crate) fn is_semver(tag: &str) -> bool {
    let version = tag.strip_prefix('v').unwrap_or(tag);
    let (core, pre) = match version.split_once('-') {
        Some((core, pre)) => (core, Some(pre)),
        None => (version, None),
    };
    let numbers: Vec<&str> = core.split('.').collect();
    numbers.len() == 3
        && numbers.iter().all(|n| is_number(n))
        && pre.is_none_or(|p| {
            p.split('.').all(|id| {
                !id.is_empty()
                    && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
                    && (!id.bytes().all(|b| b.is_ascii_digit()) || is_number(id))
            })
        })
}

/// A number without leading zeros.
fn is_number(text: &str) -> bool {
    !text.is_empty()
        && text.bytes().all(|b| b.is_ascii_digit())
        && (text == "0" || !text.starts_with('0'))
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";

    #[test]
    fn images_run_by_digest() {
        for (image, want) in [
            ("repo", "repo@sha256:"),
            ("repo:v1", "repo@sha256:"),
            ("host:5000/team/repo:v1", "host:5000/team/repo@sha256:"),
            ("host:5000/repo", "host:5000/repo@sha256:"),
        ] {
            assert_eq!(by_digest(image, A).unwrap(), format!("{want}{A}"));
        }
        assert_eq!(
            by_digest(&format!("r@sha256:{A}"), A).unwrap(),
            format!("r@sha256:{A}")
        );
        assert!(by_digest("r@sha256:bbbb", A).is_err());
    }

    #[test]
    fn semantic_versions() {
        for tag in [
            "1.2.3",
            "v1.2.3",
            "0.0.0",
            "v10.20.30",
            "1.0.0-rc.1",
            "v1.0.0-alpha-2.0.x",
            "1.0.0-0",
        ] {
            assert!(is_semver(tag), "{tag}");
        }
        for tag in [
            "v1",
            "1.2",
            "latest",
            "v1.2.3.4",
            "01.2.3",
            "1.02.3",
            "1.2.3-",
            "1.2.3-rc..1",
            "1.2.3-01",
            "1.2.3_rc",
            "V1.2.3",
            "vv1.2.3",
            "",
        ] {
            assert!(!is_semver(tag), "{tag}");
        }
    }

    #[test]
    fn a_semver_tag_without_a_digest_is_refused() {
        for image in ["example/fn:v1.2.3", "host:5000/team/fn:1.0.0-rc.1"] {
            let err = without_sha256(image).unwrap_err().to_string();
            assert!(
                err.contains("semantic-version tag") && err.contains(image),
                "{err}"
            );
        }
        for image in [
            "example/fn",
            "example/fn:v1",
            "example/fn:latest",
            "host:5000/fn",
            "host:5000/fn:1.2",
        ] {
            assert_eq!(without_sha256(image).unwrap(), image);
        }
        let pinned = format!("example/fn:v1.2.3@sha256:{A}");
        assert_eq!(
            without_sha256(&pinned).unwrap(),
            pinned,
            "a digest in the image pins it"
        );
    }
}
