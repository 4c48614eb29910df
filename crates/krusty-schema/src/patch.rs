//! Patch entries as written (`patches:`, `patchesJson6902:`): where the
//! patch text comes from, which resources it targets, and where it is
//! written. Reading and applying the patch is the operations' job.

use krusty_yaml::{Node, Pos, ScalarStyle};

use crate::error::go_quote;
use crate::selector::Selector;

/// Where a patch's text comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum PatchSource {
    /// Written inline (`patch:`), already trimmed.
    Inline(String),
    /// A file (`path:`), relative to the kustomization root.
    Path(String),
}

impl PatchSource {
    /// How Kustomize names the patch in messages: `[patch: "..."]` or
    /// `[path: "..."]`.
    pub fn describe(&self) -> String {
        match self {
            PatchSource::Inline(text) => format!("[patch: {}]", go_quote(text)),
            PatchSource::Path(path) => format!("[path: {}]", go_quote(path)),
        }
    }
}

/// Where an inline patch's text stands in the file that holds it, when
/// each of its lines is a line of that file (a literal block scalar):
/// positions in the text are then positions in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TextPlace {
    /// The file's line holding the text's first line.
    pub line: u32,
    /// The file's column of the text's first character.
    pub column: u32,
    /// The columns before each later line of the text.
    pub indent: u32,
}

impl TextPlace {
    /// Where `text`, the trimmed value of `node`, stands in `source`, the
    /// file `node` was read from: known when `node` is a literal block
    /// scalar without an indentation indicator, and each line of `text`
    /// is found where the file holds it (`None` otherwise).
    pub fn of_literal(node: &Node, source: &str, text: &str) -> Option<TextPlace> {
        let at = node.pos();
        if node.style() != ScalarStyle::Literal || at.line == 0 || text.is_empty() {
            return None;
        }
        if text.contains(['\r', '\u{85}', '\u{2028}', '\u{2029}']) {
            return None;
        }
        let mut lines = source.split('\n').enumerate().skip(at.line as usize - 1);
        let header: String = lines.next()?.1.chars().skip(at.col as usize - 1).collect();
        let indicator = header.strip_prefix('|')?;
        let indicator = indicator.split([' ', '\t', '#']).next().unwrap_or_default();
        if indicator.contains(|c: char| c.is_ascii_digit()) {
            return None;
        }
        let mut lines = lines.skip_while(|(_, l)| l.trim().is_empty());
        let (index, first) = lines.next()?;
        let indent = first.chars().take_while(|&c| c == ' ').count();
        let blank = first.chars().take_while(|c| c.is_whitespace()).count();
        let place = TextPlace {
            line: index as u32 + 1,
            column: blank as u32 + 1,
            indent: indent as u32,
        };
        let mut text_lines = text.split('\n').peekable();
        let first_text = text_lines.next()?;
        let rest: String = first.chars().skip(blank).collect();
        if !holds(&rest, first_text, text_lines.peek().is_none()) {
            return None;
        }
        let margin = " ".repeat(indent);
        while let Some(expected) = text_lines.next() {
            let (_, line) = lines.next()?;
            let last = text_lines.peek().is_none();
            let fits = match line.strip_prefix(margin.as_str()) {
                Some(rest) => holds(rest, expected, last),
                None => expected.is_empty() && line.chars().all(|c| c == ' '),
            };
            if !fits {
                return None;
            }
        }
        Some(place)
    }

    /// The file's position of position `pos` of the text.
    pub fn position(&self, pos: Pos) -> Pos {
        if pos.line <= 1 {
            return Pos {
                line: self.line,
                col: self.column + pos.col.saturating_sub(1),
            };
        }
        Pos {
            line: self.line + pos.line - 1,
            col: self.indent + pos.col,
        }
    }
}

/// Whether a file's line (past its indentation) holds a text's line: the
/// same characters, followed only by blanks on the text's last line.
fn holds(line: &str, text_line: &str, last: bool) -> bool {
    if last {
        line.strip_prefix(text_line)
            .is_some_and(|rest| rest.trim().is_empty())
    } else {
        line == text_line
    }
}

/// One `patches:` entry (PatchTransformer).
#[derive(Debug, Clone, PartialEq)]
pub struct PatchEntry {
    /// The patch text.
    pub source: PatchSource,
    /// Which resources to patch; without it, a strategic merge patch
    /// patches the resource with its own id.
    pub target: Option<Selector>,
    /// `options.allowNameChange`.
    pub allow_name_change: bool,
    /// `options.allowKindChange`.
    pub allow_kind_change: bool,
    /// Where an inline patch's text stands in its file, when known.
    pub text_at: Option<TextPlace>,
    /// Where the entry is written in its file (nowhere when unknown).
    pub written_at: Pos,
}

/// One `patchesJson6902:` entry (PatchJson6902Transformer).
#[derive(Debug, Clone, PartialEq)]
pub struct Json6902Entry {
    /// The resources to patch (a name is required).
    pub target: Selector,
    /// The op list: inline (`jsonOp`/`op`) or a file.
    pub source: PatchSource,
    /// Where an inline op list stands in its file, when known.
    pub text_at: Option<TextPlace>,
    /// Where the entry is written in its file (nowhere when unknown).
    pub written_at: Pos,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `patch:` value of the first entry of `patches:` in `source`,
    /// and its text as a patch entry holds it (trimmed).
    fn inline_patch(source: &str) -> (Node, String) {
        let docs = krusty_yaml::parse_stream(source).expect("valid YAML");
        let root = docs[0].root.clone().expect("a document");
        let node = root.get("patches").and_then(Node::as_seq).expect("patches")[0]
            .get("patch")
            .cloned()
            .expect("a patch");
        let text = node.as_str().expect("text").trim().to_string();
        (node, text)
    }

    #[test]
    fn a_literal_patch_maps_its_positions_into_the_file() {
        let source =
            "patches:\n- patch: |-\n\n    - op: add\n      path: /x\n  target: {kind: A}\n";
        let (node, text) = inline_patch(source);
        let place = TextPlace::of_literal(&node, source, &text).expect("placed");
        assert_eq!(
            place.position(Pos { line: 1, col: 3 }),
            Pos { line: 4, col: 7 }
        );
        assert_eq!(
            place.position(Pos { line: 2, col: 3 }),
            Pos { line: 5, col: 7 }
        );
    }

    #[test]
    fn a_patch_whose_lines_are_not_the_files_is_not_placed() {
        for source in [
            "patches:\n- patch: |2-\n    - op: add\n      path: /x\n",
            "patches:\n- patch: >-\n    - op: add\n      path: /x\n",
            "patches:\n- patch: '[{\"op\": \"add\"}]'\n",
            "patches:\r\n- patch: |-\r\n    - op: add\r\n      path: /x\r\n",
        ] {
            let (node, text) = inline_patch(source);
            assert_eq!(
                TextPlace::of_literal(&node, source, &text),
                None,
                "{source:?}"
            );
        }
    }
}
