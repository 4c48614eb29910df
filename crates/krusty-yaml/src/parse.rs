//! A YAML reader that builds [`Node`] trees directly from the source bytes.
//!
//! It covers the YAML that configuration is written in: block and flow
//! collections, all five scalar styles, anchors and aliases (with a budget
//! against exponential expansion), merge keys, tags, comments and multiple
//! documents. Everything it does not accept is an error with a position,
//! never a guess.

use std::collections::HashMap;

use crate::error::{YamlError, YamlErrorKind};
use crate::node::{CompactString, Document, Node, Pos, ScalarStyle, Tag, ThinVec, Value};
use crate::resolve::{check_tagged_scalar, TagError};

/// Limits that protect the reader from hostile input.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Deepest nesting of collections accepted.
    pub max_depth: usize,
    /// Most nodes that alias expansion may copy in one stream.
    pub max_alias_nodes: usize,
    /// What a repeated mapping key does.
    pub duplicate_keys: DuplicateKeys,
}

impl Limits {
    /// The default limits, with `duplicate_keys` for what a repeated key
    /// does.
    pub fn with_duplicate_keys(duplicate_keys: DuplicateKeys) -> Limits {
        Limits {
            duplicate_keys,
            ..Limits::default()
        }
    }
}

/// What a mapping key written twice does. Each choice is how Kustomize
/// reads one kind of file, which decides two more things: directives
/// (`%YAML 1.1`, `%TAG`) are read only where a file is decoded whole with
/// go-yaml v2 (`LastWins`), and a kept block scalar's trailing empty lines
/// gain a line break before comments that end a document only in
/// resources (`Error`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DuplicateKeys {
    /// It is an error (go-yaml v3, how Kustomize reads resources).
    #[default]
    Error,
    /// The later value replaces the earlier one (go-yaml v2 decoding, how
    /// Kustomize reads kustomization files and JSON patches).
    LastWins,
    /// The later one is ignored (kyaml's node lookups, which find the
    /// first: how Kustomize reads strategic merge patches).
    FirstWins,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_depth: 256,
            max_alias_nodes: 1_000_000,
            duplicate_keys: DuplicateKeys::Error,
        }
    }
}

/// Fails, as go-yaml does, on a character YAML does not allow in a stream:
/// C0 controls other than tab, line feed and carriage return, DEL, C1
/// controls other than NEL, U+FFFE and U+FFFF.
fn check_printable(src: &str) -> Result<(), YamlError> {
    // A first pass over 64-byte blocks without early exits (so it runs as
    // vector code) flags blocks with a byte that may start such a
    // character: a C0 control, DEL, or the lead byte of U+0080..U+00BF or
    // U+F000..U+FFFF. Only then are characters looked at.
    const BLOCK: usize = 64;
    let bytes = src.as_bytes();
    let suspect = |b: u8| {
        (b < 0x20 && b != b'\t' && b != b'\n' && b != b'\r')
            | (b == 0x7f)
            | (b == 0xc2)
            | (b == 0xef)
    };
    let flagged = bytes
        .chunks(BLOCK)
        .position(|block| block.iter().fold(false, |any, &b| any | suspect(b)));
    let Some(block) = flagged else {
        return Ok(());
    };
    // The block's first character may have started in the block before.
    let mut from = (block * BLOCK).saturating_sub(3);
    while !src.is_char_boundary(from) {
        from -= 1;
    }
    let bad = src[from..].char_indices().find(|&(_, c)| {
        let c = c as u32;
        !(c == 0x09
            || c == 0x0a
            || c == 0x0d
            || (0x20..=0x7e).contains(&c)
            || c == 0x85
            || (0xa0..=0xd7ff).contains(&c)
            || (0xe000..=0xfffd).contains(&c)
            || c >= 0x10000)
    });
    let Some((offset, _)) = bad else {
        return Ok(());
    };
    let at = from + offset;
    let before = &src[..at];
    let line = before.bytes().filter(|&b| b == b'\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let col = src[line_start..at].chars().count() + 1;
    Err(YamlError::new(
        Pos {
            line: u32::try_from(line).unwrap_or(u32::MAX),
            col: u32::try_from(col).unwrap_or(u32::MAX),
        },
        "control characters are not allowed",
    ))
}

/// Parses a stream of YAML documents.
pub fn parse_stream(src: &str) -> Result<Vec<Document>, YamlError> {
    parse_stream_with(src, Limits::default())
}

/// The root of the first document of `src` that has one (`None` when
/// every document is empty).
pub fn first_root(src: &str) -> Result<Option<Node>, YamlError> {
    Ok(parse_stream(src)?.into_iter().find_map(|d| d.root))
}

/// Parses a stream of YAML documents with explicit limits.
pub fn parse_stream_with(src: &str, limits: Limits) -> Result<Vec<Document>, YamlError> {
    check_printable(src)?;
    let normalized;
    let src = if src.contains('\r') {
        // CR LF and a lone CR are both line breaks.
        normalized = src.replace("\r\n", "\n").replace('\r', "\n");
        normalized.as_str()
    } else {
        src
    };
    let src = src.strip_prefix('\u{feff}').unwrap_or(src);
    let ascii = src.is_ascii();
    let normalized_breaks;
    let (src, special_breaks) = if !ascii && has_unicode_breaks(src) {
        let (text, special) = normalize_unicode_breaks(src);
        normalized_breaks = text;
        (normalized_breaks.as_str(), special)
    } else {
        (src, Vec::new())
    };
    let mut parser = Parser {
        src,
        b: src.as_bytes(),
        ascii,
        special_breaks,
        i: 0,
        line: 1,
        line_start: 0,
        depth: 0,
        limits,
        anchors: HashMap::new(),
        alias_nodes: 0,
        comments: Vec::new(),
        items: SCRATCH_ITEMS.take(),
        entries: SCRATCH_ENTRIES.take(),
        key_indexes: Vec::new(),
        tag_handles: Vec::new(),
    };
    let parsed = parser.stream();
    parser.items.clear();
    parser.entries.clear();
    SCRATCH_ITEMS.set(parser.items);
    SCRATCH_ENTRIES.set(parser.entries);
    parsed.map_err(|e| *e)
}

/// `src` holds NEL, LINE SEPARATOR or PARAGRAPH SEPARATOR (searched for
/// as byte strings, which the standard library scans many bytes at a time).
fn has_unicode_breaks(src: &str) -> bool {
    src.contains("\u{2028}") || src.contains("\u{2029}") || src.contains("\u{85}")
}

/// `src` with its NEL, LINE SEPARATOR and PARAGRAPH SEPARATOR characters
/// made line feeds, as go-yaml reads them everywhere (they end comments,
/// plain scalars and keys), and where each of the last two was.
fn normalize_unicode_breaks(src: &str) -> (String, Vec<(usize, char)>) {
    let mut text = String::with_capacity(src.len());
    let mut special = Vec::new();
    for c in src.chars() {
        match c {
            // go-yaml reads NEL as a line feed, in scalars too.
            '\u{85}' => text.push('\n'),
            '\u{2028}' | '\u{2029}' => {
                special.push((text.len(), c));
                text.push('\n');
            }
            _ => text.push(c),
        }
    }
    (text, special)
}

thread_local! {
    /// [`Parser::items`] between parses on this thread: a build parses
    /// thousands of small files, and each would otherwise grow its own
    /// stack again from nothing.
    static SCRATCH_ITEMS: std::cell::Cell<Vec<Node>> = const { std::cell::Cell::new(Vec::new()) };
    /// [`Parser::entries`] between parses on this thread, the same way.
    static SCRATCH_ENTRIES: std::cell::Cell<Vec<(Node, Node)>> = const { std::cell::Cell::new(Vec::new()) };
}

/// Where a node stands, which decides what may start on its first line.
#[derive(Clone, Copy, PartialEq)]
enum Ctx {
    /// Document root.
    Doc,
    /// Value after `key:`.
    MapValue,
    /// Item after `- `.
    SeqItem,
}

/// An anchor and a tag written before a node, and the column they start at.
struct Props {
    anchor: Option<String>,
    tag: Option<String>,
    col: i32,
}

/// An anchored node and its size, for the alias budget.
struct Anchor {
    node: Node,
    size: usize,
}

struct Parser<'a> {
    src: &'a str,
    b: &'a [u8],
    /// The whole source is ASCII (as most is): a column in characters is
    /// then its offset in bytes.
    ascii: bool,
    /// The line feeds that stand for a LINE SEPARATOR or PARAGRAPH
    /// SEPARATOR in the source, by offset: scalars keep those characters
    /// where a line feed would fold into a space.
    special_breaks: Vec<(usize, char)>,
    i: usize,
    line: u32,
    line_start: usize,
    depth: usize,
    limits: Limits,
    anchors: HashMap<String, Anchor>,
    alias_nodes: usize,
    comments: Vec<String>,
    /// Items of the sequences being read, innermost last: a sequence
    /// moves its own into an exactly sized `Vec` when it ends (growing
    /// each `Vec` by pushes would leave up to half of it unused).
    items: Vec<Node>,
    /// Entries of the mappings being read, the same way.
    entries: Vec<(Node, Node)>,
    /// Where the keys of open mappings are, for those grown too long to
    /// scan for duplicates, innermost last.
    key_indexes: Vec<KeyIndex>,
    /// The tag handles (`!e!`) the current document's %TAG directives
    /// declare.
    tag_handles: Vec<String>,
}

