//! Writes nodes exactly as `kustomize build` prints resources.
//!
//! Kustomize turns each resource into JSON and back into YAML with go-yaml v2,
//! so its output has: keys in go-yaml's "natural" order, no comments, values
//! typed as go-yaml v3 read them, strings quoted only where a reader would
//! mistake them for another type or where the syntax needs it, literal block
//! scalars for multi-line strings, sequences not indented under their key, and
//! long plain and quoted strings folded after column 80. This module
//! reproduces those rules; the rule for each choice is documented beside it.

use crate::keyorder::natural_less;
use crate::node::{Node, Value};
use crate::resolve::{go_parse_int, needs_quotes, resolve_input, Resolved};

/// Fold plain and quoted scalars once a line is longer than this.
const BEST_WIDTH: usize = 80;
/// Indentation step.
const BEST_INDENT: usize = 2;
/// Keys longer than this are not simple keys.
const MAX_SIMPLE_KEY: usize = 128;

/// Why a node cannot be printed the way Kustomize prints it (its JSON
/// round trip fails on these, in Go's words).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EmitError {
    /// A mapping key below the top level that is not a string.
    #[error("{MAP_TYPE} (key {0:?} is not a string)")]
    NonStringKey(String),
    /// A mapping key that is a collection.
    #[error("{MAP_TYPE} (a key is a collection)")]
    CollectionKey,
    /// A key holding NEL, which ends its line when read back.
    #[error("yaml: did not find expected ',' or '}}' (key {0:?} holds a NEL)")]
    KeyWithNel(String),
    /// A key longer in JSON than go-yaml reads as a key (its first
    /// characters).
    #[error("yaml: did not find expected ',' or '}}' (key {0:?}... is longer than {MAX_JSON_KEY} characters in JSON)")]
    KeyTooLong(String),
    /// A string with characters YAML does not allow.
    #[error("yaml: control characters are not allowed")]
    ControlCharacter,
    /// A number JSON cannot hold (an infinity or NaN; Go's message).
    #[error("{0}")]
    UnsupportedNumber(String),
}

/// The Go type Kustomize's JSON encoder names for a mapping with a key
/// that is no string.
const MAP_TYPE: &str = "json: unsupported type: map[interface {}]interface {}";

/// Appends `node` to `out` as one Kustomize-formatted YAML document (no `---`).
pub fn emit_document(node: &Node, out: &mut String) -> Result<(), EmitError> {
    Emitter::new(out, false).document(node)
}

/// Appends `node` to `out` as one YAML document written the way its author
/// wrote it, as far as the model remembers: mapping keys in source order,
/// comments kept, and scalars from the source in their source style (new
/// scalars are quoted only where needed). A collection marked as written in
/// flow style ([`Node::is_flow`]) is written in flow style on one line
/// (`{a: b, c: [1, 2]}`), whatever was changed inside it, scalars quoted
/// where flow context needs it; one with comments inside is written in
/// block style, to keep them. The document's own top (a JSON document, say)
/// is written in block style. For tools that edit files people maintain,
/// such as KRM functions.
pub fn emit_document_preserving(node: &Node, out: &mut String) -> Result<(), EmitError> {
    Emitter::new(out, true).document(node)
}

/// Appends `items` to `out` as the entries of a block sequence at column 0
/// (`- ` first), in the preserving form of [`emit_document_preserving`]:
/// what follows a top-level `key:` line for a sequence. Each item is the
/// top of a document there (a ResourceList's items): one marked as flow is
/// written in block style.
pub fn emit_seq_items_preserving(items: &[Node], out: &mut String) -> Result<(), EmitError> {
    Emitter::new(out, true).block_seq(items, 0, false, false)
}

/// Emits one document to a new string with [`emit_document_preserving`].
pub fn to_yaml_preserving(node: &Node) -> Result<String, EmitError> {
    let mut out = String::new();
    emit_document_preserving(node, &mut out)?;
    Ok(out)
}

/// Emits one document to a new string.
pub fn to_kustomize_yaml(node: &Node) -> Result<String, EmitError> {
    let mut out = String::new();
    emit_document(node, &mut out)?;
    Ok(out)
}

struct Emitter<'o, 'n> {
    out: &'o mut String,
    /// Current column in characters.
    col: usize,
    /// Source order, comments and source styles instead of Kustomize's form.
    preserve: bool,
    /// The keys of the mappings being written, innermost last: each mapping
    /// orders its own run at the top (one list for the whole document
    /// instead of one per mapping).
    keys: Vec<(&'n str, &'n Node)>,
    /// A LINE or PARAGRAPH SEPARATOR that ended a literal scalar: it ends
    /// the line in place of the next line feed.
    break_instead: Option<char>,
    /// Where the header of the literal scalar just written ends in `out`:
    /// a line comment of that scalar goes there, not after its text.
    block_header: Option<usize>,
}

impl<'o, 'n> Emitter<'o, 'n> {
    fn new(out: &'o mut String, preserve: bool) -> Emitter<'o, 'n> {
        Emitter {
            out,
            col: 0,
            preserve,
            keys: Vec::new(),
            break_instead: None,
            block_header: None,
        }
    }

    fn document(&mut self, node: &'n Node) -> Result<(), EmitError> {
        let e = self;
        e.head_comments(node, 0);
        match &node.value {
            Value::Map(entries) if !entries.is_empty() => e.block_map(entries, 0, false, true)?,
            Value::Seq(items) if !items.is_empty() => e.block_seq(items, 0, false, true)?,
            _ => {
                // A root scalar's continuation lines are indented: at the
                // first column, `---` or `...` would end the document.
                e.inline_value(node, BEST_INDENT)?;
                e.line_comment(node);
                e.newline();
            }
        }
        Ok(())
    }

    /// In preserving mode, writes the comments above `node` at `indent`.
    fn head_comments(&mut self, node: &Node, indent: usize) {
        if !self.preserve {
            return;
        }
        let Some(c) = &node.extras else { return };
        for line in &c.head {
            self.pad_to(indent);
            self.push_char('#');
            self.push(line);
            self.newline();
        }
    }

    /// In preserving mode, writes the comment after `node` on its line
    /// (the header line when `node` was just written as a literal block).
    fn line_comment(&mut self, node: &Node) {
        let header = self.block_header.take();
        if !self.preserve || block_scalar_from_source(node) {
            // A block scalar from a source has its comment on its header.
            return;
        }
        if let Some(line) = node.extras.as_ref().and_then(|c| c.line.as_ref()) {
            match header {
                Some(at) => self.out.insert_str(at, &format!(" #{line}")),
                None => {
                    self.push(" #");
                    self.push(line);
                }
            }
        }
    }
}

