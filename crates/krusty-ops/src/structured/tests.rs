use super::parse::first_document;
use super::*;

/// The root node of a one-document YAML text.
fn doc(text: &str) -> Node {
    krusty_yaml::parse_stream(text).expect("valid YAML")[0]
        .root
        .clone()
        .expect("a node")
}

/// The string at `data.s` after writing `value` at `path` (`None`: the
/// write into the string did not happen).
fn written(s: &str, path: &str, value: &str, create: bool) -> Option<String> {
    let mut root = Node::map();
    let mut data = Node::map();
    data.set("s", Node::string(s));
    root.set("data", data);
    let value = Node::plain(value);
    let create = create.then_some(NodeKind::Scalar);
    write_into_string(&mut root, path, &value, create)
        .then(|| raw(root.get_path(&["data", "s"]).expect("kept")).to_string())
}

/// `json` (a JSON text) read and written back compactly.
fn compact(json: &str) -> String {
    let mut node = parse_document(json).expect("valid").expect("a node");
    yaml::mark_flow_collections(&mut node, json);
    json::serialize(&node, false).expect("writable")
}

#[test]
fn json_numbers_take_go_forms() {
    for (number, go) in [
        ("1.0", "1"),
        ("1e3", "1000"),
        ("1_000", "1000"),
        ("0x1F", "31"),
        ("-0", "0"),
        ("-0.0", "-0"),
        ("1.5", "1.5"),
        ("1e21", "1e+21"),
        ("1e20", "100000000000000000000"),
        ("0.0000001", "1e-7"),
        ("0.000001", "0.000001"),
        ("18446744073709551615", "18446744073709551615"),
        ("-9223372036854775808", "-9223372036854775808"),
        ("123456789012345678901234", "1.2345678901234569e+23"),
    ] {
        assert_eq!(
            compact(&format!("[{number}]")),
            format!("[{go}]"),
            "{number}"
        );
    }
}