/// The keys of one open mapping (whose entries start at `first` in
/// [`Parser::entries`]) and where each is.
struct KeyIndex {
    first: usize,
    positions: HashMap<CompactString, usize>,
}

/// The most characters from a key's start to its `:` that go-yaml reads
/// as a key without `?` (a simple key).
const MAX_SIMPLE_KEY: usize = 1024;

/// Past this many entries a mapping's duplicate keys are found by hashing.
const SCAN_KEYS_UP_TO: usize = 16;

/// The parser's results: errors are boxed, which keeps the frames of its
/// recursion small (deep nesting must not exhaust the stack).
type PResult<T> = Result<T, Box<YamlError>>;

/// A syntax error at `pos`, as the parser returns it.
#[cold]
#[inline(never)]
fn fail(pos: Pos, message: impl Into<String>) -> Box<YamlError> {
    Box::new(YamlError::new(pos, message))
}

fn is_ws(c: u8) -> bool {
    c == b' ' || c == b'\t'
}

/// Where the first byte from `from` on that may end a plain scalar outside
/// flow collections (`:`, `#`, a line break) is; eight bytes are looked at
/// a time while eight are left.
fn next_plain_end(b: &[u8], from: usize) -> Option<usize> {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGHS: u64 = u64::from_ne_bytes([0x80; 8]);
    // The high bit of each zero byte of `v`; above the lowest zero byte a
    // borrow may mark others too, but the lowest mark is always exact.
    let zero_bytes = |v: u64| v.wrapping_sub(ONES) & !v & HIGHS;
    let mut j = from;
    while let Some(word) = b.get(j..j + 8) {
        let mut bytes = [0u8; 8];
        bytes.copy_from_slice(word);
        let w = u64::from_le_bytes(bytes);
        let marks = zero_bytes(w ^ (ONES * u64::from(b':')))
            | zero_bytes(w ^ (ONES * u64::from(b'#')))
            | zero_bytes(w ^ (ONES * u64::from(b'\n')));
        if marks != 0 {
            return Some(j + (marks.trailing_zeros() / 8) as usize);
        }
        j += 8;
    }
    b[j..]
        .iter()
        .position(|&c| matches!(c, b':' | b'#' | b'\n'))
        .map(|offset| j + offset)
}

/// Where `b[start..end]` ends without its trailing spaces and tabs.
fn trim_blanks_end(b: &[u8], start: usize, mut end: usize) -> usize {
    while end > start && is_ws(b[end - 1]) {
        end -= 1;
    }
    end
}

fn is_flow_indicator(c: u8) -> bool {
    matches!(c, b',' | b'[' | b']' | b'{' | b'}')
}

impl<'a> Parser<'a> {
    // ----------------------------------------------------------- positions

    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn at(&self, off: usize) -> Option<u8> {
        self.b.get(self.i + off).copied()
    }

    /// `true` when the byte after offset `off` ends a token (space, newline, end).
    fn blank_at(&self, off: usize) -> bool {
        matches!(self.at(off), None | Some(b' ') | Some(b'\t') | Some(b'\n'))
    }

    fn col_bytes(&self) -> i32 {
        (self.i - self.line_start) as i32
    }

    fn pos(&self) -> Pos {
        self.pos_at(self.i)
    }

    fn pos_at(&self, i: usize) -> Pos {
        let col = if self.ascii {
            i.saturating_sub(self.line_start)
        } else {
            let prefix = &self.src[self.line_start..i.max(self.line_start)];
            prefix.chars().count()
        };
        Pos {
            line: self.line,
            col: col as u32 + 1,
        }
    }

    fn err<T>(&self, msg: impl Into<String>) -> PResult<T> {
        Err(fail(self.pos(), msg))
    }

    /// The line break character the line feed at `at` stands for.
    fn break_char(&self, at: usize) -> char {
        match self.special_breaks.binary_search_by_key(&at, |&(i, _)| i) {
            Ok(found) => self.special_breaks[found].1,
            Err(_) => '\n',
        }
    }

    /// From the line break at `from` to the end of the document there are
    /// only blank lines and comments, at least one, none indented less
    /// than the one before it.
    fn only_comments_follow(&self, from: usize) -> bool {
        let mut comment = false;
        let mut last_col = 0;
        let mut i = from;
        while i < self.b.len() {
            // `i` is at a line break: look at the next line.
            i += 1;
            let line_start = i;
            while i < self.b.len() && is_ws(self.b[i]) {
                i += 1;
            }
            match self.b.get(i) {
                None => break,
                Some(b'\n') => continue,
                Some(b'#') if i - line_start >= last_col => {
                    comment = true;
                    last_col = i - line_start;
                }
                Some(b'-' | b'.') if i == line_start => {
                    let marker = &self.b[i..];
                    let ends = matches!(marker.get(3), None | Some(b' ' | b'\t' | b'\n'));
                    return (marker.starts_with(b"---") || marker.starts_with(b"..."))
                        && ends
                        && comment;
                }
                Some(_) => return false,
            }
            while i < self.b.len() && self.b[i] != b'\n' {
                i += 1;
            }
        }
        comment
    }

    /// Joins a flow or plain scalar's lines across the `count` line breaks
    /// in `self.b[from..to]`: one line feed becomes a space, more keep all
    /// but the first; a LINE or PARAGRAPH SEPARATOR first is kept with
    /// all that follow.
    fn join_lines(&self, text: &mut CompactString, from: usize, to: usize, count: usize) {
        let mut breaks = self.b[from..to]
            .iter()
            .enumerate()
            .filter(|&(_, &c)| c == b'\n')
            .map(|(o, _)| self.break_char(from + o));
        match breaks.next() {
            Some(c) if c != '\n' => {
                text.push(c);
                text.extend(breaks);
            }
            _ if count == 1 => text.push(' '),
            _ => text.extend(breaks),
        }
    }

    fn newline(&mut self) {
        // self.b[self.i] == b'\n'
        self.i += 1;
        self.line += 1;
        self.line_start = self.i;
    }

    fn skip_inline_ws(&mut self) {
        while matches!(self.peek(), Some(b' ') | Some(b'\t')) {
            self.i += 1;
        }
    }

    fn at_eol(&self) -> bool {
        matches!(self.peek(), None | Some(b'\n'))
    }

    /// Skips to the end of the line, returning a comment found on the way.
    fn take_comment(&mut self) -> Option<String> {
        self.skip_inline_ws();
        if self.peek() == Some(b'#') {
            let start = self.i + 1;
            while !self.at_eol() {
                self.i += 1;
            }
            Some(self.src[start..self.i].to_string())
        } else {
            None
        }
    }

    /// Skips blank lines and comments (collected as pending head comments).
    /// Returns `false` at the end of input. Tabs may not indent content.
    fn skip_to_content(&mut self) -> PResult<bool> {
        loop {
            let line_begin = self.i == self.line_start;
            let mut saw_tab = false;
            self.skip_spaces_by_words();
            while let Some(c) = self.peek() {
                if c == b' ' {
                    self.i += 1;
                } else if c == b'\t' {
                    saw_tab = true;
                    self.i += 1;
                } else {
                    break;
                }
            }
            match self.peek() {
                None => return Ok(false),
                Some(b'\n') => self.newline(),
                Some(b'#') => {
                    if let Some(c) = self.take_comment() {
                        self.comments.push(c);
                    }
                }
                Some(_) => {
                    if saw_tab && line_begin {
                        let tab_at = self.src[self.line_start..self.i]
                            .find('\t')
                            .map_or(self.i, |o| self.line_start + o);
                        return Err(fail(
                            self.pos_at(tab_at),
                            "found a tab character where an indentation space is expected",
                        ));
                    }
                    return Ok(true);
                }
            }
        }
    }

    /// Skips a run of spaces eight bytes at a time (indentation is most of
    /// what [`Parser::skip_to_content`] skips); stops at the first other byte
    /// or where fewer than eight bytes are left.
    fn skip_spaces_by_words(&mut self) {
        const SPACES: u64 = u64::from_ne_bytes([b' '; 8]);
        while let Some(word) = self.b.get(self.i..self.i + 8) {
            let mut bytes = [0u8; 8];
            bytes.copy_from_slice(word);
            let diff = u64::from_le_bytes(bytes) ^ SPACES;
            if diff != 0 {
                self.i += (diff.trailing_zeros() / 8) as usize;
                return;
            }
            self.i += 8;
        }
    }

    fn at_doc_marker(&self) -> bool {
        self.i == self.line_start
            && (self.b[self.i..].starts_with(b"---") || self.b[self.i..].starts_with(b"..."))
            && self.blank_at(3)
    }

    /// The comments met since the last node, to put above the next one.
    fn take_head_comments(&mut self) -> Option<Vec<String>> {
        (!self.comments.is_empty()).then(|| std::mem::take(&mut self.comments))
    }

    /// Puts `head` above the comments `node` already has above it.
    fn prepend_head_comments(node: &mut Node, mut head: Vec<String>) {
        let extras = node.extras.get_or_insert_with(Default::default);
        head.append(&mut extras.head);
        extras.head = head;
    }

    fn set_line_comment(node: &mut Node, comment: Option<String>) {
        if let Some(c) = comment {
            node.extras.get_or_insert_with(Default::default).line = Some(c);
        }
    }

