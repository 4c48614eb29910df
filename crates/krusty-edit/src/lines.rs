//! The line layout of a kustomization file: its lines as YAML counts them,
//! the line break it is written with, and its document markers.

/// The lines of `text`, each with its line break: `\n`, `\r\n` or a lone
/// `\r` (all three end a line in YAML, so the lines match the parser's
/// line numbers).
pub(crate) fn split(text: &str) -> Vec<&str> {
    let bytes = text.as_bytes();
    let mut lines = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        let end = match bytes[i] {
            b'\n' => i + 1,
            b'\r' if bytes.get(i + 1) == Some(&b'\n') => i + 2,
            b'\r' => i + 1,
            _ => {
                i += 1;
                continue;
            }
        };
        lines.push(&text[start..end]);
        start = end;
        i = end;
    }
    if start < text.len() {
        lines.push(&text[start..]);
    }
    lines
}

/// The line break a file is written with: that of its first line (`\n`
/// for a file of one line).
pub(crate) fn ending(text: &str) -> &'static str {
    match text.find(['\n', '\r']) {
        Some(i) if text[i..].starts_with("\r\n") => "\r\n",
        _ => "\n",
    }
}

/// `text` (written with `\n`) with each `\n` made `ending`.
pub(crate) fn with_ending(text: String, ending: &str) -> String {
    if ending == "\n" {
        text
    } else {
        text.replace('\n', ending)
    }
}

/// A line without its line break.
pub(crate) fn content(line: &str) -> &str {
    line.trim_end_matches(['\n', '\r'])
}

/// A document marker: `---` (a document starts) or `...` (one ends), at
/// column 1, alone or followed by a blank.
pub(crate) fn is_marker(line: &str) -> bool {
    let text = content(line);
    ["---", "..."].iter().any(|m| {
        text.strip_prefix(m)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', '\t']))
    })
}

/// A `---` marker.
pub(crate) fn is_start_marker(line: &str) -> bool {
    is_marker(line) && content(line).starts_with("---")
}

/// A blank line, or a comment starting at column 1.
pub(crate) fn is_comment_or_blank(line: &str) -> bool {
    let text = content(line);
    text.trim().is_empty() || text.starts_with('#')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_yaml_line_break_ends_a_line() {
        assert_eq!(split("a\nb\r\nc\rd"), ["a\n", "b\r\n", "c\r", "d"]);
        assert_eq!(split(""), Vec::<&str>::new());
    }

    #[test]
    fn the_first_line_break_is_the_files() {
        assert_eq!(ending("a: 1\r\nb: 2\n"), "\r\n");
        assert_eq!(ending("a: 1\nb: 2\r\n"), "\n");
        assert_eq!(ending("a: 1"), "\n");
        assert_eq!(with_ending("a\nb\n".into(), "\r\n"), "a\r\nb\r\n");
    }

    #[test]
    fn markers_stand_alone_at_column_one() {
        for marker in ["---\n", "...\r\n", "--- # next\n", "...", "---\t\n"] {
            assert!(is_marker(marker), "{marker:?}");
        }
        for other in ["----\n", " ---\n", "...x\n", "- --\n", "---x"] {
            assert!(!is_marker(other), "{other:?}");
        }
        assert!(is_start_marker("---\n") && !is_start_marker("...\n"));
    }
}
