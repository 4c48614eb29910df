//! Go's regular expressions on Rust's `regex`: Kustomize compiles selector
//! fields, replacement paths and image names with Go's `regexp`. Patterns
//! are rewritten where the two syntaxes read the same text differently,
//! and errors use Go's wording, which users and scripts see.

/// Go's `regexp` error text for a pattern Rust's `regex` rejects (Go's
/// wording for the common mistakes, else Rust's description).
pub fn error_text(pattern: &str, e: &regex::Error) -> String {
    let detail = match e {
        regex::Error::Syntax(text) => text
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .map(|l| l.trim_start_matches("error: ").to_string())
            .unwrap_or_default(),
        other => other.to_string(),
    };
    const GO_WORDING: [(&str, &str); 7] = [
        ("unclosed group", "missing closing )"),
        ("unopened group", "unexpected )"),
        ("unclosed character class", "missing closing ]"),
        (
            "repetition operator missing expression",
            "missing argument to repetition operator",
        ),
        (
            "incomplete escape sequence",
            "trailing backslash at end of expression",
        ),
        ("unrecognized escape sequence", "invalid escape sequence"),
        (
            "invalid character class range",
            "invalid character class range",
        ),
    ];
    let detail = GO_WORDING
        .iter()
        .find(|(rust, _)| detail.starts_with(rust))
        .map_or(detail.as_str(), |(_, go)| go);
    format!("error parsing regexp: {detail}: `{pattern}`")
}

/// Compiles `pattern` as Go's `regexp` reads it; the error is Go's wording
/// for the pattern as written.
pub fn compile(pattern: &str) -> Result<regex::Regex, String> {
    regex::Regex::new(&translate(pattern)).map_err(|e| error_text(pattern, &e))
}

/// Rewrites Go (RE2) syntax into Rust's `regex` syntax where the two read
/// the same text differently:
/// - a `{` that does not start a repetition (`{n}`, `{n,}`, `{n,m}`) is a
///   literal in Go, an error in Rust;
/// - `\d`, `\w`, `\s` and `\b` are ASCII-only in Go, Unicode-aware in Rust;
/// - `\Q…\E` quotes literal text in Go only;
/// - in a character class, `[` (other than `[:name:]`), `&&`, `--` and
///   `~~` are literals in Go, nesting and set operations in Rust.
fn translate(pattern: &str) -> String {
    let chars: Vec<char> = pattern.chars().collect();
    let mut out = String::with_capacity(pattern.len() + 8);
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '\\' => {
                let Some(&next) = chars.get(i + 1) else {
                    out.push('\\');
                    break;
                };
                if next == 'Q' {
                    // `\Q…\E`: literal text.
                    let rest: String = chars[i + 2..].iter().collect();
                    let (literal, after) = rest.split_once("\\E").unwrap_or((&rest, ""));
                    out.push_str(&regex::escape(literal));
                    i = chars.len() - after.chars().count();
                    continue;
                }
                match perl_class(next) {
                    Some(class) => out.push_str(&format!("[{class}]")),
                    None if next == 'b' || next == 'B' => out.push_str(&format!("(?-u:\\{next})")),
                    None => {
                        out.push('\\');
                        out.push(next);
                    }
                }
                i += 2;
            }
            '{' if repetition_len(&chars[i..]).is_none() => {
                out.push_str("\\{");
                i += 1;
            }
            '[' => i = translate_class(&chars, i, &mut out),
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    out
}

/// The ASCII class Go gives a Perl class escape (`d` for `\d`), in the
/// form that goes inside brackets.
fn perl_class(c: char) -> Option<&'static str> {
    Some(match c {
        'd' => "0-9",
        'D' => "^0-9",
        'w' => "0-9A-Za-z_",
        'W' => "^0-9A-Za-z_",
        's' => "\\t\\n\\x0C\\r ",
        'S' => "^\\t\\n\\x0C\\r ",
        _ => return None,
    })
}

/// The length of the repetition (`{n}`, `{n,}`, `{n,m}`) at the start of
/// `chars`, if there is one.
fn repetition_len(chars: &[char]) -> Option<usize> {
    let digits = |from: usize| {
        chars[from..]
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count()
    };
    let lo = digits(1);
    if lo == 0 {
        return None;
    }
    let mut at = 1 + lo;
    if chars.get(at) == Some(&',') {
        at += 1 + digits(at + 1);
    }
    (chars.get(at) == Some(&'}')).then_some(at + 1)
}

