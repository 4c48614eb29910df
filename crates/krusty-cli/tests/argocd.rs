//! Argo CD's contract with the `kustomize` program (argoproj/argo-cd,
//! `util/kustomize/kustomize.go`), run against krusty installed under the
//! name `kustomize`:
//! - the version: Argo CD runs `kustomize version --short`, trims spaces,
//!   a leading `{` and trailing `}`, spaces again, turns double spaces into
//!   single ones, drops a `kustomize/` prefix and takes the first semantic
//!   version it finds; it must find v5.5.0 (so that it passes the Helm
//!   flags it gives Kustomize v5.3.0 and later);
//! - the build: with the application folder as working directory, the
//!   `edit` commands for the application's settings, then `build APP_PATH`
//!   with the build options from the repository root. Each scenario under
//!   `tests/argocd/` lists the `edit` commands (`commands`) run on a copy of
//!   the app of `tests/edit/_app`; the edited kustomization file must be
//!   `after.yaml` (the same edits made by hand), and the build must print
//!   `expected.yaml`, what `kubectl kustomize` printed for the tree with
//!   `after.yaml` (recorded by `tests/edit/make-expected.py --cases
//!   tests/argocd`).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod support;
use support::copy_tree;

const SCENARIOS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/argocd");
const APP: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/edit/_app");

/// A `kustomize` that is krusty: a symbolic link in a fresh directory.
fn kustomize_link(dir: &Path) -> PathBuf {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).expect("bin dir");
    let link = bin.join("kustomize");
    std::os::unix::fs::symlink(support::KRUSTY, &link).expect("symlink");
    link
}

