//! Reading a string as Kustomize v5.8.1 reads it when a target path goes
//! into it: go-yaml's first document, without checking tagged scalars
//! against their tags, and go-yaml's wording for syntax errors.

use krusty_yaml::{DuplicateKeys, Limits, Node, Pos, Tag, Value, YamlError, YamlErrorKind};

/// A YAML syntax error as go-yaml reports it (`yaml: line 1: did not find
/// expected node content`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("yaml: {}{problem}", line_prefix(*.line))]
pub(crate) struct GoYamlError {
    /// The line go-yaml names, when it names one.
    pub line: Option<usize>,
    /// The problem, in go-yaml's words.
    pub problem: String,
}

/// `line N: ` for a line go-yaml names.
fn line_prefix(line: Option<usize>) -> String {
    line.map(|n| format!("line {n}: ")).unwrap_or_default()
}

/// Reads the first YAML document of `text` as Kustomize v5.8.1 reads a
/// string it goes into: `None` for an empty document (no node at all);
/// the error is go-yaml's. A key written twice is no error here.
pub(crate) fn parse_document(text: &str) -> Result<Option<Node>, GoYamlError> {
    let first = first_document(text);
    let mut source = first.to_string();
    let mut renamed = false;
    loop {
        match parse_first(&source) {
            Ok(mut root) => {
                if renamed {
                    root.iter_mut().for_each(restore_tags);
                }
                return Ok(root);
            }
            Err(e) if is_tag_mismatch(&e) && rename_tag(&mut source, e.pos) => renamed = true,
            Err(e) => return Err(go_yaml_error(first, &e)),
        }
    }
}

/// The root of the first document of `text` (a key written twice is
/// allowed, the later value kept).
fn parse_first(text: &str) -> Result<Option<Node>, YamlError> {
    let docs = match krusty_yaml::parse_stream(text) {
        Err(e) if e.kind == YamlErrorKind::DuplicateKey => krusty_yaml::parse_stream_with(
            text,
            Limits::with_duplicate_keys(DuplicateKeys::LastWins),
        ),
        docs => docs,
    }?;
    Ok(docs.into_iter().next().and_then(|d| d.root))
}

/// The start of the stand-in for a core tag (`!!int` becomes `!_int`,
/// as long): a tag the reader does not check.
const STAND_IN: &str = "!_";

/// krusty's reader rejects a scalar whose text does not suit its core
/// tag; go-yaml reads it into a node all the same.
fn is_tag_mismatch(e: &YamlError) -> bool {
    e.kind == YamlErrorKind::TagMismatch
}

/// Replaces the core tag of the scalar at `pos` in `text` with its stand-in
/// (same length, so positions stay); `false` when there is none there.
fn rename_tag(text: &mut String, pos: Pos) -> bool {
    let Some(offset) = offset_of(text, pos) else {
        return false;
    };
    let before = text[..offset].trim_end_matches([' ', '\t', '\n', '\r']);
    let token_start = before
        .rfind([' ', '\t', '\n', '[', '{', ','])
        .map_or(0, |i| i + 1);
    let at = if text[offset..].starts_with("!!") {
        offset
    } else if before[token_start..].starts_with("!!") {
        token_start
    } else {
        return false;
    };
    text.replace_range(at..at + 2, STAND_IN);
    true
}

/// The byte offset of `pos` (1-based line and column in characters).
fn offset_of(text: &str, pos: Pos) -> Option<usize> {
    let line_start = match pos.line {
        0 => return None,
        1 => 0,
        n => text.match_indices('\n').nth(n as usize - 2)?.0 + 1,
    };
    let line = &text[line_start..];
    let col = (pos.col as usize).saturating_sub(1);
    let in_line = line.char_indices().nth(col).map_or(line.len(), |(i, _)| i);
    Some(line_start + in_line)
}

/// Gives back core tags their stand-ins took (see [`rename_tag`]).
fn restore_tags(node: &mut Node) {
    match &mut node.value {
        Value::Scalar(_) => {
            let core = node
                .tag_text()
                .and_then(|t| t.strip_prefix(STAND_IN))
                .map(|name| Tag::of_text(&format!("!!{name}")))
                .filter(|t| *t != Tag::Other);
            if let Some(tag) = core {
                node.clear_tag();
                node.set_tag(tag);
            }
        }
        Value::Seq(items) => items.iter_mut().for_each(restore_tags),
        Value::Map(entries) => entries.iter_mut().for_each(|(_, v)| restore_tags(v)),
    }
}

