//! The payload cosign signs: a "simple signing" JSON document
//! (containers-signature(5)) naming the manifest digest of the artifact
//! it is for. Its fields are matched as cosign's Go decoder matches them
//! (names in any case); a name written twice in different cases is
//! refused, since readers could take either.

use serde_json::{Map, Value};

/// `critical.type` of cosign's signatures.
pub(crate) const SIGNATURE_TYPE: &str = "cosign container image signature";

/// Checks that the signed `payload` is a cosign signature of the
/// manifest `digest` (`sha256:HEX`): `critical.type` and
/// `critical.image.docker-manifest-digest`. `critical.identity` is not
/// checked (cosign's specification says it is ignored: a mirror holds
/// the same artifact under another name).
pub(crate) fn check(payload: &[u8], digest: &str) -> Result<(), String> {
    let json: Value = serde_json::from_slice(payload)
        .map_err(|e| format!("the signed payload is not JSON: {e}"))?;
    let root = object(&json, "the signed payload")?;
    let critical = object(field(root, "critical")?, "critical")?;
    let kind = text(field(critical, "type")?, "critical.type")?;
    if kind != SIGNATURE_TYPE {
        return Err(format!(
            "the signed payload's critical.type is '{kind}', not '{SIGNATURE_TYPE}'"
        ));
    }
    let image = object(field(critical, "image")?, "critical.image")?;
    let named = text(
        field(image, "docker-manifest-digest")?,
        "critical.image.docker-manifest-digest",
    )?;
    if named != digest {
        return Err(format!(
            "the signed payload is for {named}, not for this artifact ({digest})"
        ));
    }
    Ok(())
}

/// The value of `name` in `map`, the name in any case.
fn field<'a>(map: &'a Map<String, Value>, name: &str) -> Result<&'a Value, String> {
    let mut found = map.iter().filter(|(k, _)| k.eq_ignore_ascii_case(name));
    match (found.next(), found.next()) {
        (Some((_, value)), None) => Ok(value),
        (None, _) => Err(format!("the signed payload has no field '{name}'")),
        (Some(_), Some(_)) => Err(format!(
            "the signed payload writes the field '{name}' more than once"
        )),
    }
}

fn object<'a>(value: &'a Value, what: &str) -> Result<&'a Map<String, Value>, String> {
    value
        .as_object()
        .ok_or_else(|| format!("{what} is not a JSON object"))
}

fn text<'a>(value: &'a Value, what: &str) -> Result<&'a str, String> {
    value
        .as_str()
        .ok_or_else(|| format!("the signed payload's {what} is not a string"))
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
        assert_eq!(check(for_digest("r/c", D).as_bytes(), D), Ok(()));
        let spec_case = for_digest("r/c", D)
            .replace("docker-manifest-digest", "Docker-manifest-digest")
            .replace("\"critical\"", "\"Critical\"");
        assert_eq!(check(spec_case.as_bytes(), D), Ok(()), "names in any case");
        let other = D.replace('1', "2");
        let err = check(for_digest("r/c", &other).as_bytes(), D).unwrap_err();
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
            let err = check(payload.as_bytes(), D).unwrap_err();
            assert!(err.contains(why), "{payload}: {err}");
        }
    }
}
