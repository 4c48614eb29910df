//! Differential test: `krusty build DIR` must print byte-for-byte the same
//! stream as `kubectl kustomize DIR` (Kustomize v5.5.0) for randomly
//! generated, deliberately awkward YAML.
//!
//! The generator is deterministic. Every tree is derived from one base seed:
//! the built-in [`DEFAULT_SEED`], or the value of `KRUSTY_DIFF_SEED` (decimal
//! or `0x`-prefixed hex). On a mismatch the test prints the seed, the first
//! differing line with context from both outputs, the input document that
//! produced it, and keeps the generated tree on disk. Set `KRUSTY_DIFF_KEEP=1`
//! to keep the trees even when the outputs match (handy for inspecting what
//! the generator writes).
//!
//! Every generated document is a resource Kustomize leaves alone (a
//! `ConfigMap` or a custom kind) with a unique name; the awkward content lives
//! under `data:` / `spec:` / `status:` and in annotations. The input is always
//! valid YAML without duplicate keys, so `kubectl kustomize` must accept it;
//! if it does not, the test fails with a "generator bug" message. Two more
//! constraints keep the reference output well defined: no map gets a key set
//! on which go-yaml's key order is intransitive (see [`key_order_consistent`];
//! kubectl's output would vary from run to run), and annotation keys never
//! look like non-strings (Kustomize re-creates them unquoted and then fails).
//!
//! If `kubectl` is not on `PATH`, the tests print `SKIPPED: kubectl not found`
//! to stderr and pass.

use std::env;
use std::fs;
use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Output};
use std::time::Instant;

mod support;
use support::Rng;

/// Base seed used when `KRUSTY_DIFF_SEED` is not set.
const DEFAULT_SEED: u64 = 0x6b72_7573_7479_2024;

/// Environment variable overriding the base seed.
const SEED_ENV: &str = "KRUSTY_DIFF_SEED";

/// Environment variable that keeps generated trees even on success.
const KEEP_ENV: &str = "KRUSTY_DIFF_KEEP";

/// Lines of context printed on each side of the first difference.
const CONTEXT: usize = 5;

// ---------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------

/// Mostly `ConfigMap`s with shallow, scalar-heavy `data`: exercises scalar
/// resolution, quoting and line folding in the emitter.
#[test]
fn differential_scalars() {
    run_profile(&Profile {
        name: "scalars",
        salt: 1,
        files: 7,
        docs: 360,
        configmap_pct: 80,
        max_depth: 3,
        max_nodes: 30,
        max_width: 7,
        scalar_pct: 75,
        flow_pct: 10,
        flow_doc_pct: 2,
        annotation_pct: 25,
        json_patch: false,
    });
}

/// Mostly custom kinds with deep `spec` trees: nested maps, lists of maps,
/// lists of lists, empty collections and nulls.
#[test]
fn differential_nested() {
    run_profile(&Profile {
        name: "nested",
        salt: 2,
        files: 7,
        docs: 340,
        configmap_pct: 20,
        max_depth: 5,
        max_nodes: 45,
        max_width: 4,
        scalar_pct: 35,
        flow_pct: 15,
        flow_doc_pct: 2,
        annotation_pct: 10,
        json_patch: false,
    });
}

/// Everything mixed, with many flow collections and whole documents written
/// in flow style, to exercise the parser.
#[test]
fn differential_flowmix() {
    run_profile(&Profile {
        name: "flowmix",
        salt: 3,
        files: 6,
        docs: 330,
        configmap_pct: 50,
        max_depth: 5,
        max_nodes: 35,
        max_width: 5,
        scalar_pct: 50,
        flow_pct: 45,
        flow_doc_pct: 10,
        annotation_pct: 20,
        json_patch: false,
    });
}

/// Scalars and annotations of every type after a JSON patch: what Kustomize's
/// JSON round trip does to each value (`1e3`, `0o17`, `~`, dates, quoted
/// strings), in data and in annotations.
#[test]
fn differential_json_patched() {
    run_profile(&Profile {
        name: "jsonpatched",
        salt: 4,
        files: 5,
        docs: 240,
        configmap_pct: 60,
        max_depth: 4,
        max_nodes: 30,
        max_width: 6,
        scalar_pct: 70,
        flow_pct: 15,
        flow_doc_pct: 3,
        annotation_pct: 60,
        json_patch: true,
    });
}

// ---------------------------------------------------------------------------
// Driver
// ---------------------------------------------------------------------------

/// Knobs that shape one generated tree.
struct Profile {
    /// Short name, used in resource names and the temp directory name.
    name: &'static str,
    /// Mixed into the base seed so each profile gets its own stream.
    salt: u64,
    /// Number of resource files in the tree.
    files: usize,
    /// Number of documents in the tree.
    docs: usize,
    /// Percentage of documents that are `ConfigMap`s (the rest are custom kinds).
    configmap_pct: u32,
    /// Maximum nesting depth below `data:` / `spec:`.
    max_depth: usize,
    /// Upper bound of the per-document node budget.
    max_nodes: usize,
    /// Maximum number of entries in a generated map or sequence.
    max_width: usize,
    /// Chance (percent) that a nested value is a scalar rather than a collection.
    scalar_pct: u32,
    /// Chance (percent) that a collection is written in flow style.
    flow_pct: u32,
    /// Chance (percent) that a whole document is written in flow style.
    flow_doc_pct: u32,
    /// Chance (percent) that a document carries tricky annotations.
    annotation_pct: u32,
    /// Every resource also gets a JSON 6902 patch, which puts it through
    /// Kustomize's JSON round trip (numbers, nulls, timestamps and typed
    /// annotations change form).
    json_patch: bool,
}

