//! Testing a function on fixture files.
//!
//! A fixture directory (a case) holds:
//!
//! - `input.yaml`: a `ResourceList`, or plain resources (`---`-separated);
//! - `fn-config.yaml` (optional): the functionConfig, for plain resources;
//! - `expected.yaml`: the whole output `ResourceList` (also when the
//!   function fails: it still prints its items and results);
//! - `expected-exit-code` (optional): the exit code, when not 0;
//! - `expected-error.txt` (optional): text the function's stderr must
//!   contain (a fragment, not the whole stderr).
//!
//! [`golden`] runs every case under a directory (each directory holding
//! an `input.yaml`, at any depth) in process; [`golden_exec`] runs a
//! built executable on them instead (the `CARGO_BIN_EXE_<name>` of an
//! integration test), so a function needs no library to be tested. A
//! case whose output differs from `expected.yaml` fails with a unified
//! diff (`--- …/expected.yaml`, `+++` the output, three lines of context)
//! and the function's stderr.
//!
//! Set `KRUSTY_FN_UPDATE=1` (or `true`, or any other non-empty value but
//! `0` and `false`) to write the expected files from what the function
//! does now; unset, empty, `0` or `false` compares. Updating writes
//! `expected.yaml`, and `expected-exit-code` (removed when the code is
//! 0). It never rewrites an `expected-error.txt` that exists, since it is
//! a hand-written fragment: kept as it is while the new stderr still
//! contains it, and otherwise the case fails, saying the fragment must be
//! edited (or removed) by hand. A missing `expected-error.txt` is written
//! with the whole stderr when the function fails with something on
//! stderr.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::run::{process, FnError, Outcome};
use crate::wire::ResourceList;

/// Runs `f` on the fixture in `dir` and returns what it produced.
pub fn run_fixture<F>(dir: &Path, f: F) -> Result<Outcome, String>
where
    F: FnOnce(&mut ResourceList) -> Result<(), FnError>,
{
    Ok(process(&fixture_input(dir)?, f))
}

/// The input `ResourceList` of the fixture in `dir`, as text: its
/// `input.yaml` when that is a list, else a list of its resources with
/// `fn-config.yaml` as the functionConfig.
pub fn fixture_input(dir: &Path) -> Result<String, String> {
    let read = |name: &str| std::fs::read_to_string(dir.join(name));
    let input =
        read("input.yaml").map_err(|e| format!("{}: {e}", dir.join("input.yaml").display()))?;
    let list = match ResourceList::parse(&input) {
        Ok(list) => list,
        Err(_) => {
            let docs = krusty_yaml::parse_stream(&input).map_err(|e| {
                format!(
                    "{}: {}: {}",
                    dir.join("input.yaml").display(),
                    e.pos,
                    e.message
                )
            })?;
            let mut list = ResourceList::new(docs.into_iter().filter_map(|d| d.root).collect());
            if let Ok(config) = read("fn-config.yaml") {
                list.function_config = krusty_yaml::parse_stream(&config)
                    .map_err(|e| format!("fn-config.yaml: {}: {}", e.pos, e.message))?
                    .into_iter()
                    .find_map(|d| d.root);
            }
            list
        }
    };
    list.to_yaml().map_err(|e| e.to_string())
}

/// Runs `f` on the fixture in `dir` and checks its output against
/// `expected.yaml`; returns a readable difference when they differ.
pub fn check_fixture<F>(dir: &Path, f: F) -> Result<(), String>
where
    F: FnOnce(&mut ResourceList) -> Result<(), FnError>,
{
    let outcome = run_fixture(dir, f)?;
    if updating() {
        return std::fs::write(dir.join("expected.yaml"), &outcome.stdout)
            .map_err(|e| e.to_string());
    }
    compare_expected(dir, &outcome)
}

