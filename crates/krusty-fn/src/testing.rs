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
//!   contain.
//!
//! [`golden`] runs every case under a directory (each directory holding
//! an `input.yaml`, at any depth) in process; [`golden_exec`] runs a
//! built executable on them instead (the `CARGO_BIN_EXE_<name>` of an
//! integration test), so a function needs no library to be tested. Set
//! `KRUSTY_FN_UPDATE=1` to write the expected files from what the
//! function does now.

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
    let first = expected
        .lines()
        .zip(outcome.stdout.lines())
        .position(|(a, b)| a != b)
        .unwrap_or_else(|| expected.lines().count().min(outcome.stdout.lines().count()));
    Err(format!(
        "{}: output differs from expected.yaml at line {}\n--- expected\n{expected}\n--- got\n{}\n--- stderr\n{}",
        dir.display(),
        first + 1,
        outcome.stdout,
        outcome.stderr
    ))
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

fn updating() -> bool {
    std::env::var_os("KRUSTY_FN_UPDATE").is_some()
}

/// Compares an outcome with a case's expected files (or writes them in
/// update mode).
pub fn check_outcome(dir: &Path, outcome: &Outcome) -> Result<(), String> {
    let code_path = dir.join("expected-exit-code");
    let error_path = dir.join("expected-error.txt");
    if updating() {
        let write = |p: &Path, text: &str| {
            std::fs::write(p, text).map_err(|e| format!("{}: {e}", p.display()))
        };
        write(&dir.join("expected.yaml"), &outcome.stdout)?;
        if outcome.exit_code == 0 {
            let _ = std::fs::remove_file(&code_path);
            let _ = std::fs::remove_file(&error_path);
        } else {
            write(&code_path, &format!("{}\n", outcome.exit_code))?;
            if outcome.stderr.trim().is_empty() {
                let _ = std::fs::remove_file(&error_path);
            } else {
                write(&error_path, &outcome.stderr)?;
            }
        }
        return Ok(());
    }
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
