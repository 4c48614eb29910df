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
use crate::wire::{ResourceList, WireError};

/// Why a fixture cannot be run, or what its run did that its expected
/// files do not say. Its `Debug` is its message, so that a test's
/// `.unwrap()` shows the difference as it is printed.
#[derive(thiserror::Error)]
#[non_exhaustive]
pub enum TestError {
    /// A file or directory cannot be read or written, or a program run.
    #[error("{}: {source}", .path.display())]
    File {
        /// The file, directory or program.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// Something cannot be read or written (what is named by its place).
    #[error("{0}")]
    Io(#[source] std::io::Error),
    /// A fixture file that is not YAML.
    #[error("{}: {}: {}", .path.display(), .source.pos, .source.message)]
    Yaml {
        /// The file.
        path: PathBuf,
        /// Why.
        source: krusty_yaml::YamlError,
    },
    /// The input list cannot be written.
    #[error("{0}")]
    Wire(#[source] WireError),
    /// The program run has no stdin to write the input to.
    #[error("no stdin")]
    NoStdin,
    /// A directory holds no case.
    #[error("{}: no fixture (no input.yaml) found", .0.display())]
    NoCases(PathBuf),
    /// `expected.yaml` cannot be read.
    #[error("{}: {source} (run with KRUSTY_FN_UPDATE=1 to create it)", .path.display())]
    NoExpected {
        /// The `expected.yaml`.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The output differs from `expected.yaml`.
    #[error(
        "{}: the output differs from expected.yaml (run with KRUSTY_FN_UPDATE=1 to accept it)\n{diff}{}",
        .dir.display(),
        stderr_section(.stderr)
    )]
    OutputDiffers {
        /// The case.
        dir: PathBuf,
        /// The unified diff from `expected.yaml` to the output.
        diff: String,
        /// The function's stderr.
        stderr: String,
    },
    /// `expected-exit-code` holds no exit code.
    #[error("{}: not an exit code", .0.display())]
    NotAnExitCode(PathBuf),
    /// The exit code is not the expected one.
    #[error("{}: exit code {code} (expected {expected})\n--- stderr\n{stderr}", .dir.display())]
    ExitCode {
        /// The case.
        dir: PathBuf,
        /// The exit code.
        code: u8,
        /// The expected exit code.
        expected: u8,
        /// The function's stderr.
        stderr: String,
    },
    /// The stderr does not contain `expected-error.txt`.
    #[error(
        "{}: stderr does not contain expected-error.txt\n--- expected\n{expected}\n--- stderr\n{stderr}",
        .dir.display()
    )]
    ErrorNotShown {
        /// The case.
        dir: PathBuf,
        /// The text of `expected-error.txt`.
        expected: String,
        /// The function's stderr.
        stderr: String,
    },
    /// In update mode, the stderr does not contain the hand-written
    /// `expected-error.txt`, which updating does not overwrite.
    #[error(
        "{}: expected-error.txt no longer matches: the stderr does not contain it; \
         it is a hand-written fragment, so KRUSTY_FN_UPDATE does not overwrite it: \
         edit it (or remove it) by hand\n--- expected-error.txt\n{expected}\n--- stderr\n{stderr}",
        .dir.display()
    )]
    StaleError {
        /// The case.
        dir: PathBuf,
        /// The text of `expected-error.txt`.
        expected: String,
        /// The function's stderr.
        stderr: String,
    },
    /// Cases that failed, each with its error.
    #[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n\n"))]
    Cases(Vec<TestError>),
}

impl std::fmt::Debug for TestError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self, f)
    }
}

/// The stderr after a difference: none when blank.
fn stderr_section(stderr: &str) -> String {
    if stderr.trim().is_empty() {
        String::new()
    } else {
        format!("--- stderr\n{stderr}")
    }
}

/// A [`TestError::File`] for `path`.
fn at(path: &Path) -> impl FnOnce(std::io::Error) -> TestError + '_ {
    move |source| TestError::File {
        path: path.to_path_buf(),
        source,
    }
}

/// Runs `f` on the fixture in `dir` and returns what it produced.
pub fn run_fixture<F>(dir: &Path, f: F) -> Result<Outcome, TestError>
where
    F: FnOnce(&mut ResourceList) -> Result<(), FnError>,
{
    Ok(process(&fixture_input(dir)?, f))
}

/// The input `ResourceList` of the fixture in `dir`, as text: its
/// `input.yaml` when that is a list, else a list of its resources with
/// `fn-config.yaml` as the functionConfig.
pub fn fixture_input(dir: &Path) -> Result<String, TestError> {
    let read = |name: &str| std::fs::read_to_string(dir.join(name));
    let input_path = dir.join("input.yaml");
    let input = read("input.yaml").map_err(at(&input_path))?;
    let list = match ResourceList::parse(&input) {
        Ok(list) => list,
        Err(_) => {
            let docs = krusty_yaml::parse_stream(&input).map_err(|source| TestError::Yaml {
                path: input_path.clone(),
                source,
            })?;
            let mut list = ResourceList::new(docs.into_iter().filter_map(|d| d.root).collect());
            if let Ok(config) = read("fn-config.yaml") {
                list.function_config = krusty_yaml::parse_stream(&config)
                    .map_err(|source| TestError::Yaml {
                        path: PathBuf::from("fn-config.yaml"),
                        source,
                    })?
                    .into_iter()
                    .find_map(|d| d.root);
            }
            list
        }
    };
    list.to_yaml().map_err(TestError::Wire)
}