/// Compares the output with `expected.yaml`.
fn compare_expected(dir: &Path, outcome: &Outcome) -> Result<(), String> {
    let expected_path = dir.join("expected.yaml");
    let expected = std::fs::read_to_string(&expected_path).map_err(|e| {
        format!(
            "{}: {e} (run with KRUSTY_FN_UPDATE=1 to create it)",
            expected_path.display()
        )
    })?;
    if expected == outcome.stdout {
        return Ok(());
    }
    let diff = unified_diff(
        &expected,
        &outcome.stdout,
        &expected_path.display().to_string(),
        &format!("{} (the output)", dir.display()),
    );
    let mut message = format!(
        "{}: the output differs from expected.yaml (run with KRUSTY_FN_UPDATE=1 to accept it)\n{diff}",
        dir.display()
    );
    if !outcome.stderr.trim().is_empty() {
        message.push_str("--- stderr\n");
        message.push_str(&outcome.stderr);
    }
    Err(message)
}

/// The unified diff from `expected` to `got`, with three lines of
/// context around each change, under `---`/`+++` headers naming them.
pub fn unified_diff(expected: &str, got: &str, expected_name: &str, got_name: &str) -> String {
    similar::TextDiff::from_lines(expected, got)
        .unified_diff()
        .context_radius(3)
        .header(expected_name, got_name)
        .to_string()
}

/// Runs the executable `program` on the fixture in `dir` (its input on
/// stdin) and returns what it produced.
pub fn run_fixture_exec(dir: &Path, program: &Path) -> Result<Outcome, String> {
    let input = fixture_input(dir)?;
    let mut child = Command::new(program)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("{}: {e}", program.display()))?;
    let mut stdin = child.stdin.take().ok_or("no stdin")?;
    // Written on its own thread: a function may write before it has read
    // all of its input.
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child
        .wait_with_output()
        .map_err(|e| format!("{}: {e}", program.display()))?;
    let _ = writer.join();
    let code = out.status.code().unwrap_or(-1);
    Ok(Outcome {
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        exit_code: u8::try_from(code).unwrap_or(u8::MAX),
    })
}

/// The cases under `root`: every directory holding an `input.yaml`, at
/// any depth, in name order.
pub fn cases(root: &Path) -> Result<Vec<PathBuf>, String> {
    let mut found = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        if dir.join("input.yaml").is_file() {
            found.push(dir.clone());
        }
        let entries = std::fs::read_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        for entry in entries {
            let path = entry.map_err(|e| e.to_string())?.path();
            if path.is_dir() {
                stack.push(path);
            }
        }
    }
    found.sort();
    if found.is_empty() {
        return Err(format!(
            "{}: no fixture (no input.yaml) found",
            root.display()
        ));
    }
    Ok(found)
}

/// Checks every case under `root` with `f` (see the module's
/// documentation); returns every case that failed, with what differs.
pub fn golden<F>(root: &Path, f: F) -> Result<(), String>
where
    F: Fn(&mut ResourceList) -> Result<(), FnError>,
{
    check_all(root, |dir| run_fixture(dir, &f))
}

/// Checks every case under `root` by running the executable `program`.
pub fn golden_exec(root: &Path, program: &Path) -> Result<(), String> {
    check_all(root, |dir| run_fixture_exec(dir, program))
}

fn check_all(root: &Path, run: impl Fn(&Path) -> Result<Outcome, String>) -> Result<(), String> {
    let mut failures = Vec::new();
    for dir in cases(root)? {
        if let Err(e) = run(&dir).and_then(|outcome| check_outcome(&dir, &outcome)) {
            failures.push(e);
        }
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(failures.join("\n\n"))
    }
}

/// `KRUSTY_FN_UPDATE` asks for the expected files to be written.
fn updating() -> bool {
    update_requested(std::env::var_os("KRUSTY_FN_UPDATE").as_deref())
}

/// Whether a `KRUSTY_FN_UPDATE` value asks for updating: unset, empty,
/// `0` and `false` (any case) do not.
fn update_requested(value: Option<&std::ffi::OsStr>) -> bool {
    let Some(value) = value else { return false };
    let value = value.to_string_lossy();
    let value = value.trim();
    !(value.is_empty() || value == "0" || value.eq_ignore_ascii_case("false"))
}

