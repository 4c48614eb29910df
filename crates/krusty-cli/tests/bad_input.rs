//! The bad-input corpus: kustomization trees that are wrong in one way
//! (malformed YAML of every kind, wrong field types, missing files, cycles,
//! bad patches, replacements, generators, images, replicas, components,
//! selectors, function configs, empty and missing directories), and a few
//! tricky ones Kustomize accepts.
//!
//! Each folder of `tests/bad-input/` holds:
//! - `in/`: the tree, built as `krusty build in` from the case folder;
//! - `expected_error.txt` where krusty refuses the tree: its exit status
//!   and all of its stderr (`#! exit=1 exact`, then the stderr), or
//!   `expected_stderr.txt` where it builds the tree: its stderr, exactly
//!   (the tests' one convention, `support::Case`); paths read `$CASE` for
//!   the case folder's and `$CORPUS` for the corpus folder's;
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
//! case holds `expected_error.v5.8.1.txt`, `expected_stderr.v5.8.1.txt` or
//! `kubectl_exit.v5.8.1` (Kustomize v5.8.1's decision, kubectl v1.37) beside
//! the shared files, which are v5.5.0's. `KRUSTY_BLESS=1` rewrites
//! `expected_error.txt` or `expected_stderr.txt` from krusty's run
//! (v5.8.1's own files only where its run differs). `KRUSTY_CHECK_ORACLE=1` (with
//! `kubectl` on `PATH`) runs kubectl again and checks `kubectl_exit`.
//!
//! The trees are written by `tests/bad-input/make-cases.py`.

mod support;

use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Output;

use support::{Case, Expected, ExpectedError, KUSTOMIZE_VERSIONS};

/// The corpus folder.
fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("bad-input")
}

/// `krusty args... in` or `kubectl args... in`, run in the case folder.
fn run(case: &Case, mut program: std::process::Command, args: &[&str]) -> Output {
    program
        .args(args)
        .arg("in")
        .current_dir(&case.dir)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {program:?}: {e}"))
}

/// The case's file `name` for release `version`: `name.VERSION` when the
/// case has one, else the shared `name` (v5.5.0's own).
fn file_for(case: &Case, name: &str, version: &str) -> PathBuf {
    let own = case.path(&format!("{name}.{version}"));
    if version != KUSTOMIZE_VERSIONS[0] && own.is_file() {
        own
    } else {
        case.path(name)
    }
}

/// Reads `kubectl_exit`, a one-number file of the case, for release
/// `version`.
fn read_number(case: &Case, file: &str, version: &str) -> Result<i32, String> {
    let path = file_for(case, file, version);
    let text = fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    text.trim()
        .parse()
        .map_err(|e| format!("{file}: {:?}: {e}", text.trim()))
}

/// What a run with this exit status and stderr records: for a failure,
/// the status and all of stderr.
fn expectation_of(exit: i32, stderr: &str) -> Expected {
    match exit {
        0 => Expected::Output {
            stdout: None,
            stderr: Some(stderr.to_string()),
        },
        _ => Expected::Error(ExpectedError {
            text: stderr.to_string(),
            exit: Some(exit),
            exact: true,
        }),
    }
}

/// Records `want` as the case's expectation for `version`: the shared
/// file for v5.5.0; for a later release, a file of its own only where it
/// differs from the shared one.
fn bless(case: &Case, version: &str, want: &Expected) -> Result<(), String> {
    let release = match version == KUSTOMIZE_VERSIONS[0] {
        true => String::new(),
        false => format!(".{version}"),
    };
    for name in ["expected_error", "expected_stderr"] {
        let _ = fs::remove_file(case.path(&format!("{name}{release}.txt")));
    }
    if !release.is_empty() && case.expected_as(version).as_ref() == Some(want) {
        return Ok(());
    }
    let (name, text) = match want {
        Expected::Error(error) => ("expected_error", error.file()),
        Expected::Output { stderr, .. } => ("expected_stderr", stderr.clone().unwrap_or_default()),
    };
    fs::write(case.path(&format!("{name}{release}.txt")), text).map_err(|e| e.to_string())
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
fn check(case: &Case, bless_it: bool, version: &str) -> Result<Verdict, String> {
    let out = run(
        case,
        support::krusty_command(),
        &["--kustomize-version", version, "build"],
    );
    let exit = out.status.code().unwrap_or(-1);
    let corpus = corpus();
    let stderr = support::portable(
        &support::text(&out.stderr),
        &[(&case.dir, "$CASE"), (&corpus, "$CORPUS")],
    );
    if bless_it {
        bless(case, version, &expectation_of(exit, &stderr))?;
    }
    let mut problems = Vec::new();
    let want = case
        .expected_as(version)
        .ok_or("no expected_error.txt nor expected_stderr.txt")?;
    // The stdout of a build that works is not pinned here.
    if let Err(e) = want.check_run(out.status.code(), &out.stdout, &stderr) {
        problems.push(e);
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
        let kubectl = run(case, std::process::Command::new("kubectl"), &["kustomize"]);
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
    let cases = support::cases(&corpus());
    assert!(cases.len() >= 150, "only {} bad-input cases", cases.len());
    let mut failures = 0;
    let mut known = Vec::new();
    for (case, version) in cases
        .iter()
        .flat_map(|c| KUSTOMIZE_VERSIONS.map(|v| (c, v)))
    {
        let name = format!("{} ({version})", case.name);
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