/// Runs `f` on the fixture in `dir` and checks its output against
/// `expected.yaml`; returns a readable difference when they differ.
pub fn check_fixture<F>(dir: &Path, f: F) -> Result<(), TestError>
where
    F: FnOnce(&mut ResourceList) -> Result<(), FnError>,
{
    let outcome = run_fixture(dir, f)?;
    if updating() {
        return std::fs::write(dir.join("expected.yaml"), &outcome.stdout).map_err(TestError::Io);
    }
    compare_expected(dir, &outcome)
}

/// Compares the output with `expected.yaml`.
fn compare_expected(dir: &Path, outcome: &Outcome) -> Result<(), TestError> {
    let expected_path = dir.join("expected.yaml");
    let expected =
        std::fs::read_to_string(&expected_path).map_err(|source| TestError::NoExpected {
            path: expected_path.clone(),
            source,
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
    Err(TestError::OutputDiffers {
        dir: dir.to_path_buf(),
        diff,
        stderr: outcome.stderr.clone(),
    })
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
pub fn run_fixture_exec(dir: &Path, program: &Path) -> Result<Outcome, TestError> {
    let input = fixture_input(dir)?;
    let mut child = Command::new(program)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(at(program))?;
    let mut stdin = child.stdin.take().ok_or(TestError::NoStdin)?;
    // Written on its own thread: a function may write before it has read
    // all of its input.
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().map_err(at(program))?;
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
pub fn cases(root: &Path) -> Result<Vec<PathBuf>, TestError> {
    let mut found = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        if dir.join("input.yaml").is_file() {
            found.push(dir.clone());
        }
        let entries = std::fs::read_dir(&dir).map_err(at(&dir))?;
        for entry in entries {
            let path = entry.map_err(TestError::Io)?.path();
            if path.is_dir() {
                stack.push(path);
            }
        }
    }
    found.sort();
    if found.is_empty() {
        return Err(TestError::NoCases(root.to_path_buf()));
    }
    Ok(found)
}

/// Checks every case under `root` with `f` (see the module's
/// documentation); returns every case that failed, with what differs.
pub fn golden<F>(root: &Path, f: F) -> Result<(), TestError>
where
    F: Fn(&mut ResourceList) -> Result<(), FnError>,
{
    check_all(root, |dir| run_fixture(dir, &f))
}

/// Checks every case under `root` by running the executable `program`.
pub fn golden_exec(root: &Path, program: &Path) -> Result<(), TestError> {
    check_all(root, |dir| run_fixture_exec(dir, program))
}

fn check_all(
    root: &Path,
    run: impl Fn(&Path) -> Result<Outcome, TestError>,
) -> Result<(), TestError> {
    let mut failures = Vec::new();
    for dir in cases(root)? {
        if let Err(e) = run(&dir).and_then(|outcome| check_outcome(&dir, &outcome)) {
            failures.push(e);
        }
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(TestError::Cases(failures))
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
pub fn check_outcome(dir: &Path, outcome: &Outcome) -> Result<(), TestError> {
    check_or_update(dir, outcome, updating())
}

/// Writes a case's expected files from `outcome`, except an existing
/// `expected-error.txt`, which is only checked.
fn update_case(dir: &Path, outcome: &Outcome) -> Result<(), TestError> {
    let code_path = dir.join("expected-exit-code");
    let error_path = dir.join("expected-error.txt");
    let write = |p: &Path, text: &str| std::fs::write(p, text).map_err(at(p));
    write(&dir.join("expected.yaml"), &outcome.stdout)?;
    if outcome.exit_code == 0 {
        match std::fs::remove_file(&code_path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(at(&code_path)(e)),
            _ => {}
        }
    } else {
        write(&code_path, &format!("{}\n", outcome.exit_code))?;
    }
    match std::fs::read_to_string(&error_path) {
        Ok(want) if outcome.stderr.contains(want.trim_end()) => Ok(()),
        Ok(want) => Err(TestError::StaleError {
            dir: dir.to_path_buf(),
            expected: want,
            stderr: outcome.stderr.clone(),
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if outcome.exit_code != 0 && !outcome.stderr.trim().is_empty() {
                write(&error_path, &outcome.stderr)?;
            }
            Ok(())
        }
        Err(e) => Err(at(&error_path)(e)),
    }
}

fn check_or_update(dir: &Path, outcome: &Outcome, update: bool) -> Result<(), TestError> {
    if update {
        return update_case(dir, outcome);
    }
    let code_path = dir.join("expected-exit-code");
    let error_path = dir.join("expected-error.txt");
    let want_code = match std::fs::read_to_string(&code_path) {
        Ok(text) => text
            .trim()
            .parse::<u8>()
            .map_err(|_| TestError::NotAnExitCode(code_path.clone()))?,
        Err(_) => 0,
    };
    if outcome.exit_code != want_code {
        return Err(TestError::ExitCode {
            dir: dir.to_path_buf(),
            code: outcome.exit_code,
            expected: want_code,
            stderr: outcome.stderr.clone(),
        });
    }
    if let Ok(want) = std::fs::read_to_string(&error_path) {
        if !outcome.stderr.contains(want.trim_end()) {
            return Err(TestError::ErrorNotShown {
                dir: dir.to_path_buf(),
                expected: want,
                stderr: outcome.stderr.clone(),
            });
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
        let err = check_or_update(dir.path(), &outcome(&got, "a warning\n", 0), false)
            .unwrap_err()
            .to_string();
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
        let err = check_or_update(dir.path(), &failed, true)
            .unwrap_err()
            .to_string();
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
        let err = check_or_update(dir.path(), &failed, false)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("stderr does not contain expected-error.txt"),
            "{err}"
        );
    }
}
