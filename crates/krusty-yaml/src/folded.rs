//! What Kustomize's go-yaml v3 round trip does to a folded (`>`) scalar.
//!
//! Kustomize writes each resource with go-yaml v3 and reads it back before
//! printing it. A scalar that was folded in its source is written folded
//! again, and go-yaml v3's folded writer puts a blank line after every
//! line that ends in a single line break, except when the value itself
//! starts with a blank (it looks at the value's start instead of the next
//! line's). Read back, such a blank line folds away before an ordinary
//! line but stays before a more-indented one, and after the last line it
//! adds to kept trailing breaks. [`round_trip`] reproduces the write and
//! the read.

use crate::node::Value;
use crate::parse::parse_stream;

/// go-yaml's indentation.
const INDENT: usize = 2;

/// The value a folded scalar holding `text` has after Kustomize's round
/// trip, or `None` when the round trip leaves it as it is (go-yaml writes
/// it in another style, or it is written and read back unchanged).
pub fn round_trip(text: &str) -> Option<String> {
    if !stays_folded(text) {
        return None;
    }
    let written = write_folded(text);
    let document = format!("k: {written}");
    let docs = parse_stream(&document).ok()?;
    let root = docs.into_iter().next()?.root?;
    let Value::Scalar(s) = &root.get("k")?.value else {
        return None;
    };
    (s.text != text).then(|| s.text.to_string())
}

/// Whether go-yaml v3 keeps the folded style for `text`: no trailing
/// space, no space before a line break, nothing outside the printable set.
fn stays_folded(text: &str) -> bool {
    if text.is_empty() || text.ends_with(' ') || text.contains(" \n") {
        return false;
    }
    text.chars().all(|c| {
        let c = c as u32;
        c == 0x09
            || c == 0x0a
            || (0x20..=0x7e).contains(&c)
            || c == 0x85
            || (0xa0..=0xd7ff).contains(&c)
            || ((0xe000..=0xfffd).contains(&c) && c != 0xfeff)
            || c >= 0x10000
    })
}

/// go-yaml's line breaks.
fn is_break(c: char) -> bool {
    matches!(c, '\n' | '\r' | '\u{85}' | '\u{2028}' | '\u{2029}')
}

/// go-yaml v3's writer decides whether to put a blank line after a line
/// by looking at the value's first character after its leading line
/// breaks, not at the next line: a blank line follows each line when that
/// character is neither a blank nor the end.
fn blank_lines_follow(text: &str) -> bool {
    text.chars()
        .find(|&c| !is_break(c))
        .is_some_and(|c| c != ' ' && c != '\t')
}

/// The folded scalar go-yaml v3 writes for `text` as a mapping value at
/// the top level: the `>` header with its chomping hint, then the lines.
fn write_folded(text: &str) -> String {
    let chomp = if !text.ends_with('\n') {
        "-"
    } else if text.len() == 1 || text[..text.len() - 1].ends_with('\n') {
        "+"
    } else {
        ""
    };
    // A value that starts with a space or a line break gets an
    // indentation indicator.
    let hint = if text.starts_with(' ') || text.starts_with(is_break) {
        "2"
    } else {
        ""
    };
    let mut out = format!(">{hint}{chomp}\n");
    let mut col = 0;
    let mut indention = true;
    let put_break = |out: &mut String, col: &mut usize, indention: &mut bool| {
        out.push('\n');
        *col = 0;
        *indention = true;
    };
    let blank_lines = blank_lines_follow(text);
    let chars: Vec<char> = text.chars().collect();
    let mut breaks = true;
    let mut leading_spaces = true;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if matches!(c, '\n' | '\u{2028}' | '\u{2029}') {
            // A line ending in a line feed may get a blank line; a LINE
            // or PARAGRAPH SEPARATOR is written as itself.
            if c == '\n' && !breaks && !leading_spaces && blank_lines {
                put_break(&mut out, &mut col, &mut indention);
            }
            put_break(&mut out, &mut col, &mut indention);
            if c != '\n' {
                out.pop();
                out.push(c);
            }
            breaks = true;
            i += 1;
            continue;
        }
        if breaks {
            if !indention || col > INDENT {
                put_break(&mut out, &mut col, &mut indention);
            }
            while col < INDENT {
                out.push(' ');
                col += 1;
            }
            leading_spaces = c == ' ' || c == '\t';
        }
        // Kustomize's writer sets no line width: long lines stay whole.
        out.push(c);
        col += 1;
        indention = false;
        breaks = false;
        i += 1;
    }
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::round_trip;

    #[test]
    fn more_indented_lines_and_kept_breaks_change() {
        assert_eq!(
            round_trip("normal\n  more indented\nback\n").as_deref(),
            Some("normal\n\n  more indented\nback\n")
        );
        assert_eq!(round_trip("keep\n\n").as_deref(), Some("keep\n\n\n"));
        // A long more-indented line is not wrapped: wrapped, its end would
        // fold into the next line.
        let long = format!("[\n  {}\n]", "word ".repeat(30).trim_end());
        assert_eq!(
            round_trip(&long),
            Some(format!("[\n\n  {}\n]", "word ".repeat(30).trim_end()))
        );
    }

    #[test]
    fn the_value_start_decides_the_blank_lines() {
        // After leading line breaks a non-blank: blank lines as usual.
        assert_eq!(round_trip("\nx\n\n").as_deref(), Some("\nx\n\n\n"));
        // A leading space: none.
        assert_eq!(round_trip(" x\ny\n"), None);
    }

    #[test]
    fn ordinary_folded_text_is_unchanged() {
        let long = "word ".repeat(40);
        for text in [
            "folded line continues here\nnew para\n",
            "one two",
            long.trim_end(),
            "a\n\nb\n",
        ] {
            assert_eq!(round_trip(text), None, "{text:?}");
        }
    }
}