/// How a string scalar will be written.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Style {
    Plain,
    Single,
    Double,
    Literal,
}

impl<'n> Emitter<'_, 'n> {
    fn push(&mut self, s: &str) {
        self.out.push_str(s);
        self.col += if s.is_ascii() {
            s.len()
        } else {
            s.chars().count()
        };
    }

    fn push_char(&mut self, c: char) {
        self.out.push(c);
        self.col += 1;
    }

    #[inline]
    fn newline(&mut self) {
        match self.break_instead.take() {
            None => self.out.push('\n'),
            Some(c) => self.out.push(c),
        }
        self.col = 0;
    }

    fn pad_to(&mut self, indent: usize) {
        const SPACES: &str = "                                ";
        while self.col < indent {
            let n = (indent - self.col).min(SPACES.len());
            self.out.push_str(&SPACES[..n]);
            self.col += n;
        }
    }

    /// A block mapping whose keys stand at column `indent`. With `inline_first`
    /// the first key continues the current line (after `- `).
    fn block_map(
        &mut self,
        entries: &'n [(Node, Node)],
        indent: usize,
        inline_first: bool,
        root: bool,
    ) -> Result<(), EmitError> {
        let start = self.keys.len();
        for (_, v) in entries {
            v.prefetch_items();
        }
        for (k, v) in entries {
            let key = match &k.value {
                Value::Scalar(s) => {
                    if !root && !matches!(resolve_input(k), Resolved::Str(_)) {
                        return Err(EmitError::NonStringKey(s.text.to_string()));
                    }
                    s.text.as_str()
                }
                _ => return Err(EmitError::CollectionKey),
            };
            self.keys.push((key, v));
        }
        if !self.preserve {
            sort_keys(&mut self.keys[start..]);
        }
        // One key was pushed per entry.
        for (i, (source_key, _)) in entries.iter().enumerate() {
            let (key, value) = self.keys[start + i];
            if self.preserve && (i > 0 || !inline_first) {
                // Not sorted: entry `i` is this one.
                self.head_comments(source_key, indent);
                self.head_comments(value, indent);
            }
            if i > 0 || !inline_first {
                self.pad_to(indent);
            }
            if self.preserve && plain_source_key(source_key) && is_simple_key(key) {
                self.push(key);
            } else if key.len() <= MAX_SIMPLE_KEY && is_plain_word(key) {
                // Most keys: simple (no line break), and written by typing alone.
                self.plain_word(key, indent, true);
            } else if !self.preserve && key.contains('\u{85}') {
                // Go's JSON keeps NEL as it is: read back, it ends the key's line.
                return Err(EmitError::KeyWithNel(key.to_string()));
            } else if is_simple_key(key) {
                self.string(key, indent, true)?;
            } else {
                self.explicit_entry(key, value, indent)?;
                continue;
            }
            self.push_char(':');
            match &value.value {
                Value::Map(m) if !m.is_empty() && !self.flow_here(value) => {
                    self.line_comment(value);
                    self.newline();
                    self.block_map(m, indent + BEST_INDENT, false, false)?;
                }
                Value::Seq(s) if !s.is_empty() && !self.flow_here(value) => {
                    self.line_comment(value);
                    self.newline();
                    self.block_seq(s, indent, false, true)?;
                }
                _ => {
                    self.push_char(' ');
                    self.inline_value(value, indent + BEST_INDENT)?;
                    self.line_comment(value);
                    self.newline();
                }
            }
        }
        self.keys.truncate(start);
        Ok(())
    }

    /// A block sequence whose `-` stand at column `indent`. Items marked as
    /// flow are written in flow style when `flow_items` (not when they are
    /// the tops of documents).
    fn block_seq(
        &mut self,
        items: &'n [Node],
        indent: usize,
        inline_first: bool,
        flow_items: bool,
    ) -> Result<(), EmitError> {
        for item in items {
            item.prefetch_items();
        }
        for (i, item) in items.iter().enumerate() {
            if i > 0 || !inline_first {
                self.head_comments(item, indent);
                self.pad_to(indent);
            }
            self.push_char('-');
            self.push_char(' ');
            let block = !flow_items || !self.flow_here(item);
            match &item.value {
                Value::Map(m) if !m.is_empty() && block => {
                    self.block_map(m, indent + BEST_INDENT, true, false)?
                }
                Value::Seq(s) if !s.is_empty() && block => {
                    self.block_seq(s, indent + BEST_INDENT, true, true)?
                }
                _ => {
                    self.inline_value(item, indent + BEST_INDENT)?;
                    self.line_comment(item);
                    self.newline();
                }
            }
        }
        Ok(())
    }

    /// A scalar or empty collection on the current line. `indent` is where
    /// continuation lines of a folded or block scalar start.
    fn inline_value(&mut self, node: &Node, indent: usize) -> Result<(), EmitError> {
        self.block_header = None;
        if self.preserve {
            if let Value::Scalar(s) = &node.value {
                if self.source_scalar(node, s, indent) {
                    return Ok(());
                }
            }
        }
        match &node.value {
            // Only a collection to be written in flow style comes here
            // with items ([`Emitter::flow_here`]).
            Value::Map(m) if self.preserve && !m.is_empty() => self.flow(node)?,
            Value::Seq(s) if self.preserve && !s.is_empty() => self.flow(node)?,
            Value::Map(_) => self.push("{}"),
            Value::Seq(_) => self.push("[]"),
            Value::Scalar(_) => self.typed_scalar(node, indent, false)?,
        }
        Ok(())
    }

    /// A scalar written by its type: `null`, booleans and numbers in their
    /// canonical form, strings through [`Emitter::flow_string`] in a flow
    /// collection, else [`Emitter::string`] (continuation lines at
    /// `indent`).
    fn typed_scalar(&mut self, node: &Node, indent: usize, flow: bool) -> Result<(), EmitError> {
        let owned;
        let text = match resolve_input(node) {
            Resolved::Null => {
                self.push("null");
                return Ok(());
            }
            Resolved::Bool(b) => {
                self.push(if b { "true" } else { "false" });
                return Ok(());
            }
            Resolved::Int(i) => {
                self.push(&i.to_string());
                return Ok(());
            }
            Resolved::Float(f) => {
                let text = float_text(f)?;
                self.push(&text);
                return Ok(());
            }
            // A scalar folded in its source has been through Kustomize's
            // go-yaml v3 round trip (`folded.rs`).
            Resolved::Str(text) if node.style() == crate::node::ScalarStyle::Folded => {
                match crate::folded::round_trip(text) {
                    Some(changed) => {
                        owned = changed;
                        owned.as_str()
                    }
                    None => text,
                }
            }
            Resolved::Str(text) => text,
            Resolved::Owned(text) => {
                owned = text;
                owned.as_str()
            }
        };
        if flow {
            self.flow_string(text)
        } else {
            self.string(text, indent, false)
        }
    }

    /// An entry whose key is too long or spans lines: `? key` then `: value`.
    /// Kustomize reads each resource back from its JSON form, where a key
    /// is a simple key: one longer than go-yaml's 1,024 characters fails.
    fn explicit_entry(
        &mut self,
        key: &str,
        value: &'n Node,
        indent: usize,
    ) -> Result<(), EmitError> {
        if !self.preserve && json_key_too_long(key) {
            return Err(EmitError::KeyTooLong(key.chars().take(40).collect()));
        }
        self.push_char('?');
        self.push_char(' ');
        self.string(key, indent + BEST_INDENT, false)?;
        // The key's comments are not kept.
        self.block_header = None;
        // A literal key leaves its last line break to this.
        self.newline();
        self.pad_to(indent);
        self.push_char(':');
        self.push_char(' ');
        match &value.value {
            Value::Map(m) if !m.is_empty() && !self.flow_here(value) => {
                self.block_map(m, indent + BEST_INDENT, true, false)
            }
            Value::Seq(s) if !s.is_empty() && !self.flow_here(value) => {
                self.block_seq(s, indent + BEST_INDENT, true, true)
            }
            _ => {
                self.inline_value(value, indent + BEST_INDENT)?;
                self.block_header = None;
                self.newline();
                Ok(())
            }
        }
    }

    fn string(&mut self, text: &str, indent: usize, simple_key: bool) -> Result<(), EmitError> {
        // Names, keys, paths, images and versions cannot fold, need no
        // escape and leave libyaml's analysis nothing to object to: only
        // the reader's typing (`true`, `1.0`, ...) decides between plain
        // and double-quoted.
        if is_plain_word(text) {
            self.plain_word(text, indent, simple_key);
            return Ok(());
        }
        self.string_any(text, indent, simple_key)
    }

    /// [`Emitter::string`] for text that [`is_plain_word`].
    fn plain_word(&mut self, text: &str, indent: usize, simple_key: bool) {
        if needs_quotes(text) {
            self.double(text, indent, !simple_key);
        } else {
            self.out.push_str(text);
            self.col += text.len();
        }
    }

    /// [`Emitter::string`] for any text.
    fn string_any(&mut self, text: &str, indent: usize, simple_key: bool) -> Result<(), EmitError> {
        // One pass answers the usual case: ASCII without DEL.
        let plain_ascii = text.bytes().all(|b| b < 0x7f);
        if !plain_ascii && (text.is_ascii() || text.chars().any(is_forbidden_control)) {
            return Err(EmitError::ControlCharacter);
        }
        // Kustomize's read-write round trip turns NEL (U+0085) into a space;
        // the preserving writer keeps it, escaped (a reader takes a NEL in
        // any other style for a line break).
        let owned;
        let text = if !plain_ascii && text.contains('\u{85}') {
            if self.preserve {
                self.double(text, indent, !simple_key);
                return Ok(());
            }
            owned = text.replace('\u{85}', " ");
            owned.as_str()
        } else {
            text
        };
        let style = select_style(text, simple_key);
        let allow_breaks = !simple_key;
        match style {
            Style::Plain => self.plain(text, indent, allow_breaks),
            Style::Single => self.single(text, indent, allow_breaks),
            Style::Double => self.double(text, indent, allow_breaks),
            Style::Literal => self.literal(text, indent, None),
        }
        Ok(())
    }

    fn break_line(&mut self, indent: usize) {
        self.newline();
        self.pad_to(indent);
    }

    fn plain(&mut self, text: &str, indent: usize, allow_breaks: bool) {
        // Fast path: nothing can fold.
        if !allow_breaks || self.col + text.len() <= BEST_WIDTH + 1 {
            self.push(text);
            return;
        }
        let chars: Vec<char> = text.chars().collect();
        let mut spaces = false;
        for (i, &c) in chars.iter().enumerate() {
            if c == ' ' {
                let next_space = chars.get(i + 1) == Some(&' ');
                if !spaces && self.col > BEST_WIDTH && !next_space {
                    self.break_line(indent);
                } else {
                    self.push_char(c);
                }
                spaces = true;
            } else {
                self.push_char(c);
                spaces = false;
            }
        }
    }

    fn single(&mut self, text: &str, indent: usize, allow_breaks: bool) {
        self.push_char('\'');
        let chars: Vec<char> = text.chars().collect();
        let last = chars.len().saturating_sub(1);
        let mut spaces = false;
        // After a line break character (U+2028, U+2029, NEL), go-yaml
        // starts a new line: the next character other than a space stands
        // at the scalar's indentation.
        let mut breaks = false;
        for (i, &c) in chars.iter().enumerate() {
            if matches!(c, '\u{2028}' | '\u{2029}' | '\u{85}') {
                self.out.push(c);
                self.col = 0;
                breaks = true;
            } else if c == ' ' {
                let next_space = chars.get(i + 1) == Some(&' ');
                if allow_breaks
                    && !spaces
                    && self.col > BEST_WIDTH
                    && i != 0
                    && i != last
                    && !next_space
                {
                    self.break_line(indent);
                } else {
                    self.push_char(c);
                }
                spaces = true;
            } else {
                if breaks {
                    if self.col > indent {
                        self.newline();
                    }
                    self.pad_to(indent);
                    breaks = false;
                }
                if c == '\'' {
                    self.push_char('\'');
                }
                self.push_char(c);
                spaces = false;
            }
        }
        self.push_char('\'');
    }

    fn double(&mut self, text: &str, indent: usize, allow_breaks: bool) {
        self.push_char('"');
        let chars: Vec<char> = text.chars().collect();
        let last = chars.len().saturating_sub(1);
        // go-yaml's BOM test looks at the start of the string, not at the
        // current character: a string that starts with U+FEFF is escaped whole.
        let escape_all = text.starts_with('\u{feff}');
        let mut spaces = false;
        for (i, &c) in chars.iter().enumerate() {
            if escape_all
                || !is_printable(c)
                || c == '\u{feff}'
                || is_break(c)
                || c == '"'
                || c == '\\'
            {
                self.escape(c);
                spaces = false;
            } else if c == ' ' {
                if allow_breaks && !spaces && self.col > BEST_WIDTH && i != 0 && i != last {
                    self.break_line(indent);
                    if chars.get(i + 1) == Some(&' ') {
                        self.push_char('\\');
                    }
                } else {
                    self.push_char(c);
                }
                spaces = true;
            } else {
                self.push_char(c);
                spaces = false;
            }
        }
        self.push_char('"');
    }

    fn escape(&mut self, c: char) {
        self.push_char('\\');
        let simple = match c {
            '\0' => Some('0'),
            '\x07' => Some('a'),
            '\x08' => Some('b'),
            '\t' => Some('t'),
            '\n' => Some('n'),
            '\x0b' => Some('v'),
            '\x0c' => Some('f'),
            '\r' => Some('r'),
            '\x1b' => Some('e'),
            '"' => Some('"'),
            '\\' => Some('\\'),
            '\u{85}' => Some('N'),
            '\u{a0}' => Some('_'),
            '\u{2028}' => Some('L'),
            '\u{2029}' => Some('P'),
            _ => None,
        };
        match simple {
            Some(s) => self.push_char(s),
            None => {
                let v = c as u32;
                let text = if v <= 0xFF {
                    format!("x{v:02X}")
                } else if v <= 0xFFFF {
                    format!("u{v:04X}")
                } else {
                    format!("U{v:08X}")
                };
                self.push(&text);
            }
        }
    }

    /// A literal block scalar; `comment` goes on its header line.
    fn literal(&mut self, text: &str, indent: usize, comment: Option<&str>) {
        self.push_char('|');
        let first = text.chars().next();
        let mut indent = indent;
        if first.is_some_and(|c| c == ' ' || is_break(c)) {
            self.push(&BEST_INDENT.to_string());
            // The indicator counts from the parent's indentation, which at
            // a document's root is before the first column.
            indent = indent.max(BEST_INDENT);
        }
        let mut rev = text.chars().rev();
        let last = rev.next();
        let before_last = rev.next();
        let keep = match last {
            Some(c) if !is_break(c) => {
                self.push_char('-');
                false
            }
            _ => match before_last {
                None => true,
                Some(c) => is_break(c),
            },
        };
        if keep {
            self.push_char('+');
        }
        if let Some(c) = comment {
            self.push(" #");
            self.push(c);
        }
        self.block_header = Some(self.out.len());
        self.newline();
        let mut breaks = true;
        for c in text.chars() {
            if is_break(c) {
                self.out.push(c);
                self.col = 0;
                breaks = true;
            } else {
                if breaks {
                    self.pad_to(indent);
                    breaks = false;
                }
                self.push_char(c);
            }
        }
        // The caller ends the line; a literal already ends with its break
        // unless chomped with `-`.
        if keep || matches!(last, Some(c) if is_break(c)) {
            // Undo the newline the caller will add: literals end at column 0.
            self.suppress_next_newline();
        }
    }

    /// In preserving mode, writes a scalar read from a source in its source
    /// style; `false` when the scalar must be written the usual way (it is
    /// new, or its plain text would not read back the same).
    fn source_scalar(&mut self, node: &Node, s: &crate::node::Scalar, indent: usize) -> bool {
        use crate::node::ScalarStyle;
        if node.pos().line == 0 && node.style() != ScalarStyle::Plain {
            return false;
        }
        if let Some(tag) = node.tag_text() {
            self.push(tag);
            self.push_char(' ');
        }
        match node.style() {
            ScalarStyle::Plain => {
                // Plain in its source (perhaps a flow collection), and plain
                // in a block too (`-` alone would start a list there).
                let safe = !s.text.is_empty()
                    && !s.text.contains(['\n', '#'])
                    && !s.text.starts_with(' ')
                    && !s.text.ends_with(' ')
                    && analyze(&s.text).block_plain_allowed;
                if !safe {
                    return node.tag().is_some() && {
                        self.double(&s.text, indent, false);
                        true
                    };
                }
                self.push(&s.text);
            }
            // Single quotes hold a line break only as a blank line, which
            // this writer does not fold back: such text is double-quoted.
            ScalarStyle::SingleQuoted if !s.text.contains(is_break) => {
                self.single(&s.text, indent, false)
            }
            ScalarStyle::SingleQuoted | ScalarStyle::DoubleQuoted => {
                self.double(&s.text, indent, false)
            }
            ScalarStyle::Literal | ScalarStyle::Folded => {
                if s.text.is_empty() {
                    self.double(&s.text, indent, false);
                } else {
                    let comment = node.extras.as_ref().and_then(|c| c.line.as_deref());
                    self.literal(&s.text, indent, comment);
                }
            }
        }
        true
    }

    /// In preserving mode, whether `node` is a collection to write in
    /// flow style: marked so ([`Node::is_flow`]), and with nothing inside
    /// that one line of flow style cannot hold (comments; keys the block
    /// writer rejects or writes as `? key`, which it then fails on just as
    /// before).
    #[inline]
    fn flow_here(&self, node: &Node) -> bool {
        self.preserve && node.is_flow() && flow_writable(node)
    }

    /// `node` in flow style on the current line: `{a: b, c: [1, 2]}`.
    fn flow(&mut self, node: &Node) -> Result<(), EmitError> {
        match &node.value {
            Value::Seq(items) => {
                self.push_char('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        self.push(", ");
                    }
                    self.flow(item)?;
                }
                self.push_char(']');
            }
            Value::Map(entries) => {
                self.push_char('{');
                for (i, (k, v)) in entries.iter().enumerate() {
                    if i > 0 {
                        self.push(", ");
                    }
                    let Value::Scalar(key) = &k.value else {
                        return Err(EmitError::CollectionKey);
                    };
                    if plain_source_key(k) && flow_plain_source_ok(&key.text) {
                        self.push(&key.text);
                    } else {
                        self.flow_string(&key.text)?;
                    }
                    self.push(": ");
                    self.flow(v)?;
                }
                self.push_char('}');
            }
            Value::Scalar(s) => self.flow_scalar(node, s)?,
        }
        Ok(())
    }

    /// A scalar inside a flow collection: one from a source in its source
    /// style where flow context allows it (a block scalar double-quoted),
    /// a new one by its type ([`Emitter::typed_scalar`]).
    fn flow_scalar(&mut self, node: &Node, s: &crate::node::Scalar) -> Result<(), EmitError> {
        use crate::node::ScalarStyle;
        if node.pos().line > 0 || node.style() == ScalarStyle::Plain {
            let style = node.style();
            let plain_ok = style == ScalarStyle::Plain && flow_plain_source_ok(&s.text);
            if style != ScalarStyle::Plain || plain_ok || node.tag().is_some() {
                if let Some(tag) = node.tag_text() {
                    self.push(tag);
                    self.push_char(' ');
                }
                match style {
                    _ if plain_ok => self.push(&s.text),
                    ScalarStyle::SingleQuoted if !s.text.contains(is_break) => {
                        self.single(&s.text, 0, false)
                    }
                    _ => self.double(&s.text, 0, false),
                }
                return Ok(());
            }
        }
        self.typed_scalar(node, 0, true)
    }

    /// A string inside a flow collection, on one line: plain where a
    /// reader takes it back as the same string there (none of `,[]{}?:`,
    /// go-yaml's rule), else single-quoted, else double-quoted (line
    /// breaks, characters to escape).
    fn flow_string(&mut self, text: &str) -> Result<(), EmitError> {
        let plain_ascii = text.bytes().all(|b| b < 0x7f);
        if !plain_ascii && (text.is_ascii() || text.chars().any(is_forbidden_control)) {
            return Err(EmitError::ControlCharacter);
        }
        if needs_quotes(text) || text.contains(is_break) {
            self.double(text, 0, false);
            return Ok(());
        }
        let a = analyze(text);
        if a.block_plain_allowed && !text.contains([',', '?', '[', ']', '{', '}', ':']) {
            self.push(text);
        } else if a.single_quoted_allowed {
            self.single(text, 0, false);
        } else {
            self.double(text, 0, false);
        }
        Ok(())
    }

    fn suppress_next_newline(&mut self) {
        // Remove the final break; the caller's newline() restores it.
        if self.out.ends_with(['\n', '\u{2028}', '\u{2029}']) {
            self.break_instead = self.out.pop().filter(|&c| c != '\n');
        }
    }
}

