//! An `images:` entry: which image to change, and to what.

/// One `images:` entry.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ImageChange {
    /// The image name to match (without tag or digest).
    pub name: String,
    /// Replacement name.
    pub new_name: String,
    /// Replacement tag.
    pub new_tag: String,
    /// Text appended to the tag (which may be empty), when neither `new_tag`
    /// nor `digest` is given; the digest is dropped.
    pub tag_suffix: String,
    /// Replacement digest.
    pub digest: String,
}

/// Splits `registry/name:tag@digest` into name, tag and digest.
pub fn split_image(image: &str) -> (String, String, String) {
    let slash = image.find('/').filter(|&i| i > 0).unwrap_or(0);
    let search = &image[slash..];
    let at = search.find('@').map(|i| i + slash);
    let colon = search.find(':').map(|i| i + slash);
    match (colon, at) {
        (None, None) => (image.to_string(), String::new(), String::new()),
        (c, Some(a)) if c.is_none_or(|c| a < c) => (
            image[..a].to_string(),
            String::new(),
            image[a + 1..].to_string(),
        ),
        (Some(c), Some(a)) => (
            image[..c].to_string(),
            image[c + 1..a].to_string(),
            image[a + 1..].to_string(),
        ),
        (Some(c), None) => (
            image[..c].to_string(),
            image[c + 1..].to_string(),
            String::new(),
        ),
        (None, Some(_)) => unreachable!("handled by the digest-only arm"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_names_tags_and_digests() {
        assert_eq!(split_image("nginx"), ("nginx".into(), "".into(), "".into()));
        assert_eq!(
            split_image("localhost:5000/app:1.0"),
            ("localhost:5000/app".into(), "1.0".into(), "".into())
        );
        assert_eq!(
            split_image("app@sha256:abc"),
            ("app".into(), "".into(), "sha256:abc".into())
        );
        assert_eq!(
            split_image("r.io/app:1@sha256:abc"),
            ("r.io/app".into(), "1".into(), "sha256:abc".into())
        );
    }
}
