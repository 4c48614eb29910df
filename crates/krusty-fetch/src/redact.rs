//! Credentials written in URLs (`https://user:token@host/...`) never
//! leave krusty: every error, progress line and origin record that shows
//! a URL shows it through [`redact`], which puts [`REDACTED`] where the
//! user information was.

use std::borrow::Cow;

/// What stands for the user information of a URL once redacted.
pub const REDACTED: &str = "***";

/// `text` with the user information of every `scheme://user:secret@host`
/// URL in it replaced by [`REDACTED`]. An `ssh://` user without a password
/// (`ssh://git@host/...`) names an account, not a secret, and is kept;
/// text without `://` is returned as it is.
pub fn redact(text: &str) -> Cow<'_, str> {
    if !text.contains("://") {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut search = 0;
    while let Some(found) = text[search..].find("://") {
        let sep = search + found;
        let authority_start = sep + 3;
        let authority_end = text[authority_start..]
            .find(ends_authority)
            .map_or(text.len(), |i| authority_start + i);
        search = authority_end.max(authority_start);
        let authority = &text[authority_start..authority_end];
        let Some(at) = authority.rfind('@') else {
            continue;
        };
        let userinfo = &authority[..at];
        if userinfo.is_empty() || (is_ssh(scheme_before(text, sep)) && !userinfo.contains(':')) {
            continue;
        }
        out.push_str(&text[copied..authority_start]);
        out.push_str(REDACTED);
        copied = authority_start + at;
    }
    if copied == 0 {
        return Cow::Borrowed(text);
    }
    out.push_str(&text[copied..]);
    Cow::Owned(out)
}

/// Whether `c` ends a URL's authority (`user@host:port`) in free text.
fn ends_authority(c: char) -> bool {
    matches!(c, '/' | '?' | '#' | '\'' | '"' | '`' | '<' | '>' | '\\') || c.is_whitespace()
}

/// The URL scheme that ends at byte `sep` of `text` (letters, digits,
/// `+`, `-`, `.`), possibly empty.
fn scheme_before(text: &str, sep: usize) -> &str {
    let head = &text[..sep];
    let start = head
        .rfind(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')))
        .map_or(0, |i| i + 1);
    &head[start..]
}

fn is_ssh(scheme: &str) -> bool {
    ["ssh", "git+ssh", "ssh+git"]
        .iter()
        .any(|s| scheme.eq_ignore_ascii_case(s))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_information_is_replaced() {
        for (text, want) in [
            (
                "https://user:token@host.example/org/repo",
                "https://***@host.example/org/repo",
            ),
            (
                "https://ghp_secret@github.com/org/repo//base?ref=v1",
                "https://***@github.com/org/repo//base?ref=v1",
            ),
            (
                "HTTP://u:p@127.0.0.1:8080/f.yaml",
                "HTTP://***@127.0.0.1:8080/f.yaml",
            ),
            (
                "failed to run '/usr/bin/git fetch --depth=1 https://u:p%40ss@h/r HEAD': fatal: unable to access 'https://u:p%40ss@h/r/': 403",
                "failed to run '/usr/bin/git fetch --depth=1 https://***@h/r HEAD': fatal: unable to access 'https://***@h/r/': 403",
            ),
            ("git::https://a:b@h/r//d", "git::https://***@h/r//d"),
            ("ssh://git:secret@h/r.git", "ssh://***@h/r.git"),
            ("Get \"https://a:b@h\": refused", "Get \"https://***@h\": refused"),
        ] {
            assert_eq!(redact(text), want, "{text}");
        }
    }

    #[test]
    fn text_without_user_information_is_unchanged() {
        for text in [
            "plain text",
            "https://host.example/org/repo",
            "https://host.example/path/with@sign",
            "https://host.example?q=a@b",
            "ssh://git@host.example/org/repo.git",
            "git@github.com:org/repo.git",
            "a://",
            "://@",
            "https://@host",
        ] {
            assert!(matches!(redact(text), Cow::Borrowed(_)), "{text}");
        }
    }
}
