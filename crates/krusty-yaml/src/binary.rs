//! A lossless binary encoding of a [`Node`] tree: everything a node holds
//! (its value, a scalar's text, its line, the packed column, style, tag and
//! flow mark, its comments and an unusual tag's text) in a compact form
//! that is much cheaper to write and read than YAML, for programs that
//! both hold nodes (krusty and a KRM function written with krusty-fn,
//! talking over spec v2; docs/function-servers.md).
//!
//! `decode(encode(n)) == n` for every node, so the preserving writer
//! prints the same bytes for both.
//!
//! ```
//! use krusty_yaml::{binary, first_root, to_yaml_preserving};
//!
//! let root = first_root("# app\nname: web # its name\nports: [80, 443]\ntag: !x 'v'\n")
//!     .unwrap()
//!     .unwrap();
//! let mut bytes = Vec::new();
//! binary::encode(&root, &mut bytes);
//! let back = binary::decode(&bytes).unwrap();
//! assert_eq!(back, root);
//! assert_eq!(to_yaml_preserving(&back).unwrap(), to_yaml_preserving(&root).unwrap());
//! ```
//!
//! # Format (version 1)
//!
//! A header, [`MAGIC`] (`89 4B 4E 44`: a first byte that is not UTF-8, so
//! the encoding is never mistaken for YAML or JSON) then [`VERSION`], then
//! exactly one node, then nothing. Integers are unsigned LEB128 varints
//! (7 bits a byte, low bits first, at most 10 bytes; 32-bit fields at most
//! 5). A string is its length in bytes (a varint) and its UTF-8 bytes. A
//! node is:
//!
//! 1. a flags byte: bits 0–1 the kind (0 scalar, 1 sequence, 2 mapping),
//!    bit 2 extras follow, bit 3 a line follows, bit 4 a column follows,
//!    bit 5 the high byte follows; bits 6–7 are 0;
//! 2. the line (varint), when bit 3 is set (else 0);
//! 3. the column (varint, below 2^24), when bit 4 is set (else 0);
//! 4. the packed word's high byte (one byte: style in bits 0–2, tag in
//!    bits 3–6, flow mark in bit 7), when bit 5 is set (else 0);
//! 5. the extras, when bit 2 is set: a flags byte (bit 0 head comments,
//!    bit 1 a line comment, bit 2 a tag text; bits 3–7 are 0), then the
//!    number of head comments (varint) and each comment (a string) when
//!    bit 0 is set, the line comment (a string) when bit 1 is, the tag
//!    text (a string) when bit 2 is;
//! 6. the value: a scalar's text (a string); a sequence's item count
//!    (varint) then its items; a mapping's entry count (varint) then, for
//!    each entry, its key node and its value node.
//!
//! # Hostile input
//!
//! [`decode`] never panics and allocates in proportion to its input: every
//! length and count is checked against the bytes left before anything is
//! reserved, text must be UTF-8, and a node sits at most as deep as the
//! YAML parser reads one ([`crate::Limits`]' default `max_depth`: 256
//! levels, the root at level 1), so any parsed tree decodes and decoding
//! recurses no deeper than parsing. Each error gives the byte
//! offset and what was wrong ([`DecodeError`]).

use compact_str::CompactString;
use thin_vec::ThinVec;

use crate::node::{Extras, Node, Scalar, Value};

/// The first four bytes of an encoded node.
pub const MAGIC: [u8; 4] = [0x89, b'K', b'N', b'D'];

/// The format's version, the byte after [`MAGIC`].
pub const VERSION: u8 = 1;

/// The header's length: [`MAGIC`] and [`VERSION`].
pub const HEADER_LEN: usize = MAGIC.len() + 1;

const KIND_MASK: u8 = 0b11;
const KIND_SCALAR: u8 = 0;
const KIND_SEQ: u8 = 1;
const KIND_MAP: u8 = 2;
const HAS_EXTRAS: u8 = 1 << 2;
const HAS_LINE: u8 = 1 << 3;
const HAS_COLUMN: u8 = 1 << 4;
const HAS_HIGH: u8 = 1 << 5;
const NODE_FLAGS: u8 = KIND_MASK | HAS_EXTRAS | HAS_LINE | HAS_COLUMN | HAS_HIGH;

const EXTRAS_HEAD: u8 = 1;
const EXTRAS_LINE: u8 = 1 << 1;
const EXTRAS_TAG: u8 = 1 << 2;
const EXTRAS_FLAGS: u8 = EXTRAS_HEAD | EXTRAS_LINE | EXTRAS_TAG;

