//! The modules of krusty-build form no cycle: a module names (`crate::x`,
//! or an item the crate root re-exports from `x`) only modules that do not
//! name it back, directly or through others. Unit tests and comments are
//! not counted.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("source folder") {
        let path = entry.expect("folder entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The text of a source file without its unit tests and comments.
fn code(path: &Path) -> String {
    let text = std::fs::read_to_string(path).expect("source file");
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(at) => &text[..at],
        None => &text[..],
    };
    text.lines()
        .map(|line| line.split("//").next().unwrap_or_default())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The identifiers that follow `crate::` in `code`, with those of
/// `crate::{a, b::c}` groups.
fn crate_paths(code: &str) -> Vec<String> {
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let mut out = Vec::new();
    for (at, _) in code.match_indices("crate::") {
        let rest = &code[at + "crate::".len()..];
        match rest.strip_prefix('{') {
            Some(group) => {
                let group = group.split('}').next().unwrap_or_default();
                out.extend(group.split(',').map(|part| ident(part.trim())));
            }
            None => out.push(ident(rest)),
        }
    }
    out
}

/// The module each item the crate root re-exports comes from
/// (`pub use engine::{build, Engine};`).
fn re_exports(lib: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for line in lib.lines() {
        let Some(rest) = line.trim().strip_prefix("pub use ") else {
            continue;
        };
        let Some((module, items)) = rest.split_once("::") else {
            continue;
        };
        let items = items.trim_end_matches(';').trim_matches(['{', '}']);
        for item in items.split(',') {
            let name = item.split(" as ").last().unwrap_or_default().trim();
            out.insert(name.to_string(), module.to_string());
        }
    }
    out
}

#[test]
fn the_modules_of_the_orchestrator_form_no_cycle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let module_of = |path: &Path| -> String {
        let rel = path.strip_prefix(&src).expect("under src");
        let first = rel.components().next().expect("a name");
        let name = first.as_os_str().to_string_lossy();
        name.trim_end_matches(".rs").to_string()
    };
    let modules: BTreeSet<String> = files
        .iter()
        .map(|f| module_of(f))
        .filter(|m| m != "lib")
        .collect();
    let exported = re_exports(&std::fs::read_to_string(src.join("lib.rs")).expect("lib.rs"));
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in &files {
        let from = module_of(file);
        if from == "lib" {
            continue;
        }
        for name in crate_paths(&code(file)) {
            let to = exported.get(&name).cloned().unwrap_or(name);
            if to != from && modules.contains(&to) {
                edges.entry(from.clone()).or_default().insert(to);
            }
        }
    }
    // Depth-first search; a module met again while it is on the path
    // closes a cycle.
    fn visit(
        module: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|m| m == module) {
            let mut cycle = path[at..].to_vec();
            cycle.push(module.to_string());
            return Some(cycle);
        }
        if !done.insert(module.to_string()) {
            return None;
        }
        path.push(module.to_string());
        for next in edges.get(module).into_iter().flatten() {
            if let Some(cycle) = visit(next, edges, path, done) {
                return Some(cycle);
            }
        }
        path.pop();
        None
    }
    let mut done = BTreeSet::new();
    for module in &modules {
        let found = visit(module, &edges, &mut Vec::new(), &mut done);
        assert!(
            found.is_none(),
            "a module cycle: {}",
            found.unwrap_or_default().join(" → ")
        );
    }
    assert!(
        edges.get("target").is_some_and(|e| e.contains("plan")),
        "the graph is read: target names plan"
    );
}