/// The text of the first document of a YAML stream: up to the `---` or
/// `...` line that follows its content (go-yaml reads no further).
pub(super) fn first_document(text: &str) -> &str {
    let mut started = false;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let bare = line.trim_end_matches(['\n', '\r']);
        let start = is_marker(bare, "---");
        if start || is_marker(bare, "...") {
            if started {
                return &text[..offset];
            }
            started = start;
        } else if !bare.trim().is_empty()
            && !bare.trim_start().starts_with('#')
            && !bare.starts_with('%')
        {
            started = true;
        }
        offset += line.len();
    }
    text
}

/// Whether `line` is the document marker `marker` (alone, or followed by
/// a blank).
fn is_marker(line: &str, marker: &str) -> bool {
    line.strip_prefix(marker)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', '\t']))
}

/// go-yaml's message for a YAML syntax error in `text`: `yaml: `, the
/// line for errors past the first line (for errors at the end of a text
/// without a final line break, the line after it), and the problem
/// without the reader's notes.
fn go_yaml_error(text: &str, e: &YamlError) -> GoYamlError {
    let problem = match e.message.as_str() {
        UNCLOSED_FLOW => unclosed_flow_problem(text).to_string(),
        message => go_problem(message),
    };
    let line0 = e.pos.line.saturating_sub(1) as usize;
    let parser_error = problem.starts_with("did not find expected")
        && problem != "did not find expected comment or line break";
    let line = if parser_error {
        line0 + usize::from(at_end(text, e.pos) && !text.ends_with('\n'))
    } else if line0 == 0 {
        0
    } else {
        line0 + 1
    };
    GoYamlError {
        line: Some(line).filter(|&n| n > 0),
        problem,
    }
}

/// krusty's reader's message for a flow collection the text ends in.
const UNCLOSED_FLOW: &str =
    "did not find expected ',' or closing bracket before the end of the stream";

/// go-yaml's problem with a text that ends inside a flow collection: a
/// missing node after `[`, `{`, `,` or `:`, else the missing `,` or
/// closing bracket of the innermost open collection.
fn unclosed_flow_problem(text: &str) -> &'static str {
    let (open, last) = flow_state(text);
    match (last, open) {
        (Some('[' | '{' | ',' | ':'), _) => "did not find expected node content",
        (_, Some('[')) => "did not find expected ',' or ']'",
        _ => "did not find expected ',' or '}'",
    }
}

/// The innermost flow collection still open at the end of `text` (its
/// opening bracket) and the last character outside quotes and comments.
fn flow_state(text: &str) -> (Option<char>, Option<char>) {
    let mut open = Vec::new();
    let mut last = None;
    let mut quote: Option<char> = None;
    let mut chars = text.chars().peekable();
    let mut blank_before = true;
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some('"'), '\\') => {
                chars.next();
            }
            (Some(q), c) if c == q => {
                if q == '\'' && chars.peek() == Some(&'\'') {
                    chars.next();
                } else {
                    quote = None;
                    last = Some(c);
                }
            }
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '#') if blank_before => while chars.next_if(|&c| c != '\n').is_some() {},
            (None, c) if c.is_whitespace() => {}
            (None, c) => {
                match c {
                    '[' | '{' => open.push(c),
                    ']' | '}' => {
                        open.pop();
                    }
                    _ => {}
                }
                last = Some(c);
            }
        }
        blank_before = c.is_whitespace();
    }
    (open.last().copied(), last)
}

/// go-yaml's wording of a problem krusty's reader describes with notes
/// (`..., found ','`, `... while parsing a quoted scalar`).
fn go_problem(message: &str) -> String {
    let mut problem = message;
    for note in [", found", " while "] {
        if let Some(i) = problem.find(note) {
            problem = &problem[..i];
        }
    }
    if problem.starts_with("found character '") && problem.ends_with("that cannot start any token")
    {
        return "found character that cannot start any token".into();
    }
    problem.to_string()
}

/// Whether `pos` is at or past the end of `text`.
fn at_end(text: &str, pos: Pos) -> bool {
    let lines: Vec<&str> = text.split('\n').collect();
    let last = lines.len() as u32;
    let last_len = lines.last().map_or(0, |l| l.chars().count()) as u32;
    pos.line > last || (pos.line == last && pos.col > last_len)
}