/// Copies the character class starting at `chars[start]` (a `[`) into
/// `out` in Rust's syntax; returns the index after it. A class with no
/// closing `]` is copied as it is, for Rust to report.
fn translate_class(chars: &[char], start: usize, out: &mut String) -> usize {
    let mut i = start + 1;
    let mut class = String::from("[");
    if chars.get(i) == Some(&'^') {
        class.push('^');
        i += 1;
    }
    // A `]` right after the opening (and its `^`) is a literal.
    if chars.get(i) == Some(&']') {
        class.push_str("\\]");
        i += 1;
    }
    while i < chars.len() {
        match chars[i] {
            ']' => {
                class.push(']');
                out.push_str(&class);
                return i + 1;
            }
            '\\' if i + 1 < chars.len() => {
                let next = chars[i + 1];
                match perl_class(next) {
                    Some(c) if c.starts_with('^') => class.push_str(&format!("[{c}]")),
                    Some(c) => class.push_str(c),
                    None => {
                        class.push('\\');
                        class.push(next);
                    }
                }
                i += 2;
            }
            '[' if chars.get(i + 1) == Some(&':') => {
                // A POSIX class, `[:alpha:]`, the same in both.
                let end = chars[i + 2..]
                    .windows(2)
                    .position(|w| w == [':', ']'])
                    .map(|p| i + 2 + p + 2);
                match end {
                    Some(end) => {
                        class.extend(&chars[i..end]);
                        i = end;
                    }
                    None => {
                        class.push_str("\\[");
                        i += 1;
                    }
                }
            }
            '[' => {
                class.push_str("\\[");
                i += 1;
            }
            // Doubled, these are set operations in Rust: the second one
            // escaped keeps Go's reading (`a--` is still a range to `-`).
            c @ ('&' | '-' | '~') if chars.get(i + 1) == Some(&c) => {
                class.push(c);
                class.push('\\');
                class.push(c);
                i += 2;
            }
            c => {
                class.push(c);
                i += 1;
            }
        }
    }
    out.extend(&chars[start..]);
    chars.len()
}

#[cfg(test)]
mod tests {
    use super::compile;

    fn is_match(pattern: &str, text: &str) -> bool {
        compile(pattern).unwrap().is_match(text)
    }

    #[test]
    fn a_brace_that_starts_no_repetition_is_a_literal() {
        assert!(is_match("^x{a}$", "x{a}"));
        assert!(is_match("^a{,3}$", "a{,3}"));
        assert!(is_match("^a{2}$", "aa"));
        assert!(is_match("^a{1,}$", "aaa"));
        assert!(is_match("^a{1,2}b$", "aab"));
        assert!(is_match("^{$", "{"));
    }

    #[test]
    fn perl_classes_and_word_boundaries_are_ascii() {
        assert!(!is_match(r"^\d$", "٣"));
        assert!(is_match(r"^\d+$", "42"));
        assert!(!is_match(r"^\w$", "é"));
        assert!(is_match(r"^[\w.]+$", "a.b_c"));
        assert!(is_match(r"^[^\d]$", "x"));
        assert!(is_match(r"^[\D]$", "x"));
        assert!(!is_match(r"^\s$", "\u{a0}"));
        assert!(!is_match(r"\bé", "é"));
        assert!(is_match(r"\ba", "a"));
    }

    #[test]
    fn class_syntax_rust_reads_as_sets_is_literal() {
        assert!(is_match("^[a&&b]+$", "a&&b"));
        assert!(is_match("^[a~~b]+$", "~"));
        assert!(is_match("^[[]$", "["));
        assert!(is_match("^[]a]$", "]"));
        assert!(is_match("^[[:alpha:]]+$", "abc"));
        assert!(compile("[a--b]").is_err());
    }

    #[test]
    fn quoted_text_is_literal() {
        assert!(is_match(r"^\Qa.b\E$", "a.b"));
        assert!(!is_match(r"^\Qa.b\E$", "axb"));
        assert!(is_match(r"^\Q*", "*"));
    }

    #[test]
    fn errors_use_go_wording_for_the_pattern_as_written() {
        assert_eq!(
            compile("a(b").unwrap_err(),
            "error parsing regexp: missing closing ): `a(b`"
        );
    }
}