/// Compares an outcome with a case's expected files (or writes them in
/// update mode, see the module's documentation).
pub fn check_outcome(dir: &Path, outcome: &Outcome) -> Result<(), String> {
    check_or_update(dir, outcome, updating())
}

/// Writes a case's expected files from `outcome`, except an existing
/// `expected-error.txt`, which is only checked.
fn update_case(dir: &Path, outcome: &Outcome) -> Result<(), String> {
    let code_path = dir.join("expected-exit-code");
    let error_path = dir.join("expected-error.txt");
    let write =
        |p: &Path, text: &str| std::fs::write(p, text).map_err(|e| format!("{}: {e}", p.display()));
    write(&dir.join("expected.yaml"), &outcome.stdout)?;
    if outcome.exit_code == 0 {
        match std::fs::remove_file(&code_path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(format!("{}: {e}", code_path.display()))
            }
            _ => {}
        }
    } else {
        write(&code_path, &format!("{}\n", outcome.exit_code))?;
    }
    match std::fs::read_to_string(&error_path) {
        Ok(want) if outcome.stderr.contains(want.trim_end()) => Ok(()),
        Ok(want) => Err(format!(
            "{}: expected-error.txt no longer matches: the stderr does not contain it; \
             it is a hand-written fragment, so KRUSTY_FN_UPDATE does not overwrite it: \
             edit it (or remove it) by hand\n--- expected-error.txt\n{want}\n--- stderr\n{}",
            dir.display(),
            outcome.stderr
        )),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if outcome.exit_code != 0 && !outcome.stderr.trim().is_empty() {
                write(&error_path, &outcome.stderr)?;
            }
            Ok(())
        }
        Err(e) => Err(format!("{}: {e}", error_path.display())),
    }
}

