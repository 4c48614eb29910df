//! What an image says about its function: the KEP-2906
//! KRMFunctionDefinition in its `config.kubernetes.io/function-definition`
//! label, read once per image per process.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

use crate::ServerProtocol;

/// The image label holding the function's KRMFunctionDefinition (YAML or
/// JSON).
pub const DEFINITION_LABEL: &str = "config.kubernetes.io/function-definition";

/// What a definition says about spec v2.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct V2 {
    /// The protocol to use.
    pub protocol: ServerProtocol,
    /// The function also conforms to spec v1.
    pub supports_v1: bool,
}

/// What an image's inspection gave.
#[derive(Debug, Clone, Default)]
pub struct ImageMeta {
    /// The image's id (its digest), when the image is present.
    pub id: Option<String>,
    /// Its definition's spec v2 conformance, if it declares one.
    pub v2: Option<V2>,
}

/// The metadata of `image`, inspected with `cli` on first use.
pub fn of_image(cli: &Path, image: &str) -> Arc<ImageMeta> {
    type Cache = Mutex<Option<HashMap<(PathBuf, String), Arc<ImageMeta>>>>;
    static CACHE: Cache = Mutex::new(None);
    let key = (cli.to_path_buf(), image.to_string());
    if let Some(found) = CACHE
        .lock()
        .ok()
        .and_then(|c| c.as_ref()?.get(&key).cloned())
    {
        return found;
    }
    let meta = Arc::new(inspect(cli, image));
    if let Ok(mut cache) = CACHE.lock() {
        cache
            .get_or_insert_with(HashMap::new)
            .insert(key, Arc::clone(&meta));
    }
    meta
}

/// Runs `image inspect`; an image that is not present (to be pulled by
/// the run) has no metadata.
fn inspect(cli: &Path, image: &str) -> ImageMeta {
    let format = format!("{{{{.Id}}}}\n{{{{index .Config.Labels \"{DEFINITION_LABEL}\"}}}}");
    let out = Command::new(cli)
        .args(["image", "inspect", "--format", &format, "--", image])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output();
    let Some(out) = out.ok().filter(|o| o.status.success()) else {
        return ImageMeta::default();
    };
    let text = String::from_utf8_lossy(&out.stdout);
    let (id, label) = text.split_once('\n').unwrap_or((&text, ""));
    let label = label.trim();
    ImageMeta {
        id: Some(id.trim().to_string()).filter(|s| !s.is_empty()),
        v2: (!label.is_empty() && label != "<no value>")
            .then(|| definition_protocol(label))
            .flatten(),
    }
}

/// Reads a KRMFunctionDefinition (YAML or JSON): spec v2 when one of its
/// versions lists `v2` (or a `v2alpha…`/`v2beta…` version) in
/// `conformWithSpecVersions`. The protocol is HTTP unless the version
/// names `grpc` in `serverProtocols` (krusty's extension); v1 support is
/// `v1` in the same list, or a version without the list (spec v1 by
/// default).
pub fn definition_protocol(text: &str) -> Option<V2> {
    let root = krusty_yaml::parse_stream(text)
        .ok()?
        .into_iter()
        .find_map(|d| d.root)?;
    let versions = root
        .get_path(&["spec", "versions"])
        .or_else(|| root.get("versions"))?
        .as_seq()?;

    let mut found: Option<V2> = None;
    let mut v1 = false;
    for version in versions.iter() {
        let specs = crate::spec::strings(version, "conformWithSpecVersions");
        v1 |= specs.is_empty() || specs.iter().any(|s| s == "v1");
        if found.is_none()
            && specs
                .iter()
                .any(|s| s == "v2" || s.starts_with("v2alpha") || s.starts_with("v2beta"))
        {
            let grpc_only = crate::spec::strings(version, "serverProtocols")
                .first()
                .is_some_and(|p| p.eq_ignore_ascii_case("grpc"));
            found = Some(V2 {
                protocol: if grpc_only {
                    ServerProtocol::Grpc
                } else {
                    ServerProtocol::Http
                },
                supports_v1: false,
            });
        }
    }
    found.map(|f| V2 {
        supports_v1: v1,
        ..f
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v2_when_a_version_conforms_to_it() {
        let def = "apiVersion: config.kubernetes.io/v1alpha1\nkind: KRMFunctionDefinition\nspec:\n  group: example.com\n  names: {kind: SetNamespace}\n  versions:\n  - name: v1\n    conformWithSpecVersions: [v2, v1]\n";
        assert_eq!(
            definition_protocol(def),
            Some(V2 {
                protocol: ServerProtocol::Http,
                supports_v1: true
            })
        );
        let json = r#"{"versions": [{"name": "v1", "conformWithSpecVersions": ["v2"], "serverProtocols": ["grpc"]}]}"#;
        assert_eq!(
            definition_protocol(json),
            Some(V2 {
                protocol: ServerProtocol::Grpc,
                supports_v1: false
            })
        );
        assert_eq!(
            definition_protocol("spec:\n  versions:\n  - name: v1\n"),
            None
        );
        assert_eq!(
            definition_protocol("versions: [{conformWithSpecVersions: [v1]}]"),
            None
        );
        assert_eq!(definition_protocol("{not yaml"), None);
    }
}