/// Generates the tree for `profile`, runs both tools on it and compares.
fn run_profile(profile: &Profile) {
    let Some(kubectl) = support::find_in_path("kubectl") else {
        // Written to the real stderr (not `eprintln!`, which the test harness
        // captures) so that the skip is visible without `--nocapture`.
        let banner = "!".repeat(72);
        let _ = writeln!(
            std::io::stderr(),
            "\n{banner}\nSKIPPED: kubectl not found on PATH; differential test '{}' did not run.\n{banner}",
            profile.name
        );
        return;
    };
    let base_seed = base_seed();
    let seed = base_seed ^ profile.salt.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let dir = env::temp_dir().join(format!(
        "krusty-differential-{}-{base_seed:016x}-{}",
        profile.name,
        std::process::id()
    ));
    if dir.exists() {
        fs::remove_dir_all(&dir).expect("removing a stale generated tree");
    }

    let started = Instant::now();
    let file_names = write_tree(&dir, profile, seed);
    let reproduce = format!(
        "reproduce with: {SEED_ENV}={base_seed:#x} cargo test -p krusty-cli --test differential \
         -- differential_{} --nocapture",
        profile.name
    );

    let expected = Command::new(&kubectl)
        .arg("kustomize")
        .arg(&dir)
        .output()
        .expect("spawning kubectl");
    if !expected.status.success() {
        panic!(
            "generator bug: kubectl kustomize rejected the generated tree (it should only \
             generate valid input)\nseed: {base_seed:#x} (profile '{}')\ntree kept at: {}\n\
             kubectl stderr:\n{}\n{reproduce}",
            profile.name,
            dir.display(),
            String::from_utf8_lossy(&expected.stderr)
        );
    }
    let kubectl_time = started.elapsed();

    let actual = support::krusty_command()
        // The reference is kubectl v1.32: Kustomize v5.5.0.
        .env("KRUSTY_KUSTOMIZE_VERSION", "v5.5.0")
        .arg("build")
        .arg(&dir)
        .output()
        .expect("spawning krusty");

    eprintln!(
        "differential '{}': seed {base_seed:#x}, {} documents in {} files, {} output lines, \
         generation+kubectl {:.2?}, total {:.2?}",
        profile.name,
        profile.docs,
        file_names.len(),
        expected.stdout.split(|&b| b == b'\n').count(),
        kubectl_time,
        started.elapsed()
    );

    if let Some(report) = compare(&expected, &actual, &dir, &file_names) {
        panic!(
            "krusty build differs from kubectl kustomize (profile '{}')\nseed: {base_seed:#x}\n\
             tree kept at: {}\n{reproduce}\n\n{report}",
            profile.name,
            dir.display()
        );
    }
    if env::var_os(KEEP_ENV).is_some() {
        eprintln!("tree kept at {} ({KEEP_ENV} is set)", dir.display());
    } else {
        fs::remove_dir_all(&dir).expect("removing the generated tree");
    }
}

/// Reads the base seed from `KRUSTY_DIFF_SEED` (decimal or `0x` hex), falling
/// back to [`DEFAULT_SEED`].
fn base_seed() -> u64 {
    let Ok(text) = env::var(SEED_ENV) else {
        return DEFAULT_SEED;
    };
    let text = text.trim();
    let parsed = match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(&hex.replace('_', ""), 16),
        None => text.replace('_', "").parse(),
    };
    parsed.unwrap_or_else(|e| panic!("{SEED_ENV}={text:?} is not a u64: {e}"))
}

/// Compares the two runs; returns a human-readable report when they differ.
fn compare(expected: &Output, actual: &Output, dir: &Path, files: &[String]) -> Option<String> {
    if !actual.status.success() {
        return Some(format!(
            "krusty failed ({}) while kubectl succeeded\nkrusty stderr:\n{}",
            actual.status,
            String::from_utf8_lossy(&actual.stderr)
        ));
    }
    if expected.stdout == actual.stdout {
        return None;
    }
    let want = String::from_utf8_lossy(&expected.stdout);
    let got = String::from_utf8_lossy(&actual.stdout);
    let want_lines: Vec<&str> = want.split('\n').collect();
    let got_lines: Vec<&str> = got.split('\n').collect();
    let first = want_lines
        .iter()
        .zip(&got_lines)
        .position(|(a, b)| a != b)
        .unwrap_or_else(|| want_lines.len().min(got_lines.len()));

    let mut report = format!(
        "first difference at line {} (kubectl: {} lines / {} bytes, krusty: {} lines / {} bytes)\n",
        first + 1,
        want_lines.len(),
        expected.stdout.len(),
        got_lines.len(),
        actual.stdout.len()
    );
    for (label, lines) in [
        ("kubectl kustomize", &want_lines),
        ("krusty build", &got_lines),
    ] {
        report.push_str(&format!("--- {label} ---\n"));
        let lo = first.saturating_sub(CONTEXT);
        let hi = (first + CONTEXT + 1).min(lines.len());
        for (n, line) in lines.iter().enumerate().take(hi).skip(lo) {
            let marker = if n == first { ">>" } else { "  " };
            report.push_str(&format!("{marker}{:>6} | {line:?}\n", n + 1));
        }
        if first >= lines.len() {
            report.push_str(&format!(">>{:>6} | <end of output>\n", first + 1));
        }
    }
    if !actual.stderr.is_empty() {
        report.push_str(&format!(
            "krusty stderr:\n{}\n",
            String::from_utf8_lossy(&actual.stderr)
        ));
    }
    if let Some(name) = resource_name_around(&want_lines, first) {
        report.push_str(&format!("the difference is in resource {name:?}\n"));
        if let Some((file, doc)) = find_input_document(dir, files, &name) {
            report.push_str(&format!("input document (from {file}):\n{doc}\n"));
        }
    }
    Some(report)
}

/// Finds `metadata.name` of the output document that contains line `at`.
fn resource_name_around(lines: &[&str], at: usize) -> Option<String> {
    let at = at.min(lines.len().saturating_sub(1));
    let start = lines[..=at]
        .iter()
        .rposition(|l| *l == "---")
        .map_or(0, |i| i + 1);
    let end = lines[at..]
        .iter()
        .position(|l| *l == "---")
        .map_or(lines.len(), |i| at + i);
    let doc = &lines[start..end.max(start)];
    let meta = doc.iter().position(|l| *l == "metadata:")?;
    doc[meta + 1..]
        .iter()
        .take_while(|l| l.starts_with(' '))
        .find_map(|l| l.strip_prefix("  name: "))
        .map(|n| n.trim_matches('"').to_string())
}

/// Returns the file name and text of the generated input document named `name`.
fn find_input_document(dir: &Path, files: &[String], name: &str) -> Option<(String, String)> {
    for file in files {
        let text = fs::read_to_string(dir.join(file)).ok()?;
        if !text.contains(name) {
            continue;
        }
        let mut doc = String::new();
        for line in text.split_inclusive('\n') {
            if line.starts_with("---") || line.starts_with("...") {
                if doc.contains(name) {
                    break;
                }
                doc.clear();
            } else {
                doc.push_str(line);
            }
        }
        return Some((file.clone(), doc));
    }
    None
}

// ---------------------------------------------------------------------------
// Randomness
// ---------------------------------------------------------------------------

// ---------------------------------------------------------------------------
// Content pools
// ---------------------------------------------------------------------------