fn run(program: &Path, args: &[&str], cwd: &Path) -> Output {
    Command::new(program)
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("kustomize runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Argo CD's reading of `kustomize version --short` output, step by step.
fn argocd_version_text(output: &str) -> String {
    let v = output.trim();
    let v = v.strip_prefix('{').unwrap_or(v);
    let v = v.strip_suffix('}').unwrap_or(v);
    let v = v.trim().replace("  ", " ");
    v.strip_prefix("kustomize/").unwrap_or(&v).to_string()
}

/// The first match of the semantic-version pattern Argo CD uses
/// (Masterminds/semver's: `v?` digits, up to two more `.digits`, an
/// optional `-prerelease` and `+build` of dot-separated `[0-9A-Za-z-]+`).
fn first_semver(s: &str) -> Option<&str> {
    let b = s.as_bytes();
    let digits = |i: usize| (i..b.len()).take_while(|&j| b[j].is_ascii_digit()).count();
    let ident = |i: usize| {
        (i..b.len())
            .take_while(|&j| b[j].is_ascii_alphanumeric() || b[j] == b'-')
            .count()
    };
    // `[-+]ident(.ident)*` at `i`: its length, or 0.
    let dotted = |i: usize, lead: u8| {
        if b.get(i) != Some(&lead) || ident(i + 1) == 0 {
            return 0;
        }
        let mut end = i + 1 + ident(i + 1);
        while b.get(end) == Some(&b'.') && ident(end + 1) > 0 {
            end += 1 + ident(end + 1);
        }
        end - i
    };
    (0..b.len()).find_map(|start| {
        let mut i = start + usize::from(b[start] == b'v');
        let n = digits(i);
        if n == 0 {
            return None;
        }
        i += n;
        for _ in 0..2 {
            if b.get(i) == Some(&b'.') && digits(i + 1) > 0 {
                i += 1 + digits(i + 1);
            }
        }
        i += dotted(i, b'-');
        i += dotted(i, b'+');
        Some(&s[start..i])
    })
}

/// `v5.5.0` or `5.5.0` to its three numbers.
fn numbers(version: &str) -> Vec<u64> {
    version
        .trim_start_matches('v')
        .split(['.', '-', '+'])
        .take(3)
        .map(|n| n.parse().expect("a number"))
        .collect()
}

#[test]
fn argocd_reads_the_emulated_kustomize_release_from_the_version() {
    let dir = support::scratch("argocd", "version");
    let kustomize = kustomize_link(&dir);
    // Argo CD runs `kustomize` with fixed arguments: the environment
    // chooses the release, v5.8.1 by default.
    for (chosen, want) in [
        (None, "v5.8.1"),
        (Some("v5.5.0"), "v5.5.0"),
        (Some("v5.8.1"), "v5.8.1"),
    ] {
        let run_as = |args: &[&str]| {
            let mut cmd = Command::new(&kustomize);
            cmd.args(args).current_dir(&dir);
            match chosen {
                Some(v) => cmd.env("KRUSTY_KUSTOMIZE_VERSION", v),
                None => cmd.env_remove("KRUSTY_KUSTOMIZE_VERSION"),
            };
            cmd.output().expect("kustomize runs")
        };
        let short = run_as(&["version", "--short"]);
        assert!(short.status.success(), "{}", text(&short.stderr));
        let line = text(&short.stdout);
        let parsed = argocd_version_text(&line);
        assert_eq!(first_semver(&parsed), Some(want), "from {line:?}");
        assert!(numbers(want) >= numbers("v5.3.0"));
        assert!(
            line.contains(&format!("krusty/v{}", env!("CARGO_PKG_VERSION"))),
            "{line}"
        );
        // The long form reads the same.
        let long = text(&run_as(&["version"]).stdout);
        assert_eq!(
            first_semver(&argocd_version_text(&long)),
            Some(want),
            "{long}"
        );
        assert!(long.contains(env!("CARGO_PKG_VERSION")), "{long}");
    }
}

#[test]
fn first_semver_finds_what_argocd_finds() {
    assert_eq!(first_semver("v3.8.1 2020-07-16T00:58:46Z"), Some("v3.8.1"));
    assert_eq!(
        first_semver("kustomize 5.0.0-rc.1+abc"),
        Some("5.0.0-rc.1+abc")
    );
    assert_eq!(first_semver("none"), None);
    assert_eq!(
        argocd_version_text("{kustomize/v3.8.1  2020-07-16T00:58:46Z  }\n"),
        "v3.8.1 2020-07-16T00:58:46Z"
    );
}

#[test]
fn works_when_linked_as_kustomize() {
    let dir = support::scratch("argocd", "linked");
    let kustomize = kustomize_link(&dir);
    support::write(&dir, "app/kustomization.yaml", "resources:\n- cm.yaml\n");
    support::write(
        &dir,
        "app/cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n",
    );
    let edit = run(
        &kustomize,
        &["edit", "set", "nameprefix", "--", "x-"],
        &dir.join("app"),
    );
    assert!(edit.status.success(), "{}", text(&edit.stderr));
    let build = run(&kustomize, &["build", "app"], &dir);
    assert!(build.status.success(), "{}", text(&build.stderr));
    assert_eq!(
        text(&build.stdout),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x-cm\n"
    );
}

/// Splits a command line on spaces (the scenarios quote nothing).
fn words(line: &str) -> Vec<&str> {
    line.split_whitespace().collect()
}

/// Runs one scenario as Argo CD runs it; why it failed, if it did.
fn run_scenario(scenario: &Path) -> Result<(), String> {
    let name = scenario
        .file_name()
        .expect("name")
        .to_string_lossy()
        .into_owned();
    let root = support::scratch("argocd", &name);
    let kustomize = kustomize_link(&root);
    let repo = root.join("repo");
    copy_tree(Path::new(APP), &repo);
    let app = repo.join("overlays/prod");
    let commands = std::fs::read_to_string(scenario.join("commands")).map_err(|e| e.to_string())?;
    for line in commands.lines().filter(|l| !l.trim().is_empty()) {
        let out = run(&kustomize, &words(line), &app);
        if !out.status.success() {
            return Err(format!("`kustomize {line}` failed:\n{}", text(&out.stderr)));
        }
    }
    let after = std::fs::read_to_string(scenario.join("after.yaml")).map_err(|e| e.to_string())?;
    let written =
        std::fs::read_to_string(app.join("kustomization.yaml")).map_err(|e| e.to_string())?;
    if written != after {
        return Err(format!(
            "kustomization.yaml:\n{}",
            support::diff(&after, &written)
        ));
    }
    // Argo CD's build: the app's absolute path, the build options, and the
    // Helm flags it adds for v5.3.0 and later, from the repository root.
    let app_path = app.to_string_lossy().into_owned();
    let args = [
        "build",
        &app_path,
        "--load-restrictor",
        "LoadRestrictionsNone",
        "--enable-helm",
        "--helm-kube-version",
        "1.30",
        "--helm-api-versions",
        "monitoring.coreos.com/v1",
    ];
    let out = run(&kustomize, &args, &repo);
    let expected =
        std::fs::read_to_string(scenario.join("expected.yaml")).map_err(|e| e.to_string())?;
    let printed = text(&out.stdout);
    if !out.status.success() || printed != expected {
        return Err(format!(
            "build:\n{}\n{}",
            support::diff(&expected, &printed),
            text(&out.stderr)
        ));
    }
    Ok(())
}

#[test]
fn argocd_command_sequence_builds_what_kubectl_builds_from_the_hand_edited_app() {
    let failures: Vec<String> = support::cases(Path::new(SCENARIOS))
        .iter()
        .filter_map(|s| {
            run_scenario(&s.dir)
                .err()
                .map(|why| format!("== {}: {why}", s.dir.display()))
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
