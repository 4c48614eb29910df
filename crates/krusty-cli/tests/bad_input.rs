//! The bad-input corpus: kustomization trees that are wrong in one way
//! (malformed YAML of every kind, wrong field types, missing files, cycles,
//! bad patches, replacements, generators, images, replicas, components,
//! selectors, function configs, empty and missing directories), and a few
//! tricky ones Kustomize accepts.
//!
//! Each folder of `tests/bad-input/` holds:
//! - `in/`: the tree, built as `krusty build in` from the case folder;
//! - `expected_exit`: krusty's exit status;
//! - `expected_stderr`: krusty's stderr, exactly, with the case folder's
//!   absolute path written `$CASE` and the corpus folder's `$CORPUS`;
//! - `kubectl_exit`: `0` when `kubectl kustomize in` (Kustomize v5.5.0)
//!   accepts the tree, `1` when it refuses it;
//! - `disagreement` (optional): one line saying how krusty's decision
//!   differs from kubectl's today. Such cases skip the decision check and
//!   are listed on stderr (so are those whose decision now agrees, for
//!   the file to be deleted); their snapshot is still compared.
//!
//! krusty must exit with the recorded status and print the recorded stderr;
//! when it fails it prints nothing on stdout; and it accepts exactly the
//! trees kubectl accepts. Every case is built as each Kustomize release
//! krusty reproduces (`--kustomize-version`); where v5.8.1 differs, the
//! case holds `expected_exit.v5.8.1`, `expected_stderr.v5.8.1` or
//! `kubectl_exit.v5.8.1` (Kustomize v5.8.1's decision, kubectl v1.37) beside
//! the shared files, which are v5.5.0's. `KRUSTY_BLESS=1` rewrites
//! `expected_exit` and `expected_stderr` from krusty's run (v5.8.1's own
//! files only where its run differs). `KRUSTY_CHECK_ORACLE=1` (with
//! `kubectl` on `PATH`) runs kubectl again and checks `kubectl_exit`.
//!
//! The trees are written by `tests/bad-input/make-cases.py`.

mod support;

use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The Kustomize releases krusty reproduces, oldest first.
const KUSTOMIZE_VERSIONS: [&str; 2] = ["v5.5.0", "v5.8.1"];

/// The corpus folder.
fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("bad-input")
}

/// Every case folder, sorted.
fn cases() -> Vec<PathBuf> {
    let dir = corpus();
    let mut cases: Vec<PathBuf> = fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("in").is_dir())
        .collect();
    cases.sort();
    cases
}

/// `program args... in`, run in the case folder.
fn run(case: &Path, program: &str, args: &[&str]) -> Output {
    Command::new(program)
        .args(args)
        .arg("in")
        .current_dir(case)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {program}: {e}"))
}

/// `text` with the case's and the corpus's absolute paths replaced by
/// `$CASE` and `$CORPUS`, so that the snapshot holds wherever the
/// repository is checked out.
fn portable(text: &str, case: &Path) -> String {
    let mut text = text.to_string();
    for (dir, name) in [(case.to_path_buf(), "$CASE"), (corpus(), "$CORPUS")] {
        if let Ok(real) = dir.canonicalize() {
            text = text.replace(&*real.to_string_lossy(), name);
        }
        text = text.replace(&*dir.to_string_lossy(), name);
    }
    text
}

/// The case's file `name` for release `version`: `name.VERSION` when the
/// case has one, else the shared `name` (v5.5.0's own).
fn file_for(case: &Path, name: &str, version: &str) -> PathBuf {
    let own = case.join(format!("{name}.{version}"));
    if version != KUSTOMIZE_VERSIONS[0] && own.is_file() {
        own
    } else {
        case.join(name)
    }
}

/// Reads a one-number file of the case (`expected_exit`, `kubectl_exit`)
/// for release `version`.
fn read_number(case: &Path, file: &str, version: &str) -> Result<i32, String> {
    let path = file_for(case, file, version);
    let text = fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    text.trim()
        .parse()
        .map_err(|e| format!("{file}: {:?}: {e}", text.trim()))
}

/// Records `text` as the case's file `name` for `version`: the shared file
/// for v5.5.0; for a later release, a file of its own only where it
/// differs from the shared one.
fn bless_file(case: &Path, name: &str, version: &str, text: &str) -> Result<(), String> {
    let own = case.join(format!("{name}.{version}"));
    if version == KUSTOMIZE_VERSIONS[0] {
        return fs::write(case.join(name), text).map_err(|e| e.to_string());
    }
    if fs::read_to_string(case.join(name)).is_ok_and(|shared| shared == text) {
        let _ = fs::remove_file(own);
        return Ok(());
    }
    fs::write(own, text).map_err(|e| e.to_string())
}