/// Plain scalars that resolve (or almost resolve) to non-string types:
/// booleans, YAML 1.1 words, nulls, ints in every base, floats, timestamps,
/// base-60 lookalikes and near misses. Each is valid unquoted in block and
/// flow context and survives Kustomize's JSON round trip (no `.inf`/`.nan`).
const TYPED: &[&str] = &[
    "true",
    "false",
    "True",
    "False",
    "TRUE",
    "FALSE",
    "yes",
    "no",
    "Yes",
    "No",
    "YES",
    "NO",
    "on",
    "off",
    "On",
    "Off",
    "ON",
    "OFF",
    "y",
    "n",
    "Y",
    "N",
    "null",
    "Null",
    "NULL",
    "~",
    "0",
    "-0",
    "+0",
    "42",
    "+42",
    "-17",
    "007",
    "0o17",
    "0o777",
    "0x1F",
    "0xff",
    "0XFF",
    "0b1010",
    "0B11",
    "1_000",
    "0777",
    "08",
    "09",
    "0x_1F",
    "12345678901234567890",
    "-9223372036854775808",
    "9223372036854775807",
    "9223372036854775808",
    "0xFFFFFFFFFFFFFFFF",
    "3.14",
    "-.5",
    ".5",
    "+.5",
    "1.",
    "0.",
    "-0.0",
    "0.0",
    "1.0",
    "1e3",
    "1E-3",
    "6.02e+23",
    "-1.5e-7",
    "1e21",
    "1e20",
    "123456789012345678901234567890",
    "0.000001",
    "0.0000001",
    "1.7976931348623157e308",
    "5e-324",
    "1_000.5",
    ".1e1",
    "2001-12-14",
    "2001-12-14t21:59:43.10-05:00",
    "2001-12-14T21:59:43Z",
    "2002-12-14T00:00:00.000000001Z",
    "2001-12-14 21:59:43.10 -5",
    "2001-12-14 21:59:43.10",
    "2020-02-30",
    "1999-1-1",
    "190:20:30",
    "1:20",
    "-1:30",
    "12:30:00",
    "1:2:3.5",
    "<<",
    "=",
    "0x",
    "1e",
    "+",
    "1.2.3",
    "--1",
    "+-1",
    "0b2",
    "$1",
    "1%",
    "0o8",
    ".e1",
    "1e+",
    "0.1.2",
    "123abc",
];

/// Ordinary ASCII words.
const ASCII_WORDS: &[&str] = &[
    "alpha",
    "beta",
    "gamma",
    "delta",
    "kube",
    "pod",
    "value",
    "config",
    "yaml",
    "test",
    "hello",
    "world",
    "foo",
    "bar",
    "baz",
    "qux",
    "lorem",
    "ipsum",
    "dolor",
    "sit",
    "amet",
    "x",
    "a1",
    "B2",
    "data_set",
    "my-key",
    "v1.2.3",
    "node.js",
    "Z",
    "CamelCase",
    "snake_case",
    "kebab-case",
    "path/to/file",
    "end.",
    "a,b",
    "a[0]",
    "x{y}",
    "50%",
    "it's",
    "say\"hi\"",
    "C:\\dir",
    "back\\n",
    "a:b",
    "a#b",
    "key=value",
    "~tilde",
    "q?",
    "wow!",
    "@home",
    "x&y",
    "x*y",
    "a|b",
    "a>b",
    "<tag>",
];

/// Non-ASCII words, all inside the Basic Multilingual Plane and printable.
const UNICODE_WORDS: &[&str] = &[
    "café",
    "naïve",
    "über",
    "straße",
    "Zürich",
    "São",
    "Ωμέγα",
    "Ελληνικά",
    "Привет",
    "мир",
    "日本語",
    "中文字符",
    "한국어",
    "テスト",
    "€100",
    "…",
    "—",
    "«quoted»",
    "ＡＢＣ",
    "a\u{a0}b",
    "ﬁle",
    "שלום",
    "مرحبا",
    "½",
    "→",
    "✓",
    "¿qué?",
    "déjà-vu",
    "ÅÄÖ",
];