const COLUMN_MASK: u32 = (1 << 24) - 1;

/// The fewest bytes a node takes (its flags and a length or count).
const MIN_NODE: usize = 2;

/// The most items reserved for a collection before they are read: a
/// count claims room it must then fill, so a hostile input cannot make
/// every level of a deep tree reserve its whole remaining length.
const MAX_RESERVE: usize = 32;

/// Appends the header and `node`'s encoding to `out`.
pub fn encode(node: &Node, out: &mut Vec<u8>) {
    Encoder::new(out).node(node);
}

/// Reads one encoded node (header included); the bytes must hold exactly
/// one.
pub fn decode(bytes: &[u8]) -> Result<Node, DecodeError> {
    let mut reader = Reader {
        bytes,
        pos: 0,
        max_depth: crate::parse::Limits::default().max_depth,
    };
    reader.header()?;
    let node = reader.node(0)?;
    if reader.pos != bytes.len() {
        return Err(reader.error(
            reader.pos,
            DecodeErrorKind::TrailingBytes(bytes.len() - reader.pos),
        ));
    }
    Ok(node)
}

/// `true` when `bytes` start with [`MAGIC`] (whatever the version).
pub fn is_binary(bytes: &[u8]) -> bool {
    bytes.starts_with(&MAGIC)
}

/// Writes one node in parts, for a caller that holds a tree's pieces
/// rather than the tree (krusty-fn writes a `ResourceList` from its items
/// without building its root node). [`Encoder::new`] writes the header;
/// then exactly one node must be written: [`Encoder::node`] writes a
/// whole node, [`Encoder::map`] and [`Encoder::seq`] start a new
/// collection (line 0, block style, no comments, as [`Node::map`] and
/// [`Node::seq`]) whose entries (each a key then a value) or items are
/// the next nodes written.
///
/// ```
/// use krusty_yaml::{binary, Node};
///
/// let mut bytes = Vec::new();
/// let mut encoder = binary::Encoder::new(&mut bytes);
/// encoder.map(1);
/// encoder.node(&Node::plain("items"));
/// encoder.seq(2);
/// encoder.node(&Node::plain("a"));
/// encoder.node(&Node::string("b"));
/// let want = Node::map_of([(
///     Node::plain("items"),
///     Node::seq_of([Node::plain("a"), Node::string("b")]),
/// )]);
/// assert_eq!(binary::decode(&bytes).unwrap(), want);
/// ```
pub struct Encoder<'a> {
    out: &'a mut Vec<u8>,
}