/// A flow collection the preserving writer can write on one line: nothing
/// inside it has comments, and its mappings' keys are strings on one line
/// (what else the block writer does with a key it does here too).
fn flow_writable(node: &Node) -> bool {
    fn key_ok(key: &Node) -> bool {
        !key.has_comments()
            && matches!(&key.value, Value::Scalar(s) if is_simple_key(&s.text))
            && matches!(resolve_input(key), Resolved::Str(_))
    }
    fn inside_ok(node: &Node) -> bool {
        !node.has_comments() && items_ok(node)
    }
    fn items_ok(node: &Node) -> bool {
        match &node.value {
            Value::Scalar(_) => true,
            Value::Seq(items) => items.iter().all(inside_ok),
            Value::Map(entries) => entries.iter().all(|(k, v)| key_ok(k) && inside_ok(v)),
        }
    }
    items_ok(node)
}

/// A plain scalar from a source that can stay plain inside a flow
/// collection: what [`Emitter::source_scalar`] keeps plain in a block,
/// without the flow indicators (`,[]{}`, `?`) and a `:` first, which end
/// or reject a plain scalar there. A `:` inside (`nginx:1.27`) reads back
/// the same in flow context.
fn flow_plain_source_ok(text: &str) -> bool {
    !text.is_empty()
        && !text.contains(['\n', '#', ',', '[', ']', '{', '}', '?'])
        && !text.starts_with([' ', ':'])
        && !text.ends_with(' ')
        && analyze(text).block_plain_allowed
}

