//! The `envs` of an exec function's spec (Kustomize v5.7.0, PR #5316):
//! under v5.8.1 they reach the function, merged with `--env` (the flag
//! wins for the same name; only `NAME=value` entries with exactly one `=`
//! count); under v5.5.0 they are ignored. A shell script prints the
//! variables it sees into the ConfigMap it generates.

use std::path::{Path, PathBuf};
use std::process::Output;

mod support;
use support::{text, write};

/// The variables the script reports, each as `NAME: is-VALUE`
/// (`is-unset` when it is not set, `is-` when it is empty).
const NAMES: [(&str, &str); 5] = [
    ("greeting", "GREETING"),
    ("bare", "BARE"),
    ("bad", "BAD"),
    ("empty", "EMPTY"),
    ("flagged", "FLAGGED"),
];

/// A kustomization generating one ConfigMap through an exec function
/// whose spec (the annotation) declares `envs`.
fn tree(name: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let dir = support::scratch("exec-envs", name);
    let mut script = String::from(
        "#!/bin/sh\ncat >/dev/null\ncat <<EOF\napiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: env\n  data:\n",
    );
    for (key, var) in NAMES {
        script.push_str(&format!("    {key}: is-${{{var}-unset}}\n"));
    }
    script.push_str("EOF\n");
    write(&dir, "fn.sh", &script);
    std::fs::set_permissions(dir.join("fn.sh"), std::fs::Permissions::from_mode(0o755))
        .expect("chmod");
    write(
        &dir,
        "gen.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: gen\n  annotations:\n    config.kubernetes.io/function: |\n      exec:\n        path: ./fn.sh\n        envs:\n        - GREETING=hello\n        - BARE\n        - BAD=a=b\n        - EMPTY=\n        - FLAGGED=spec\n",
    );
    write(&dir, "kustomization.yaml", "generators:\n- gen.yaml\n");
    dir
}

/// `krusty --kustomize-version VERSION build --enable-alpha-plugins
/// --enable-exec -e FLAGGED=flag .` in `dir`, with BARE and BAD set in
/// krusty's environment and the other names unset.
fn build(dir: &Path, version: &str) -> Output {
    support::krusty_command()
        .args([
            "--kustomize-version",
            version,
            "build",
            "--enable-alpha-plugins",
            "--enable-exec",
            "-e",
            "FLAGGED=flag",
            ".",
        ])
        .current_dir(dir)
        .env_remove("KRUSTY_KUSTOMIZE_VERSION")
        .env_remove("GREETING")
        .env_remove("EMPTY")
        .env_remove("FLAGGED")
        .env("BARE", "fromenv")
        .env("BAD", "fromenv")
        .output()
        .expect("krusty runs")
}

/// What the function saw, by its ConfigMap key.
fn seen(out: &Output) -> Vec<(String, String)> {
    let stdout = text(&out.stdout);
    assert!(
        out.status.success(),
        "stdout:\n{stdout}\nstderr:\n{}",
        text(&out.stderr)
    );
    NAMES
        .iter()
        .map(|(key, _)| {
            let prefix = format!("  {key}: ");
            let value = stdout
                .lines()
                .find_map(|l| l.strip_prefix(&prefix))
                .unwrap_or_else(|| panic!("no {key} in:\n{stdout}"));
            (key.to_string(), value.to_string())
        })
        .collect()
}

fn pairs(items: &[(&str, &str)]) -> Vec<(String, String)> {
    items
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[test]
fn v5_8_1_gives_exec_functions_their_envs_merged_with_the_flag() {
    let dir = tree("v5.8.1");
    let want = pairs(&[
        // Declared.
        ("greeting", "is-hello"),
        // A bare name is not looked up; the function has krusty's value
        // anyway (it inherits its environment, as Kustomize's functions
        // inherit Kustomize's).
        ("bare", "is-fromenv"),
        // Two `=`: dropped, the inherited value stays.
        ("bad", "is-fromenv"),
        // `NAME=`: set, empty.
        ("empty", "is-"),
        // The flag wins over the spec.
        ("flagged", "is-flag"),
    ]);
    assert_eq!(seen(&build(&dir, "v5.8.1")), want);
    // Stable.
    assert_eq!(seen(&build(&dir, "v5.8.1")), want);
}

#[test]
fn v5_5_0_ignores_the_envs_of_exec_functions() {
    let dir = tree("v5.5.0");
    assert_eq!(
        seen(&build(&dir, "v5.5.0")),
        pairs(&[
            ("greeting", "is-unset"),
            ("bare", "is-fromenv"),
            ("bad", "is-fromenv"),
            ("empty", "is-unset"),
            // `--env` reaches exec functions in both versions (krusty's
            // policy).
            ("flagged", "is-flag"),
        ])
    );
}
