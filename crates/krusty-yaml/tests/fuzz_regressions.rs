//! Inputs found by the fuzz targets (fuzz/, docs/fuzzing.md), minimised:
//! each test feeds one and checks the property the fuzzer found broken.

use krusty_yaml::{parse_stream, to_go_json, to_kustomize_yaml, to_yaml_preserving, Node};

/// The first document's root of `text`.
fn root(text: &str) -> Node {
    let docs = parse_stream(text).unwrap_or_else(|e| panic!("{text:?} does not parse: {e}"));
    docs.into_iter()
        .find_map(|d| d.root)
        .unwrap_or_else(|| panic!("{text:?} has no document"))
}

/// `text` read back gives the JSON value `json`.
fn assert_reads_back_as(text: &str, json: &str) {
    let again = root(text);
    assert_eq!(to_go_json(&again), json, "written as:\n{text}");
}

/// A key over 128 characters is written `? key` / `: value`, as go-yaml
/// writes it; when the value is a mapping, its first entry shares the `: `
/// line (`: name: x`), which go-yaml reads and so must the reader.
#[test]
fn explicit_key_with_compact_mapping_value() {
    let key = "k".repeat(130);
    let src = format!("data:\n  {key}:\n    name: x\n    list:\n    - a\n");
    let tree = root(&src);
    let json = to_go_json(&tree);
    let written = to_kustomize_yaml(&tree).expect("writable");
    assert!(
        written.contains(&format!("? {key}\n  : list:")),
        "{written}"
    );
    assert_reads_back_as(&written, &json);
}

/// A key that starts with a byte order mark (U+FEFF after a line break):
/// the preserving writer must quote it, since the reader drops a mark at the
/// start of the text (the Kustomize writer prints `"\uFEFF..."`).
#[test]
fn bom_key_survives_preserving_round_trip() {
    let tree = root("\n\u{feff}apiVersion: v1\nkind: x\n");
    let json = to_go_json(&tree);
    let written = to_yaml_preserving(&tree).expect("writable");
    assert_reads_back_as(&written, &json);
}

/// go-yaml refuses a plain scalar that starts with an indicator; so must the
/// reader (kubectl fails on each of these as a resource file).
#[test]
fn plain_scalar_cannot_start_with_an_indicator() {
    for src in [
        "data: {big: |+1234567890test}\n",
        "data: {name: c,- amespace: default}\n",
        "# c\n %YAML 1.2d patches\n",
    ] {
        assert!(parse_stream(src).is_err(), "{src:?} was accepted");
    }
}

/// A verbatim tag must be closed on its line (`!<...>`); go-yaml fails with
/// "did not find expected tag URI".
#[test]
fn unclosed_verbatim_tag_is_an_error() {
    let src = "data:\n  k: !<<x\n  j: y\n";
    assert!(parse_stream(src).is_err(), "{src:?} was accepted");
}

/// A flow sequence entry cannot start with `- `; go-yaml fails with "did
/// not find expected node content".
#[test]
fn block_entry_inside_flow_sequence_is_an_error() {
    let src = "command: [\"/bin/web\", - name: serve]\n";
    assert!(parse_stream(src).is_err(), "{src:?} was accepted");
}

/// A literal scalar whose text starts with a line break and whose lines
/// start with `|`: the preserving writer's indentation indicator must
/// match the indentation it writes.
#[test]
fn literal_with_leading_break_survives_preserving_round_trip() {
    let tree = root("|\n\n |  \n  \n \n");
    let json = to_go_json(&tree);
    let written = to_yaml_preserving(&tree).expect("writable");
    assert_reads_back_as(&written, &json);
}

/// A document that is only a literal scalar starting with a line break: the
/// Kustomize writer's indentation indicator must match the indentation it
/// writes (resources are mappings, so a build never prints such a document).
#[test]
fn root_literal_with_leading_break_round_trips() {
    let tree = root("|-\n\n Ma- *\n");
    let json = to_go_json(&tree);
    let written = to_kustomize_yaml(&tree).expect("writable");
    assert_reads_back_as(&written, &json);
}