/// `node` is a block scalar the preserving writer writes in its source
/// style (see [`Emitter::source_scalar`]).
fn block_scalar_from_source(node: &Node) -> bool {
    use crate::node::ScalarStyle;
    node.pos().line > 0
        && matches!(node.style(), ScalarStyle::Literal | ScalarStyle::Folded)
        && node.as_scalar().is_some_and(|s| !s.text.is_empty())
}

/// `true` when `key` was read from a source as a plain scalar that a block
/// mapping can hold plain, so it can be written back plain.
fn plain_source_key(key: &Node) -> bool {
    key.pos().line > 0
        && matches!(&key.value, Value::Scalar(s)
            if key.style() == crate::node::ScalarStyle::Plain
                && key.tag().is_none()
                && !s.text.is_empty()
                && analyze(&s.text).block_plain_allowed)
}

/// Sorts mapping entries by key as go-yaml v2 does. Its key order is not
/// transitive for some keys with leading zeros, so the result depends on the
/// sorting algorithm: Go sorts up to 12 elements by insertion sort, which is
/// reproduced exactly; longer maps use a merge sort.
fn sort_keys(keyed: &mut [(&str, &Node)]) {
    if keyed.len() <= 12 {
        for i in 1..keyed.len() {
            let mut j = i;
            while j > 0 && natural_less(keyed[j].0, keyed[j - 1].0) {
                keyed.swap(j, j - 1);
                j -= 1;
            }
        }
        return;
    }
    let mid = keyed.len() / 2;
    sort_keys(&mut keyed[..mid]);
    sort_keys(&mut keyed[mid..]);
    let mut merged = Vec::with_capacity(keyed.len());
    let (mut a, mut b) = (0, mid);
    while a < mid && b < keyed.len() {
        if natural_less(keyed[b].0, keyed[a].0) {
            merged.push(keyed[b]);
            b += 1;
        } else {
            merged.push(keyed[a]);
            a += 1;
        }
    }
    merged.extend_from_slice(&keyed[a..mid]);
    merged.extend_from_slice(&keyed[b..]);
    keyed.copy_from_slice(&merged);
}

