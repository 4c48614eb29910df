//! Go's `regexp` wording for patterns that do not compile: Kustomize
//! compiles selectors and replacement paths with Go's `regexp`, and users
//! and scripts see its messages.

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