    fn enter(&mut self) -> PResult<()> {
        self.depth += 1;
        if self.depth > self.limits.max_depth {
            return self.err(format!(
                "nesting is deeper than {} levels",
                self.limits.max_depth
            ));
        }
        Ok(())
    }

    // ----------------------------------------------------------- documents

    fn stream(&mut self) -> PResult<Vec<Document>> {
        let mut docs = Vec::new();
        loop {
            self.anchors.clear();
            if !self.skip_to_content()? {
                break;
            }
            let (mut directives, mut version_seen) = (false, false);
            self.tag_handles.clear();
            while self.peek() == Some(b'%') && self.i == self.line_start {
                self.directive(&mut version_seen)?;
                directives = true;
                if !self.skip_to_content()? || !(self.at_doc_marker() || self.peek() == Some(b'%'))
                {
                    return self.err("did not find expected <document start>");
                }
            }
            if directives && self.b[self.i] != b'-' {
                return self.err("did not find expected <document start>");
            }
            let mut explicit = false;
            if self.at_doc_marker() && self.b[self.i] == b'-' {
                self.i += 3;
                explicit = true;
            } else if self.at_doc_marker() {
                // A stray `...`: ends nothing, skip it.
                self.i += 3;
                continue;
            }
            let head = self.take_head_comments();
            let root = self.node(-1, Ctx::Doc)?;
            let root = root.map(|mut n| {
                if let Some(h) = head {
                    Self::prepend_head_comments(&mut n, h);
                }
                n
            });
            let more = self.skip_to_content()?;
            if more && !self.at_doc_marker() {
                return self.err("did not find expected <document start>");
            }
            if more && self.b[self.i] == b'.' {
                self.i += 3;
                if let Some(c) = self.take_comment() {
                    self.comments.push(c);
                }
                if self.limits.duplicate_keys == DuplicateKeys::Error {
                    self.skip_to_document_start()?;
                }
            }
            if root.is_some() || explicit {
                docs.push(Document {
                    root,
                    foot_comments: std::mem::take(&mut self.comments),
                });
            }
        }
        if let Some(last) = docs.last_mut() {
            last.foot_comments.append(&mut self.comments);
        }
        Ok(docs)
    }

    /// Reads a directive line as go-yaml does: `%YAML 1.1` (once) and
    /// `%TAG handle prefix`; any other version or name fails. Where
    /// documents are split apart before they are read (resources and
    /// strategic merge patches, unlike the files Kustomize decodes whole
    /// with go-yaml v2, [`DuplicateKeys::LastWins`]), the directive ends
    /// up in a document of its own, which has no `---`: every directive
    /// fails there. `version_seen` says whether a `%YAML` came before.
    fn directive(&mut self, version_seen: &mut bool) -> PResult<()> {
        let start = self.pos();
        self.read_directive(version_seen)?;
        if self.limits.duplicate_keys != DuplicateKeys::LastWins {
            return Err(fail(start, "did not find expected <document start>"));
        }
        Ok(())
    }

    /// Reads a directive line, failing on what go-yaml refuses in one.
    fn read_directive(&mut self, version_seen: &mut bool) -> PResult<()> {
        let start = self.pos();
        self.i += 1;
        let name_start = self.i;
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_')
        {
            self.i += 1;
        }
        let name = &self.src[name_start..self.i];
        if name.is_empty() {
            return Err(fail(start, "could not find expected directive name"));
        }
        let rest_start = self.i;
        while !self.at_eol() {
            self.i += 1;
        }
        let rest = self.src[rest_start..self.i]
            .split('#')
            .next()
            .unwrap_or_default();
        let mut words = rest.split_ascii_whitespace();
        match name {
            "YAML" => {
                if std::mem::replace(version_seen, true) {
                    return Err(fail(start, "found duplicate %YAML directive"));
                }
                if words.next() != Some("1.1") {
                    return Err(fail(start, "found incompatible YAML document"));
                }
            }
            "TAG" => {
                let (Some(handle), Some(_prefix)) = (words.next(), words.next()) else {
                    return Err(fail(
                        start,
                        "did not find expected whitespace or line break in a %TAG directive",
                    ));
                };
                self.tag_handles.push(handle.to_string());
            }
            _ => return Err(fail(start, "found unknown directive name")),
        }
        Ok(())
    }

    /// Skips what follows a `...` up to the next `---` line: Kustomize
    /// splits a resource file at `---` lines and reads one document from
    /// each part, so the rest of a part after `...` is never read (but a
    /// directive's name just after it is, as go-yaml scans the token that
    /// follows a document).
    fn skip_to_document_start(&mut self) -> PResult<()> {
        if !self.skip_to_content()? || (self.at_doc_marker() && self.b[self.i] == b'-') {
            return Ok(());
        }
        if self.peek() == Some(b'%') && self.i == self.line_start {
            let name = &self.b[self.i + 1..];
            let known = [&b"YAML"[..], b"TAG"].iter().any(|n| {
                name.starts_with(n)
                    && matches!(name.get(n.len()), None | Some(b' ' | b'\t' | b'\n'))
            });
            if !known {
                return self.err("found unknown directive name");
            }
        }
        while let Some(eol) = self.b[self.i..].iter().position(|&c| c == b'\n') {
            self.i += eol;
            self.newline();
            if self.at_doc_marker() && self.b[self.i] == b'-' {
                return Ok(());
            }
        }
        self.i = self.b.len();
        Ok(())
    }

    // ----------------------------------------------------------- block nodes

    /// Parses the node that follows an indicator (or starts a document).
    /// Content on a later line must be indented deeper than `parent`.
    /// Returns `None` when the node is empty.
    fn node(&mut self, parent: i32, ctx: Ctx) -> PResult<Option<Node>> {
        let blanks = self.i;
        self.skip_inline_ws();
        // After `-`, `?` or an explicit key's `:`, go-yaml takes no tab (one
        // space, the usual, needs no look).
        if ctx == Ctx::SeqItem && (self.i != blanks + 1 || self.b[blanks] != b' ') {
            if let Some(tab) = self.b[blanks..self.i].iter().position(|&c| c == b'\t') {
                return Err(fail(
                    self.pos_at(blanks + tab),
                    "found character that cannot start any token",
                ));
            }
        }
        let mut line_comment = None;
        let mut same_line = true;
        if self.peek() == Some(b'#') || self.at_eol() {
            line_comment = self.take_comment();
            if !self.skip_to_content()? || self.at_doc_marker() {
                return Ok(None);
            }
            let col = self.col_bytes();
            let indentless_seq = ctx == Ctx::MapValue && col == parent && self.at_seq_entry();
            if col <= parent && !indentless_seq {
                if let Some(c) = line_comment {
                    self.comments.insert(0, c);
                }
                return Ok(None);
            }
            same_line = false;
        } else if ctx == Ctx::Doc && self.at_doc_marker() {
            return Ok(None);
        }
        let head = if same_line {
            None
        } else {
            self.take_head_comments()
        };

        // Properties: anchor and tag, in either order.
        let props_col = self.col_bytes();
        let (mut anchor, mut tag) = match self.peek() {
            Some(b'&' | b'!') => self.properties(false)?,
            _ => (None, None),
        };
        let mut props_inline = anchor.is_some() || tag.is_some();
        if props_inline && (self.at_eol() || self.peek() == Some(b'#')) {
            props_inline = false;
            // Properties alone on their line: the content follows, indented.
            let c = self.take_comment();
            line_comment = line_comment.or(c);
            let has_content = self.skip_to_content()? && !self.at_doc_marker();
            let col = self.col_bytes();
            let indentless_seq = ctx == Ctx::MapValue && col == parent && self.at_seq_entry();
            if !has_content || (col <= parent && !indentless_seq) {
                let mut n = Node::plain("");
                n.set_pos(self.pos());
                if let Some(t) = tag {
                    // Kept as written, `!` alone included.
                    n.set_tag_text(&t);
                    check_tagged_scalar("", n.tag()).map_err(|m| tag_error(n.pos(), &m))?;
                }
                if let Some(a) = anchor {
                    self.register_anchor(a, &n);
                }
                return Ok(Some(n));
            }
            same_line = false;
        }

        self.enter()?;
        let mut inline_props = props_inline.then(|| Props {
            anchor: anchor.take(),
            tag: tag.take(),
            col: props_col,
        });
        let mut node = self.node_content(parent, ctx, same_line, inline_props.as_mut())?;
        self.depth -= 1;
        if let Some(p) = inline_props {
            (anchor, tag) = (p.anchor, p.tag);
        }
        if let Some(t) = tag {
            apply_tag(&mut node, t)?;
        }
        if let Some(h) = head {
            Self::prepend_head_comments(&mut node, h);
        }
        if line_comment.is_some() && node.extras.as_ref().is_none_or(|e| e.line.is_none()) {
            Self::set_line_comment(&mut node, line_comment);
        }
        if let Some(a) = anchor {
            self.register_anchor(a, &node);
        }
        Ok(Some(node))
    }

    /// Fails with `message` where a key without `?` that starts at
    /// `key_start` has its `:` (here) more than 1,024 characters after its
    /// start: go-yaml's limit for such (simple) keys.
    #[inline]
    fn check_simple_key(&self, key_start: usize, message: &str) -> PResult<()> {
        if self.i - key_start > MAX_SIMPLE_KEY {
            return self.check_long_simple_key(key_start, message);
        }
        Ok(())
    }