/// Characters that are indicators when they start a plain scalar.
const LEADERS: &[char] = &[
    '-', '?', ':', '#', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`', ',', '[', ']', '{', '}',
];

/// Strings that look like YAML syntax.
const YAMLISH: &[&str] = &[
    "- item",
    "key: value",
    "[a, b]",
    "{a: b}",
    "---",
    "...",
    "--- |",
    "!!str x",
    "!!int 3",
    "&anchor",
    "*alias",
    "? q",
    "%YAML 1.2",
    "|",
    ">",
    "#",
    "-",
    ":",
    "?",
    "- - x",
    "a: b: c",
    "{",
    "]",
    "'",
    "\"",
    "''",
    "\\",
    "\\\"",
    "a'b\"c\\d",
    "# comment",
    "x # y",
    "x #y",
    "x# y",
    "url: http://x.y/z#frag",
];

/// Words that YAML 1.1 resolves to booleans (go-yaml v3 treats them as strings).
const YAML11_WORDS: &[&str] = &["y", "n", "yes", "no", "on", "off"];

// ---------------------------------------------------------------------------
// Value model and generators
// ---------------------------------------------------------------------------

/// A generated YAML value. The writer chooses the concrete syntax.
enum Node {
    /// A plain scalar written verbatim and unquoted (from [`TYPED`]).
    Token(&'static str),
    /// A string; written in any style that preserves it as that exact string.
    Str(String),
    /// A null, written as `null`, `~`, an empty value, ...
    Null,
    /// A mapping with unique string keys.
    Map(Vec<(String, Node)>),
    /// A sequence.
    Seq(Vec<Node>),
}

/// A random word, mostly ASCII, sometimes non-ASCII.
fn word(rng: &mut Rng) -> &'static str {
    if rng.chance(25) {
        rng.pick_str(UNICODE_WORDS)
    } else {
        rng.pick_str(ASCII_WORDS)
    }
}

/// `n` random words separated by single spaces.
fn phrase(rng: &mut Rng, n: usize) -> String {
    (0..n).map(|_| word(rng)).collect::<Vec<_>>().join(" ")
}

/// Truncates `s` to at most `max` characters.
fn truncate_chars(s: &mut String, max: usize) {
    if let Some((byte, _)) = s.char_indices().nth(max) {
        s.truncate(byte);
    }
}

/// A string of `lo..=hi` characters made of words separated by spaces
/// (occasionally two), for exercising line folding.
fn long_phrase(rng: &mut Rng, lo: usize, hi: usize) -> String {
    let target = rng.range(lo, hi);
    let mut s = String::new();
    while s.chars().count() < target {
        if !s.is_empty() {
            s.push(' ');
            if rng.chance(4) {
                s.push(' ');
            }
        }
        s.push_str(word(rng));
    }
    truncate_chars(&mut s, target);
    s
}

/// A string of `lo..=hi` characters without spaces.
fn long_token(rng: &mut Rng, lo: usize, hi: usize) -> String {
    let target = rng.range(lo, hi);
    let joiner = *rng.pick(&["", "-", "/", ".", "_"]);
    let mut s = String::new();
    while s.chars().count() < target {
        if !s.is_empty() {
            s.push_str(joiner);
        }
        let w = word(rng).replace([' ', '\u{a0}'], "");
        s.push_str(&w);
    }
    truncate_chars(&mut s, target);
    s
}

/// A multi-line string: lines of varied shape joined by `\n`, with optional
/// leading and trailing newlines. No line consists of spaces only.
fn multiline(rng: &mut Rng) -> String {
    let n = rng.range(2, 6);
    let mut lines = Vec::with_capacity(n);
    for _ in 0..n {
        let line = match rng.below(10) {
            0 => String::new(),
            1 => format!("{}{}", " ".repeat(rng.range(1, 4)), phrase(rng, 2)),
            2 => format!("{} ", phrase(rng, 2)),
            3 => long_phrase(rng, 60, 130),
            4 => (*rng.pick(YAMLISH)).to_string(),
            5 => long_token(rng, 70, 100),
            _ => {
                let n = rng.range(1, 4);
                phrase(rng, n)
            }
        };
        lines.push(line);
    }
    let mut s = lines.join("\n");
    if s.trim().is_empty() {
        s.push_str("filler");
    }
    if rng.chance(10) {
        s.insert(0, '\n');
    }
    match rng.below(5) {
        0 | 1 => {}
        2 | 3 => s.push('\n'),
        _ => s.push_str("\n\n"),
    }
    s
}

/// A tricky string value.
fn gen_string(rng: &mut Rng) -> String {
    match rng.below(24) {
        0 => String::new(),
        1 => {
            let w = word(rng);
            match rng.below(4) {
                0 => format!(" {w}"),
                1 => format!("{w} "),
                2 => format!("  {w}  "),
                _ => " ".repeat(rng.range(1, 3)),
            }
        }
        2 => {
            let (a, b) = (word(rng), word(rng));
            match rng.below(5) {
                0 => format!("{a}: {b}"),
                1 => format!("{a} #{b}"),
                2 => format!("{a}: {b} # {}", word(rng)),
                3 => format!("{a}:"),
                _ => format!("{a} # {b}"),
            }
        }
        3 => {
            let c = *rng.pick(LEADERS);
            let w = word(rng);
            match rng.below(3) {
                0 => format!("{c}{w}"),
                1 => format!("{c} {w}"),
                _ => c.to_string(),
            }
        }
        4 | 5 => {
            let n = rng.range(1, 4);
            (0..n)
                .map(|_| *rng.pick(UNICODE_WORDS))
                .collect::<Vec<_>>()
                .join(" ")
        }
        6..=8 => long_phrase(rng, 60, 200),
        9 => long_token(rng, 60, 200),
        10..=12 => multiline(rng),
        13 | 14 => (*rng.pick(TYPED)).to_string(),
        15 => (*rng.pick(YAMLISH)).to_string(),
        16 | 17 => {
            let n = rng.range(1, 6);
            phrase(rng, n)
        }
        18 | 19 => word(rng).to_string(),
        20 => {
            let w = *rng.pick(&["deadbeef", "1a2b", "e5", "0123abc", "x0", "1st", "v2"]);
            w.to_string()
        }
        21 => {
            let mut s = long_phrase(rng, 60, 160);
            let pos = s.char_indices().nth(rng.range(5, 50)).map_or(0, |(i, _)| i);
            s.insert_str(
                pos,
                rng.pick_str(&[": ", " #", "'", "\"", "\\", "  ", "\n"]),
            );
            s
        }
        22 => format!("{}\n", phrase(rng, 2)),
        _ => format!("{} {}", rng.pick(YAML11_WORDS), word(rng)),
    }
}

/// A mapping key. Keys are single-line strings; numeric- or bool-looking
/// keys are always written quoted by the writer.
fn gen_key(rng: &mut Rng) -> String {
    match rng.below(30) {
        0..=9 => {
            let a = *rng.pick(&[
                "app", "name", "port", "image", "data", "key", "value", "x", "id",
            ]);
            let b = *rng.pick(&["config", "v2", "Name", "ID", "list", "map", "count", "z"]);
            match rng.below(8) {
                0 => a.to_string(),
                1 => format!("{a}_{b}"),
                2 => format!("{a}{b}"),
                3 => format!("{a}-{b}"),
                4 => format!("{a}.{b}"),
                5 => format!("{}{}", a.to_uppercase(), rng.below(100)),
                6 => format!("_{a}"),
                _ => format!("example.com/{a}-{b}"),
            }
        }
        10..=12 => {
            let t = *rng.pick(TYPED);
            if t == "<<" || t == "=" {
                "0".to_string()
            } else {
                t.to_string()
            }
        }
        13 => rng.below(10_000).to_string(),
        14 => (*rng.pick(YAML11_WORDS)).to_string(),
        15 => format!("{} {}", word(rng), word(rng)),
        16 => format!(" {}", word(rng)),
        17 => format!("{} ", word(rng)),
        18 => {
            let c = *rng.pick(LEADERS);
            format!("{c}{}", word(rng))
        }
        19 => format!("{}: {}", word(rng), word(rng)),
        20 => format!("{} #{}", word(rng), word(rng)),
        21 | 22 => (*rng.pick(UNICODE_WORDS)).to_string(),
        23 => {
            if rng.chance(50) {
                String::new()
            } else {
                "empty-next".to_string()
            }
        }
        24 => long_token(rng, 100, 140),
        25 => long_phrase(rng, 60, 140),
        26 => (*rng.pick(YAMLISH)).to_string(),
        _ => {
            let n = rng.below(1000);
            format!("x{n}.y-{}_Z{}", rng.below(10), rng.below(10))
        }
    }
}

/// A scalar node (typed token, null or tricky string).
fn gen_scalar(rng: &mut Rng) -> Node {
    match rng.below(20) {
        0..=4 => Node::Token(rng.pick_str(TYPED)),
        5 => Node::Null,
        _ => Node::Str(gen_string(rng)),
    }
}

/// Any node at nesting `depth`; consumes the shared node `budget`.
fn gen_node(rng: &mut Rng, p: &Profile, depth: usize, budget: &mut usize) -> Node {
    *budget = budget.saturating_sub(1);
    if *budget == 0 || depth >= p.max_depth || rng.chance(p.scalar_pct) {
        return gen_scalar(rng);
    }
    match rng.below(12) {
        0 => Node::Map(Vec::new()),
        1 => Node::Seq(Vec::new()),
        2..=6 => gen_map(rng, p, depth, budget),
        _ => gen_seq(rng, p, depth, budget),
    }
}

/// A non-empty map with unique keys.
fn gen_map(rng: &mut Rng, p: &Profile, depth: usize, budget: &mut usize) -> Node {
    let n = rng.range(1, p.max_width);
    let mut entries: Vec<(String, Node)> = Vec::with_capacity(n);
    for _ in 0..n {
        let key = loop {
            let k = gen_key(rng);
            if !entries.iter().any(|(existing, _)| *existing == k)
                && key_order_consistent(entries.iter().map(|(existing, _)| existing.as_str()), &k)
            {
                break k;
            }
        };
        let value = gen_node(rng, p, depth + 1, budget);
        entries.push((key, value));
    }
    Node::Map(entries)
}

/// A non-empty sequence: a list of maps, a list of lists, a list of scalars or a mix.
fn gen_seq(rng: &mut Rng, p: &Profile, depth: usize, budget: &mut usize) -> Node {
    let n = rng.range(1, p.max_width);
    let mode = rng.below(4);
    let items = (0..n)
        .map(|_| {
            if depth + 1 >= p.max_depth {
                return gen_scalar(rng);
            }
            match mode {
                0 => {
                    *budget = budget.saturating_sub(1);
                    gen_map(rng, p, depth + 1, budget)
                }
                1 => {
                    *budget = budget.saturating_sub(1);
                    gen_seq(rng, p, depth + 1, budget)
                }
                2 => gen_scalar(rng),
                _ => gen_node(rng, p, depth + 1, budget),
            }
        })
        .collect();
    Node::Seq(items)
}

/// A whole resource: `apiVersion`, `kind`, `metadata` and a tricky body.
fn gen_document(rng: &mut Rng, p: &Profile, index: usize) -> Node {
    let is_configmap = rng.chance(p.configmap_pct);
    let (api_version, kind, prefix) = if is_configmap {
        ("v1", "ConfigMap", "cm")
    } else {
        *rng.pick(&[
            ("example.com/v1", "Widget", "widget"),
            ("example.org/v1beta1", "Gadget", "gadget"),
            ("stable.example.io/v2", "Thing", "thing"),
        ])
    };
    let name = format!("{prefix}-{}-{index:05}", p.name);

    let mut metadata = vec![("name".to_string(), Node::Str(name))];
    if rng.chance(15) {
        let ns = *rng.pick(&["default", "ns-a", "team-b"]);
        metadata.push(("namespace".to_string(), Node::Str(ns.to_string())));
    }
    if rng.chance(p.annotation_pct) {
        let mut annotations: Vec<(String, Node)> = Vec::new();
        for _ in 0..rng.range(1, 3) {
            // Kustomize re-creates annotation keys without their quoting, so
            // keys that would resolve to a non-string (or are empty) break it.
            let key = gen_key(rng);
            if !looks_typed(&key)
                && !annotations.iter().any(|(k, _)| *k == key)
                && key_order_consistent(annotations.iter().map(|(k, _)| k.as_str()), &key)
            {
                annotations.push((key, Node::Str(gen_string(rng))));
            }
        }
        metadata.push(("annotations".to_string(), Node::Map(annotations)));
    }
    if rng.chance(10) {
        let value = (*rng.pick(&["web", "db", "yes", "true", "1", "v1.0", ""])).to_string();
        let labels = vec![("app.kubernetes.io/name".to_string(), Node::Str(value))];
        metadata.push(("labels".to_string(), Node::Map(labels)));
    }

    let mut budget = rng.range(4, p.max_nodes);
    let body = if rng.chance(3) {
        Node::Map(Vec::new())
    } else {
        gen_map(rng, p, 1, &mut budget)
    };
    let mut entries = vec![
        ("apiVersion".to_string(), Node::Str(api_version.to_string())),
        ("kind".to_string(), Node::Str(kind.to_string())),
        ("metadata".to_string(), Node::Map(metadata)),
        (if is_configmap { "data" } else { "spec" }.to_string(), body),
    ];
    if !is_configmap && rng.chance(20) {
        let mut budget = rng.range(2, 10);
        entries.push(("status".to_string(), gen_node(rng, p, 1, &mut budget)));
    }
    if rng.chance(25) {
        // Fisher-Yates shuffle of the top-level field order.
        for i in (1..entries.len()).rev() {
            let j = rng.below(i + 1);
            entries.swap(i, j);
        }
    }
    Node::Map(entries)
}

/// go-yaml v2's `keyList.Less`, which orders the keys of every mapping in
/// Kustomize's output: at the first differing character, two letters compare
/// as characters, a letter sorts after a non-letter, and otherwise the digit
/// runs starting there compare as (wrapping `int64`) numbers. `unicode.IsLetter`
/// and `unicode.IsDigit` are approximated by `char::is_alphabetic` and ASCII
/// digits, which agree on every character this generator uses.
fn go_yaml_key_less(a: &str, b: &str) -> bool {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    for i in 0..a.len().min(b.len()) {
        if a[i] == b[i] {
            continue;
        }
        let (al, bl) = (a[i].is_alphabetic(), b[i].is_alphabetic());
        if al && bl {
            return a[i] < b[i];
        }
        if al || bl {
            return bl;
        }
        let (mut an, mut bn) = (0i64, 0i64);
        if a[i] == '0' || b[i] == '0' {
            for c in a[..i].iter().rev().take_while(|c| c.is_ascii_digit()) {
                if *c != '0' {
                    an = 1;
                    bn = 1;
                    break;
                }
            }
        }
        let a_digits = a[i..].iter().take_while(|c| c.is_ascii_digit());
        for c in a_digits.clone() {
            an = an.wrapping_mul(10).wrapping_add(i64::from(*c as u8 - b'0'));
        }
        let b_digits = b[i..].iter().take_while(|c| c.is_ascii_digit());
        for c in b_digits.clone() {
            bn = bn.wrapping_mul(10).wrapping_add(i64::from(*c as u8 - b'0'));
        }
        if an != bn {
            return an < bn;
        }
        let (ai, bi) = (a_digits.count(), b_digits.count());
        if ai != bi {
            return ai < bi;
        }
        return a[i] < b[i];
    }
    a.len() < b.len()
}

/// True if `candidate` can join `keys` in one mapping without making
/// [`go_yaml_key_less`] inconsistent. That comparator is not a total order in
/// general (e.g. `x10` < `x1a` < `x9` < `x10`), and Go's `sort.Sort` over a
/// randomly ordered map then makes `kubectl kustomize` output vary from run to
/// run, so such key sets must not be generated.
fn key_order_consistent<'k>(keys: impl Iterator<Item = &'k str> + Clone, candidate: &str) -> bool {
    let less = go_yaml_key_less;
    let c = candidate;
    for a in keys.clone() {
        if less(a, c) == less(c, a) {
            return false;
        }
        for b in keys.clone() {
            if a == b {
                continue;
            }
            // Look for a 3-cycle through the candidate in either direction.
            if (less(a, b) && less(b, c) && less(c, a)) || (less(b, a) && less(c, b) && less(a, c))
            {
                return false;
            }
        }
    }
    true
}

// ---------------------------------------------------------------------------
// Scalar style predicates
// ---------------------------------------------------------------------------

/// True if `s` might resolve to a non-string when written plain (numbers,
/// booleans, nulls, timestamps, merge keys, ...). Deliberately conservative.
fn looks_typed(s: &str) -> bool {
    let lower = s.to_ascii_lowercase();
    if matches!(
        lower.as_str(),
        "" | "true" | "false" | "null" | "~" | "<<" | "=" | ".inf" | "-.inf" | "+.inf" | ".nan"
    ) || YAML11_WORDS.contains(&lower.as_str())
    {
        return true;
    }
    let mut chars = s.chars();
    let first = chars.next();
    let second = chars.next();
    let numeric_start = match first {
        Some('0'..='9') => true,
        Some('+' | '-' | '.') => matches!(second, Some('0'..='9' | '.')),
        _ => false,
    };
    numeric_start
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "+-.:_ ".contains(c))
}

/// True if `s` can be written as a plain scalar (in block context, or in flow
/// context when `flow` is set) and read back as the same text.
fn plain_ok(s: &str, flow: bool) -> bool {
    let mut chars = s.chars();
    let Some(first) = chars.next() else {
        return false;
    };
    let second = chars.next();
    if s.starts_with(' ')
        || s.ends_with(' ')
        || s.ends_with(':')
        || s.contains(": ")
        || s.contains(" #")
        || s.starts_with("---")
        || s.starts_with("...")
        || s.chars().any(|c| c.is_control() || c == '\u{feff}')
    {
        return false;
    }
    let second_safe = second.is_some_and(|c| c != ' ' && !",[]{}".contains(c));
    match first {
        '-' if !second_safe => return false,
        '?' | ':' if flow || !second_safe => return false,
        ',' | '[' | ']' | '{' | '}' | '#' | '&' | '*' | '!' | '|' | '>' | '\'' | '"' | '%'
        | '@' | '`' => return false,
        _ => {}
    }
    !(flow && s.chars().any(|c| ",[]{}?".contains(c)))
}