fn check_or_update(dir: &Path, outcome: &Outcome, update: bool) -> Result<(), String> {
    if update {
        return update_case(dir, outcome);
    }
    let code_path = dir.join("expected-exit-code");
    let error_path = dir.join("expected-error.txt");
    let want_code = match std::fs::read_to_string(&code_path) {
        Ok(text) => text
            .trim()
            .parse::<u8>()
            .map_err(|_| format!("{}: not an exit code", code_path.display()))?,
        Err(_) => 0,
    };
    if outcome.exit_code != want_code {
        return Err(format!(
            "{}: exit code {} (expected {want_code})\n--- stderr\n{}",
            dir.display(),
            outcome.exit_code,
            outcome.stderr
        ));
    }
    if let Ok(want) = std::fs::read_to_string(&error_path) {
        if !outcome.stderr.contains(want.trim_end()) {
            return Err(format!(
                "{}: stderr does not contain expected-error.txt\n--- expected\n{want}\n--- stderr\n{}",
                dir.display(),
                outcome.stderr
            ));
        }
    }
    compare_expected(dir, outcome)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsStr;

    fn outcome(stdout: &str, stderr: &str, exit_code: u8) -> Outcome {
        Outcome {
            stdout: stdout.to_string(),
            stderr: stderr.to_string(),
            exit_code,
        }
    }

    fn read(dir: &Path, name: &str) -> Option<String> {
        std::fs::read_to_string(dir.join(name)).ok()
    }

    #[test]
    fn only_non_empty_values_other_than_0_and_false_update() {
        let asks = |v: Option<&str>| update_requested(v.map(OsStr::new));
        assert!(!asks(None));
        for no in ["", " ", "0", "false", "FALSE", "False"] {
            assert!(!asks(Some(no)), "{no:?} must not update");
        }
        for yes in ["1", "true", "TRUE", "yes", "anything"] {
            assert!(asks(Some(yes)), "{yes:?} must update");
        }
    }

    #[test]
    fn a_different_output_is_shown_as_a_unified_diff() {
        let dir = tempfile::tempdir().unwrap();
        let lines: Vec<String> = (1..=20).map(|i| format!("line: {i}")).collect();
        let expected = lines.join("\n") + "\n";
        std::fs::write(dir.path().join("expected.yaml"), &expected).unwrap();
        let got = expected.replace("line: 10\n", "line: ten\n");
        let err = check_or_update(dir.path(), &outcome(&got, "a warning\n", 0), false).unwrap_err();
        let expected_header = format!("--- {}", dir.path().join("expected.yaml").display());
        assert!(err.contains(&expected_header), "{err}");
        assert!(
            err.contains(&format!("+++ {} (the output)", dir.path().display())),
            "{err}"
        );
        assert!(err.contains("@@ -7,7 +7,7 @@"), "{err}");
        assert!(err.contains("\n-line: 10\n+line: ten\n"), "{err}");
        // Three lines of context on each side, not the whole texts.
        assert!(
            err.contains("\n line: 7\n") && err.contains("\n line: 13\n"),
            "{err}"
        );
        assert!(
            !err.contains("line: 6\n") && !err.contains("line: 14\n"),
            "{err}"
        );
        assert!(err.contains("--- stderr\na warning\n"), "{err}");
        assert!(!err.contains("Outcome"), "{err}");
        // The same output passes.
        check_or_update(dir.path(), &outcome(&expected, "", 0), false).unwrap();
    }

    #[test]
    fn updating_writes_a_missing_error_file_with_the_stderr() {
        let dir = tempfile::tempdir().unwrap();
        let failed = outcome("out\n", "boom: bad config\n", 1);
        check_or_update(dir.path(), &failed, true).unwrap();
        assert_eq!(read(dir.path(), "expected.yaml").as_deref(), Some("out\n"));
        assert_eq!(
            read(dir.path(), "expected-exit-code").as_deref(),
            Some("1\n")
        );
        assert_eq!(
            read(dir.path(), "expected-error.txt").as_deref(),
            Some("boom: bad config\n")
        );
        check_or_update(dir.path(), &failed, false).unwrap();
        // Nothing on stderr: no error file.
        let dir = tempfile::tempdir().unwrap();
        check_or_update(dir.path(), &outcome("out\n", "", 1), true).unwrap();
        assert_eq!(read(dir.path(), "expected-error.txt"), None);
    }

    #[test]
    fn updating_keeps_an_error_fragment_that_still_matches() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("expected-error.txt"), "bad config\n").unwrap();
        let failed = outcome("out\n", "error: boom: bad config (line 3)\n", 1);
        check_or_update(dir.path(), &failed, true).unwrap();
        assert_eq!(
            read(dir.path(), "expected-error.txt").as_deref(),
            Some("bad config\n")
        );
        assert_eq!(
            read(dir.path(), "expected-exit-code").as_deref(),
            Some("1\n")
        );
        // Also when the function now succeeds but still says it.
        let passed = outcome("out\n", "warning: bad config\n", 0);
        check_or_update(dir.path(), &passed, true).unwrap();
        assert_eq!(
            read(dir.path(), "expected-error.txt").as_deref(),
            Some("bad config\n")
        );
        assert_eq!(read(dir.path(), "expected-exit-code"), None);
    }

    #[test]
    fn updating_fails_on_an_error_fragment_that_no_longer_matches() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("expected-error.txt"), "bad config\n").unwrap();
        let failed = outcome("out\n", "error: something else\n", 1);
        let err = check_or_update(dir.path(), &failed, true).unwrap_err();
        assert!(
            err.contains("expected-error.txt no longer matches"),
            "{err}"
        );
        assert!(err.contains("edit it (or remove it) by hand"), "{err}");
        assert!(err.contains("error: something else"), "{err}");
        assert_eq!(
            read(dir.path(), "expected-error.txt").as_deref(),
            Some("bad config\n"),
            "the hand-written fragment was overwritten"
        );
        // Comparing fails on it too.
        let err = check_or_update(dir.path(), &failed, false).unwrap_err();
        assert!(
            err.contains("stderr does not contain expected-error.txt"),
            "{err}"
        );
    }
}