    /// [`Parser::check_simple_key`] for a key of more than 1,024 bytes.
    #[cold]
    fn check_long_simple_key(&self, key_start: usize, message: &str) -> PResult<()> {
        if self.src[key_start..self.i].chars().count() > MAX_SIMPLE_KEY {
            let at = Pos {
                line: self.line,
                col: self.pos_at(key_start).col,
            };
            return Err(fail(at, message));
        }
        Ok(())
    }

    /// [`Parser::check_simple_key`] in a flow collection, where a key
    /// without `?` must also end on the line it starts on.
    #[inline]
    fn check_flow_key(&self, key_start: usize, key_line: u32, message: &str) -> PResult<()> {
        if self.line != key_line {
            return self.err(message);
        }
        self.check_simple_key(key_start, message)
    }

    /// Gives a mapping's first key the properties written before it.
    #[cold]
    fn give_props(&mut self, key: &mut Node, props: &mut Props) -> PResult<()> {
        if let Some(t) = props.tag.take() {
            apply_tag(key, t)?;
        }
        if let Some(a) = props.anchor.take() {
            self.register_anchor(a, key);
        }
        Ok(())
    }

    fn at_seq_entry(&self) -> bool {
        self.peek() == Some(b'-') && self.blank_at(1)
    }

    /// Reads a node's content. `props` are properties written before it on
    /// its line: a mapping that starts there starts at their column, and
    /// they belong to its first key (taken from `props`).
    fn node_content(
        &mut self,
        parent: i32,
        ctx: Ctx,
        same_line: bool,
        props: Option<&mut Props>,
    ) -> PResult<Node> {
        let col = props.as_ref().map_or_else(|| self.col_bytes(), |p| p.col);
        let inline_value = same_line && ctx == Ctx::MapValue;
        let start = self.pos();
        let key_start = self.i;
        // A first key too long to be a simple key leaves its `:` out of place.
        const FIRST_KEY: &str = "mapping values are not allowed in this context";
        match self.peek() {
            Some(b'-') if self.blank_at(1) => {
                if inline_value {
                    return self.err("block sequence entries are not allowed in this context");
                }
                self.block_seq(col)
            }
            Some(b'?') if self.blank_at(1) => {
                if inline_value {
                    return self.err("mapping keys are not allowed in this context");
                }
                self.block_map(col, None)
            }
            Some(b'|') | Some(b'>') => self.block_scalar(parent),
            Some(b'[') | Some(b'{') => {
                let node = self.flow_node()?;
                self.skip_inline_ws();
                if self.peek() == Some(b':') && self.blank_at(1) {
                    return self.err("a flow collection cannot be a mapping key here");
                }
                let comment = self.take_comment();
                let mut node = node;
                // Where a flow collection starts in block context, for the
                // preserving writer (the collections inside it are flow
                // because it is).
                node.set_flow(true);
                Self::set_line_comment(&mut node, comment);
                Ok(node)
            }
            Some(b'*') => {
                let node = self.alias()?;
                self.skip_inline_ws();
                if self.peek() == Some(b':') && self.blank_at(1) {
                    if inline_value {
                        return self.err("mapping values are not allowed in this context");
                    }
                    self.check_simple_key(key_start, FIRST_KEY)?;
                    let mut key = node;
                    if let Some(p) = props {
                        self.give_props(&mut key, p)?;
                    }
                    return self.block_map(col, Some(key));
                }
                Ok(node)
            }
            Some(b'"') | Some(b'\'') => {
                let node = self.quoted()?;
                self.skip_inline_ws();
                if self.peek() == Some(b':') && self.blank_at(1) {
                    if inline_value || node.pos().line != self.line {
                        return self.err("mapping values are not allowed in this context");
                    }
                    self.check_simple_key(key_start, FIRST_KEY)?;
                    let mut key = node;
                    if let Some(p) = props {
                        self.give_props(&mut key, p)?;
                    }
                    return self.block_map(col, Some(key));
                }
                let comment = self.take_comment();
                if !self.at_eol() {
                    return self
                        .err("did not find expected key or end of line after a quoted scalar");
                }
                let mut node = node;
                Self::set_line_comment(&mut node, comment);
                Ok(node)
            }
            Some(c) if matches!(c, b'@' | b'`') || (c == b'%' && col > 0) => self.err(format!(
                "found character '{}' that cannot start any token",
                c as char
            )),
            Some(b'%') if col == 0 => {
                // In a document of its own where documents are split apart.
                self.directive(&mut false)?;
                self.err("found a directive inside a document")
            }
            Some(b',' | b']' | b'}') => self.err("did not find expected node content"),
            _ => {
                let (text_end, is_key) = self.scan_plain_line(false);
                if is_key {
                    if inline_value {
                        return self.err("mapping values are not allowed in this context");
                    }
                    let mut key = self.plain_key(text_end, start);
                    self.check_simple_key(key_start, FIRST_KEY)?;
                    if let Some(p) = props {
                        self.give_props(&mut key, p)?;
                    }
                    return self.block_map(col, Some(key));
                }
                self.plain_multiline(parent, text_end, start)
            }
        }
    }

    /// Scans a plain scalar on the current line from `self.i`. Returns the end
    /// of its text (trailing blanks trimmed) and whether it is a mapping key
    /// (followed by `: ` or `:` at the end of the line).
    fn scan_plain_line(&self, flow: bool) -> (usize, bool) {
        if !flow {
            return self.scan_plain_block_line();
        }
        let b = self.b;
        let mut j = self.i;
        let mut end = j;
        while j < b.len() {
            let c = b[j];
            match c {
                b'\n' => break,
                b':' => {
                    let next = b.get(j + 1).copied();
                    // Only a blank ends the scalar here: go-yaml reads
                    // `[a:]` and `{a:1}` as the plain scalars `a:` and `a:1`.
                    if matches!(
                        next,
                        None | Some(b' ') | Some(b'\t') | Some(b'\n') | Some(b'\r')
                    ) {
                        return (end, true);
                    }
                    j += 1;
                    end = j;
                }
                b'#' if j > self.i && is_ws(b[j - 1]) => break,
                b' ' | b'\t' => j += 1,
                // go-yaml ends a plain scalar at any `?` in a flow
                // collection, where `?` always starts a key.
                _ if flow && (is_flow_indicator(c) || c == b'?') => break,
                _ => {
                    j += 1;
                    end = j;
                }
            }
        }
        (end, false)
    }

    /// [`Parser::scan_plain_line`] outside flow collections, going from one
    /// byte that may end the scalar (`:`, `#`, a line break) to the next.
    fn scan_plain_block_line(&self) -> (usize, bool) {
        let b = self.b;
        let start = self.i;
        let mut j = start;
        let stop = loop {
            let Some(k) = next_plain_end(b, j) else {
                break b.len();
            };
            match b[k] {
                b'\n' => break k,
                b':' => {
                    if matches!(b.get(k + 1), None | Some(b' ' | b'\t' | b'\n')) {
                        return (trim_blanks_end(b, start, k), true);
                    }
                }
                // `#` starts a comment only after a blank.
                _ if k > start && is_ws(b[k - 1]) => break k,
                _ => {}
            }
            j = k + 1;
        };
        (trim_blanks_end(b, start, stop), false)
    }

    fn plain_key(&mut self, end: usize, start: Pos) -> Node {
        let text = CompactString::from(&self.src[self.i..end]);
        self.i = end;
        self.skip_inline_ws();
        let mut n = Node::plain(text);
        n.set_pos(start);
        n
    }

    fn plain_multiline(&mut self, parent: i32, first_end: usize, start: Pos) -> PResult<Node> {
        let mut text = CompactString::from(&self.src[self.i..first_end]);
        self.i = first_end;
        self.skip_inline_ws();
        let mut comment = None;
        if self.peek() == Some(b'#') {
            comment = self.take_comment();
        } else {
            // Continuation lines, indented deeper than the parent.
            loop {
                let save = (self.i, self.line, self.line_start);
                let mut blank_lines = 0;
                if !self.at_eol() {
                    break;
                }
                let mut found = false;
                while self.peek() == Some(b'\n') {
                    self.newline();
                    let mut k = self.i;
                    while k < self.b.len() && is_ws(self.b[k]) {
                        k += 1;
                    }
                    if k < self.b.len() && self.b[k] != b'\n' {
                        let indent =
                            self.b[self.i..k].iter().take_while(|&&c| c == b' ').count() as i32;
                        let c = self.b[k];
                        if indent > parent && c != b'#' && !(indent == 0 && self.at_doc_marker()) {
                            self.i = k;
                            found = true;
                        }
                        break;
                    }
                    blank_lines += 1;
                    self.i = k;
                }
                if !found {
                    (self.i, self.line, self.line_start) = save;
                    break;
                }
                let (end, is_key) = self.scan_plain_line(false);
                if is_key {
                    return self.err("mapping values are not allowed in this context");
                }
                if !self.special_breaks.is_empty() {
                    self.join_lines(&mut text, save.0, self.i, blank_lines + 1);
                } else if blank_lines == 0 {
                    text.push(' ');
                } else {
                    text.extend(std::iter::repeat_n('\n', blank_lines));
                }
                text.push_str(&self.src[self.i..end]);
                self.i = end;
                self.skip_inline_ws();
                if self.peek() == Some(b'#') {
                    comment = self.take_comment();
                    break;
                }
            }
        }
        let mut n = Node::plain(text);
        n.set_pos(start);
        Self::set_line_comment(&mut n, comment);
        Ok(n)
    }

