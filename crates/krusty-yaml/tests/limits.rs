//! Hostile and malformed input: every case must end quickly with a positioned
//! error, never a hang, a panic or unbounded memory.

use std::time::{Duration, Instant};

use krusty_yaml::{parse_stream, YamlErrorKind};

fn assert_error_at(src: &str, line: u32, needle: &str) {
    let err = parse_stream(src).expect_err("input must be rejected");
    assert_eq!(err.pos.line, line, "wrong line for {err}");
    assert!(
        err.message.contains(needle),
        "message {err} lacks {needle:?}"
    );
}

#[test]
fn billion_laughs_fails_fast() {
    let mut src = String::from("a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
    for i in 1..10 {
        let refs = vec![format!("*a{}", i - 1); 10].join(", ");
        src.push_str(&format!("a{i}: &a{i} [{refs}]\n"));
    }
    let start = Instant::now();
    let err = parse_stream(&src).expect_err("exponential aliasing must be refused");
    assert!(err.message.contains("aliases expand"), "{err}");
    assert!(
        start.elapsed() < Duration::from_secs(2),
        "took {:?}",
        start.elapsed()
    );
}

#[test]
fn deep_nesting_is_bounded() {
    let depth = 10_000;
    let flow = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
    assert_error_at(&flow, 1, "nesting is deeper");
    let mut block = String::new();
    for i in 0..300 {
        block.push_str(&" ".repeat(i));
        block.push_str("k:\n");
    }
    let err = parse_stream(&block).expect_err("deep block nesting must be refused");
    assert!(err.message.contains("nesting is deeper"), "{err}");
}

#[test]
fn tab_indentation_is_an_error_with_position() {
    let err = parse_stream("a:\n\tb: 1\n").expect_err("tabs cannot indent");
    assert_eq!((err.pos.line, err.pos.col), (2, 1));
    assert!(err.message.contains("tab"), "{err}");
}

#[test]
fn duplicate_keys_name_both_lines() {
    assert_error_at(
        "a: 1\nb: 2\na: 3\n",
        3,
        "mapping key \"a\" already defined at line 1",
    );
}

#[test]
fn errors_say_their_kind() {
    let kind = |src: &str| parse_stream(src).expect_err("input must be rejected").kind;
    assert_eq!(kind("a: 1\na: 2\n"), YamlErrorKind::DuplicateKey);
    assert_eq!(kind("{a: 1, a: 2}\n"), YamlErrorKind::DuplicateKey);
    assert_eq!(kind("a: !!int x\n"), YamlErrorKind::TagMismatch);
    assert_eq!(kind("a: !!binary '!'\n"), YamlErrorKind::TagMismatch);
    assert_eq!(kind("a: b: c\n"), YamlErrorKind::Syntax);
}

#[test]
fn syntax_errors_have_positions() {
    assert_error_at("a: b: c\n", 1, "mapping values are not allowed");
    assert_error_at("a: 'unterminated\n", 1, "quoted scalar");
    assert_error_at("a: [1, 2\n", 2, "");
    assert_error_at("key: *missing\n", 1, "unknown anchor");
}

/// Arbitrary byte soup from a seeded generator must never hang or panic.
#[test]
fn random_input_never_hangs_or_panics() {
    let alphabet: &[&str] = &[
        " ", "  ", "\n", "-", "- ", ":", ": ", "a", "b1", "'", "\"", "\\", "#", "&x", "*x", "!",
        "!!str ", "[", "]", "{", "}", ",", "|", ">", "|-", "?", "---", "...", "\t", "é", "%", "@",
    ];
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let start = Instant::now();
    for _ in 0..20_000 {
        let len = (next() % 40) as usize;
        let src: String = (0..len)
            .map(|_| alphabet[(next() % alphabet.len() as u64) as usize])
            .collect();
        let _ = parse_stream(&src);
    }
    assert!(
        start.elapsed() < Duration::from_secs(20),
        "took {:?}",
        start.elapsed()
    );
}

/// A block mapping of `n` keys `k0`..`k{n-1}` at `indent`, one per line.
fn block_keys(n: usize, indent: usize) -> String {
    (0..n)
        .map(|i| format!("{}k{i}: {i}\n", " ".repeat(indent)))
        .collect()
}

#[test]
fn duplicate_keys_are_found_in_long_mappings() {
    // Past the length where keys are hashed instead of scanned.
    let mut src = block_keys(40, 0);
    src.push_str("k7: again\n");
    assert_error_at(&src, 41, "mapping key \"k7\" already defined at line 8");
    let flow: Vec<String> = (0..40).map(|i| format!("k{i}: {i}")).collect();
    let src = format!("{{{}, k39: again}}\n", flow.join(", "));
    assert_error_at(&src, 1, "mapping key \"k39\" already defined at line 1");
}

#[test]
fn nested_long_mappings_keep_their_own_keys() {
    // An outer mapping with the same keys as a long mapping inside it:
    // no false duplicates, and the outer one's own duplicate is still
    // found after the inner one has ended.
    let mut src = block_keys(20, 0);
    src.push_str("inner:\n");
    src.push_str(&block_keys(30, 2));
    src.push_str("k20: fine\nk3: again\n");
    assert_error_at(&src, 53, "mapping key \"k3\" already defined at line 4");
    let mut ok = block_keys(20, 0);
    ok.push_str("inner:\n");
    ok.push_str(&block_keys(30, 2));
    ok.push_str("k20: fine\n");
    let docs = parse_stream(&ok).expect("no duplicates");
    let root = docs[0].root.as_ref().expect("a mapping");
    assert_eq!(root.as_map().map(|m| m.len()), Some(22));
    assert_eq!(
        root.get("inner").and_then(|n| n.as_map()).map(|m| m.len()),
        Some(30)
    );
}

#[test]
fn last_duplicate_wins_in_long_mappings_when_asked() {
    let mut src = block_keys(40, 0);
    src.push_str("k7: again\n");
    let limits = krusty_yaml::Limits {
        duplicate_keys: krusty_yaml::DuplicateKeys::LastWins,
        ..Default::default()
    };
    let docs = krusty_yaml::parse_stream_with(&src, limits).expect("duplicates allowed");
    let root = docs[0].root.as_ref().expect("a mapping");
    assert_eq!(root.as_map().map(|m| m.len()), Some(40));
    assert_eq!(root.get("k7").and_then(|n| n.as_str()), Some("again"));
}

#[test]
fn huge_mappings_parse_in_linear_time() {
    // 100,000 keys: scanning earlier keys for each would be 5e9 string
    // comparisons.
    let src = block_keys(100_000, 0);
    let start = Instant::now();
    let docs = parse_stream(&src).expect("valid");
    assert_eq!(
        docs[0]
            .root
            .as_ref()
            .and_then(|r| r.as_map())
            .map(|m| m.len()),
        Some(100_000)
    );
    assert!(
        start.elapsed() < Duration::from_secs(2),
        "took {:?}",
        start.elapsed()
    );
}