/// The most characters go-yaml reads as a simple key (from its start to
/// its `:`), a JSON key with its quotes.
const MAX_JSON_KEY: usize = 1024;

/// `key` written as a JSON string by Go is longer than [`MAX_JSON_KEY`].
fn json_key_too_long(key: &str) -> bool {
    let mut json = String::with_capacity(key.len() + 2);
    crate::json::write_go_json_string(key, &mut json);
    json.chars().count() > MAX_JSON_KEY
}

/// go-yaml writes a key inline only when it is at most 128 characters long
/// and on one line.
fn is_simple_key(key: &str) -> bool {
    !key.contains(['\n', '\r', '\u{2028}', '\u{2029}']) && key.len() <= MAX_SIMPLE_KEY
}

/// The style go-yaml v2 ends up with for a string.
fn select_style(text: &str, simple_key: bool) -> Style {
    let requested = if text.contains('\n') {
        Style::Literal
    } else if needs_quotes(text) {
        Style::Double
    } else {
        Style::Plain
    };
    if requested == Style::Double {
        return Style::Double;
    }
    let a = analyze(text);
    let mut style = requested;
    if style == Style::Plain && (!a.block_plain_allowed || (text.is_empty() && simple_key)) {
        style = Style::Single;
    }
    if style == Style::Single && !a.single_quoted_allowed {
        style = Style::Double;
    }
    if style == Style::Literal && (!a.block_allowed || simple_key) {
        style = Style::Double;
    }
    style
}

