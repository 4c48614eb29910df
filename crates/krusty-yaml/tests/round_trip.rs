//! What the writer prints, the reader reads back as the same tree: random
//! documents of strings made of the characters that choose a style (line
//! breaks, including NEL, LINE and PARAGRAPH SEPARATOR; tabs; leading and
//! trailing spaces; indicators; words YAML types), with keys long enough
//! to be written as `? key`.

use std::collections::BTreeMap;

use krusty_yaml::{parse_stream, resolve_input, to_kustomize_yaml, Node, Resolved, Value};

/// A tree to compare: scalars by their resolved text, mappings by key.
#[derive(Debug, PartialEq)]
enum Tree {
    Scalar(String),
    Seq(Vec<Tree>),
    Map(BTreeMap<String, Tree>),
}

fn tree(node: &Node) -> Tree {
    match &node.value {
        Value::Scalar(_) => Tree::Scalar(match resolve_input(node) {
            Resolved::Str(t) => t.to_string(),
            Resolved::Owned(t) => t,
            other => format!("{other:?}"),
        }),
        Value::Seq(items) => Tree::Seq(items.iter().map(tree).collect()),
        Value::Map(entries) => Tree::Map(
            entries
                .iter()
                .map(|(k, v)| (k.key_str().unwrap_or_default().to_string(), tree(v)))
                .collect(),
        ),
    }
}

/// The tree Kustomize's round trip gives: NEL in a value becomes a space.
fn expected(node: &Node) -> Tree {
    match tree(node) {
        Tree::Scalar(s) => Tree::Scalar(s.replace('\u{85}', " ")),
        Tree::Seq(_) => Tree::Seq(node.as_seq().into_iter().flatten().map(expected).collect()),
        Tree::Map(_) => Tree::Map(
            node.as_map()
                .into_iter()
                .flatten()
                .map(|(k, v)| (k.key_str().unwrap_or_default().to_string(), expected(v)))
                .collect(),
        ),
    }
}

struct Random(u64);

impl Random {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> usize {
        (self.next() % n) as usize
    }
}

const PIECES: &[&str] = &[
    "a",
    "b",
    "word",
    " ",
    "  ",
    "\t",
    "\n",
    "\n\n",
    "\u{2028}",
    "\u{2029}",
    "\u{85}",
    ":",
    ": ",
    " #",
    "#",
    "'",
    "\"",
    "\\",
    "- ",
    "-",
    "? ",
    "{",
    "}",
    "[",
    "]",
    ",",
    "&",
    "*",
    "!",
    "|",
    ">",
    "%",
    "@",
    "`",
    "é",
    "😀",
    "\u{a0}",
    "true",
    "1",
    "0x1F",
    "1.5",
    "null",
    "~",
    "yes",
    "2001-12-14",
    "---",
    "...",
];

fn string(rng: &mut Random, max_pieces: u64) -> String {
    let pieces = rng.below(max_pieces + 1);
    (0..pieces)
        .map(|_| PIECES[rng.below(PIECES.len() as u64)])
        .collect()
}

/// A key: without NEL, which fails in Kustomize (it ends the key's line
/// when its JSON form is read back).
fn key(rng: &mut Random) -> String {
    let key = if rng.below(6) == 0 {
        // Past the 128 characters of a simple key, within 1,024 as JSON.
        let mut long = string(rng, 4);
        while long.chars().count() < 129 {
            long.push_str(PIECES[rng.below(PIECES.len() as u64)]);
        }
        long.truncate(long.char_indices().nth(300).map_or(long.len(), |(i, _)| i));
        long
    } else {
        string(rng, 4)
    };
    key.replace('\u{85}', "")
}

fn node(rng: &mut Random, depth: usize) -> Node {
    let kind = if depth >= 3 { 0 } else { rng.below(4) };
    match kind {
        1 => Node::seq_of((0..rng.below(4)).map(|_| node(rng, depth + 1))),
        2 => map(rng, depth),
        _ => Node::string(string(rng, 12)),
    }
}

fn map(rng: &mut Random, depth: usize) -> Node {
    let mut entries: Vec<(Node, Node)> = Vec::new();
    for _ in 0..rng.below(5) {
        let k = key(rng);
        if entries.iter().any(|(e, _)| e.key_str() == Some(k.as_str())) {
            continue;
        }
        entries.push((Node::string(k), node(rng, depth + 1)));
    }
    Node::map_of(entries)
}

#[test]
fn the_reader_reads_back_what_the_writer_prints() {
    let mut rng = Random(0x2545_f491_4f6c_dd1d);
    for case in 0..3_000 {
        let mut root = map(&mut rng, 0);
        if root.as_map().is_some_and(|m| m.is_empty()) {
            root = Node::map_of([(Node::string("k"), node(&mut rng, 1))]);
        }
        let written = to_kustomize_yaml(&root).expect("writes");
        let docs = parse_stream(&written)
            .unwrap_or_else(|e| panic!("case {case}: {e} reading back\n{written}"));
        let back = docs
            .first()
            .and_then(|d| d.root.as_ref())
            .unwrap_or_else(|| panic!("case {case}: no document in\n{written}"));
        assert_eq!(
            tree(back),
            expected(&root),
            "case {case}: read back differently\n{written}"
        );
    }
}
