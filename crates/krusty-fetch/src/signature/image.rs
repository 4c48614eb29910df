//! A container image named by digest, as the repository its signatures
//! are in: `[registry/]repository[:tag]@sha256:HEX`, the registry and
//! repository as docker reads them (no registry: Docker Hub, and a
//! one-part name there is under `library/`).

use crate::error::FetchError;
use crate::oci::OciReference;

/// Docker Hub, as image names that name no registry mean it.
const DOCKER_HUB: &str = "docker.io";

/// The artifact `image` names, by its digest. An image without a digest
/// is an error: only a digest says which image a signature must be for.
pub(crate) fn reference(image: &str) -> Result<OciReference, FetchError> {
    let (name, digest) = image.split_once('@').ok_or_else(|| {
        FetchError::Signature(format!(
            "container image '{image}': with --verify-key an image runs only by its digest, which its signature names; give the catalog's container.sha256"
        ))
    })?;
    let name_start = name.rfind('/').map_or(0, |i| i + 1);
    let repository = match name[name_start..].rfind(':') {
        Some(colon) => &name[..name_start + colon],
        None => name,
    };
    let (registry, path) = match repository.split_once('/') {
        Some((first, rest))
            if first.contains('.') || first.contains(':') || first == "localhost" =>
        {
            (first.to_string(), rest.to_string())
        }
        Some(_) => (DOCKER_HUB.to_string(), repository.to_string()),
        None => (DOCKER_HUB.to_string(), format!("library/{repository}")),
    };
    OciReference::parse(&format!("oci://{registry}/{path}@{digest}")).map_err(|e| {
        FetchError::Signature(format!(
            "container image '{image}': its signatures cannot be looked up: {e}"
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEX: &str = "abababababababababababababababababababababababababababababababab";

    #[test]
    fn images_name_their_registry_and_repository_as_docker_reads_them() {
        for (image, registry, repository) in [
            ("127.0.0.1:5000/krm/fn", "127.0.0.1:5000", "krm/fn"),
            ("127.0.0.1:5000/krm/fn:v1", "127.0.0.1:5000", "krm/fn"),
            ("localhost/fn:v1", "localhost", "fn"),
            ("ghcr.io/org/fn", "ghcr.io", "org/fn"),
            ("org/fn:1.0.0", "docker.io", "org/fn"),
            ("busybox", "docker.io", "library/busybox"),
        ] {
            let r = reference(&format!("{image}@sha256:{HEX}")).unwrap();
            assert_eq!(
                (r.registry.as_str(), r.repository.as_str()),
                (registry, repository),
                "{image}"
            );
            assert_eq!(r.digest, Some(format!("sha256:{HEX}")));
            assert_eq!(r.tag, None);
        }
    }

    #[test]
    fn an_image_without_a_digest_or_with_a_bad_name_is_refused() {
        let err = reference("example/fn:v1").unwrap_err().to_string();
        assert!(
            err.contains("'example/fn:v1'") && err.contains("only by its digest"),
            "{err}"
        );
        let err = reference(&format!("Example/Fn@sha256:{HEX}"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("cannot be looked up"), "{err}");
    }
}