#[derive(Debug, PartialEq)]
struct Analysis {
    block_plain_allowed: bool,
    single_quoted_allowed: bool,
    block_allowed: bool,
}

/// libyaml's analysis of a scalar's characters, fed one character at a
/// time (with the next one, for the indicators that depend on it).
struct Scan {
    block_indicators: bool,
    leading_space: bool,
    leading_break: bool,
    trailing_space: bool,
    trailing_break: bool,
    /// A space right after a line break.
    break_space: bool,
    /// A line break right after a space.
    space_break: bool,
    line_breaks: bool,
    /// A character go-yaml does not print as it is.
    special: bool,
    previous_space: bool,
    previous_break: bool,
    preceded_by_ws: bool,
}

impl Scan {
    /// The scan of a text that starts with `start`.
    fn new(start: &[u8]) -> Scan {
        Scan {
            block_indicators: start.starts_with(b"---") || start.starts_with(b"..."),
            leading_space: false,
            leading_break: false,
            trailing_space: false,
            trailing_break: false,
            break_space: false,
            space_break: false,
            line_breaks: false,
            special: false,
            previous_space: false,
            previous_break: false,
            preceded_by_ws: true,
        }
    }

    /// Takes in `c`, the text's first character when `first`, followed by
    /// `next` (`None` at the end).
    fn step(&mut self, c: char, first: bool, next: Option<char>) {
        let is_last = next.is_none();
        let followed_by_ws = matches!(next, None | Some(' ') | Some('\t'));
        if first {
            match c {
                '#' | ',' | '[' | ']' | '{' | '}' | '&' | '*' | '!' | '|' | '>' | '\'' | '"'
                | '%' | '@' | '`' => self.block_indicators = true,
                '?' | ':' | '-' if followed_by_ws => self.block_indicators = true,
                _ => {}
            }
        } else {
            match c {
                ':' if followed_by_ws => self.block_indicators = true,
                '#' if self.preceded_by_ws => self.block_indicators = true,
                _ => {}
            }
        }
        if !is_printable(c) {
            self.special = true;
        }
        if c == ' ' {
            self.leading_space |= first;
            self.trailing_space |= is_last;
            self.break_space |= self.previous_break;
            (self.previous_space, self.previous_break) = (true, false);
        } else if is_break(c) {
            self.line_breaks = true;
            self.leading_break |= first;
            self.trailing_break |= is_last;
            self.space_break |= self.previous_space;
            (self.previous_space, self.previous_break) = (false, true);
        } else {
            (self.previous_space, self.previous_break) = (false, false);
        }
        self.preceded_by_ws = matches!(c, ' ' | '\t' | '\0') || is_break(c);
    }

    /// Takes in, past the first character, a run of characters none of which
    /// is a space, a break, an indicator or special ([`is_ordinary`]).
    fn ordinary_run(&mut self) {
        (
            self.previous_space,
            self.previous_break,
            self.preceded_by_ws,
        ) = (false, false, false);
    }

    /// The styles what was found allows.
    fn verdict(&self) -> Analysis {
        let mut a = Analysis {
            block_plain_allowed: true,
            single_quoted_allowed: true,
            block_allowed: true,
        };
        if self.leading_space || self.leading_break || self.trailing_space || self.trailing_break {
            a.block_plain_allowed = false;
        }
        if self.trailing_space {
            a.block_allowed = false;
        }
        if self.break_space {
            a.block_plain_allowed = false;
            a.single_quoted_allowed = false;
        }
        if self.space_break || self.special {
            a.block_plain_allowed = false;
            a.single_quoted_allowed = false;
            a.block_allowed = false;
        }
        if self.line_breaks || self.block_indicators {
            a.block_plain_allowed = false;
        }
        a
    }
}

/// What a scalar's characters allow, as libyaml's emitter judges it.
fn analyze(text: &str) -> Analysis {
    if text.is_empty() {
        return Analysis {
            block_plain_allowed: true,
            single_quoted_allowed: true,
            block_allowed: false,
        };
    }
    // Most strings are names, paths, images and versions: no indicator (a
    // `:` followed by a space or the end, a `#` after a space) to find.
    if is_plain_word(text) {
        return Analysis {
            block_plain_allowed: true,
            single_quoted_allowed: true,
            block_allowed: true,
        };
    }
    if text.is_ascii() {
        return analyze_ascii(text.as_bytes());
    }
    analyze_chars(text)
}

/// A byte that, past the first, changes nothing in libyaml's analysis but
/// the "previous character" state: printable ASCII other than space and
/// the two indicators that count inside a scalar (`:` before a space, `#`
/// after one).
fn is_ordinary(b: u8) -> bool {
    (0x21..=0x7E).contains(&b) && b != b':' && b != b'#'
}

/// [`analyze_chars`] for non-empty ASCII text, a byte at a time, passing
/// over runs of ordinary bytes (most of a configuration file's text) in
/// one step.
fn analyze_ascii(text: &[u8]) -> Analysis {
    let mut scan = Scan::new(text);
    let mut i = 0usize;
    while i < text.len() {
        if i > 0 && is_ordinary(text[i]) {
            while i < text.len() && is_ordinary(text[i]) {
                i += 1;
            }
            scan.ordinary_run();
            continue;
        }
        let next = text.get(i + 1).map(|&b| char::from(b));
        scan.step(char::from(text[i]), i == 0, next);
        i += 1;
    }
    scan.verdict()
}

/// An alphanumeric start, then only printable ASCII without spaces, and no
/// `:` at the end: text with no indicator, space, break or special
/// character for libyaml's analysis to find.
fn is_plain_word(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes.first().is_some_and(u8::is_ascii_alphanumeric)
        && all_graphic(bytes)
        && bytes.last() != Some(&b':')
}

