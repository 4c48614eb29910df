//! Runs every case of `../shared/conformance/cases` against the built binary,
//! as each Kustomize release krusty reproduces, and fails when a case in the
//! committed baseline stops passing under either.
//!
//! A case passes when its output matches `expected.yaml` byte for byte, or,
//! for error cases, when the build exits non-zero. The cases' outputs are
//! Kustomize v5.5.0's; where v5.8.1 prints other bytes, its output (made by
//! kubectl v1.37) is in `tests/conformance-v5.8.1/CASE/expected.yaml`. Set
//! `KRUSTY_CONFORMANCE_CASES` to point at another case folder.

mod support;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

const TIMEOUT: Duration = Duration::from_secs(20);

/// The case folder, if the shared material is beside the repository.
fn cases_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("KRUSTY_CONFORMANCE_CASES")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/conformance/cases")
        });
    dir.is_dir().then_some(dir)
}

/// What a case asks for, read from its `case.yaml`.
struct Case {
    name: String,
    dir: PathBuf,
    target: String,
    flags: Vec<String>,
    expect_error: bool,
}

fn load_case(dir: &Path) -> Case {
    let text = std::fs::read_to_string(dir.join("case.yaml")).expect("case.yaml is readable");
    let docs = krusty_yaml::parse_stream(&text).expect("case.yaml parses");
    let root = docs[0].root.as_ref().expect("case.yaml has content");
    let flags = root
        .get("flags")
        .and_then(|f| f.as_seq())
        .map(|items| {
            items
                .iter()
                .filter_map(|i| i.as_scalar().map(|s| s.text.to_string()))
                .collect()
        })
        .unwrap_or_default();
    Case {
        name: dir
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned(),
        dir: dir.to_path_buf(),
        target: root
            .get("target")
            .and_then(|t| t.as_str())
            .unwrap_or(".")
            .to_string(),
        flags,
        expect_error: root.get("expect").and_then(|e| e.as_str()) == Some("error"),
    }
}

/// Where a release's own outputs of the cases are, when it has any.
fn own_outputs(version: &str) -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/conformance-{version}"));
    dir.is_dir().then_some(dir)
}

/// Runs the binary on a case as Kustomize release `version`; `true` if it
/// passes.
fn run_case(case: &Case, version: &str, scratch: &Path) -> bool {
    let input = case.dir.join("in");
    let cwd = if input.is_dir() {
        input
    } else {
        let empty = scratch.join(&case.name);
        std::fs::create_dir_all(&empty).expect("scratch dir can be created");
        empty
    };
    let mut child = support::krusty_command()
        .args(["--kustomize-version", version, "build"])
        .arg(&case.target)
        .args(&case.flags)
        .current_dir(&cwd)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("krusty binary starts");
    let stdout = child.stdout.take().expect("stdout is piped");
    let reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let mut stdout = stdout;
        std::io::Read::read_to_end(&mut stdout, &mut buf).map(|_| buf)
    });
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait works") {
            break Some(status);
        }
        if start.elapsed() > TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    let out = reader.join().expect("reader thread").unwrap_or_default();
    let Some(status) = status else { return false };
    if case.expect_error {
        return !status.success();
    }
    let own = own_outputs(version).map(|d| d.join(&case.name).join("expected.yaml"));
    let expected = own
        .and_then(|p| std::fs::read(p).ok())
        .or_else(|| std::fs::read(case.dir.join("expected.yaml")).ok())
        .unwrap_or_default();
    status.success() && out == expected
}

fn baseline() -> BTreeSet<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance-baseline.txt");
    std::fs::read_to_string(path)
        .expect("the baseline file is committed")
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(String::from)
        .collect()
}

#[test]
fn conformance_baseline_still_passes() {
    let Some(dir) = cases_dir() else {
        eprintln!("SKIPPED: conformance cases not found beside the repository (../shared/conformance/cases)");
        return;
    };
    let cases: Vec<Case> = support::cases(&dir)
        .iter()
        .filter(|c| c.path("case.yaml").is_file())
        .map(|c| load_case(&c.dir))
        .collect();
    let scratch = Path::new(env!("CARGO_TARGET_TMPDIR")).join("conformance-empty");
    let baseline = baseline();
    let mut regressed = Vec::new();
    for version in support::KUSTOMIZE_VERSIONS {
        let passing = passing(&cases, version, &scratch);
        regressed.extend(
            baseline
                .difference(&passing)
                .map(|case| format!("{case} ({version})")),
        );
        let new: Vec<&String> = passing.difference(&baseline).collect();
        eprintln!(
            "conformance score as {version}: {} of {} cases pass",
            passing.len(),
            cases.len()
        );
        if !new.is_empty() {
            eprintln!("cases passing that are not in the baseline yet (add them to tests/conformance-baseline.txt):");
            for n in &new {
                eprintln!("  {n}");
            }
        }
    }
    assert!(
        regressed.is_empty(),
        "baseline cases no longer pass: {regressed:#?}"
    );
}

/// The names of the cases that pass as release `version`.
fn passing(cases: &[Case], version: &str, scratch: &Path) -> BTreeSet<String> {
    std::thread::scope(|s| {
        let chunks: Vec<&[Case]> = cases.chunks(cases.len().div_ceil(2).max(1)).collect();
        let handles: Vec<_> = chunks
            .into_iter()
            .map(|chunk| {
                let scratch = &scratch;
                s.spawn(move || {
                    chunk
                        .iter()
                        .filter(|c| run_case(c, version, scratch))
                        .map(|c| c.name.clone())
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("worker thread"))
            .collect()
    })
}
