//! `krusty version`: the Kustomize version krusty builds like, first (so
//! that tools reading Kustomize's version, such as Argo CD, find it), then
//! krusty's own. The Kustomize version is the release being reproduced
//! (`--kustomize-version`, `KRUSTY_KUSTOMIZE_VERSION`).

use krusty_api::KustomizeVersion;

/// `version`'s flags.
#[derive(clap::Args)]
pub struct VersionArgs {
    /// Kustomize's short form (`{kustomize/vX.Y.Z  ...  }`), as Argo CD
    /// reads it.
    #[arg(long = "short", num_args = 0..=1, require_equals = true, default_missing_value = "true", action = clap::ArgAction::Set, default_value_t = false, value_name = "BOOL")]
    short: bool,
    /// One of 'yaml' or 'json'.
    #[arg(short = 'o', long = "output", value_name = "FORMAT")]
    output: Option<String>,
}

/// Runs `version`: `--short` is deprecated in Kustomize, which says so on
/// stderr.
pub fn run(args: &VersionArgs, emulated: KustomizeVersion) -> Result<(), String> {
    if args.short {
        eprintln!("Flag --short has been deprecated, and will be removed in the future.");
    }
    match args.output.as_deref().filter(|o| !o.is_empty()) {
        Some(_) if args.short => Err("--short and --output are mutually exclusive".into()),
        Some(format) => {
            println!("{}", structured(format, emulated));
            Ok(())
        }
        None => {
            println!("{}", line(args.short, emulated));
            Ok(())
        }
    }
}

/// krusty's own version.
const KRUSTY_VERSION: &str = env!("CARGO_PKG_VERSION");

/// What `version` prints, in the form `--short` (Kustomize's
/// `{kustomize/vX.Y.Z  BUILD-DATE  }`) or not (`vX.Y.Z`), each followed by
/// krusty's version.
fn line(short: bool, emulated: KustomizeVersion) -> String {
    if short {
        format!("{{kustomize/{emulated}  krusty/v{KRUSTY_VERSION}  }}")
    } else {
        format!("{emulated} (krusty v{KRUSTY_VERSION})")
    }
}

/// `version -o yaml|json`: Kustomize's provenance fields, with krusty's
/// version beside them.
fn structured(format: &str, emulated: KustomizeVersion) -> String {
    let fields = [
        ("version", format!("kustomize/{emulated}")),
        ("gitCommit", "unknown".to_string()),
        ("buildDate", "unknown".to_string()),
        ("goOs", std::env::consts::OS.to_string()),
        ("goArch", go_arch().to_string()),
        ("goVersion", "unknown".to_string()),
        ("krusty", format!("v{KRUSTY_VERSION}")),
    ];
    match format {
        "yaml" => fields.iter().map(|(k, v)| format!("{k}: {v}\n")).collect(),
        "json" => {
            let body: Vec<String> = fields
                .iter()
                .map(|(k, v)| format!("  \"{k}\": \"{v}\""))
                .collect();
            format!("{{\n{}\n}}", body.join(",\n"))
        }
        // Kustomize prints nothing for another format.
        _ => String::new(),
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