impl<'a> Encoder<'a> {
    /// Appends the header to `out`.
    pub fn new(out: &'a mut Vec<u8>) -> Encoder<'a> {
        out.extend_from_slice(&MAGIC);
        out.push(VERSION);
        Encoder { out }
    }

    /// Writes `node`, whole.
    pub fn node(&mut self, node: &Node) {
        write_node(self.out, node);
    }

    /// Starts a new mapping of `entries` entries (the next `2 * entries`
    /// nodes).
    pub fn map(&mut self, entries: usize) {
        self.out.push(KIND_MAP);
        write_varint(self.out, entries as u64);
    }

    /// Starts a new sequence of `items` items (the next `items` nodes).
    pub fn seq(&mut self, items: usize) {
        self.out.push(KIND_SEQ);
        write_varint(self.out, items as u64);
    }
}

fn write_node(out: &mut Vec<u8>, node: &Node) {
    let (line, packed) = node.raw_position();
    let column = packed & COLUMN_MASK;
    let high = (packed >> 24) as u8;
    let mut flags = match node.value {
        Value::Scalar(_) => KIND_SCALAR,
        Value::Seq(_) => KIND_SEQ,
        Value::Map(_) => KIND_MAP,
    };
    if node.extras.is_some() {
        flags |= HAS_EXTRAS;
    }
    if line != 0 {
        flags |= HAS_LINE;
    }
    if column != 0 {
        flags |= HAS_COLUMN;
    }
    if high != 0 {
        flags |= HAS_HIGH;
    }
    out.push(flags);
    if line != 0 {
        write_varint(out, u64::from(line));
    }
    if column != 0 {
        write_varint(out, u64::from(column));
    }
    if high != 0 {
        out.push(high);
    }
    if let Some(extras) = &node.extras {
        write_extras(out, extras);
    }
    match &node.value {
        Value::Scalar(s) => write_str(out, &s.text),
        Value::Seq(items) => {
            write_varint(out, items.len() as u64);
            for item in items {
                write_node(out, item);
            }
        }
        Value::Map(entries) => {
            write_varint(out, entries.len() as u64);
            for (key, value) in entries {
                write_node(out, key);
                write_node(out, value);
            }
        }
    }
}

fn write_extras(out: &mut Vec<u8>, extras: &Extras) {
    let mut flags = 0;
    if !extras.head.is_empty() {
        flags |= EXTRAS_HEAD;
    }
    if extras.line.is_some() {
        flags |= EXTRAS_LINE;
    }
    if extras.tag.is_some() {
        flags |= EXTRAS_TAG;
    }
    out.push(flags);
    if !extras.head.is_empty() {
        write_varint(out, extras.head.len() as u64);
        for comment in &extras.head {
            write_str(out, comment);
        }
    }
    if let Some(line) = &extras.line {
        write_str(out, line);
    }
    if let Some(tag) = &extras.tag {
        write_str(out, tag);
    }
}

#[inline]
fn write_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

#[inline]
fn write_str(out: &mut Vec<u8>, text: &str) {
    write_varint(out, text.len() as u64);
    out.extend_from_slice(text.as_bytes());
}

/// Why bytes are not an encoded node: what was wrong, and where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("binary node, byte {offset}: {kind}")]
pub struct DecodeError {
    /// The offset, in bytes from the start of the input, of what is wrong.
    pub offset: usize,
    /// What is wrong.
    pub kind: DecodeErrorKind,
}

/// What is wrong in a [`DecodeError`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeErrorKind {
    /// The input does not start with [`MAGIC`].
    #[error("not a binary node (no magic number)")]
    NotBinary,
    /// A version this reader does not know (the version found).
    #[error("version {0} is not supported (only {VERSION})")]
    UnsupportedVersion(u8),
    /// The input ends in the middle of a node.
    #[error("the input ends in the middle of a node")]
    Truncated,
    /// A varint longer than its field allows.
    #[error("a number is longer than its field")]
    BadVarint,
    /// A node's flags byte has bits that mean nothing, or an unknown kind.
    #[error("invalid node flags {0:#04x}")]
    BadNodeFlags(u8),
    /// An extras flags byte has bits that mean nothing.
    #[error("invalid extras flags {0:#04x}")]
    BadExtrasFlags(u8),
    /// A column of 2^24 or more (the packed word holds 24 bits).
    #[error("column {0} does not fit in 24 bits")]
    BadColumn(u64),
    /// A length or count claims more than the bytes left can hold.
    #[error("a length or count of {claimed} is more than the {left} bytes left can hold")]
    TooLong {
        /// The length or count read.
        claimed: u64,
        /// The bytes left after it.
        left: usize,
    },
    /// Text that is not UTF-8.
    #[error("text that is not UTF-8")]
    NotUtf8,
    /// A node more levels deep than the limit (the limit; the root is at
    /// level 1).
    #[error("nodes nest deeper than {0} levels")]
    TooDeep(usize),
    /// Bytes after the node (how many).
    #[error("{0} bytes after the node")]
    TrailingBytes(usize),
}

struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
    max_depth: usize,
}

type Decoded<T> = std::result::Result<T, DecodeError>;

impl<'a> Reader<'a> {
    #[cold]
    fn error(&self, offset: usize, kind: DecodeErrorKind) -> DecodeError {
        DecodeError { offset, kind }
    }

    fn left(&self) -> usize {
        self.bytes.len() - self.pos
    }

    fn header(&mut self) -> Decoded<()> {
        if !self.bytes.starts_with(&MAGIC) {
            // Where the magic stops matching (or the input ends).
            let at = self
                .bytes
                .iter()
                .zip(MAGIC)
                .take_while(|(a, b)| **a == *b)
                .count();
            let kind = if at == self.bytes.len() {
                DecodeErrorKind::Truncated
            } else {
                DecodeErrorKind::NotBinary
            };
            return Err(self.error(at, kind));
        }
        self.pos = MAGIC.len();
        let version = self.byte()?;
        if version != VERSION {
            return Err(self.error(MAGIC.len(), DecodeErrorKind::UnsupportedVersion(version)));
        }
        Ok(())
    }

