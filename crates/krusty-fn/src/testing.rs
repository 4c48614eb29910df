//! Testing a function on fixture files.
//!
//! A fixture directory holds `input.yaml` (a `ResourceList`, or plain
//! resources), optionally `fn-config.yaml` (the functionConfig) and
//! `expected.yaml` (the whole output `ResourceList`). Set
//! `KRUSTY_FN_UPDATE=1` to write `expected.yaml` from the current output.

use std::path::Path;

use crate::run::{process, FnError, Outcome};
use crate::wire::ResourceList;

/// Runs `f` on the fixture in `dir` and returns what it produced.
pub fn run_fixture<F>(dir: &Path, f: F) -> Result<Outcome, String>
where
    F: FnOnce(&mut ResourceList) -> Result<(), FnError>,
{
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
    let text = list.to_yaml().map_err(|e| e.to_string())?;
    Ok(process(&text, f))
}

/// Runs `f` on the fixture in `dir` and checks its output against
/// `expected.yaml`; returns a readable difference when they differ.
pub fn check_fixture<F>(dir: &Path, f: F) -> Result<(), String>
where
    F: FnOnce(&mut ResourceList) -> Result<(), FnError>,
{
    let outcome = run_fixture(dir, f)?;
    let expected_path = dir.join("expected.yaml");
    if std::env::var_os("KRUSTY_FN_UPDATE").is_some() {
        return std::fs::write(&expected_path, &outcome.stdout).map_err(|e| e.to_string());
    }
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