    fn block_seq(&mut self, indent: i32) -> PResult<Node> {
        let first = self.items.len();
        let start = self.pos();
        loop {
            let head = self.take_head_comments();
            self.i += 1; // '-'
            let item = self.node(indent, Ctx::SeqItem)?;
            let mut item = item.unwrap_or_else(|| {
                let mut n = Node::plain("");
                n.set_pos(self.pos());
                n
            });
            if let Some(h) = head {
                Self::prepend_head_comments(&mut item, h);
            }
            self.items.push(item);
            if !self.skip_to_content()? {
                break;
            }
            let col = self.col_bytes();
            if col < indent || self.at_doc_marker() {
                break;
            }
            if col == indent {
                if self.at_seq_entry() {
                    continue;
                }
                break;
            }
            return self.err("did not find expected '-' indicator");
        }
        let mut n = Node::new(Value::Seq(self.items.drain(first..).collect()));
        n.set_pos(start);
        Ok(n)
    }

    fn block_map(&mut self, indent: i32, first_key: Option<Node>) -> PResult<Node> {
        let start = first_key.as_ref().map_or_else(|| self.pos(), |k| k.pos());
        let first = self.entries.len();
        let mut first_key = first_key;
        loop {
            // After `? key`, the value may be a compact sequence or mapping
            // (`: - a`, `: a: 1`), as after `- `; or missing.
            let explicit = first_key.is_none() && self.peek() == Some(b'?') && self.blank_at(1);
            let key_start = self.i;
            let mut key = match first_key.take() {
                Some(k) => k,
                None => self.block_key()?,
            };
            if !explicit && key_start != self.i {
                // Nor may it span lines.
                if key.pos().line != self.line {
                    return self.err("could not find expected ':'");
                }
                self.check_simple_key(key_start, "could not find expected ':'")?;
            }
            if !key.has_comments() {
                if let Some(h) = self.take_head_comments() {
                    Self::prepend_head_comments(&mut key, h);
                }
            }
            // At ':'.
            let value = if self.peek() == Some(b':') {
                self.i += 1;
                let ctx = if explicit {
                    Ctx::SeqItem
                } else {
                    Ctx::MapValue
                };
                self.node(indent, ctx)?
            } else if explicit && (self.at_eol() || self.col_bytes() <= indent) {
                None
            } else {
                return self.err("could not find expected ':'");
            };
            let value = value.unwrap_or_else(|| {
                let mut n = Node::plain("");
                n.set_pos(key.pos());
                n
            });
            let existing = match &key.value {
                Value::Scalar(k) if k.text != "<<" => self.earlier_key(first, &k.text),
                _ => None,
            };
            match existing {
                Some(i) if self.limits.duplicate_keys == DuplicateKeys::LastWins => {
                    self.entries[i].1 = value
                }
                Some(_) if self.limits.duplicate_keys == DuplicateKeys::FirstWins => {}
                Some(i) => {
                    return Err(duplicate_key(&key, &self.entries[i].0));
                }
                None => self.entries.push((key, value)),
            }
            if !self.skip_to_content()? {
                break;
            }
            let col = self.col_bytes();
            if col < indent || self.at_doc_marker() {
                break;
            }
            if col > indent {
                return self.err("mapping values are not allowed in this context");
            }
            if self.at_seq_entry() {
                // An indentless sequence cannot follow a completed value.
                return self.err("did not find expected key");
            }
        }
        let mut n = Node::new(Value::Map(self.finish_map(first)?));
        n.set_pos(start);
        Ok(n)
    }

    /// Where key `text` already is among the entries of the mapping being
    /// read (those from `first` on).
    fn earlier_key(&mut self, first: usize, text: &str) -> Option<usize> {
        let current = &self.entries[first..];
        if current.len() <= SCAN_KEYS_UP_TO {
            return current
                .iter()
                .position(|(p, _)| matches!(&p.value, Value::Scalar(pk) if pk.text == text))
                .map(|i| first + i);
        }
        if self.key_indexes.last().is_none_or(|x| x.first != first) {
            let mut positions = HashMap::with_capacity(current.len() * 2);
            for (i, (k, _)) in current.iter().enumerate() {
                if let Value::Scalar(pk) = &k.value {
                    positions.entry(pk.text.clone()).or_insert(first + i);
                }
            }
            self.key_indexes.push(KeyIndex { first, positions });
        }
        let next = self.entries.len();
        let index = self.key_indexes.last_mut()?;
        let found = index.positions.get(text).copied();
        if found.is_none() {
            // The caller adds the entry next.
            index.positions.insert(text.into(), next);
        }
        found
    }

    /// Moves the entries of the mapping being read (from `first` on) into
    /// their own exactly sized list, with `<<` merge keys applied.
    fn finish_map(&mut self, first: usize) -> PResult<ThinVec<(Node, Node)>> {
        if self.key_indexes.last().is_some_and(|x| x.first == first) {
            self.key_indexes.pop();
        }
        let mut entries: ThinVec<(Node, Node)> = self.entries.drain(first..).collect();
        if entries.iter().any(|(k, _)| is_merge_text(k)) {
            let resource = self.limits.duplicate_keys == DuplicateKeys::Error;
            apply_merge_keys(&mut entries, resource)?;
        }
        Ok(entries)
    }

    /// Reads a key at the start of a mapping entry and stops at its `:`.
    fn block_key(&mut self) -> PResult<Node> {
        let start = self.pos();
        match self.peek() {
            Some(b'[' | b'{') => self.err("a flow collection cannot be a mapping key here"),
            Some(b'?') if self.blank_at(1) => {
                self.i += 1;
                let key = self.node(self.col_bytes() - 1, Ctx::SeqItem)?;
                let key = key.unwrap_or_else(|| Node::plain(""));
                if !self.skip_to_content()? || self.peek() != Some(b':') {
                    // `? key` with no value.
                    return Ok(key);
                }
                Ok(key)
            }
            Some(b'"') | Some(b'\'') => {
                let k = self.quoted()?;
                self.skip_inline_ws();
                Ok(k)
            }
            Some(b'*') => {
                let k = self.alias()?;
                self.skip_inline_ws();
                Ok(k)
            }
            Some(b'&') | Some(b'!') => {
                let (anchor, tag) = self.properties(false)?;
                let mut k = self.block_key()?;
                if let Some(t) = tag {
                    apply_tag(&mut k, t)?;
                }
                if let Some(a) = anchor {
                    self.register_anchor(a, &k);
                }
                Ok(k)
            }
            _ => {
                let (end, is_key) = self.scan_plain_line(false);
                if !is_key {
                    return self.err("could not find expected ':'");
                }
                Ok(self.plain_key(end, start))
            }
        }
    }

    // ----------------------------------------------------------- scalars