    #[inline]
    fn byte(&mut self) -> Decoded<u8> {
        match self.bytes.get(self.pos) {
            Some(&b) => {
                self.pos += 1;
                Ok(b)
            }
            None => Err(self.error(self.pos, DecodeErrorKind::Truncated)),
        }
    }

    /// A varint of at most `max_bytes` bytes whose value fits in `bits`.
    #[inline]
    fn varint(&mut self, bits: u32) -> Decoded<u64> {
        let start = self.pos;
        let first = self.byte()?;
        if first < 0x80 {
            return Ok(u64::from(first));
        }
        let mut value = u64::from(first & 0x7f);
        let mut shift = 7;
        loop {
            let b = self.byte()?;
            if shift >= bits || (shift + 7 > bits && u64::from(b & 0x7f) >> (bits - shift) != 0) {
                return Err(self.error(start, DecodeErrorKind::BadVarint));
            }
            value |= u64::from(b & 0x7f) << shift;
            if b < 0x80 {
                return Ok(value);
            }
            shift += 7;
        }
    }

    fn u32(&mut self) -> Decoded<u32> {
        self.varint(32).map(|v| v as u32)
    }

    /// A count of things that take at least `each` bytes, checked against
    /// the bytes left.
    #[inline]
    fn count(&mut self, each: usize) -> Decoded<usize> {
        let start = self.pos;
        let claimed = self.varint(64)?;
        let left = self.left();
        match usize::try_from(claimed) {
            Ok(n) if n <= left / each => Ok(n),
            _ => Err(self.error(start, DecodeErrorKind::TooLong { claimed, left })),
        }
    }