/// What one case's check found.
enum Verdict {
    Pass,
    /// Passed its snapshot; its decision differs from kubectl's, as its
    /// `disagreement` file says.
    KnownDisagreement(String),
    /// Has a `disagreement` file, but krusty now decides as kubectl does.
    Resolved,
}

/// Checks one case as release `version`; `Err` describes the failures.
fn check(case: &Path, bless: bool, version: &str) -> Result<Verdict, String> {
    let out = run(
        case,
        support::KRUSTY,
        &["--kustomize-version", version, "build"],
    );
    let exit = out.status.code().unwrap_or(-1);
    let stderr = portable(&String::from_utf8_lossy(&out.stderr), case);
    if bless {
        bless_file(case, "expected_exit", version, &format!("{exit}\n"))?;
        bless_file(case, "expected_stderr", version, &stderr)?;
    }
    let mut problems = Vec::new();
    let want_exit = read_number(case, "expected_exit", version)?;
    if exit != want_exit {
        problems.push(format!("exit status {exit}, expected {want_exit}"));
    }
    let want_stderr = fs::read_to_string(file_for(case, "expected_stderr", version))
        .map_err(|e| format!("expected_stderr: {e}"))?;
    if stderr != want_stderr {
        problems.push(format!(
            "stderr differs\n--- expected\n{want_stderr}\n--- krusty\n{stderr}"
        ));
    }
    if exit != 0 && !out.stdout.is_empty() {
        problems.push(format!(
            "failed, but printed {} bytes on stdout",
            out.stdout.len()
        ));
    }
    let kubectl_accepts = read_number(case, "kubectl_exit", version)? == 0;
    let disagreement = fs::read_to_string(file_for(case, "disagreement", version)).ok();
    let mut verdict = Verdict::Pass;
    match disagreement {
        Some(_) if (exit == 0) == kubectl_accepts => verdict = Verdict::Resolved,
        Some(line) => verdict = Verdict::KnownDisagreement(line.trim().to_string()),
        None if (exit == 0) != kubectl_accepts => problems.push(format!(
            "krusty {}, kubectl {} (add a `disagreement` file if this is known)",
            if exit == 0 { "accepts" } else { "refuses" },
            if kubectl_accepts {
                "accepts"
            } else {
                "refuses"
            },
        )),
        None => {}
    }
    if version == KUSTOMIZE_VERSIONS[0]
        && std::env::var("KRUSTY_CHECK_ORACLE").is_ok_and(|v| v == "1")
    {
        let kubectl = run(case, "kubectl", &["kustomize"]);
        if kubectl.status.success() != kubectl_accepts {
            problems.push(format!(
                "kubectl_exit is stale: kubectl now {}",
                if kubectl.status.success() {
                    "accepts"
                } else {
                    "refuses"
                }
            ));
        }
    }
    if problems.is_empty() {
        Ok(verdict)
    } else {
        Err(problems.join("\n"))
    }
}

#[test]
fn bad_input_matches_snapshots_and_kubectl_decisions() {
    let bless = std::env::var("KRUSTY_BLESS").is_ok_and(|v| v == "1");
    let cases = cases();
    assert!(cases.len() >= 150, "only {} bad-input cases", cases.len());
    let mut failures = 0;
    let mut known = Vec::new();
    for (case, version) in cases
        .iter()
        .flat_map(|c| KUSTOMIZE_VERSIONS.map(|v| (c, v)))
    {
        let name = case.file_name().unwrap_or_default().to_string_lossy();
        let name = format!("{name} ({version})");
        match check(case, bless, version) {
            Ok(Verdict::Pass) => {}
            Ok(Verdict::KnownDisagreement(why)) => known.push(format!("{name}: {why}")),
            Ok(Verdict::Resolved) => known.push(format!(
                "{name}: now decides as kubectl does; delete its `disagreement` file"
            )),
            Err(msg) => {
                failures += 1;
                eprintln!("FAIL {name}: {msg}\n");
            }
        }
    }
    if !known.is_empty() {
        // Written past the test harness's capture, so that every run shows it.
        let mut loud = format!(
            "\n!!! {} bad-input cases where krusty's decision differs from kubectl's \
             (decision not checked):\n",
            known.len()
        );
        for line in &known {
            loud.push_str(&format!("!!!   {line}\n"));
        }
        let _ = writeln!(std::io::stderr(), "{loud}");
    }
    let runs = cases.len() * KUSTOMIZE_VERSIONS.len();
    let summary = format!(
        "bad input: {} of {runs} case builds pass ({} cases, each as {})",
        runs - failures,
        cases.len(),
        KUSTOMIZE_VERSIONS.join(" and ")
    );
    eprintln!("{summary}");
    assert_eq!(failures, 0, "{summary}");
}
