//! Go's regular expressions on Rust's `regex`: Kustomize compiles selector
//! fields, replacement paths and image names with Go's `regexp`. Patterns
//! are rewritten where the two syntaxes read the same text differently,
//! and errors use Go's wording, which users and scripts see.

/// Why a pattern does not compile, in Go's `regexp` words (Go's
/// `syntax.Error`): what is wrong, and the part of the pattern at fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("error parsing regexp: {code}: `{expr}`")]
pub struct RegexError {
    /// What is wrong (`missing closing )`).
    pub code: String,
    /// The part of the pattern Go names (empty for a trailing backslash).
    pub expr: String,
}

impl RegexError {
    /// Go's error for a pattern Rust's `regex` rejects (Go's wording for
    /// the common mistakes, else Rust's description). Go names the part
    /// of the pattern at fault: the whole pattern for a parenthesis
    /// without its pair, the class from its `[` on for a class without
    /// its `]`, nothing for a trailing backslash, and the range, escape
    /// or repetition operator itself for the others.
    pub fn from_regex(pattern: &str, e: &regex::Error) -> RegexError {
        let message = match e {
            regex::Error::Syntax(text) => text.clone(),
            other => other.to_string(),
        };
        let detail = message
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .map(|l| l.trim_start_matches("error: ").to_string())
            .unwrap_or_default();
        let (go, part) = match GO_WORDING
            .iter()
            .find(|(rust, _, _)| detail.starts_with(rust))
        {
            Some((_, go, part)) => (*go, *part),
            None => (detail.as_str(), Part::Whole),
        };
        RegexError {
            code: go.to_string(),
            expr: fault_fragment(&message, part).unwrap_or_else(|| pattern.to_string()),
        }
    }

    /// Go's error `code` for `text`, the part of a pattern at fault.
    fn go(code: &str, text: &[char]) -> RegexError {
        RegexError {
            code: code.to_string(),
            expr: text.iter().collect(),
        }
    }
}

/// Go's `regexp` error text for a pattern Rust's `regex` rejects: the
/// text of [`RegexError::from_regex`].
pub fn error_text(pattern: &str, e: &regex::Error) -> String {
    RegexError::from_regex(pattern, e).to_string()
}

/// Which part of a pattern Go's error names.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Part {
    /// The whole pattern.
    Whole,
    /// Nothing (an empty fragment).
    Nothing,
    /// What Rust's error points at.
    Span,
    /// What Rust's error points at, with a `?` after it (a repetition
    /// operator and its non-greedy mark).
    Repetition,
    /// From what Rust's error points at to the end of the pattern.
    ToEnd,
}

/// Rust's description, Go's wording for it, and the part Go names.
const GO_WORDING: [(&str, &str, Part); 7] = [
    ("unclosed group", "missing closing )", Part::Whole),
    ("unopened group", "unexpected )", Part::Whole),
    ("unclosed character class", "missing closing ]", Part::ToEnd),
    (
        "repetition operator missing expression",
        "missing argument to repetition operator",
        Part::Repetition,
    ),
    (
        "incomplete escape sequence",
        "trailing backslash at end of expression",
        Part::Nothing,
    ),
    (
        "unrecognized escape sequence",
        "invalid escape sequence",
        Part::Span,
    ),
    (
        "invalid character class range",
        "invalid character class range",
        Part::Span,
    ),
];

/// The text `part` names in the pattern shown in Rust's error `message`
/// (the pattern as compiled: rewritten parts read as Go reads them). `None`
/// when the message shows no single-line pattern with a marked span, or
/// when Go names the whole pattern.
fn fault_fragment(message: &str, part: Part) -> Option<String> {
    match part {
        Part::Whole => return None,
        Part::Nothing => return Some(String::new()),
        _ => {}
    }
    let (shown, start, len) = marked_span(message)?;
    let chars: Vec<char> = shown.chars().collect();
    let end = (start + len).min(chars.len());
    let mut fragment: String = chars.get(start..end)?.iter().collect();
    match part {
        Part::ToEnd => fragment = chars[start..].iter().collect(),
        Part::Repetition if !fragment.ends_with('?') && chars.get(end) == Some(&'?') => {
            fragment.push('?')
        }
        _ => {}
    }
    Some(fragment)
}

/// The pattern line of Rust's error message and the span its carets mark
/// (first character, length in characters).
fn marked_span(message: &str) -> Option<(&str, usize, usize)> {
    let mut lines = message.lines().skip_while(|l| *l != "regex parse error:");
    lines.next()?;
    let shown = lines.next()?.strip_prefix("    ")?;
    let carets = lines.next()?.strip_prefix("    ")?;
    let start = carets.chars().take_while(|c| *c == ' ').count();
    let len = carets.chars().skip(start).take_while(|c| *c == '^').count();
    (len > 0).then_some((shown, start, len))
}

/// Compiles `pattern` as Go's `regexp` reads it; the error is Go's wording
/// for the pattern as written.
pub fn compile(pattern: &str) -> Result<regex::Regex, RegexError> {
    regex::Regex::new(&translate(pattern)?).map_err(|e| RegexError::from_regex(pattern, &e))
}

/// Go's largest repetition count.
const MAX_REPEAT: u32 = 1000;