/// True if `s` may be written as a plain scalar without changing its type.
fn plain_string_ok(s: &str, flow: bool) -> bool {
    plain_ok(s, flow) && !looks_typed(s)
}

/// True if `s` can be written single-quoted; newlines are only representable
/// (as empty lines) in block context and when surrounded by non-space text.
fn single_ok(s: &str, multiline: bool) -> bool {
    if !s.contains('\n') {
        return true;
    }
    if !multiline || s.starts_with('\n') || s.ends_with('\n') {
        return false;
    }
    let bytes = s.as_bytes();
    bytes.iter().enumerate().all(|(i, &b)| {
        b != b'\n' || {
            let before = bytes[..i].iter().rev().find(|&&c| c != b'\n');
            let after = bytes[i + 1..].iter().find(|&&c| c != b'\n');
            before != Some(&b' ') && after != Some(&b' ')
        }
    })
}

/// True if `s` can be written as a literal block scalar (`|`).
fn literal_ok(s: &str) -> bool {
    let content = s.trim_end_matches('\n');
    !content.is_empty()
        && content
            .split('\n')
            .all(|line| line.is_empty() || line.chars().any(|c| c != ' '))
}

/// True if `s` can be written as a folded block scalar (`>`) by this writer.
fn folded_ok(s: &str) -> bool {
    let content = s.trim_end_matches('\n');
    !content.is_empty()
        && !content.starts_with('\n')
        && content
            .split('\n')
            .all(|line| !line.starts_with(' ') && !line.ends_with(' '))
}

