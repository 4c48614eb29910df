//! What a trip through JSON does to a resource's values.
//!
//! Kustomize applies a JSON patch to a resource's JSON form and reads the
//! result back by writing it with go-yaml v3 and parsing that text. Every
//! value comes back in the form that writer gives it: numbers as Go
//! `float64`s in `%g` form (`1e3` as `1000`, `1000000` as `1e+06`), `~` as
//! `null`, timestamps as RFC 3339 strings, and strings plain where plain
//! text reads back as the same string, quoted where it would not, literal
//! where they span lines. Later steps see those forms: a strategic merge
//! takes a plain string's type from the patch, where a quoted one stays a
//! string.

use krusty_yaml::{
    go_yaml_float, json_unsupported_float, resolve_input, Node, Pos, Resolved, ScalarStyle,
    ThinVec, Value,
};

/// Why a value cannot take a JSON round trip.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JsonError {
    /// A number JSON cannot hold, in Go's encoder's words (`json:
    /// unsupported value: +Inf`).
    #[error("{0}")]
    Unsupported(String),
    /// A `<<` key (read back as a merge key) whose value cannot be merged,
    /// in go-yaml's words.
    #[error("map[string]interface {{}}(nil): yaml: map merge requires map or sequence of maps as the value")]
    MergeValue,
}

/// Gives every value under `node` (not the keys: they are strings either
/// way) its form after a JSON round trip. Fails, as Go's JSON encoder
/// does, on an infinite or NaN number, and as go-yaml does on a key `<<`
/// (written plain, it reads back as a merge key) whose value cannot be
/// merged.
pub fn through_json(node: &mut Node) -> Result<(), JsonError> {
    match &mut node.value {
        Value::Map(entries) => {
            for (_, v) in entries.iter_mut() {
                through_json(v)?;
            }
            if entries.iter().any(|(k, _)| k.key_str() == Some(MERGE_KEY)) {
                merge_keys(entries)?;
            }
        }
        Value::Seq(items) => {
            for item in items.iter_mut() {
                through_json(item)?;
            }
        }
        Value::Scalar(_) => scalar_through_json(node)?,
    }
    Ok(())
}

/// The key go-yaml reads as a merge key.
const MERGE_KEY: &str = "<<";

/// A mapping read back with a `<<` key: the key's mapping (or each
/// mapping of its list, earlier ones first) supplies the keys the mapping
/// does not have; any other value is go-yaml's error.
fn merge_keys(entries: &mut ThinVec<(Node, Node)>) -> Result<(), JsonError> {
    let mut merged: Vec<(Node, Node)> = Vec::new();
    let mut kept: ThinVec<(Node, Node)> = ThinVec::with_capacity(entries.len());
    for (k, v) in std::mem::take(entries) {
        if k.key_str() != Some(MERGE_KEY) {
            kept.push((k, v));
            continue;
        }
        let sources: Vec<Node> = match v.value {
            Value::Map(_) => vec![v],
            Value::Seq(items) if items.iter().all(|i| i.as_map().is_some()) => {
                items.into_iter().collect()
            }
            _ => return Err(JsonError::MergeValue),
        };
        for source in sources {
            if let Value::Map(pairs) = source.value {
                merged.extend(pairs);
            }
        }
    }
    for (k, v) in merged {
        let present = kept.iter().any(|(key, _)| key.key_str() == k.key_str());
        if !present {
            kept.push((k, v));
        }
    }
    *entries = kept;
    Ok(())
}

/// What a JSON round trip makes of a scalar.
#[derive(Debug, Clone, PartialEq)]
pub enum JsonScalar<'a> {
    /// A string with the same text.
    Same(&'a str),
    /// A string with other text (a timestamp in RFC 3339 form, decoded
    /// `!!binary`).
    String(String),
    /// A number, boolean or null, as go-yaml v3 writes it (`1e+06`, `null`).
    Other(String),
}

/// What a JSON round trip makes of `node` (a scalar), or Go's error when
/// JSON cannot hold it.
pub fn json_scalar(node: &Node) -> Result<JsonScalar<'_>, JsonError> {
    Ok(match resolve_input(node) {
        Resolved::Str(t) => JsonScalar::Same(t),
        Resolved::Owned(t) => JsonScalar::String(t),
        Resolved::Null => JsonScalar::Other("null".into()),
        Resolved::Bool(b) => JsonScalar::Other(if b { "true" } else { "false" }.into()),
        // Below a million, `%g` writes an integer's own digits.
        Resolved::Int(i) if i.abs() < 1_000_000 => JsonScalar::Other(i.to_string()),
        Resolved::Int(i) => JsonScalar::Other(go_yaml_float(i as f64)),
        Resolved::Float(f) => match json_unsupported_float(f) {
            Some(message) => return Err(JsonError::Unsupported(message)),
            None => JsonScalar::Other(go_yaml_float(f)),
        },
    })
}