/// Rewrites Go (RE2) syntax into Rust's `regex` syntax where the two read
/// the same text differently, and rejects what only Go rejects:
/// - a `{` that does not start a repetition (`{n}`, `{n,}`, `{n,m}`) is a
///   literal in Go, an error in Rust;
/// - `\d`, `\w`, `\s` and `\b` are ASCII-only in Go, Unicode-aware in Rust;
/// - `\Q…\E` quotes literal text, and `\0`, `\12` are octal, in Go only;
/// - in a character class, `[` (other than `[:name:]`), `&&`, `--` and
///   `~~` are literals in Go, nesting and set operations in Rust;
/// - Go rejects a repetition of a repetition (`a**`, `a{2}{3}`), counts
///   above 1000, and flags other than `i`, `m`, `s` and `U`.
fn translate(pattern: &str) -> Result<String, RegexError> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut out = String::with_capacity(pattern.len() + 8);
    // Where the repetition operator just written starts, if the last
    // thing written is one.
    let mut last_repeat: Option<usize> = None;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let repeat = match c {
            '*' | '+' | '?' => Some(1),
            '{' => repetition_len(&chars[i..]),
            _ => None,
        };
        // A repetition with nothing before it is Rust's to report.
        let has_operand = i > 0 && !matches!(chars[i - 1], '(' | '|');
        if let (Some(len), true) = (repeat, has_operand) {
            let mut end = i + len;
            if chars.get(end) == Some(&'?') {
                end += 1;
            }
            if let Some(start) = last_repeat {
                return Err(RegexError::go(
                    "invalid nested repetition operator",
                    &chars[start..end],
                ));
            }
            if c == '{' {
                let counts: String = chars[i + 1..i + len - 1].iter().collect();
                if counts
                    .split(',')
                    .any(|n| n.parse::<u32>().map_or(!n.is_empty(), |n| n > MAX_REPEAT))
                {
                    return Err(RegexError::go("invalid repeat count", &chars[i..i + len]));
                }
            }
            out.extend(&chars[i..end]);
            last_repeat = Some(i);
            i = end;
            continue;
        }
        last_repeat = None;
        match c {
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
                let octal = |k: usize| chars.get(k).is_some_and(|c| ('0'..='7').contains(c));
                if next == '0' || (('1'..='7').contains(&next) && octal(i + 2)) {
                    // An octal escape: the digit and up to two more.
                    let mut end = i + 2;
                    while end < i + 4 && octal(end) {
                        end += 1;
                    }
                    let digits: String = chars[i + 1..end].iter().collect();
                    let value = u32::from_str_radix(&digits, 8).unwrap_or(0);
                    out.push_str(&format!("\\x{{{value:X}}}"));
                    i = end;
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
            '(' if chars.get(i + 1) == Some(&'?') => {
                // Flags, `(?flags)` or `(?flags:…)`; named groups pass.
                let mut j = i + 2;
                while let Some(&f) = chars.get(j) {
                    if f == ')' || f == ':' || f == 'P' || f == '<' {
                        break;
                    }
                    if !matches!(f, 'i' | 'm' | 's' | 'U' | '-') {
                        return Err(RegexError::go(
                            "invalid or unsupported Perl syntax",
                            &chars[i..=j],
                        ));
                    }
                    j += 1;
                }
                out.extend(&chars[i..j]);
                i = j;
            }
            '{' => {
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
    Ok(out)
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
                // A `-` after a class escape is a literal, not a range.
                if perl_class(next).is_some() && chars.get(i) == Some(&'-') {
                    class.push_str("\\-");
                    i += 1;
                }
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
    fn octal_escapes_are_characters() {
        assert!(is_match(r"^\141$", "a"));
        assert!(is_match(r"^\0$", "\0"));
        assert!(is_match(r"^[\d-z]+$", "1-z"));
        assert!(!is_match(r"^[\d-z]$", "m"));
    }

    #[test]
    fn what_only_go_rejects_is_an_error() {
        for (pattern, error) in [
            ("a**", "invalid nested repetition operator: `**`"),
            ("a{2}{3}", "invalid nested repetition operator: `{2}{3}`"),
            ("a+*?", "invalid nested repetition operator: `+*?`"),
            ("a{1001}", "invalid repeat count: `{1001}`"),
            ("(?x)a", "invalid or unsupported Perl syntax: `(?x`"),
        ] {
            assert_eq!(
                compile(pattern).unwrap_err().to_string(),
                format!("error parsing regexp: {error}"),
                "{pattern}"
            );
        }
        for ok in [
            "a*?", "a+?b*", "(?i)a", "(?P<n>a)", "(?<n>a)", "(?i:a)", "a{2}?",
        ] {
            assert!(compile(ok).is_ok(), "{ok}");
        }
    }

    #[test]
    fn errors_use_go_wording_for_the_pattern_as_written() {
        assert_eq!(
            compile("a(b").unwrap_err().to_string(),
            "error parsing regexp: missing closing ): `a(b`"
        );
    }

    #[test]
    fn errors_name_the_part_go_names() {
        for (pattern, error) in [
            ("^(?:[a-)$", "invalid character class range: `a-)`"),
            ("x[z-a]", "invalid character class range: `z-a`"),
            ("^(?:*)$", "missing argument to repetition operator: `*`"),
            ("^(?:*?)$", "missing argument to repetition operator: `*?`"),
            ("a|+", "missing argument to repetition operator: `+`"),
            ("a)", "unexpected ): `a)`"),
            ("x[ab", "missing closing ]: `[ab`"),
            (r"a\q", r"invalid escape sequence: `\q`"),
        ] {
            assert_eq!(
                compile(pattern).unwrap_err().to_string(),
                format!("error parsing regexp: {error}"),
                "{pattern}"
            );
        }
    }
}