#[test]
fn json_strings_take_go_escapes() {
    assert_eq!(
        compact(r#"{"a": "<b> & c", "n": "x\u2028y\u2029z", "c": "\e\b\f\n\r\t\u0001"}"#),
        r#"{"a":"\u003cb\u003e \u0026 c","c":"\u001b\b\f\n\r\t\u0001","n":"x\u2028y\u2029z"}"#
    );
    assert_eq!(
        compact(r#"["é", "\"q\"", "a\\b"]"#),
        r#"["é","\"q\"","a\\b"]"#
    );
}

#[test]
fn json_keys_sorted_and_types_kept() {
    assert_eq!(
        compact(r#"{"b": true, "a": null, "c": "1", "d": [], "e": {}}"#),
        r#"{"a":null,"b":true,"c":"1","d":[],"e":{}}"#
    );
}

#[test]
fn json_infinities_and_bad_tags_cannot_be_written() {
    let node = doc("[.inf]");
    assert_eq!(
        json::serialize(&node, false).map_err(|e| e.to_string()),
        Err("json: unsupported value: +Inf".to_string())
    );
    let mut node = doc(r#"{"replicas": 1}"#);
    set_text_keeping_type(node.get_mut("replicas").expect("present"), "many");
    assert!(matches!(
        json::serialize(&node, false),
        Err(json::JsonError::Tag(_))
    ));
}

#[test]
fn json_errors_print_gos_words() {
    let duplicate = json::JsonError::DuplicateKey { key: "a".into() };
    assert_eq!(
        duplicate.to_string(),
        "yaml: mapping key \"a\" already defined"
    );
    assert_eq!(
        json::JsonError::NonStringKey.to_string(),
        "json: unsupported type: map[interface {}]interface {}"
    );
    assert_eq!(
        json::JsonError::UnsupportedFloat(f64::NAN).to_string(),
        "json: unsupported value: NaN"
    );
}

#[test]
fn json_pretty_is_marshal_indent() {
    let node = doc(r#"{"b": [1, {"c": 2}], "a": {}, "d": []}"#);
    assert_eq!(
        json::serialize(&node, true).expect("writable"),
        "{\n  \"a\": {},\n  \"b\": [\n    1,\n    {\n      \"c\": 2\n    }\n  ],\n  \"d\": []\n}"
    );
}

#[test]
fn json_is_pretty_only_after_a_line_break_and_two_spaces() {
    let pretty = "{\n    \"a\": 1\n}\n";
    assert_eq!(
        written(pretty, "data.s.a", "2", false).as_deref(),
        Some("{\n  \"a\": 2\n}")
    );
    let tabs = "{\n\t\"a\": 1\n}";
    assert_eq!(
        written(tabs, "data.s.a", "2", false).as_deref(),
        Some(r#"{"a":2}"#)
    );
    let one_line = "{\"a  b\": 1}\n";
    assert_eq!(
        written(one_line, "data.s.a  b", "2", false).as_deref(),
        Some("{\n  \"a  b\": 2\n}")
    );
}

#[test]
fn json_values_keep_their_types() {
    let json = r#"{"port": 1, "name": "x", "on": true}"#;
    assert_eq!(
        written(json, "data.s.port", "9090", false).as_deref(),
        Some(r#"{"name":"x","on":true,"port":9090}"#)
    );
    assert_eq!(
        written(json, "data.s.name", "9090", false).as_deref(),
        Some(r#"{"name":"9090","on":true,"port":1}"#)
    );
    // Text that is no number leaves the string to the usual walk.
    assert_eq!(written(json, "data.s.port", "many", false), None);
    assert_eq!(written(json, "data.s.on", "1", false), None);
}

#[test]
fn json_created_fields_take_the_type_of_their_text() {
    let json = r#"{"a": {}}"#;
    for (value, out) in [
        ("9090", r#"{"a":{"b":9090}}"#),
        ("true", r#"{"a":{"b":true}}"#),
        ("x", r#"{"a":{"b":"x"}}"#),
        ("", r#"{"a":{"b":""}}"#),
    ] {
        assert_eq!(
            written(json, "data.s.a.b", value, true).as_deref(),
            Some(out),
            "{value}"
        );
    }
    assert_eq!(written(json, "data.s.a.b", "x", false), None);
}

#[test]
fn json_lists_take_indexes_selectors_and_wildcards() {
    let json = r#"[{"name": "a", "v": 1}, {"name": "ab", "v": 2}]"#;
    assert_eq!(
        written(json, "data.s.1.v", "7", false).as_deref(),
        Some(r#"[{"name":"a","v":1},{"name":"ab","v":7}]"#)
    );
    assert_eq!(
        written(json, "data.s.[name=b].v", "7", false).as_deref(),
        Some(r#"[{"name":"a","v":1},{"name":"ab","v":7}]"#)
    );
    assert_eq!(
        written(json, "data.s.*.v", "7", false).as_deref(),
        Some(r#"[{"name":"a","v":7},{"name":"ab","v":7}]"#)
    );
}

#[test]
fn a_json_string_inside_json_is_not_written() {
    let json = r#"{"z": 1, "inner": "{\"a\": 1}"}"#;
    assert_eq!(
        written(json, "data.s.inner.a", "2", false).as_deref(),
        Some(r#"{"inner":"{\"a\": 1}","z":1}"#)
    );
}

#[test]
fn yaml_text_keeps_comments_quotes_flow_and_types() {
    let text = "# top\nserver:\n    host: a   # where\n    quoted: \"q\"\n    flow: {a: 1, b: [x, 'y z']}\nlist:\n    - 1\nname: web\nreplicas: 1\n";
    let out = "# top\nserver:\n  host: h # where\n  quoted: \"q\"\n  flow: {a: 1, b: [x, 'y z']}\nlist:\n- 1\nname: web\nreplicas: 1";
    assert_eq!(
        written(text, "data.s.server.host", "h", false).as_deref(),
        Some(out)
    );
    let name = written(text, "data.s.name", "8443", false).expect("written");
    assert!(name.contains("\nname: \"8443\"\n"), "{name}");
    let replicas = written(text, "data.s.replicas", "many", false).expect("written");
    assert!(replicas.ends_with("\nreplicas: !!int many"), "{replicas}");
    let flow = written(text, "data.s.server.flow.a", "2", false).expect("written");
    assert!(flow.contains("flow: {a: 2, b: [x, 'y z']}"), "{flow}");
}

#[test]
fn yaml_created_fields() {
    let text = "name: web\n";
    assert_eq!(
        written(text, "data.s.empty", "", true).as_deref(),
        Some("name: web\nempty:")
    );
    assert_eq!(
        written(text, "data.s.ports.0", "80", true).as_deref(),
        Some("name: web\nports:\n- 80")
    );
    assert_eq!(
        written("a: x\n---\nb: y\n", "data.s.a", "z", false).as_deref(),
        Some("a: z")
    );
}

#[test]
fn paths_that_reach_nothing_are_left_to_the_usual_walk() {
    assert_eq!(written(r#"{"a": 1}"#, "data.s.b", "2", false), None);
    assert_eq!(written("", "data.s.b", "2", true), None);
    assert_eq!(written(r#"{"a": 1,"#, "data.s.a", "2", false), None);
    assert_eq!(written("hello", "data.s.b", "2", false), None);
    assert_eq!(written(r#"{"a": 1}"#, "data", "2", false), None);
    // A null in a string keeps nothing created under it.
    assert_eq!(written("~", "data.s.b", "2", true).as_deref(), Some("~"));
}

#[test]
fn syntax_errors_take_go_yaml_wording() {
    for (text, error) in [
        (
            r#"{"a": 1,"#,
            "yaml: line 1: did not find expected node content",
        ),
        (
            r#"{"a": 1"#,
            "yaml: line 1: did not find expected ',' or '}'",
        ),
        ("[1", "yaml: line 1: did not find expected ',' or ']'"),
        (r#"{"p": "a\/b"}"#, "yaml: found unknown escape character"),
    ] {
        assert_eq!(
            parse_document(text).map_err(|e| e.to_string()),
            Err(error.to_string()),
            "{text}"
        );
    }
}

#[test]
fn only_the_first_document_is_read() {
    assert_eq!(first_document("a: 1\n---\nb: [\n"), "a: 1\n");
    assert_eq!(first_document("---\na: 1\n...\nx"), "---\na: 1\n");
    assert_eq!(first_document("# c\n---\na: 1\n"), "# c\n---\na: 1\n");
    assert_eq!(parse_document("# only a comment\n"), Ok(None));
}