fn scalar_through_json(node: &mut Node) -> Result<(), JsonError> {
    // Kustomize writes the resource with go-yaml v3 to reach JSON: a
    // folded string takes the value that write and its reading give it.
    if node.style() == ScalarStyle::Folded && node.tag().is_none() {
        if let Value::Scalar(s) = &mut node.value {
            if let Some(changed) = krusty_yaml::folded::round_trip(&s.text) {
                s.text = changed.into();
            }
        }
    }
    // Plain, untagged and read from a file: plain text that is known to
    // be plain-safe, so only its type decides how it comes back.
    let parsed_plain =
        node.style() == ScalarStyle::Plain && node.tag().is_none() && node.pos().line != 0;
    if parsed_plain && plainly_a_string(node) {
        return Ok(());
    }
    let (text, style) = match json_scalar(node)? {
        JsonScalar::Same(t) => (None, string_style(t, parsed_plain)),
        JsonScalar::String(t) => {
            let style = string_style(&t, false);
            (Some(t), style)
        }
        JsonScalar::Other(t) => (Some(t), ScalarStyle::Plain),
    };
    if let (Some(text), Value::Scalar(s)) = (text, &mut node.value) {
        if s.text != text {
            s.text = text.into();
        }
    }
    if node.style() != style {
        node.set_style(style);
    }
    if node.tag().is_some() {
        node.clear_tag();
    }
    // Read back from text, the value has a type of its own now, like a
    // value read from a file: a field the build made untyped (line 0,
    // such as a name a prefix set) no longer takes the type of whatever
    // text a later replacement writes into it.
    if node.pos().line == 0 {
        node.set_pos(Pos { line: 1, col: 1 });
    }
    Ok(())
}

/// Whether a plain scalar's first character alone shows that it is a
/// string in both YAML 1.1 and 1.2 (every null, boolean, number and
/// timestamp starts with one of `yYnNtTfFoO~.+-` or a digit), so a round
/// trip leaves it as it is. Most values (names, images, labels) are.
fn plainly_a_string(node: &Node) -> bool {
    let Value::Scalar(s) = &node.value else {
        return false;
    };
    match s.text.as_bytes().first() {
        None => false,
        Some(b) => !(b.is_ascii_digit() || b"yYnNtTfFoO~.+-".contains(b) || s.text.contains('\n')),
    }
}

/// How go-yaml v3 writes a string: literal across lines, plain where the
/// plain text reads back as the same string, else quoted. `plain_safe`:
/// the text is known to be valid plain YAML (it was read that way).
fn string_style(text: &str, plain_safe: bool) -> ScalarStyle {
    if text.contains('\n') {
        return ScalarStyle::Literal;
    }
    let reads_back = if plain_safe {
        !krusty_yaml::resolve::needs_quotes(text)
    } else {
        plain_reads_back(text)
    };
    if reads_back {
        ScalarStyle::Plain
    } else {
        ScalarStyle::DoubleQuoted
    }
}

/// Whether go-yaml v3 writes `text` plain: it reads back as the same
/// string (no number, boolean, null, timestamp or YAML 1.1 word) and is
/// safe as plain text on one line.
fn plain_reads_back(text: &str) -> bool {
    let Some(first) = text.chars().next() else {
        return false;
    };
    if "-?:,[]{}#&*!|>'\"%@`".contains(first) || first == ' ' || text.ends_with([' ', ':']) {
        return false;
    }
    let mut previous = ' ';
    for c in text.chars() {
        let unsafe_pair = (previous == ':' && c == ' ') || (previous == ' ' && c == '#');
        if unsafe_pair || (c != ' ' && (c.is_control() || c.is_whitespace() || c == '\u{feff}')) {
            return false;
        }
        previous = c;
    }
    !krusty_yaml::resolve::needs_quotes(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(yaml: &str) -> Result<Node, String> {
        let docs = krusty_yaml::parse_stream(yaml).map_err(|e| e.to_string())?;
        let mut root = docs
            .into_iter()
            .next()
            .and_then(|d| d.root)
            .ok_or("no document")?;
        through_json(&mut root).map_err(|e| e.to_string())?;
        Ok(root)
    }

    fn value<'n>(root: &'n Node, key: &str) -> &'n Node {
        root.get(key).unwrap_or_else(|| panic!("no {key}"))
    }

    #[test]
    fn numbers_take_go_float_form_and_strings_lose_needless_quotes() {
        let root = round_trip(
            "a: 1e3\nb: 1000000\nc: ~\nd: \"x\"\ne: \"5\"\nf: 'yes'\ng: 0o17\nh: 2001-12-14\n",
        )
        .expect("round trip");
        let cases = [
            ("a", "1000", ScalarStyle::Plain),
            ("b", "1e+06", ScalarStyle::Plain),
            ("c", "null", ScalarStyle::Plain),
            ("d", "x", ScalarStyle::Plain),
            ("e", "5", ScalarStyle::DoubleQuoted),
            ("f", "yes", ScalarStyle::DoubleQuoted),
            ("g", "15", ScalarStyle::Plain),
            ("h", "2001-12-14T00:00:00Z", ScalarStyle::DoubleQuoted),
        ];
        for (key, text, style) in cases {
            let v = value(&root, key);
            assert_eq!(v.as_scalar().map(|s| s.text.as_str()), Some(text), "{key}");
            assert_eq!(v.style(), style, "{key}");
        }
    }

    #[test]
    fn infinity_cannot_cross() {
        let err = round_trip("a:\n- .inf\n").expect_err("fails");
        assert_eq!(err, "json: unsupported value: +Inf");
    }
}
