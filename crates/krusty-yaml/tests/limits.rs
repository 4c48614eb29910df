//! Hostile and malformed input: every case must end quickly with a positioned
//! error, never a hang, a panic or unbounded memory.

use std::time::{Duration, Instant};

use krusty_yaml::parse_stream;

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