/// Whether every byte is printable ASCII other than space (`0x21..=0x7E`),
/// tested eight bytes at a time: a byte below `0x21` borrows into its high
/// bit when `0x21` is taken from every byte, and a byte above `0x7E` has or
/// gets its high bit set when `0x01` is added to every byte.
fn all_graphic(bytes: &[u8]) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH_BITS: u64 = 0x8080_8080_8080_8080;
    let (words, rest) = bytes.as_chunks::<8>();
    words.iter().all(|word| {
        let w = u64::from_le_bytes(*word);
        let below = w.wrapping_sub(ONES * 0x21) & !w;
        let above = w.wrapping_add(ONES) | w;
        (below | above) & HIGH_BITS == 0
    }) && rest.iter().all(u8::is_ascii_graphic)
}

/// [`analyze`] character by character, for any non-empty text.
fn analyze_chars(text: &str) -> Analysis {
    let mut scan = Scan::new(text.as_bytes());
    let mut chars = text.chars().peekable();
    let mut first = true;
    while let Some(c) = chars.next() {
        scan.step(c, first, chars.peek().copied());
        first = false;
    }
    scan.verdict()
}

/// Characters Kustomize's YAML reader rejects when it reads its own output
/// back: DEL, the C1 controls other than NEL, and the non-characters U+FFFE
/// and U+FFFF.
fn is_forbidden_control(c: char) -> bool {
    matches!(c, '\u{7f}'..='\u{84}' | '\u{86}'..='\u{9f}' | '\u{fffe}' | '\u{ffff}')
}

/// A line break as YAML counts one (LF, CR, NEL, U+2028, U+2029).
pub fn is_break(c: char) -> bool {
    matches!(c, '\n' | '\r' | '\u{85}' | '\u{2028}' | '\u{2029}')
}

/// go-yaml's printable set: LF, printable ASCII, and the BMP above U+00A0 except
/// surrogates, U+FEFF, U+FFFE and U+FFFF. Characters outside the BMP count as
/// not printable there, so they end up escaped.
pub fn is_printable(c: char) -> bool {
    let v = c as u32;
    v == 0x0A
        || (0x20..=0x7E).contains(&v)
        || (0xA0..=0xD7FF).contains(&v)
        || ((0xE000..=0xFFFD).contains(&v) && v != 0xFEFF)
}

/// Formats a float the way it comes out of JSON and back through go-yaml v2.
fn float_text(f: f64) -> Result<String, EmitError> {
    if let Some(message) = json_unsupported_float(f) {
        return Err(EmitError::UnsupportedNumber(message));
    }
    let json = go_json_float(f);
    if let Some(i) = go_parse_int(&json) {
        return Ok(i.to_string());
    }
    let reparsed: f64 = json.parse().unwrap_or(f);
    Ok(go_format_g(reparsed))
}

/// Shortest decimal digits and exponent of `f` (`d.ddd × 10^exp`).
fn shortest_digits(f: f64) -> (String, i32) {
    let s = format!("{:e}", f.abs());
    let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    (digits, exp.parse().unwrap_or(0))
}

/// Go's `encoding/json` float format: plain decimal within [1e-6, 1e21),
/// exponent form (with a trimmed exponent) outside.
pub fn go_json_float(f: f64) -> String {
    let abs = f.abs();
    if abs == 0.0 {
        return if f.is_sign_negative() {
            "-0".into()
        } else {
            "0".into()
        };
    }
    let (digits, exp) = shortest_digits(f);
    let sign = if f < 0.0 { "-" } else { "" };
    if (1e-6..1e21).contains(&abs) {
        format!("{sign}{}", fixed_notation(&digits, exp))
    } else {
        let mut m = digits[..1].to_string();
        if digits.len() > 1 {
            m.push('.');
            m.push_str(&digits[1..]);
        }
        let esign = if exp < 0 { '-' } else { '+' };
        let e = exp.abs();
        let etext = if e < 10 && exp >= 0 {
            format!("0{e}")
        } else {
            e.to_string()
        };
        // JSON trims `e-07` to `e-7` but keeps `e+21`.
        format!("{sign}{m}e{esign}{etext}")
    }
}

/// Go's `strconv.FormatFloat(f, 'g', -1, 64)`, the form go-yaml v3 writes
/// a float in: shortest digits, plain decimal for exponents from -4 to 5
/// (`1000`, `0.0001`), exponent form otherwise (`1e+06`, `1e-05`,
/// `1.2345678901234567e+19`). Infinities and NaN are YAML's `.inf`,
/// `-.inf` and `.nan`.
pub fn go_yaml_float(f: f64) -> String {
    if f.is_nan() {
        ".nan".into()
    } else if f.is_infinite() {
        if f > 0.0 { ".inf" } else { "-.inf" }.into()
    } else {
        go_format_g(f)
    }
}

/// Go's JSON encoder's error for a number JSON cannot hold (an infinity
/// or NaN); `None` for every other number.
pub fn json_unsupported_float(f: f64) -> Option<String> {
    let name = if f.is_nan() {
        "NaN"
    } else if f == f64::INFINITY {
        "+Inf"
    } else if f == f64::NEG_INFINITY {
        "-Inf"
    } else {
        return None;
    };
    Some(format!("json: unsupported value: {name}"))
}

fn fixed_notation(digits: &str, exp: i32) -> String {
    let point = exp + 1; // digits before the decimal point
    if point <= 0 {
        format!("0.{}{}", "0".repeat((-point) as usize), digits)
    } else if point as usize >= digits.len() {
        format!("{}{}", digits, "0".repeat(point as usize - digits.len()))
    } else {
        format!(
            "{}.{}",
            &digits[..point as usize],
            &digits[point as usize..]
        )
    }
}

/// Go's `strconv.FormatFloat(f, 'g', -1, 64)`: shortest digits, exponent
/// form when the decimal exponent is below -4 or at least 6.
fn go_format_g(f: f64) -> String {
    if f == 0.0 {
        return if f.is_sign_negative() {
            "-0".into()
        } else {
            "0".into()
        };
    }
    let (digits, exp) = shortest_digits(f);
    let sign = if f < 0.0 { "-" } else { "" };
    if !(-4..6).contains(&exp) {
        exp_notation(sign, &digits, exp)
    } else {
        format!("{sign}{}", fixed_notation(&digits, exp))
    }
}

fn exp_notation(sign: &str, digits: &str, exp: i32) -> String {
    let mut m = digits[..1].to_string();
    if digits.len() > 1 {
        m.push('.');
        m.push_str(&digits[1..]);
    }
    let esign = if exp < 0 { '-' } else { '+' };
    format!("{sign}{m}e{esign}{:02}", exp.abs())
}

#[cfg(test)]
mod tests {