    #[inline]
    fn str(&mut self) -> Decoded<&'a str> {
        let len = self.count(1)?;
        let start = self.pos;
        let bytes = &self.bytes[start..start + len];
        self.pos += len;
        std::str::from_utf8(bytes)
            .map_err(|e| self.error(start + e.valid_up_to(), DecodeErrorKind::NotUtf8))
    }

    /// One node, inside `depth` others.
    fn node(&mut self, depth: usize) -> Decoded<Node> {
        let at = self.pos;
        if depth >= self.max_depth {
            return Err(self.error(at, DecodeErrorKind::TooDeep(self.max_depth)));
        }
        let flags = self.byte()?;
        if flags & !NODE_FLAGS != 0 || flags & KIND_MASK == 3 {
            return Err(self.error(at, DecodeErrorKind::BadNodeFlags(flags)));
        }
        let line = if flags & HAS_LINE != 0 {
            self.u32()?
        } else {
            0
        };
        let mut packed = 0;
        if flags & HAS_COLUMN != 0 {
            let start = self.pos;
            let column = self.varint(32)?;
            if column > u64::from(COLUMN_MASK) {
                return Err(self.error(start, DecodeErrorKind::BadColumn(column)));
            }
            packed = column as u32;
        }
        if flags & HAS_HIGH != 0 {
            packed |= u32::from(self.byte()?) << 24;
        }
        let extras = if flags & HAS_EXTRAS != 0 {
            Some(Box::new(self.extras()?))
        } else {
            None
        };
        let value = match flags & KIND_MASK {
            KIND_SCALAR => Value::Scalar(Scalar {
                text: CompactString::from(self.str()?),
            }),
            kind => {
                if kind == KIND_SEQ {
                    let n = self.count(MIN_NODE)?;
                    let mut items = ThinVec::with_capacity(n.min(MAX_RESERVE));
                    for _ in 0..n {
                        items.push(self.node(depth + 1)?);
                    }
                    Value::Seq(items)
                } else {
                    let n = self.count(2 * MIN_NODE)?;
                    let mut entries = ThinVec::with_capacity(n.min(MAX_RESERVE));
                    for _ in 0..n {
                        let key = self.node(depth + 1)?;
                        let value = self.node(depth + 1)?;
                        entries.push((key, value));
                    }
                    Value::Map(entries)
                }
            }
        };
        Ok(Node::from_raw(value, extras, line, packed))
    }

    fn extras(&mut self) -> Decoded<Extras> {
        let at = self.pos;
        let flags = self.byte()?;
        if flags & !EXTRAS_FLAGS != 0 {
            return Err(self.error(at, DecodeErrorKind::BadExtrasFlags(flags)));
        }
        let mut extras = Extras::default();
        if flags & EXTRAS_HEAD != 0 {
            let n = self.count(1)?;
            extras.head.reserve_exact(n.min(MAX_RESERVE));
            for _ in 0..n {
                extras.head.push(self.str()?.to_string());
            }
        }
        if flags & EXTRAS_LINE != 0 {
            extras.line = Some(self.str()?.to_string());
        }
        if flags & EXTRAS_TAG != 0 {
            extras.tag = Some(self.str()?.into());
        }
        Ok(extras)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::node::{ScalarStyle, Tag};
    use crate::{parse_stream, to_yaml_preserving, Pos};

    /// A small deterministic generator (xorshift64*), so that failures
    /// reproduce from their seed.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }

        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }

        fn text(&mut self) -> String {
            const PIECES: [&str; 12] = [
                "a", "name", " ", "ü", "🦀", "\n", "'", "\"", ":", "# x", "\t", "0",
            ];
            (0..self.below(6))
                .map(|_| PIECES[self.below(PIECES.len() as u64) as usize])
                .collect()
        }
    }

    fn random_node(rng: &mut Rng, depth: usize) -> Node {
        let kind = if depth >= 5 { 0 } else { rng.below(3) };
        let mut node = match kind {
            0 => {
                let mut n = Node::plain(rng.text());
                n.set_style(match rng.below(5) {
                    0 => ScalarStyle::Plain,
                    1 => ScalarStyle::SingleQuoted,
                    2 => ScalarStyle::DoubleQuoted,
                    3 => ScalarStyle::Literal,
                    _ => ScalarStyle::Folded,
                });
                match rng.below(4) {
                    0 => n.set_tag_text("!!str"),
                    1 => n.set_tag_text("!custom"),
                    2 => n.set_tag_text("!!timestamp"),
                    _ => {}
                }
                n
            }
            1 => Node::seq_of((0..rng.below(4)).map(|_| random_node(rng, depth + 1))),
            _ => Node::map_of(
                (0..rng.below(4))
                    .map(|_| (random_node(rng, depth + 1), random_node(rng, depth + 1))),
            ),
        };
        node.set_flow(rng.below(3) == 0);
        let col = match rng.below(4) {
            0 => 0,
            1 => rng.below(200) as u32,
            2 => u32::MAX,
            _ => rng.next() as u32,
        };
        let line = if rng.below(4) == 0 {
            0
        } else {
            rng.next() as u32 >> rng.below(32)
        };
        node.set_pos(Pos { line, col });
        if rng.below(4) == 0 {
            let extras = node.extras.get_or_insert_with(Default::default);
            extras.head = (0..rng.below(3)).map(|_| rng.text()).collect();
            if rng.below(2) == 0 {
                extras.line = Some(rng.text());
            }
        }
        node
    }

    fn round_trip(node: &Node) -> Vec<u8> {
        let mut bytes = Vec::new();
        encode(node, &mut bytes);
        let back = decode(&bytes).unwrap_or_else(|e| panic!("{e}: {node:?}"));
        assert_eq!(&back, node);
        bytes
    }

    #[test]
    fn random_trees_round_trip() {
        for seed in 1..3000u64 {
            let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
            let node = random_node(&mut rng, 0);
            let bytes = round_trip(&node);
            // Every strict prefix is an error, never a panic.
            if seed % 10 == 0 {
                for cut in 0..bytes.len() {
                    assert!(decode(&bytes[..cut]).is_err(), "seed {seed}, cut {cut}");
                }
            }
            // Any byte changed gives a node or an error, never a panic.
            let mut garbled = bytes.clone();
            let at = rng.below(garbled.len() as u64) as usize;
            garbled[at] ^= 1 << rng.below(8);
            let _ = decode(&garbled);
        }
    }

    #[test]
    fn raw_packed_bits_survive() {
        // A flow mark left on a node whose value became a scalar, the
        // Empty extras box, an unusual tag: all are part of equality.
        let mut n = Node::seq();
        n.set_flow(true);
        n.value = Value::Scalar(Scalar { text: "x".into() });
        n.extras = Some(Box::default());
        round_trip(&n);
        let mut n = Node::plain("x");
        n.set_tag(Tag::Other);
        round_trip(&n);
    }

    #[test]
    fn parsed_documents_print_the_same() {
        let text = "# head\napiVersion: v1 # line\nkind: ConfigMap\nmetadata: {name: web, labels: {a: b}}\ndata:\n  k: 'single'\n  j: \"double\\n\"\n  lit: |\n    one\n    two\n  fold: >-\n    a\n    b\n  t: !!str 3\n  c: !custom x\n  list: [1, 2]\n  empty: {}\n  none:\n";
        for doc in parse_stream(text).unwrap() {
            let root = doc.root.unwrap();
            let mut bytes = Vec::new();
            encode(&root, &mut bytes);
            let back = decode(&bytes).unwrap();
            assert_eq!(back, root);
            assert_eq!(
                to_yaml_preserving(&back).unwrap(),
                to_yaml_preserving(&root).unwrap()
            );
        }
    }

    #[test]
    fn errors_name_the_offset_and_the_problem() {
        let kind = |bytes: &[u8]| decode(bytes).unwrap_err();
        assert_eq!(kind(b"").kind, DecodeErrorKind::Truncated);
        assert_eq!(kind(b"kind: x").kind, DecodeErrorKind::NotBinary);
        let e = kind(&[0x89, b'K', b'N', b'D', 9]);
        assert_eq!(
            (e.offset, e.kind),
            (4, DecodeErrorKind::UnsupportedVersion(9))
        );
        let header = [0x89, b'K', b'N', b'D', VERSION];
        let with = |body: &[u8]| [&header[..], body].concat();
        assert_eq!(kind(&with(&[])).kind, DecodeErrorKind::Truncated);
        assert_eq!(kind(&with(&[3, 0])).kind, DecodeErrorKind::BadNodeFlags(3));
        assert_eq!(
            kind(&with(&[0x40, 0])).kind,
            DecodeErrorKind::BadNodeFlags(0x40)
        );
        assert_eq!(
            kind(&with(&[HAS_EXTRAS, 0x08, 0])).kind,
            DecodeErrorKind::BadExtrasFlags(8)
        );
        let e = kind(&with(&[0, 5, b'a']));
        assert_eq!(
            (e.offset, e.kind),
            (
                6,
                DecodeErrorKind::TooLong {
                    claimed: 5,
                    left: 1
                }
            )
        );
        let e = kind(&with(&[0, 2, b'a', 0xff]));
        assert_eq!((e.offset, e.kind), (8, DecodeErrorKind::NotUtf8));
        assert_eq!(
            kind(&with(&[HAS_LINE, 0xff, 0xff, 0xff, 0xff, 0x7f, 0, 0])).kind,
            DecodeErrorKind::BadVarint
        );
        assert_eq!(
            kind(&with(&[HAS_COLUMN, 0x80, 0x80, 0x80, 0x08, 0])).kind,
            DecodeErrorKind::BadColumn(1 << 24)
        );
        assert_eq!(
            kind(&with(&[0, 0, 0])).kind,
            DecodeErrorKind::TrailingBytes(1)
        );
        // A count claiming more than the input: refused before reserving.
        let e = kind(&with(&[KIND_SEQ, 0xff, 0xff, 0xff, 0xff, 0x0f]));
        assert!(matches!(e.kind, DecodeErrorKind::TooLong { .. }), "{e}");
        assert!(e.to_string().starts_with("binary node, byte 6: "), "{e}");
    }

    #[test]
    fn nesting_is_bounded_as_the_parser_bounds_it() {
        let limit = crate::parse::Limits::default().max_depth;
        let nested = |levels: usize| {
            let mut bytes = vec![0x89, b'K', b'N', b'D', VERSION];
            for _ in 0..levels {
                bytes.extend([KIND_SEQ, 1]);
            }
            bytes.extend([KIND_SCALAR, 0]);
            bytes
        };
        // `levels` sequences and a scalar: `levels + 1` levels of nodes.
        assert!(decode(&nested(limit - 1)).is_ok());
        let e = decode(&nested(limit)).unwrap_err();
        assert_eq!(e.kind, DecodeErrorKind::TooDeep(limit));
        // Far deeper than any stack would take: an error, quickly.
        let e = decode(&nested(1_000_000)).unwrap_err();
        assert_eq!(e.kind, DecodeErrorKind::TooDeep(limit));
        // The parser agrees: it reads a node at most `limit` levels deep.
        let yaml = |levels: usize| {
            let mut text: String = (0..levels)
                .map(|i| format!("{}-\n", "  ".repeat(i)))
                .collect();
            text.push_str(&format!("{}x\n", "  ".repeat(levels)));
            text
        };
        assert!(parse_stream(&yaml(limit - 1)).is_ok());
        assert!(parse_stream(&yaml(limit)).is_err());
    }
}