    fn block_scalar(&mut self, parent: i32) -> PResult<Node> {
        let start = self.pos();
        let literal = self.b[self.i] == b'|';
        self.i += 1;
        let mut chomp = 0i8; // -1 strip, 0 clip, 1 keep
        let mut explicit_indent = None;
        for _ in 0..2 {
            match self.peek() {
                Some(b'-') => {
                    chomp = -1;
                    self.i += 1;
                }
                Some(b'+') => {
                    chomp = 1;
                    self.i += 1;
                }
                Some(c @ b'1'..=b'9') => {
                    explicit_indent = Some((c - b'0') as i32);
                    self.i += 1;
                }
                _ => {}
            }
        }
        let comment = self.take_comment();
        if !self.at_eol() {
            return self
                .err("did not find expected comment or line break after a block scalar header");
        }
        let base = parent.max(0);
        let mut indent = explicit_indent.map(|d| if parent >= 0 { base + d } else { d });
        // Collect lines.
        let mut lines: Vec<&'a str> = Vec::new(); // content lines ("" marks an empty line)
                                                  // Where each line ends, when some line breaks are not line feeds.
        let mut line_ends: Vec<usize> = Vec::new();
        let track_breaks = !self.special_breaks.is_empty();
        let mut max_blank_indent = 0;
        let mut end_pos = self.i;
        let mut end_line = (self.line, self.line_start);
        while self.peek() == Some(b'\n') {
            let line_begin = self.i + 1;
            if line_begin == self.b.len() {
                // The final line break of the stream starts no further line.
                break;
            }
            let mut k = line_begin;
            while k < self.b.len() && self.b[k] == b' ' {
                k += 1;
            }
            let spaces = (k - line_begin) as i32;
            // A tab where the indentation is not yet known or not yet
            // reached (on the line after the scalar too).
            if self.b.get(k) == Some(&b'\t') && indent.is_none_or(|n| spaces < n) {
                return Err(fail(
                    Pos {
                        line: self.line + 1,
                        col: spaces as u32 + 1,
                    },
                    "found a tab character where an indentation space is expected",
                ));
            }
            let rest_blank = k >= self.b.len() || self.b[k] == b'\n';
            if k >= self.b.len() && (indent.is_none_or(|n| spaces <= n)) {
                // Blanks that end the stream without a line break add no
                // line to the scalar.
                break;
            }
            let ind = match indent {
                Some(n) => n,
                None if rest_blank => {
                    max_blank_indent = max_blank_indent.max(spaces);
                    self.newline();
                    self.i = k;
                    lines.push("");
                    if track_breaks {
                        line_ends.push(k);
                    }
                    continue;
                }
                None => {
                    if spaces <= parent {
                        break;
                    }
                    let n = spaces.max(max_blank_indent).max(parent + 1);
                    indent = Some(n);
                    n
                }
            };
            if rest_blank {
                self.newline();
                self.i = k;
                let extra = if spaces > ind {
                    &self.src[line_begin + ind as usize..k]
                } else {
                    ""
                };
                if !extra.is_empty() {
                    // Spaces past the indentation are content.
                    end_pos = k;
                    end_line = (self.line, self.line_start);
                }
                lines.push(extra);
                if track_breaks {
                    line_ends.push(k);
                }
                continue;
            }
            if spaces < ind {
                break;
            }
            self.newline();
            let content_start = line_begin + ind as usize;
            let mut e = content_start;
            while e < self.b.len() && self.b[e] != b'\n' {
                e += 1;
            }
            self.i = e;
            lines.push(&self.src[content_start..e]);
            if track_breaks {
                line_ends.push(e);
            }
            end_pos = e;
            end_line = (self.line, self.line_start);
        }
        // Trailing empty lines belong to chomping; rewind past them so the
        // next token starts on its own line.
        let content_count = lines
            .iter()
            .rposition(|l| !l.is_empty())
            .map_or(0, |p| p + 1);
        // The stream's end right after the last content line: that line
        // has no line break, so neither clipping nor keeping adds one.
        let unterminated = content_count > 0 && end_pos == self.b.len();
        // Kept trailing empty lines with only comments after them to the
        // end of a resource's document gain one more line break in
        // Kustomize (go-yaml v3 writes a blank line before those comments
        // and reads it back into the scalar).
        let extra_break = chomp > 0
            && lines.len() > content_count
            && self.limits.duplicate_keys == DuplicateKeys::Error
            && self.only_comments_follow(self.i);
        if content_count > 0 {
            self.i = end_pos;
            (self.line, self.line_start) = end_line;
        }
        let body = &lines[..content_count];
        // The line break after each line: a line feed but where the source
        // has a LINE or PARAGRAPH SEPARATOR.
        let breaks: Vec<char> = line_ends.iter().map(|&e| self.break_char(e)).collect();
        let break_after = |n: usize| breaks.get(n).copied().unwrap_or('\n');
        let mut text = CompactString::default();
        if literal {
            for (n, l) in body.iter().enumerate() {
                if n > 0 {
                    text.push(break_after(n - 1));
                }
                text.push_str(l);
            }
        } else {
            fold_lines(body, &break_after, &mut text);
        }
        if chomp >= 0 && content_count > 0 && !unterminated {
            text.push(break_after(content_count - 1));
        }
        if chomp > 0 {
            text.extend((content_count..lines.len()).map(break_after));
        }
        if extra_break {
            text.push('\n');
        }
        if text.starts_with('\t') && self.limits.duplicate_keys == DuplicateKeys::Error {
            // Kustomize writes a resource's block scalar again with go-yaml
            // v3, which gives a leading tab no indentation indicator, and
            // fails to read it back.
            return Err(fail(
                start,
                "found a tab character where an indentation space is expected",
            ));
        }
        let style = if literal {
            ScalarStyle::Literal
        } else {
            ScalarStyle::Folded
        };
        let mut n = Node::scalar(text, style);
        n.set_pos(start);
        Self::set_line_comment(&mut n, comment);
        Ok(n)
    }

    fn quoted(&mut self) -> PResult<Node> {
        let start = self.pos();
        let q = self.b[self.i];
        self.i += 1;
        let mut text = CompactString::default();
        loop {
            let Some(c) = self.peek() else {
                return Err(fail(
                    start,
                    "found unexpected end of stream while scanning a quoted scalar",
                ));
            };
            match c {
                b'\'' if q == b'\'' => {
                    if self.at(1) == Some(b'\'') {
                        text.push('\'');
                        self.i += 2;
                    } else {
                        self.i += 1;
                        break;
                    }
                }
                b'"' if q == b'"' => {
                    self.i += 1;
                    break;
                }
                b'\\' if q == b'"' => {
                    if self.at(1) == Some(b'\n') {
                        // Escaped line break: join without a space.
                        self.i += 1;
                        self.newline();
                        self.skip_inline_ws();
                        continue;
                    }
                    self.escape(&mut text)?;
                }
                b' ' | b'\t' | b'\n' => {
                    // Whitespace: fold if a line break follows.
                    let ws_start = self.i;
                    while matches!(self.peek(), Some(b' ') | Some(b'\t')) {
                        self.i += 1;
                    }
                    if self.peek() == Some(b'\n') {
                        let first_break = self.i;
                        let mut breaks = 0;
                        while self.peek() == Some(b'\n') {
                            self.newline();
                            breaks += 1;
                            self.skip_inline_ws();
                        }
                        if self.at_doc_marker() {
                            return self.err("found unexpected document indicator while scanning a quoted scalar");
                        }
                        if !self.special_breaks.is_empty() {
                            self.join_lines(&mut text, first_break, self.i, breaks);
                        } else if breaks == 1 {
                            text.push(' ');
                        } else {
                            text.extend(std::iter::repeat_n('\n', breaks - 1));
                        }
                    } else {
                        text.push_str(&self.src[ws_start..self.i]);
                    }
                }
                _ => {
                    let run_start = self.i;
                    while let Some(c) = self.peek() {
                        let special = match c {
                            b' ' | b'\t' | b'\n' => true,
                            b'\'' => q == b'\'',
                            b'"' | b'\\' => q == b'"',
                            _ => false,
                        };
                        if special {
                            break;
                        }
                        self.i += 1;
                    }
                    text.push_str(&self.src[run_start..self.i]);
                }
            }
        }
        let style = if q == b'"' {
            ScalarStyle::DoubleQuoted
        } else {
            ScalarStyle::SingleQuoted
        };
        let mut n = Node::scalar(text, style);
        n.set_pos(start);
        Ok(n)
    }

    fn escape(&mut self, out: &mut CompactString) -> PResult<()> {
        let c = self.at(1).unwrap_or(0);
        let simple = match c {
            b'0' => Some('\0'),
            b'a' => Some('\x07'),
            b'b' => Some('\x08'),
            b't' | b'\t' => Some('\t'),
            b'n' => Some('\n'),
            b'v' => Some('\x0b'),
            b'f' => Some('\x0c'),
            b'r' => Some('\r'),
            b'e' => Some('\x1b'),
            b' ' => Some(' '),
            b'"' => Some('"'),
            // Not in YAML's list; go-yaml reads it, so Kustomize does.
            b'\'' => Some('\''),
            b'\\' => Some('\\'),
            b'N' => Some('\u{85}'),
            b'_' => Some('\u{a0}'),
            b'L' => Some('\u{2028}'),
            b'P' => Some('\u{2029}'),
            _ => None,
        };
        if let Some(ch) = simple {
            out.push(ch);
            self.i += 2;
            return Ok(());
        }
        let len = match c {
            b'x' => 2,
            b'u' => 4,
            b'U' => 8,
            _ => return self.err("found unknown escape character while parsing a quoted scalar"),
        };
        let hex = self
            .src
            .get(self.i + 2..self.i + 2 + len)
            .filter(|h| h.bytes().all(|b| b.is_ascii_hexdigit()));
        let Some(hex) = hex else {
            return self.err("did not find expected hexadecimal number in an escape");
        };
        let code = u32::from_str_radix(hex, 16).unwrap_or(0xFFFF_FFFF);
        let Some(ch) = char::from_u32(code) else {
            return self.err("found invalid Unicode character escape code");
        };
        out.push(ch);
        self.i += 2 + len;
        Ok(())
    }

    // ----------------------------------------------------------- flow nodes

    fn skip_flow_ws(&mut self) -> PResult<()> {
        loop {
            match self.peek() {
                Some(b' ') | Some(b'\t') => self.i += 1,
                Some(b'\n') => self.newline(),
                // At a token's start `#` begins a comment, blank before or not.
                Some(b'#') => {
                    if let Some(c) = self.take_comment() {
                        self.comments.push(c);
                    }
                }
                None => {
                    return self.err(
                        "did not find expected ',' or closing bracket before the end of the stream",
                    )
                }
                _ => return Ok(()),
            }
        }
    }

