//! Golden differential tests, one corpus per area, every case pinned against
//! `kubectl kustomize` (Kustomize v5.5.0):
//! - `tests/builtins`: the fields served by the built-in generators and
//!   transformers (name prefix/suffix, namespace, labels, annotations,
//!   images, replicas, ConfigMap/Secret generators, name references,
//!   `configurations:`, `transformers:` and `generators:`);
//! - `tests/patches`: `patches:`, `patchesStrategicMerge:`,
//!   `patchesJson6902:`, `openapi:` (behaviours in its `NOTES.md`);
//! - `tests/replacements`: `replacements:` and `vars:` (see its `NOTES.md`);
//! - `tests/components`: `kind: Component` and `components:`, including
//!   KEP-1802's user story (see its `NOTES.md`).
//!
//! Each case folder holds:
//! - `in/`: a kustomization tree (bases and overlays);
//! - `target` (optional): the directory to build, relative to the case
//!   folder (default `in`);
//! - `expected.yaml`: the exact stdout of `kubectl kustomize <target>`,
//!   compared byte for byte; or
//! - `expected_error.txt`: a part of krusty's stderr when the build fails
//!   (kubectl fails too: its stderr is kept in `kubectl_error.txt` for
//!   reference); the tests' one convention for failures (`support::Case`);
//! - `expected_stderr.txt` (optional, beside `expected.yaml`): the exact
//!   stderr of `kubectl kustomize` (its warnings) for a build that works.
//!
//! Every case is built as each Kustomize release krusty reproduces
//! (`--kustomize-version v5.5.0` and `v5.8.1`). Where the two releases
//! differ, the case holds `expected.VERSION.yaml` or
//! `expected_error.VERSION.txt` (and `kubectl_error.VERSION.txt`) for each
//! instead, made by that release (`kubectl` v1.32 for v5.5.0, v1.37 for
//! v5.8.1).

mod support;

use std::path::{Path, PathBuf};

use support::{Case, KUSTOMIZE_VERSIONS};

/// Builds one case with krusty as Kustomize release `version` and checks
/// it; `Err` describes the failure.
fn check(case: &Case, version: &str) -> Result<(), String> {
    let want = case
        .expected_as(version)
        .ok_or_else(|| format!("no expected output or error for {version}"))?;
    let out = support::krusty_command()
        .args(["--kustomize-version", version, "build"])
        .arg(case.path(&case.target()))
        .output()
        .map_err(|e| format!("cannot run krusty: {e}"))?;
    want.check(&out)
}

/// The cases of corpus `tests/<name>`.
fn corpus(name: &str) -> Vec<Case> {
    support::cases(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests")
            .join(name),
    )
}

/// Checks every case of corpus `tests/<name>`.
fn run_corpus(name: &str) {
    let cases = corpus(name);
    let mut failures = 0;
    for case in &cases {
        for version in KUSTOMIZE_VERSIONS {
            if let Err(msg) = check(case, version) {
                failures += 1;
                eprintln!("FAIL {} ({version}): {msg}\n", case.name);
            }
        }
    }
    let runs = cases.len() * KUSTOMIZE_VERSIONS.len();
    let summary = format!(
        "{name} golden: {} of {runs} case builds pass ({} cases, each as {})",
        runs - failures,
        cases.len(),
        KUSTOMIZE_VERSIONS.join(" and ")
    );
    eprintln!("{summary}");
    assert_eq!(failures, 0, "{summary}");
}

#[test]
fn builtins_match_kubectl_kustomize() {
    run_corpus("builtins");
}

#[test]
fn patches_match_kubectl_kustomize() {
    run_corpus("patches");
}

#[test]
fn replacements_and_vars_match_kubectl_kustomize() {
    run_corpus("replacements");
}

#[test]
fn components_match_kubectl_kustomize() {
    run_corpus("components");
}

/// The cases of every corpus, each with the target it builds relative to
/// `tests/`.
fn every_case() -> Vec<(Case, PathBuf)> {
    ["builtins", "patches", "replacements", "components"]
        .into_iter()
        .flat_map(|name| {
            corpus(name).into_iter().map(move |case| {
                let target = Path::new(name).join(&case.name).join(case.target());
                (case, target)
            })
        })
        .collect()
}

/// `krusty build T1 T2 … -o OUTDIR`, run in `tests/`.
fn build_together(targets: &[&PathBuf], out: &Path) -> std::process::Output {
    support::krusty_command()
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests"))
        .arg("build")
        .args(targets)
        .arg("-o")
        .arg(out)
        .output()
        .expect("krusty runs")
}

#[test]
fn every_golden_case_gives_its_output_when_all_are_built_in_one_run() {
    let cases: Vec<(Case, PathBuf)> = every_case()
        .into_iter()
        .filter(|(case, _)| case.path("expected.yaml").is_file())
        .collect();
    assert!(cases.len() > 100, "only {} golden cases", cases.len());
    let out = support::scratch("corpora", "together").join("out");
    let targets: Vec<&PathBuf> = cases.iter().map(|(_, t)| t).collect();
    let run = build_together(&targets, &out);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let mut differ = Vec::new();
    for (case, target) in &cases {
        // The output file is named after the target as given.
        let name = support::output_name(&target.to_string_lossy());
        let got = std::fs::read(out.join(&name)).unwrap_or_default();
        let want = std::fs::read(case.path("expected.yaml")).expect("golden");
        if got != want {
            differ.push(target.display().to_string());
        }
    }
    assert!(
        differ.is_empty(),
        "outputs differ from the golden ones: {differ:?}"
    );
    let written = std::fs::read_dir(&out).expect("output folder").count();
    assert_eq!(written, cases.len(), "one file per target");
}

#[test]
fn a_failing_target_among_many_writes_nothing_and_is_named() {
    let cases = every_case();
    let (failing, error) = cases
        .iter()
        .find_map(|(case, target)| Some((target, case.expected_error()?)))
        .expect("a failing case");
    let mut targets: Vec<&PathBuf> = cases
        .iter()
        .filter(|(case, _)| case.path("expected.yaml").is_file())
        .take(20)
        .map(|(_, t)| t)
        .collect();
    targets.insert(10, failing);
    let out = support::scratch("corpora", "failing").join("out");
    let run = build_together(&targets, &out);
    assert!(!run.status.success());
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        stderr.contains(&format!("target '{}'", failing.display())) && stderr.contains(&error.text),
        "{stderr}"
    );
    assert!(!out.exists(), "nothing is written");
}

/// The bundled example (the README's first command) gives `kubectl
/// kustomize`'s output as each release; both print the same bytes
/// (`examples/hello/expected.yaml`).
#[test]
fn the_bundled_example_matches_both_releases() {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/hello");
    let want = std::fs::read(example.join("expected.yaml")).expect("the example's output");
    for version in KUSTOMIZE_VERSIONS {
        let out = support::krusty_command()
            .args(["--kustomize-version", version, "build"])
            .arg(example.join("overlay"))
            .output()
            .expect("krusty runs");
        let want = support::Expected::Output {
            stdout: Some(want.clone()),
            stderr: None,
        };
        want.check(&out)
            .unwrap_or_else(|e| panic!("as {version}: {e}"));
    }
}