// ---------------------------------------------------------------------------
// Writer
// ---------------------------------------------------------------------------

/// Scalar styles the writer can pick from.
#[derive(Clone, Copy)]
enum Style {
    Plain,
    Single,
    Double,
    Literal,
    Folded,
}

/// Renders [`Node`]s as YAML text with randomly varied syntax.
struct Writer<'a> {
    rng: &'a mut Rng,
    out: String,
    flow_pct: u32,
}

impl Writer<'_> {
    /// Starts a new line indented by `indent` spaces.
    fn newline(&mut self, indent: usize) {
        self.out.push('\n');
        self.out.push_str(&" ".repeat(indent));
    }

    /// A random extra indentation step for nested block collections.
    fn step(&mut self) -> usize {
        *self.rng.pick(&[2, 2, 2, 2, 1, 3, 4])
    }

    /// Writes a block mapping whose keys sit at column `indent`. With
    /// `inline_first` the cursor is already at that column (after `- `), so
    /// the first key starts without a line break.
    fn block_map(&mut self, entries: &[(String, Node)], indent: usize, inline_first: bool) {
        for (i, (key, value)) in entries.iter().enumerate() {
            if i > 0 || !inline_first {
                self.newline(indent);
            }
            let scalar_value = matches!(value, Node::Token(_) | Node::Null | Node::Str(_))
                || matches!(value, Node::Map(e) if e.is_empty())
                || matches!(value, Node::Seq(e) if e.is_empty());
            if scalar_value && self.rng.chance(3) {
                self.out.push_str("? ");
                let key = self.key(key, false);
                self.out.push_str(&key);
                self.newline(indent);
                self.out.push(':');
                self.map_value(value, indent);
            } else {
                let key = self.key(key, false);
                self.out.push_str(&key);
                self.out.push(':');
                self.map_value(value, indent);
            }
        }
    }

    /// Writes a block sequence whose dashes sit at column `indent`. With
    /// `inline_first` the cursor is already at that column.
    fn block_seq(&mut self, items: &[Node], indent: usize, inline_first: bool) {
        for (i, item) in items.iter().enumerate() {
            if i > 0 || !inline_first {
                self.newline(indent);
            }
            self.out.push('-');
            self.seq_item(item, indent);
        }
    }

    /// Writes the value of a block mapping entry whose key is at column
    /// `indent`; the cursor is right after the `:`.
    fn map_value(&mut self, value: &Node, indent: usize) {
        if self.inline(value, indent, &["", "", " null", " ~", " Null", " NULL"]) {
            return;
        }
        match value {
            Node::Token(_) | Node::Null | Node::Str(_) => unreachable!("written inline"),
            Node::Map(entries) => {
                let step = self.step();
                self.block_map(entries, indent + step, false);
            }
            Node::Seq(items) => {
                let step = if self.rng.chance(50) { 0 } else { self.step() };
                self.block_seq(items, indent + step, false);
            }
        }
    }

    /// Writes `node` on the current line when it goes there: a scalar, a
    /// null (spelled as one of `nulls`), or an empty or flow-style
    /// collection; `false` for a collection to be written in block style.
    fn inline(&mut self, node: &Node, indent: usize, nulls: &[&'static str]) -> bool {
        match node {
            Node::Token(t) => {
                self.out.push(' ');
                self.out.push_str(t);
            }
            Node::Null => {
                let null = *self.rng.pick(nulls);
                self.out.push_str(null);
            }
            Node::Str(s) => {
                self.out.push(' ');
                let text = self.block_str(s, indent);
                self.out.push_str(&text);
            }
            Node::Map(entries) if entries.is_empty() || self.rng.chance(self.flow_pct) => {
                self.out.push(' ');
                let ci = indent + self.rng.range(1, 4);
                let text = self.flow(node, ci);
                self.out.push_str(&text);
            }
            Node::Seq(items) if items.is_empty() || self.rng.chance(self.flow_pct) => {
                self.out.push(' ');
                let ci = indent + self.rng.range(1, 4);
                let text = self.flow(node, ci);
                self.out.push_str(&text);
            }
            Node::Map(_) | Node::Seq(_) => return false,
        }
        true
    }

    /// Writes a block sequence item whose dash is at column `indent`; the
    /// cursor is right after the `-`.
    fn seq_item(&mut self, item: &Node, indent: usize) {
        if self.inline(item, indent, &["", " null", " ~"]) {
            return;
        }
        match item {
            Node::Token(_) | Node::Null | Node::Str(_) => unreachable!("written inline"),
            Node::Map(entries) => {
                if self.rng.chance(80) {
                    let gap = *self.rng.pick(&[1, 1, 1, 1, 2, 3]);
                    self.out.push_str(&" ".repeat(gap));
                    self.block_map(entries, indent + 1 + gap, true);
                } else {
                    let step = self.rng.range(1, 4);
                    self.block_map(entries, indent + step, false);
                }
            }
            Node::Seq(items) => {
                if self.rng.chance(75) {
                    self.out.push(' ');
                    self.block_seq(items, indent + 2, true);
                } else {
                    let step = self.rng.range(1, 4);
                    self.block_seq(items, indent + step, false);
                }
            }
        }
    }

    /// Renders a mapping key (always single-line).
    fn key(&mut self, key: &str, flow: bool) -> String {
        let plain_allowed = plain_ok(key, flow)
            && (!looks_typed(key) || YAML11_WORDS.contains(&key.to_ascii_lowercase().as_str()));
        if plain_allowed && self.rng.chance(75) {
            key.to_string()
        } else if self.rng.chance(50) {
            single_quoted(key)
        } else {
            self.double_quoted(key, None)
        }
    }

    /// Renders the string `s` as a block-context value whose parent node is
    /// at column `parent`; multi-line styles continue deeper than `parent`.
    fn block_str(&mut self, s: &str, parent: usize) -> String {
        let mut styles = vec![Style::Double];
        if plain_string_ok(s, false) {
            styles.extend([Style::Plain, Style::Plain]);
        }
        if single_ok(s, true) {
            styles.push(Style::Single);
        }
        if literal_ok(s) && (s.contains('\n') || self.rng.chance(10)) {
            styles.extend([Style::Literal, Style::Literal]);
        }
        // Known difference (docs/compatibility.md): Kustomize's go-yaml v3 round
        // trip changes `>+` scalars that keep trailing blank lines.
        if folded_ok(s) && !s.ends_with("\n\n") && (s.contains('\n') || self.rng.chance(10)) {
            styles.push(Style::Folded);
        }
        let ci = parent + self.rng.range(1, 4);
        let fold = self.rng.chance(30);
        match *self.rng.pick(&styles) {
            Style::Plain => {
                if fold {
                    let pieces = self.fold_pieces(s, true);
                    pieces.join(&format!("\n{}", " ".repeat(ci)))
                } else {
                    s.to_string()
                }
            }
            Style::Single => {
                let pieces = if fold {
                    self.fold_pieces(s, false)
                } else {
                    vec![s.to_string()]
                };
                let mut text = String::from("'");
                for (i, piece) in pieces.iter().enumerate() {
                    if i > 0 {
                        text.push('\n');
                        text.push_str(&" ".repeat(ci));
                    }
                    let mut chars = piece.chars().peekable();
                    while let Some(c) = chars.next() {
                        match c {
                            '\'' => text.push_str("''"),
                            '\n' => {
                                // A line break followed by k empty lines reads as k newlines.
                                let mut run = 1;
                                while chars.next_if_eq(&'\n').is_some() {
                                    run += 1;
                                }
                                text.push('\n');
                                text.push_str(&"\n".repeat(run));
                                text.push_str(&" ".repeat(ci));
                            }
                            c => text.push(c),
                        }
                    }
                }
                text.push('\'');
                text
            }
            Style::Double => {
                if fold {
                    self.double_quoted(s, Some(ci))
                } else {
                    self.double_quoted(s, None)
                }
            }
            Style::Literal => self.block_scalar(s, parent, false),
            Style::Folded => self.block_scalar(s, parent, true),
        }
    }

    /// Splits `s` at some single spaces between non-space characters (the
    /// split spaces are dropped), so that the pieces can be written on
    /// separate lines and folded back into `s`. For plain scalars a split is
    /// only made before an alphanumeric character.
    fn fold_pieces(&mut self, s: &str, plain: bool) -> Vec<String> {
        let width = self.rng.range(15, 90);
        let chars: Vec<(usize, char)> = s.char_indices().collect();
        let mut pieces = Vec::new();
        let mut start = 0;
        for w in chars.windows(3) {
            let [(_, prev), (at, c), (_, next)] = [w[0], w[1], w[2]];
            if c != ' ' || matches!(prev, ' ' | '\n') || matches!(next, ' ' | '\n') {
                continue;
            }
            if plain && !next.is_alphanumeric() {
                continue;
            }
            if s[start..at].chars().count() >= width {
                pieces.push(s[start..at].to_string());
                start = at + 1;
            }
        }
        pieces.push(s[start..].to_string());
        pieces
    }

    /// Renders `s` double-quoted. With `ci`, long strings may be spread over
    /// several lines (folded at spaces, or with escaped line breaks), with
    /// continuation lines indented to `ci`.
    fn double_quoted(&mut self, s: &str, ci: Option<usize>) -> String {
        let pieces = match ci {
            Some(_) => self.fold_pieces(s, false),
            None => vec![s.to_string()],
        };
        let mut text = String::from("\"");
        for (i, piece) in pieces.iter().enumerate() {
            if let (true, Some(ci)) = (i > 0, ci) {
                text.push('\n');
                text.push_str(&" ".repeat(ci));
            }
            let mut prev: Option<char> = None;
            for c in piece.chars() {
                if let (Some(ci), Some(p)) = (ci, prev) {
                    if p != ' ' && c != ' ' && p != '\n' && c != '\n' && self.rng.chance(2) {
                        // Escaped line break: joins the lines without a space.
                        text.push_str("\\\n");
                        text.push_str(&" ".repeat(ci));
                    }
                }
                prev = Some(c);
                match c {
                    '"' => text.push_str("\\\""),
                    '\\' => text.push_str("\\\\"),
                    '\n' => text.push_str("\\n"),
                    '\u{a0}' if self.rng.chance(50) => text.push_str("\\_"),
                    ' ' if self.rng.chance(3) => text.push_str("\\ "),
                    c if !c.is_ascii() && self.rng.chance(20) => {
                        if (c as u32) < 0x100 && self.rng.chance(50) {
                            text.push_str(&format!("\\x{:02x}", c as u32));
                        } else {
                            text.push_str(&format!("\\u{:04X}", c as u32));
                        }
                    }
                    c if c.is_ascii_alphabetic() && self.rng.chance(1) => {
                        text.push_str(&format!("\\x{:02X}", c as u32));
                    }
                    c => text.push(c),
                }
            }
        }
        text.push('"');
        text
    }

    /// Renders `s` as a literal (`|`) or folded (`>`) block scalar whose
    /// parent node is at column `parent`. The header is written on the
    /// current line; content lines follow.
    fn block_scalar(&mut self, s: &str, parent: usize, folded: bool) -> String {
        let content = s.trim_end_matches('\n');
        let trailing = s.len() - content.len();
        let chomp = match trailing {
            0 => "-",
            1 => "",
            _ => "+",
        };
        let first_line = content
            .split('\n')
            .find(|l| !l.is_empty())
            .unwrap_or_default();
        let explicit = first_line.starts_with(' ') || self.rng.chance(10);
        let step = self.rng.range(1, 4);
        let indicator = if explicit {
            step.to_string()
        } else {
            String::new()
        };
        let mut text = String::from(if folded { ">" } else { "|" });
        if self.rng.chance(50) {
            text.push_str(&indicator);
            text.push_str(chomp);
        } else {
            text.push_str(chomp);
            text.push_str(&indicator);
        }
        let pad = " ".repeat(parent + step);
        for (i, line) in content.split('\n').enumerate() {
            if folded {
                if i > 0 {
                    // An empty line between two lines of a folded scalar reads as "\n".
                    text.push('\n');
                }
                if !line.is_empty() {
                    for piece in self.fold_pieces(line, false) {
                        text.push('\n');
                        text.push_str(&pad);
                        text.push_str(&piece);
                    }
                }
            } else {
                text.push('\n');
                if !line.is_empty() {
                    text.push_str(&pad);
                    text.push_str(line);
                }
            }
        }
        for _ in 1..trailing {
            text.push('\n');
        }
        text
    }

    /// Renders a string in flow context (single line).
    fn flow_str(&mut self, s: &str) -> String {
        if plain_string_ok(s, true) && self.rng.chance(60) {
            s.to_string()
        } else if !s.contains('\n') && self.rng.chance(50) {
            single_quoted(s)
        } else {
            self.double_quoted(s, None)
        }
    }

    /// Renders `node` in flow style. Collections occasionally span several
    /// lines, with continuation lines indented to `ci`.
    fn flow(&mut self, node: &Node, ci: usize) -> String {
        match node {
            // Known difference (docs/compatibility.md): in flow collections
            // Kustomize keeps timestamps with a time part as written.
            Node::Token(t) if t.len() > 10 && t.as_bytes()[4] == b'-' && t.contains(':') => {
                format!("\"{t}\"")
            }
            Node::Token(t) => t.to_string(),
            Node::Null => (*self.rng.pick(&["null", "~", "Null"])).to_string(),
            Node::Str(s) => self.flow_str(s),
            Node::Map(entries) if entries.is_empty() => {
                (*self.rng.pick(&["{}", "{}", "{ }"])).to_string()
            }
            Node::Seq(items) if items.is_empty() => {
                (*self.rng.pick(&["[]", "[]", "[ ]"])).to_string()
            }
            Node::Map(entries) => {
                let (open, sep, close) = self.flow_punctuation("{", "}", ci);
                let mut text = open;
                for (i, (key, value)) in entries.iter().enumerate() {
                    if i > 0 {
                        text.push_str(&sep);
                    }
                    text.push_str(&self.flow_entry(key, value, ci, true));
                }
                text.push_str(&close);
                text
            }
            Node::Seq(items) => {
                let (open, sep, close) = self.flow_punctuation("[", "]", ci);
                let mut text = open;
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        text.push_str(&sep);
                    }
                    match item {
                        // A single-pair mapping inside a flow sequence may omit the braces.
                        Node::Map(entries) if entries.len() == 1 && self.rng.chance(10) => {
                            let (key, value) = &entries[0];
                            text.push_str(&self.flow_entry(key, value, ci, false));
                        }
                        _ => text.push_str(&self.flow(item, ci)),
                    }
                }
                text.push_str(&close);
                text
            }
        }
    }

    /// Chooses opening, separator and closing punctuation for a flow
    /// collection (single-line or multi-line, with or without padding).
    fn flow_punctuation(&mut self, open: &str, close: &str, ci: usize) -> (String, String, String) {
        let pad = " ".repeat(ci);
        let trailing_comma = if self.rng.chance(5) { "," } else { "" };
        if self.rng.chance(15) {
            (
                format!("{open}\n{pad}"),
                format!(",\n{pad}"),
                format!("{trailing_comma}\n{pad}{close}"),
            )
        } else if self.rng.chance(20) {
            (
                format!("{open} "),
                ", ".to_string(),
                format!("{trailing_comma} {close}"),
            )
        } else {
            let sep = if self.rng.chance(10) { "," } else { ", " };
            (
                open.to_string(),
                sep.to_string(),
                format!("{trailing_comma}{close}"),
            )
        }
    }

    /// Renders one `key: value` pair of a flow mapping. With `allow_bare`, a
    /// null value may be left out entirely (`{a}`), which is only a mapping
    /// entry inside braces.
    fn flow_entry(&mut self, key: &str, value: &Node, ci: usize, allow_bare: bool) -> String {
        let key_text = self.key(key, true);
        if allow_bare && matches!(value, Node::Null) && self.rng.chance(15) {
            // `{a}` and `{a: }` both give `a` an empty value.
            return if self.rng.chance(50) {
                key_text
            } else {
                format!("{key_text}: ")
            };
        }
        let quoted = key_text.starts_with('"') || key_text.starts_with('\'');
        let colon = if quoted && self.rng.chance(25) {
            ":"
        } else {
            ": "
        };
        let value_text = self.flow(value, ci);
        format!("{key_text}{colon}{value_text}")
    }
}

