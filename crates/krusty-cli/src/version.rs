//! `krusty version`: the Kustomize version krusty builds like, first (so
//! that tools reading Kustomize's version, such as Argo CD, find it), then
//! krusty's own.

/// The Kustomize release whose output krusty reproduces.
pub const KUSTOMIZE_VERSION: &str = "v5.5.0";

/// krusty's own version.
const KRUSTY_VERSION: &str = env!("CARGO_PKG_VERSION");

/// What `version` prints, in the form `--short` (Kustomize's
/// `{kustomize/vX.Y.Z  BUILD-DATE  }`) or not (`vX.Y.Z`), each followed by
/// krusty's version.
pub fn line(short: bool) -> String {
    if short {
        format!("{{kustomize/{KUSTOMIZE_VERSION}  krusty/v{KRUSTY_VERSION}  }}")
    } else {
        format!("{KUSTOMIZE_VERSION} (krusty v{KRUSTY_VERSION})")
    }
}

/// `version -o yaml|json`: Kustomize's provenance fields, with krusty's
/// version beside them.
pub fn structured(format: &str) -> Result<String, String> {
    let fields = [
        ("version", format!("kustomize/{KUSTOMIZE_VERSION}")),
        ("gitCommit", "unknown".to_string()),
        ("buildDate", "unknown".to_string()),
        ("goOs", std::env::consts::OS.to_string()),
        ("goArch", go_arch().to_string()),
        ("goVersion", "unknown".to_string()),
        ("krusty", format!("v{KRUSTY_VERSION}")),
    ];
    match format {
        "yaml" => Ok(fields.iter().map(|(k, v)| format!("{k}: {v}\n")).collect()),
        "json" => {
            let body: Vec<String> = fields
                .iter()
                .map(|(k, v)| format!("  \"{k}\": \"{v}\""))
                .collect();
            Ok(format!("{{\n{}\n}}", body.join(",\n")))
        }
        // Kustomize prints nothing for another format.
        _ => Ok(String::new()),
    }
}

/// Go's name for the machine's architecture.
fn go_arch() -> &'static str {
    match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        "x86" => "386",
        other => other,
    }
}
