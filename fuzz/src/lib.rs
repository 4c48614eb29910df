//! What the fuzz targets share: splitting one input into two documents and
//! the properties every tree the reader accepts must have.

use std::sync::OnceLock;

use krusty_yaml::{
    parse_stream, to_go_json, to_kustomize_yaml, to_yaml_preserving, Node, ScalarStyle, Value,
};

/// The byte that separates the two parts of a two-part input (a resource
/// and a patch). The seeds use it; the mutator keeps or moves it.
pub const SEPARATOR: u8 = 0;

/// Splits `data` at the first [`SEPARATOR`] into two UTF-8 texts; `None`
/// when there is no separator or a part is not UTF-8.
pub fn split_two(data: &[u8]) -> Option<(&str, &str)> {
    let at = data.iter().position(|&b| b == SEPARATOR)?;
    let first = std::str::from_utf8(&data[..at]).ok()?;
    let second = std::str::from_utf8(&data[at + 1..]).ok()?;
    Some((first, second))
}

/// The first document's root of `text`, when it parses and has one.
pub fn first_root(text: &str) -> Option<Node> {
    parse_stream(text).ok()?.into_iter().find_map(|d| d.root)
}

/// `true` unless `KRUSTY_FUZZ_PRESERVING=0`: the preserving writer (KRM
/// functions' wire form) is held to the round trip too.
pub fn check_preserving() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| std::env::var("KRUSTY_FUZZ_PRESERVING").as_deref() != Ok("0"))
}

/// Checks that `root` survives both writers: each either refuses it with an
/// error (as Kustomize refuses, say, NaN or a non-string key) or writes
/// text that reads back as one document with the same JSON value.
pub fn assert_round_trip(root: &Node) {
    let json = to_go_json(root);
    if let Ok(text) = to_kustomize_yaml(root) {
        // Kustomize's own round trip turns NEL (U+0085) into a space (and
        // -0.0 into 0: `without_negative_zero`), and changes folded (`>`)
        // scalars (emit.rs, folded.rs): for those, the text must only read
        // back.
        let json = if any_scalar(root, &|n| n.style() == ScalarStyle::Folded) {
            None
        } else {
            Some(json.replace('\u{85}', " "))
        };
        assert_reads_back(&text, json.as_deref(), "kustomize writer");
    }
    if !check_preserving() {
        return;
    }
    if let Ok(text) = to_yaml_preserving(root) {
        assert_reads_back(&text, Some(&json), "preserving writer");
    }
}

/// Panics unless `text` parses to exactly one document, whose JSON value is
/// `json` when given.
fn assert_reads_back(text: &str, json: Option<&str>, writer: &str) {
    let docs = match parse_stream(text) {
        Ok(docs) => docs,
        // Kustomize prints a `<<` key it holds as a string key plain, as
        // krusty does; read back, it is a merge key (golden case
        // struct-merge-key-quoted-dropped).
        Err(e) if e.message.contains("map merge requires") => return,
        Err(e) => panic!("{writer}: its output does not read back: {e}\n{text}"),
    };
    let roots: Vec<&Node> = docs.iter().filter_map(|d| d.root.as_ref()).collect();
    assert_eq!(roots.len(), 1, "{writer}: not one document:\n{text}");
    let Some(json) = json else {
        return;
    };
    let (again, json) = (
        without_negative_zero(&to_go_json(roots[0])),
        without_negative_zero(json),
    );
    assert_eq!(again, json, "{writer}: the value changed:\n{text}");
}

/// `true` when some scalar of `node` (keys too) satisfies `test`.
fn any_scalar(node: &Node, test: &dyn Fn(&Node) -> bool) -> bool {
    match &node.value {
        Value::Scalar(_) => test(node),
        Value::Seq(items) => items.iter().any(|n| any_scalar(n, test)),
        Value::Map(entries) => entries
            .iter()
            .any(|(k, v)| any_scalar(k, test) || any_scalar(v, test)),
    }
}

/// `json` with each number `-0` written `0` (both writers may print -0.0
/// as 0, as Kustomize's JSON round trip does).
fn without_negative_zero(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    let mut rest = json;
    while let Some(at) = rest.find("-0") {
        let before = rest[..at].chars().next_back();
        let after = rest[at + 2..].chars().next();
        out.push_str(&rest[..at]);
        // A number alone (a document that is only `-0e1`) counts too.
        let number = matches!(before, None | Some(':' | '[' | ','))
            && matches!(after, None | Some(',' | '}' | ']'));
        out.push_str(if number { "0" } else { "-0" });
        rest = &rest[at + 2..];
    }
    out.push_str(rest);
    out
}
