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
    go_yaml_float, json_unsupported_float, resolve_input, CompactString, Node, Pos, Resolved,
    ScalarStyle, Value,
};

/// Gives every value under `node` (not the keys: they are strings either
/// way) its form after a JSON round trip. Fails, as Go's JSON encoder
/// does, on an infinite or NaN number.
pub fn through_json(node: &mut Node) -> Result<(), String> {
    match &mut node.value {
        Value::Map(entries) => {
            for (_, v) in entries.iter_mut() {
                through_json(v)?;
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

/// The text a scalar has after a JSON round trip, and whether it is a
/// string; `None` when JSON cannot hold it.
pub fn json_text(node: &Node) -> Result<(CompactString, bool), String> {
    Ok(match resolve_input(node) {
        Resolved::Null => ("null".into(), false),
        Resolved::Bool(b) => (if b { "true" } else { "false" }.into(), false),
        Resolved::Int(i) => (go_yaml_float(i as f64).into(), false),
        Resolved::Float(f) => match json_unsupported_float(f) {
            Some(message) => return Err(message),
            None => (go_yaml_float(f).into(), false),
        },
        Resolved::Str(t) => (t.into(), true),
        Resolved::Owned(t) => (t.into(), true),
    })
}

fn scalar_through_json(node: &mut Node) -> Result<(), String> {
    let (text, is_string) = json_text(node)?;
    let style = if !is_string {
        ScalarStyle::Plain
    } else if text.contains('\n') {
        ScalarStyle::Literal
    } else if plain_reads_back(&text) {
        ScalarStyle::Plain
    } else {
        ScalarStyle::DoubleQuoted
    };
    if let Value::Scalar(s) = &mut node.value {
        if s.text != text {
            s.text = text;
        }
    }
    node.set_style(style);
    node.clear_tag();
    // Read back from text, the value has a type of its own now, like a
    // value read from a file: a field the build made untyped (line 0,
    // such as a name a prefix set) no longer takes the type of whatever
    // text a later replacement writes into it.
    if node.pos().line == 0 {
        node.set_pos(Pos { line: 1, col: 1 });
    }
    Ok(())
}

/// Whether go-yaml v3 writes `text` plain: it reads back as the same
/// string (no number, boolean, null, timestamp or YAML 1.1 word) and is
/// safe as plain text on one line.
fn plain_reads_back(text: &str) -> bool {
    let Some(first) = text.chars().next() else {
        return false;
    };
    if krusty_yaml::resolve::needs_quotes(text)
        || first.is_whitespace()
        || text.ends_with(char::is_whitespace)
        || text.ends_with(':')
        || "-?:,[]{}#&*!|>'\"%@`".contains(first)
        || text.contains(": ")
        || text.contains(" #")
    {
        return false;
    }
    text.chars()
        .all(|c| c == ' ' || !(c.is_control() || c.is_whitespace() || c == '\u{feff}'))
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
        through_json(&mut root)?;
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