/// The same text inside a mapping reads back.
#[test]
fn nested_literal_with_leading_break_round_trips() {
    let tree = root("a: |-\n\n  Ma- *\n");
    let json = to_go_json(&tree);
    let written = to_kustomize_yaml(&tree).expect("writable");
    assert_reads_back_as(&written, &json);
}

/// A merge key whose value is a scalar fails in a single-pair mapping of a
/// flow sequence too, as in go-yaml (kubectl: "map merge requires map or
/// sequence of maps as the value").
#[test]
fn merge_key_in_flow_pair_needs_a_mapping() {
    let src = "me: [<<: \"c.local\"]\n";
    assert!(parse_stream(src).is_err(), "{src:?} was accepted");
}

/// A flow mapping continued at column 0 of a block mapping's value, with a
/// lone `-` there: go-yaml fails with "did not find expected node content".
#[test]
fn flow_mapping_dash_at_column_zero_is_an_error() {
    let src = "o:  {spec:\n-,:ath: a}\n";
    assert!(parse_stream(src).is_err(), "{src:?} was accepted");
}

/// A lone `-` in a flow sequence is the string "-", as go-yaml reads it
/// (kubectl prints `- '-'`); the preserving writer's `- -` reads back so.
#[test]
fn lone_dash_in_flow_sequence_is_a_string() {
    let tree = root("a: [-]\n");
    assert_eq!(to_go_json(&tree), r#"{"a":["-"]}"#);
    let written = to_yaml_preserving(&tree).expect("writable");
    assert_reads_back_as(&written, r#"{"a":["-"]}"#);
}

/// A block scalar's header comment (`|- # note`, `>#`) stays a comment: the
/// preserving writer must not move it into the scalar's text.
#[test]
fn block_scalar_header_comment_survives_preserving_round_trip() {
    for src in ["a: |- # note\n  e\n", "a: >#\n e\n"] {
        let tree = root(src);
        let json = to_go_json(&tree);
        let written = to_yaml_preserving(&tree).expect("writable");
        assert_reads_back_as(&written, &json);
    }
}

/// A single-quoted scalar whose text holds a line break (a blank line in
/// its source): the preserving writer double-quotes it, since a break
/// written inside single quotes reads back as a space.
#[test]
fn single_quoted_line_break_survives_preserving_round_trip() {
    let tree = root("a: 'x\n\n  y'\n");
    assert_eq!(to_go_json(&tree), r#"{"a":"x\ny"}"#);
    let written = to_yaml_preserving(&tree).expect("writable");
    assert_reads_back_as(&written, r#"{"a":"x\ny"}"#);
}

/// A plain scalar of several lines with a line comment, written as a
/// literal block: the comment goes on the block's header, not after its
/// text (where it would be text).
#[test]
fn comment_of_a_multi_line_plain_scalar_stays_a_comment() {
    for src in [
        "atet\n\nac eh! #\n",
        "a: x\n\n  y # note\n",
        "- x\n\n  y # note\n",
    ] {
        let tree = root(src);
        let json = to_go_json(&tree);
        let written = to_yaml_preserving(&tree).expect("writable");
        assert_reads_back_as(&written, &json);
    }
}

/// A long scalar that is a whole document, folded where its next line
/// starts with `---` or `...`: those lines are indented, or they would end
/// the document.
#[test]
fn folded_root_scalar_does_not_end_its_document() {
    for n in 60..100 {
        for marker in ["---", "..."] {
            for quote in ["", "'", "\""] {
                let word = "x".repeat(n);
                let src = format!("{quote}{word} {marker} y z{quote}\n");
                let tree = root(&src);
                let json = to_go_json(&tree);
                let written = to_kustomize_yaml(&tree).expect("writable");
                assert_reads_back_as(&written, &json);
                let written = to_yaml_preserving(&tree).expect("writable");
                assert_reads_back_as(&written, &json);
            }
        }
    }
}

/// `#` right after `{`, `[` or `,` starts no scalar (a comment needs a blank
/// before it): go-yaml fails with "did not find expected node content".
#[test]
fn hash_cannot_start_a_flow_scalar() {
    for src in ["data: {#}\n", "data: [#]\n", "k: {#: x}\n"] {
        assert!(parse_stream(src).is_err(), "{src:?} was accepted");
    }
}