    fn flow_node(&mut self) -> PResult<Node> {
        self.skip_flow_ws()?;
        let (anchor, tag) = match self.peek() {
            Some(b'&' | b'!') => self.properties(true)?,
            _ => (None, None),
        };
        self.enter()?;
        let start = self.pos();
        let mut node = match self.peek() {
            Some(b'[') => {
                self.i += 1;
                let first = self.items.len();
                loop {
                    self.skip_flow_ws()?;
                    if self.peek() == Some(b']') {
                        self.i += 1;
                        break;
                    }
                    // `? key` makes a single-pair mapping, with or without `:`
                    // (in a flow collection `?` needs no blank after it).
                    let explicit = self.peek() == Some(b'?');
                    if explicit {
                        self.i += 1;
                        self.skip_flow_ws()?;
                    }
                    let (key_start, key_line) = (self.i, self.line);
                    let item = self.flow_node()?;
                    self.skip_flow_ws()?;
                    let item = if self.peek() == Some(b':') {
                        if !explicit {
                            self.check_flow_key(
                                key_start,
                                key_line,
                                "did not find expected ',' or ']'",
                            )?;
                        }
                        self.i += 1;
                        self.skip_flow_ws()?;
                        let value = if matches!(self.peek(), Some(b',') | Some(b']')) {
                            empty_flow_value()
                        } else {
                            self.flow_node()?
                        };
                        self.skip_flow_ws()?;
                        self.single_pair(item, value)?
                    } else if explicit {
                        self.single_pair(item, empty_flow_value())?
                    } else {
                        item
                    };
                    self.items.push(item);
                    match self.peek() {
                        Some(b',') => self.i += 1,
                        Some(b']') => {
                            self.i += 1;
                            break;
                        }
                        _ => return self.err("did not find expected ',' or ']'"),
                    }
                }
                Node::new(Value::Seq(self.items.drain(first..).collect()))
            }
            Some(b'{') => {
                self.i += 1;
                let first = self.entries.len();
                loop {
                    self.skip_flow_ws()?;
                    if self.peek() == Some(b'}') {
                        self.i += 1;
                        break;
                    }
                    let explicit = self.peek() == Some(b'?');
                    if explicit {
                        self.i += 1;
                        self.skip_flow_ws()?;
                    }
                    let (key_start, key_line) = (self.i, self.line);
                    let key = self.flow_node()?;
                    self.skip_flow_ws()?;
                    let value = if self.peek() == Some(b':') {
                        if !explicit {
                            self.check_flow_key(
                                key_start,
                                key_line,
                                "did not find expected ',' or '}'",
                            )?;
                        }
                        self.i += 1;
                        self.skip_flow_ws()?;
                        if matches!(self.peek(), Some(b',') | Some(b'}')) {
                            empty_flow_value()
                        } else {
                            self.flow_node()?
                        }
                    } else {
                        empty_flow_value()
                    };
                    let earlier = match &key.value {
                        Value::Scalar(k) => self.earlier_key(first, &k.text),
                        _ => None,
                    };
                    match (earlier, self.limits.duplicate_keys) {
                        (Some(i), DuplicateKeys::LastWins) => {
                            self.entries[i].1 = value;
                        }
                        (Some(_), DuplicateKeys::FirstWins) => {}
                        (Some(i), DuplicateKeys::Error) => {
                            return Err(duplicate_key(&key, &self.entries[i].0));
                        }
                        (None, _) => self.entries.push((key, value)),
                    }
                    self.skip_flow_ws()?;
                    match self.peek() {
                        Some(b',') => self.i += 1,
                        Some(b'}') => {
                            self.i += 1;
                            break;
                        }
                        _ => return self.err("did not find expected ',' or '}'"),
                    }
                }
                Node::new(Value::Map(self.finish_map(first)?))
            }
            Some(b'"') | Some(b'\'') => self.quoted()?,
            Some(b'*') => self.alias()?,
            Some(b']') | Some(b'}') | Some(b',') => {
                // Empty node (e.g. `[a, , b]` is an error in YAML; `{a: }` handled above).
                return self.err(format!(
                    "did not find expected node content, found '{}'",
                    self.b[self.i] as char
                ));
            }
            Some(c @ (b'@' | b'`' | b'%' | b'|' | b'>')) => {
                return self.err(format!(
                    "found character '{}' that cannot start any token",
                    c as char
                ));
            }
            // In a flow collection `?` and `:` are always indicators, and
            // `-` is one before a blank.
            Some(b'?' | b':') => return self.err("did not find expected node content"),
            Some(b'-') if matches!(self.at(1), Some(b' ' | b'\t')) => {
                return self.err("did not find expected node content")
            }
            _ => self.flow_plain()?,
        };
        self.depth -= 1;
        node.set_pos(start);
        if let Some(t) = tag {
            apply_tag(&mut node, t)?;
        }
        if let Some(a) = anchor {
            self.register_anchor(a, &node);
        }
        Ok(node)
    }

    /// A flow sequence's single-pair mapping (`[a: b]`), merge keys applied.
    fn single_pair(&self, key: Node, value: Node) -> PResult<Node> {
        let mut entries: ThinVec<(Node, Node)> = ThinVec::with_capacity(1);
        entries.push((key, value));
        if is_merge_text(&entries[0].0) {
            let resource = self.limits.duplicate_keys == DuplicateKeys::Error;
            apply_merge_keys(&mut entries, resource)?;
        }
        Ok(Node::new(Value::Map(entries)))
    }

    fn flow_plain(&mut self) -> PResult<Node> {
        let start = self.pos();
        let mut text = CompactString::default();
        let mut pending_breaks = 0usize;
        let mut breaks_from = 0;
        loop {
            let (end, _) = self.scan_plain_line(true);
            if end == self.i {
                break;
            }
            if !text.is_empty() {
                if !self.special_breaks.is_empty() {
                    self.join_lines(&mut text, breaks_from, self.i, pending_breaks);
                } else if pending_breaks <= 1 {
                    text.push(' ');
                } else {
                    text.extend(std::iter::repeat_n('\n', pending_breaks - 1));
                }
            }
            text.push_str(&self.src[self.i..end]);
            self.i = end;
            self.skip_inline_ws();
            if self.peek() != Some(b'\n') {
                break;
            }
            // The scalar may continue on the next line.
            let save = (self.i, self.line, self.line_start);
            breaks_from = self.i;
            pending_breaks = 0;
            while self.peek() == Some(b'\n') {
                self.newline();
                pending_breaks += 1;
                self.skip_inline_ws();
            }
            let c = self.peek();
            let continues = c.is_some_and(|c| {
                !is_flow_indicator(c) && c != b'#' && c != b'?' && !(c == b':' && self.blank_at(1))
            });
            if !continues {
                (self.i, self.line, self.line_start) = save;
                break;
            }
        }
        if text.is_empty() {
            return self.err("did not find expected node content");
        }
        let mut n = Node::plain(text);
        n.set_pos(start);
        Ok(n)
    }

    // ----------------------------------------------------------- anchors and tags

    fn name_after_indicator(&mut self) -> PResult<String> {
        self.i += 1;
        let start = self.i;
        // go-yaml's names are letters, digits, `_` and `-`, ended by a
        // blank or an indicator that may follow them.
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'-')
        {
            self.i += 1;
        }
        let ended = matches!(
            self.peek(),
            None | Some(
                b' ' | b'\t' | b'\n' | b'?' | b':' | b',' | b']' | b'}' | b'%' | b'@' | b'`'
            )
        );
        if self.i == start || !ended {
            return self.err(
                "did not find expected alphabetic or numeric character in an anchor or alias",
            );
        }
        Ok(self.src[start..self.i].to_string())
    }

    /// Reads a node's properties, an anchor and a tag in either order (at
    /// most one of each), and the blanks after them.
    fn properties(&mut self, flow: bool) -> PResult<(Option<String>, Option<String>)> {
        let mut anchor = None;
        let mut tag = None;
        loop {
            match self.peek() {
                Some(b'&') if anchor.is_none() => anchor = Some(self.name_after_indicator()?),
                Some(b'!') if tag.is_none() => tag = Some(self.tag()?),
                Some(b'&' | b'!') => return self.err("did not find expected key"),
                _ => break,
            }
            if flow {
                self.skip_flow_ws()?;
            } else {
                self.skip_inline_ws();
            }
        }
        if (anchor.is_some() || tag.is_some()) && self.peek() == Some(b'*') {
            // An alias takes no anchor or tag of its own.
            return self.err("did not find expected key");
        }
        Ok((anchor, tag))
    }

    fn tag(&mut self) -> PResult<String> {
        let start = self.i;
        if self.at(1) == Some(b'<') {
            loop {
                match self.peek() {
                    Some(b'>') => {
                        self.i += 1;
                        break;
                    }
                    Some(c) if !is_ws(c) && c != b'\n' => self.i += 1,
                    _ => return self.err("did not find expected tag URI"),
                }
            }
        } else {
            while let Some(c) = self.peek() {
                if is_ws(c) || c == b'\n' || (c != b'!' && is_flow_indicator(c)) {
                    break;
                }
                self.i += 1;
            }
        }
        let t = &self.src[start..self.i];
        if let Some(verbatim) = t.strip_prefix("!<").and_then(|v| v.strip_suffix('>')) {
            // `!<tag:yaml.org,2002:int>` is `!!int`.
            return Ok(match verbatim.strip_prefix("tag:yaml.org,2002:") {
                Some(name) => format!("!!{name}"),
                None => t.to_string(),
            });
        }
        if t == "!!" {
            return Err(fail(self.pos_at(start), "did not find expected tag URI"));
        }
        // A named handle (`!e!x`) must have been declared by a %TAG.
        let named = t[1..].find('!').filter(|_| !t.starts_with("!!"));
        if let Some(end) = named {
            let handle = &t[..end + 2];
            if !self.tag_handles.iter().any(|h| h == handle) {
                return Err(fail(self.pos_at(start), "found undefined tag handle"));
            }
        }
        Ok(t.to_string())
    }

    fn alias(&mut self) -> PResult<Node> {
        let pos = self.pos();
        let name = self.name_after_indicator()?;
        let Some(anchor) = self.anchors.get(&name) else {
            return Err(fail(pos, format!("unknown anchor '{name}' referenced")));
        };
        self.alias_nodes += anchor.size;
        if self.alias_nodes > self.limits.max_alias_nodes {
            return Err(fail(
                pos,
                format!(
                    "aliases expand to more than {} nodes; refusing excessive aliasing",
                    self.limits.max_alias_nodes
                ),
            ));
        }
        let mut node = anchor.node.clone();
        node.set_pos(pos);
        node.clear_comments();
        Ok(node)
    }

    fn register_anchor(&mut self, name: String, node: &Node) {
        let size = count_nodes(node);
        self.anchors.insert(
            name,
            Anchor {
                node: node.clone(),
                size,
            },
        );
    }
}