/// Renders `s` single-quoted on one line (`s` must not contain newlines).
fn single_quoted(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// Renders one document in block style (or, rarely, entirely in flow style).
fn render_document(rng: &mut Rng, p: &Profile, doc: &Node) -> String {
    let whole_flow = rng.chance(p.flow_doc_pct);
    let mut w = Writer {
        rng,
        out: String::new(),
        flow_pct: p.flow_pct,
    };
    if whole_flow {
        let text = w.flow(doc, 2);
        return format!("{text}\n");
    }
    if let Node::Map(entries) = doc {
        w.block_map(entries, 0, true);
    }
    w.out.push('\n');
    w.out
}

/// Writes the resource files and `kustomization.yaml` for `profile` into
/// `dir`; returns the resource file names.
fn write_tree(dir: &Path, p: &Profile, seed: u64) -> Vec<String> {
    let mut rng = Rng::new(seed);
    fs::create_dir_all(dir).expect("creating the tree directory");
    let names: Vec<String> = (0..p.files)
        .map(|i| format!("res-{i:02}.{}", if i % 4 == 3 { "yml" } else { "yaml" }))
        .collect();
    let mut contents = vec![String::new(); p.files];
    for index in 0..p.docs {
        let file = if index < p.files {
            index
        } else {
            rng.below(p.files)
        };
        let doc = gen_document(&mut rng, p, index);
        let text = render_document(&mut rng, p, &doc);
        let out = &mut contents[file];
        if out.is_empty() {
            if rng.chance(20) {
                out.push_str("---\n");
            }
        } else {
            out.push_str(rng.pick_str(&["---\n", "---\n", "---\n", "--- \n", "...\n---\n"]));
        }
        out.push_str(&text);
    }
    for (name, mut text) in names.iter().zip(contents) {
        if rng.chance(20) {
            text.push_str("---\n");
        }
        fs::write(dir.join(name), text).expect("writing a resource file");
    }
    let mut kustomization = String::from(
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n",
    );
    for name in &names {
        kustomization.push_str(&format!("- {name}\n"));
    }
    if p.json_patch {
        kustomization.push_str(
            "patches:\n- target:\n    name: .*\n  patch: |-\n    - op: add\n      path: /metadata/annotations/diff.krusty.dev~1patched\n      value: \"yes\"\n",
        );
    }
    fs::write(dir.join("kustomization.yaml"), kustomization).expect("writing kustomization.yaml");
    names
}