    #[test]
    fn go_yaml_float_is_go_g_format() {
        use super::go_yaml_float;
        let cases: [(f64, &str); 14] = [
            (1000.0, "1000"),
            (1e6, "1e+06"),
            (123456.0, "123456"),
            (1234567.0, "1.234567e+06"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (0.000001, "1e-06"),
            (1.5, "1.5"),
            (-0.0, "-0"),
            (1e21, "1e+21"),
            (12345678901234567890.0, "1.2345678901234567e+19"),
            (-2.5e-7, "-2.5e-07"),
            (1e100, "1e+100"),
            (f64::INFINITY, ".inf"),
        ];
        for (f, want) in cases {
            assert_eq!(go_yaml_float(f), want, "{f}");
        }
    }

    /// `count` strings of 1 to `max_len` characters of `alphabet`, from a
    /// fixed xorshift sequence (the same strings on every run).
    fn random_strings(seed: u64, alphabet: &[char], max_len: u64, count: usize) -> Vec<String> {
        let mut state = seed;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        (0..count)
            .map(|_| {
                let len = 1 + next() % max_len;
                (0..len)
                    .map(|_| alphabet[(next() % alphabet.len() as u64) as usize])
                    .collect()
            })
            .collect()
    }

    /// Strings the emitter's shortcut takes are written exactly as the
    /// general path writes them, at any column, as keys and as values.
    #[test]
    fn word_test_agrees_with_a_byte_by_byte_test() {
        let edges = [
            0x00u8, 0x1f, 0x20, 0x21, 0x22, 0x7d, 0x7e, 0x7f, 0x80, 0xa1, 0xfe, 0xff,
        ];
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        for _ in 0..20_000 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let len = (seed % 40) as usize;
            let bytes: Vec<u8> = (0..len)
                .map(|i| {
                    let r = seed.rotate_left(i as u32 * 7);
                    if r.is_multiple_of(5) {
                        edges[(r >> 8) as usize % edges.len()]
                    } else {
                        0x21 + (r >> 16) as u8 % 0x5e
                    }
                })
                .collect();
            let expected = bytes.iter().all(u8::is_ascii_graphic);
            assert_eq!(all_graphic(&bytes), expected, "{bytes:?}");
        }
    }

    #[test]
    fn string_shortcut_writes_what_the_general_path_writes() {
        let alphabet: Vec<char> = (0x21u8..0x7f).map(char::from).collect();
        let mut words: Vec<String> = ["true", "no", "y", "1.0", "0x1F", "null", "a:b", "a#b"]
            .map(String::from)
            .to_vec();
        words.extend(random_strings(
            0x2545_f491_4f6c_dd1d,
            &alphabet,
            100,
            50_000,
        ));
        for text in &words {
            for (col, simple_key) in [(0, true), (4, false), (70, false)] {
                let (mut fast, mut general) = (String::new(), String::new());
                let mut a = Emitter::new(&mut fast, false);
                a.col = col;
                let fast_result = (a.string(text, 2, simple_key).is_ok(), a.col);
                let mut b = Emitter::new(&mut general, false);
                b.col = col;
                let general_result = (b.string_any(text, 2, simple_key).is_ok(), b.col);
                assert_eq!((fast_result, &fast), (general_result, &general), "{text:?}");
            }
        }
    }

    /// The byte-at-a-time analysis of ASCII text gives what the character
    /// analysis gives, on long texts of every ASCII byte (control
    /// characters, breaks, indicators and long ordinary runs).
    #[test]
    fn ascii_analysis_agrees_with_the_character_one() {
        let mut alphabet: Vec<char> = (0u8..0x80).map(char::from).collect();
        alphabet.extend("aaaaaaaaaaaaaaaaaaaa    \n\n::##--".chars());
        for text in random_strings(0x2545_f491_4f6c_dd1d, &alphabet, 80, 50_000) {
            if text.is_empty() {
                continue;
            }
            assert_eq!(
                analyze_ascii(text.as_bytes()),
                analyze_chars(&text),
                "{text:?}"
            );
        }
    }

    /// The shortcut for names, images and paths gives what the full
    /// character analysis gives.
    #[test]
    fn shortcut_analysis_agrees_with_the_full_one() {
        let alphabet: Vec<char> = (0x20u8..0x7f).map(char::from).chain(['\t', '\n']).collect();
        let mut shortcut = 0;
        for text in random_strings(0x9e37_79b9_7f4a_7c15, &alphabet, 12, 200_000) {
            let fast = analyze(&text);
            assert_eq!(fast, analyze_chars(&text), "{text:?}");
            if fast.block_plain_allowed && fast.block_allowed && !text.contains(' ') {
                shortcut += 1;
            }
        }
        assert!(shortcut > 1000, "the generator must reach the shortcut");
        for text in [
            "a:",
            "registry.example.com/x:1.0",
            "a:b",
            "a#b",
            "v1.2.3@sha256:0f",
        ] {
            assert_eq!(analyze(text), analyze_chars(text), "{text:?}");
        }
    }
    use super::*;

    #[test]
    fn json_floats() {
        assert_eq!(go_json_float(1.5), "1.5");
        assert_eq!(go_json_float(1e21), "1e+21");
        assert_eq!(go_json_float(1e-7), "1e-7");
        assert_eq!(go_json_float(100.0), "100");
        assert_eq!(float_text(1.0).unwrap(), "1");
        assert_eq!(float_text(0.000001).unwrap(), "1e-06");
        assert_eq!(float_text(1234567.5).unwrap(), "1.2345675e+06");
    }

    #[test]
    fn styles() {
        assert_eq!(select_style("abc", false), Style::Plain);
        assert_eq!(select_style("- a", false), Style::Single);
        assert_eq!(select_style("a: b", false), Style::Single);
        assert_eq!(select_style("yes", false), Style::Double);
        assert_eq!(select_style("a\nb", false), Style::Literal);
        assert_eq!(select_style("a \nb", false), Style::Double);
        assert_eq!(select_style("a\tb", false), Style::Double);
        assert_eq!(select_style(" a", false), Style::Single);
    }
}

#[cfg(test)]
mod preserving_tests {
    #[test]
    fn tags_and_comments_come_back_as_written() {
        let text = "# head\na: !custom x\nb: !!str 1 # line\nc: &anchor !!int 2\nd: *anchor\n";
        let root = crate::parse_stream(text).expect("valid")[0]
            .root
            .clone()
            .expect("a document");
        assert_eq!(
            super::to_yaml_preserving(&root).expect("printable"),
            "# head\na: !custom x\nb: !!str 1 # line\nc: !!int 2\nd: !!int 2\n"
        );
    }
}
