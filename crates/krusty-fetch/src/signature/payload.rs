//! The payload cosign signs: a "simple signing" JSON document
//! (containers-signature(5)) naming the manifest digest of the artifact
//! it is for. Its fields are matched as cosign's Go decoder matches them
//! (names in any case); a name written twice in different cases is
//! refused, since readers could take either.

use serde_json::{Map, Value};

/// `critical.type` of cosign's signatures.
pub(crate) const SIGNATURE_TYPE: &str = "cosign container image signature";

/// Why a signed payload is no cosign signature of an artifact.
#[derive(Debug, thiserror::Error)]
pub(crate) enum PayloadError {
    /// The payload does not parse as JSON.
    #[error("the signed payload is not JSON: {0}")]
    NotJson(#[source] serde_json::Error),
    /// A value that should be an object (named) is not.
    #[error("{0} is not a JSON object")]
    NotObject(&'static str),
    /// A value that should be a string (named) is not.
    #[error("the signed payload's {0} is not a string")]
    NotString(&'static str),
    /// A field is missing.
    #[error("the signed payload has no field '{0}'")]
    Missing(&'static str),
    /// A field is written more than once, in different cases.
    #[error("the signed payload writes the field '{0}' more than once")]
    Repeated(&'static str),
    /// `critical.type` is not cosign's.
    #[error("the signed payload's critical.type is '{0}', not '{SIGNATURE_TYPE}'")]
    WrongType(String),
    /// The payload names another manifest digest.
    #[error("the signed payload is for {named}, not for this artifact ({digest})")]
    OtherDigest {
        /// The digest the payload names.
        named: String,
        /// The artifact's digest.
        digest: String,
    },
}

/// Checks that the signed `payload` is a cosign signature of the
/// manifest `digest` (`sha256:HEX`): `critical.type` and
/// `critical.image.docker-manifest-digest`. `critical.identity` is not
/// checked (cosign's specification says it is ignored: a mirror holds
/// the same artifact under another name).
pub(crate) fn check(payload: &[u8], digest: &str) -> Result<(), PayloadError> {
    let json: Value = serde_json::from_slice(payload).map_err(PayloadError::NotJson)?;
    let root = object(&json, "the signed payload")?;
    let critical = object(field(root, "critical")?, "critical")?;
    let kind = text(field(critical, "type")?, "critical.type")?;
    if kind != SIGNATURE_TYPE {
        return Err(PayloadError::WrongType(kind.to_string()));
    }
    let image = object(field(critical, "image")?, "critical.image")?;
    let named = text(
        field(image, "docker-manifest-digest")?,
        "critical.image.docker-manifest-digest",
    )?;
    if named != digest {
        return Err(PayloadError::OtherDigest {
            named: named.to_string(),
            digest: digest.to_string(),
        });
    }
    Ok(())
}

/// The value of `name` in `map`, the name in any case.
fn field<'a>(map: &'a Map<String, Value>, name: &'static str) -> Result<&'a Value, PayloadError> {
    let mut found = map.iter().filter(|(k, _)| k.eq_ignore_ascii_case(name));
    match (found.next(), found.next()) {
        (Some((_, value)), None) => Ok(value),
        (None, _) => Err(PayloadError::Missing(name)),
        (Some(_), Some(_)) => Err(PayloadError::Repeated(name)),
    }
}

fn object<'a>(
    value: &'a Value,
    what: &'static str,
) -> Result<&'a Map<String, Value>, PayloadError> {
    value.as_object().ok_or(PayloadError::NotObject(what))
}

fn text<'a>(value: &'a Value, what: &'static str) -> Result<&'a str, PayloadError> {
    value.as_str().ok_or(PayloadError::NotString(what))
}

/// The payload cosign signs for `digest` in `repository` (tests build
/// signatures with it).
#[cfg(test)]
pub(crate) fn for_digest(repository: &str, digest: &str) -> String {
    format!(
        r#"{{"critical":{{"identity":{{"docker-reference":"{repository}"}},"image":{{"docker-manifest-digest":"{digest}"}},"type":"{SIGNATURE_TYPE}"}},"optional":null}}"#
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const D: &str = "sha256:1111111111111111111111111111111111111111111111111111111111111111";

    #[test]
    fn the_payload_must_name_the_digest_and_the_type() {
        assert!(check(for_digest("r/c", D).as_bytes(), D).is_ok());
        let spec_case = for_digest("r/c", D)
            .replace("docker-manifest-digest", "Docker-manifest-digest")
            .replace("\"critical\"", "\"Critical\"");
        assert!(check(spec_case.as_bytes(), D).is_ok(), "names in any case");
        let other = D.replace('1', "2");
        let err = check(for_digest("r/c", &other).as_bytes(), D)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(&format!("is for {other}, not for this artifact ({D})")),
            "{err}"
        );
        for (payload, why) in [
            ("[]".to_string(), "not a JSON object"),
            ("{".to_string(), "not JSON"),
            ("{}".to_string(), "no field 'critical'"),
            (
                for_digest("r/c", D).replace(SIGNATURE_TYPE, "atomic container signature"),
                "critical.type is 'atomic container signature'",
            ),
            (
                for_digest("r/c", D).replace(
                    r#""type":"#,
                    &format!(r#""TYPE":"{SIGNATURE_TYPE}","type":"#),
                ),
                "writes the field 'type' more than once",
            ),
            (
                for_digest("r/c", D).replace(&format!("\"{D}\""), "7"),
                "docker-manifest-digest is not a string",
            ),
        ] {
            let err = check(payload.as_bytes(), D).unwrap_err().to_string();
            assert!(err.contains(why), "{payload}: {err}");
        }
    }
}