/// A missing value in a flow mapping (`{a: }`, `{a}`): Kustomize prints these
/// as empty strings, not nulls.
fn empty_flow_value() -> Node {
    Node::string("")
}

/// `v` is an [`empty_flow_value`]: the reader gives every other node a
/// position.
fn is_empty_flow_value(v: &Node) -> bool {
    v.pos().line == 0 && v.style() == ScalarStyle::DoubleQuoted && v.as_str() == Some("")
}

fn count_nodes(node: &Node) -> usize {
    1 + match &node.value {
        Value::Scalar(_) => 0,
        Value::Seq(items) => items.iter().map(count_nodes).sum(),
        Value::Map(entries) => entries
            .iter()
            .map(|(k, v)| count_nodes(k) + count_nodes(v))
            .sum(),
    }
}

/// Gives `node` the tag written as `tag`; a scalar's text must suit a core
/// tag (see [`check_tagged_scalar`]).
fn apply_tag(node: &mut Node, tag: String) -> PResult<()> {
    // `!` alone is the non-specific tag: the scalar stays untagged.
    if tag == "!" {
        return Ok(());
    }
    node.set_tag_text(&tag);
    if let Value::Scalar(s) = &node.value {
        check_tagged_scalar(&s.text, node.tag()).map_err(|m| tag_error(node.pos(), &m))?;
    }
    Ok(())
}

/// The reader's error for mapping key `key` written before as `earlier`.
#[cold]
#[inline(never)]
fn duplicate_key(key: &Node, earlier: &Node) -> Box<YamlError> {
    Box::new(
        YamlError::new(
            key.pos(),
            format!(
                "mapping key \"{}\" already defined at line {}",
                key.key_str().unwrap_or_default(),
                earlier.pos().line
            ),
        )
        .of_kind(YamlErrorKind::DuplicateKey),
    )
}

/// The reader's error for a scalar at `pos` whose text does not suit its
/// tag.
#[cold]
#[inline(never)]
fn tag_error(pos: Pos, e: &TagError) -> Box<YamlError> {
    Box::new(YamlError::new(pos, e.to_string()).of_kind(YamlErrorKind::TagMismatch))
}

/// Folds the lines of a `>` block scalar: single line breaks between normal
/// lines become spaces; more-indented lines and empty lines keep their breaks.
/// `break_after(n)` is the line break after line `n`: a LINE or PARAGRAPH
/// SEPARATOR is kept where a line feed would fold.
fn fold_lines(lines: &[&str], break_after: &dyn Fn(usize) -> char, out: &mut CompactString) {
    let mut prev_more = false;
    let mut empties = 0usize;
    let mut first = true;
    for (n, line) in lines.iter().enumerate() {
        if line.is_empty() {
            empties += 1;
            continue;
        }
        let more = line.starts_with(' ') || line.starts_with('\t');
        // The breaks of the empty lines just before this one.
        let trailing = (n - empties..n).map(break_after);
        if first {
            out.extend(trailing);
        } else {
            let leading = break_after(n - empties - 1);
            if !more && !prev_more && leading == '\n' {
                if empties == 0 {
                    out.push(' ');
                } else {
                    out.extend(trailing);
                }
            } else {
                out.push(leading);
                out.extend(trailing);
            }
        }
        out.push_str(line);
        prev_more = more;
        empties = 0;
        first = false;
    }
}

/// `k` is a scalar `<<` (a merge key if plain and untagged).
fn is_merge_text(k: &Node) -> bool {
    matches!(&k.value, Value::Scalar(s) if s.text == "<<")
}

/// Applies YAML merge keys (`<<: *anchor` or `<<: [*a, *b]`): keys of the
/// merged mappings are added where the mapping does not define them itself.
/// A merge key's value must be a mapping or a sequence of mappings, as in
/// go-yaml: anything else fails at the `<<` key.
///
/// In a resource (`resource`), Kustomize drops the first `<<` key when it
/// is not a merge key (quoted, or tagged `!!str`); later ones are ordinary
/// keys, which may not repeat.
#[cold]
fn apply_merge_keys(entries: &mut ThinVec<(Node, Node)>, resource: bool) -> PResult<()> {
    let Some(first) = entries.iter().position(|(k, _)| is_merge_text(k)) else {
        return Ok(());
    };
    let is_merge =
        |k: &Node| is_merge_text(k) && k.style() == ScalarStyle::Plain && k.tag() == Tag::None;
    if resource && !is_merge(&entries[first].0) {
        entries.remove(first);
        let mut earlier: Option<u32> = None;
        for (k, _) in entries
            .iter()
            .filter(|(k, _)| is_merge_text(k) && !is_merge(k))
        {
            if let Some(line) = earlier {
                return Err(Box::new(
                    YamlError::new(
                        k.pos(),
                        format!("mapping key \"<<\" already defined at line {line}"),
                    )
                    .of_kind(YamlErrorKind::DuplicateKey),
                ));
            }
            earlier = Some(k.pos().line);
        }
    }
    let mut merge_keys = entries.iter().filter(|(k, _)| is_merge(k));
    if merge_keys.next().is_none() {
        return Ok(());
    }
    if let (true, Some((k, _))) = (resource, merge_keys.next()) {
        return Err(fail(k.pos(), "duplicate merge key"));
    }
    let mergeable = |v: &Node| match &v.value {
        Value::Map(_) => true,
        Value::Seq(items) => items.iter().all(|i| matches!(i.value, Value::Map(_))),
        Value::Scalar(_) => false,
    };
    if let Some((k, _)) = entries.iter().find(|(k, v)| is_merge(k) && !mergeable(v)) {
        return Err(fail(
            k.pos(),
            "map merge requires map or sequence of maps as the value",
        ));
    }
    let mut own = Vec::new();
    let mut sources = Vec::new();
    for (k, v) in entries.drain(..) {
        if is_merge(&k) {
            match v.value {
                Value::Map(m) => sources.push(m),
                Value::Seq(items) => {
                    for item in items {
                        if let Value::Map(m) = item.value {
                            sources.push(m);
                        }
                    }
                }
                Value::Scalar(_) => {}
            }
        } else {
            own.push((k, v));
        }
    }
    let mut merged: Vec<(Node, Node)> = Vec::new();
    for source in sources {
        for (k, v) in source {
            let exists = own
                .iter()
                .chain(merged.iter())
                .any(|(o, _)| o.key_str() == k.key_str());
            if !exists {
                // A value left out in a flow mapping is null once merged.
                let v = if is_empty_flow_value(&v) {
                    Node::null()
                } else {
                    v
                };
                merged.push((k, v));
            }
        }
    }
    entries.extend(merged);
    entries.extend(own);
    Ok(())
}

#[cfg(test)]
mod tests {

    #[test]
    fn characters_yaml_does_not_allow_fail_where_they_are() {
        // Each sits past the first 64-byte block, and one straddles its end.
        let pad = "k: ".to_string() + &"x".repeat(70) + "\n";
        for bad in [
            "\u{1b}", "\u{c}", "\u{b}", "\u{0}", "\u{7f}", "\u{90}", "\u{fffe}", "\u{ffff}",
        ] {
            let text = format!("{pad}v: \"a{bad}b\"\n");
            let e = parse_stream(&text).expect_err(&format!("{bad:?} accepted"));
            assert_eq!((e.pos.line, e.pos.col), (2, 6), "{bad:?}");
            assert!(e.message.contains("control characters"), "{}", e.message);
        }
        let straddling = format!("{}\u{9f}\n", "#".repeat(63));
        assert!(parse_stream(&straddling).is_err());
        for good in [
            "\t",
            "\u{85}",
            "\u{a0}",
            "\u{feff}",
            "\u{e000}",
            "\u{1f600}",
            "é",
            "\u{2028}",
        ] {
            let text = format!("{pad}v: \"a{good}b\"\n");
            assert!(parse_stream(&text).is_ok(), "{good:?} rejected");
        }
    }

    #[test]
    fn an_escaped_slash_is_not_an_escape_go_yaml_knows() {
        assert!(parse_stream("v: \"a\\/b\"\n").is_err());
    }

    use super::{next_plain_end, parse_stream};

    /// `next_plain_end` finds what a byte-by-byte search finds, from every
    /// start, on random texts of the bytes that matter around it.
    #[test]
    fn word_scan_agrees_with_byte_scan() {
        const ALPHABET: &[u8] = b"ab: #\n\t\x80\xff09";
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for _ in 0..2_000 {
            let len = (next() % 40) as usize;
            let text: Vec<u8> = (0..len)
                .map(|_| ALPHABET[(next() % ALPHABET.len() as u64) as usize])
                .collect();
            for from in 0..=len {
                let expected = text[from..]
                    .iter()
                    .position(|&c| matches!(c, b':' | b'#' | b'\n'))
                    .map(|offset| from + offset);
                assert_eq!(
                    next_plain_end(&text, from),
                    expected,
                    "{text:?} from {from}"
                );
            }
        }
    }
}
