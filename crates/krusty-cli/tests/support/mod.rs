//! Helpers shared by the integration tests (each test crate uses a part).
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// A fresh directory for one test: `area/name` under Cargo's temporary
/// directory for integration tests.
pub fn scratch(area: &str, name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(area).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// Writes `text` to `dir/rel`, creating directories.
pub fn write(dir: &Path, rel: &str, text: &str) {
    let path = dir.join(rel);
    std::fs::create_dir_all(path.parent().expect("has parent")).expect("mkdir");
    std::fs::write(path, text).expect("write file");
}

/// Lines of context shown around a difference, and the most lines shown.
const CONTEXT: usize = 3;
const MAX_DIFF_LINES: usize = 60;

/// A line diff of `expected` against `actual` (longest common subsequence):
/// `-` lines only expected, `+` lines only printed by krusty, with `CONTEXT`
/// unchanged lines around each change.
pub fn diff(expected: &str, actual: &str) -> String {
    let a: Vec<&str> = expected.lines().collect();
    let b: Vec<&str> = actual.lines().collect();
    // lcs[i][j]: length of the longest common subsequence of a[i..] and b[j..].
    let mut lcs = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            lcs[i][j] = if a[i] == b[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    // Edit script: (tag, line, line number in expected).
    let mut ops = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && a[i] == b[j] {
            ops.push((' ', a[i], i + 1));
            (i, j) = (i + 1, j + 1);
        } else if i < a.len() && (j == b.len() || lcs[i + 1][j] >= lcs[i][j + 1]) {
            ops.push(('-', a[i], i + 1));
            i += 1;
        } else {
            ops.push(('+', b[j], i + 1));
            j += 1;
        }
    }
    let changed: Vec<usize> = (0..ops.len()).filter(|&k| ops[k].0 != ' ').collect();
    if changed.is_empty() {
        return "  (same lines: the difference is in line endings)".into();
    }
    let mut out = Vec::new();
    let mut last = None;
    for (k, (tag, line, n)) in ops.iter().enumerate() {
        if !changed.iter().any(|&c| c.abs_diff(k) <= CONTEXT) {
            continue;
        }
        if last.is_none_or(|l| l + 1 != k) {
            out.push(format!("@@ expected.yaml line {n} @@"));
        }
        last = Some(k);
        out.push(format!("{tag} {line}"));
    }
    if out.len() > MAX_DIFF_LINES {
        let more = out.len() - MAX_DIFF_LINES;
        out.truncate(MAX_DIFF_LINES);
        out.push(format!("  ... {more} more lines"));
    }
    out.join("\n")
}
