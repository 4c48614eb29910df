//! Flow collections: marked where they start, written back in flow style by
//! the preserving writer, ignored by the Kustomize writer.

use krusty_yaml::{first_root, to_kustomize_yaml, to_yaml_preserving, Node};

fn root(text: &str) -> Node {
    first_root(text).expect("valid").expect("a document")
}

fn preserved(text: &str) -> String {
    to_yaml_preserving(&root(text)).expect("writable")
}

#[test]
fn flow_collections_nested_in_block_come_back_as_written() {
    for text in [
        "metadata: {name: u}\n",
        "metadata:\n  labels: {app: web, tier: front}\n  name: x\n",
        "args: [--port, '8080', \"x y\"]\n",
        "spec:\n  ports: [{port: 80, name: http}, {port: 443}]\n",
        "a: {b: [1, 2, {c: d}], e: {}}\n",
        "items:\n- [a, b]\n- {x: 1}\n- []\n- {}\n",
        "e: {}\nf: []\n",
        "m: {image: nginx:1.27, url: http://x/y}\n",
        "t: {a: !!str 1, b: ~, c: true, d: 1.5}\n",
    ] {
        assert_eq!(preserved(text), text, "{text:?}");
    }
}

#[test]
fn only_the_collection_where_flow_starts_is_marked() {
    let r = root("a: {b: [1]}\nc: [x]\nd:\n  e: 1\n");
    assert!(!r.is_flow());
    let a = r.get("a").unwrap();
    assert!(a.is_flow());
    assert!(!a.get("b").unwrap().is_flow());
    assert!(r.get("c").unwrap().is_flow());
    assert!(!r.get("d").unwrap().is_flow());
    assert!(!r.get("d").unwrap().get("e").unwrap().is_flow());
}

#[test]
fn multi_line_flow_comes_back_on_one_line() {
    assert_eq!(
        preserved("a: {b: 1,\n  c: [x,\n    y]}\nd: 2\n"),
        "a: {b: 1, c: [x, y]}\nd: 2\n"
    );
}

#[test]
fn changed_values_inside_a_flow_map_stay_flow_and_are_quoted_where_needed() {
    let mut r = root("metadata: {name: u, labels: {app: web}}\nspec: 1\n");
    let meta = r.get_mut("metadata").unwrap();
    meta.set("name", Node::string("a, b"));
    meta.set("namespace", Node::string("80"));
    let labels = meta.get_mut("labels").unwrap();
    labels.set("app", Node::string("[x]"));
    labels.set("tier", Node::string("{y}"));
    labels.set("k", Node::string("a: b"));
    labels.set("q", Node::string("it's?"));
    labels.set("multi", Node::string("one\ntwo"));
    labels.set("empty", Node::string(""));
    labels.set(
        "list",
        Node::seq_of([Node::plain("1"), Node::string("x,y")]),
    );
    labels.set("img", Node::string("nginx:1.27"));
    let out = to_yaml_preserving(&r).unwrap();
    assert_eq!(
        out,
        "metadata: {name: 'a, b', labels: {app: '[x]', tier: '{y}', k: 'a: b', q: 'it''s?', \
         multi: \"one\\ntwo\", empty: \"\", list: [1, 'x,y'], img: 'nginx:1.27'}, namespace: \"80\"}\nspec: 1\n"
    );
    // What was written reads back as the same values.
    let back = root(&out);
    assert_eq!(
        to_kustomize_yaml(&back).unwrap(),
        to_kustomize_yaml(&r).unwrap()
    );
}

#[test]
fn comments_around_a_flow_collection_stay() {
    assert_eq!(
        preserved("# head\nmetadata: {name: u} # the name\nspec: [a] # list\n"),
        "# head\nmetadata: {name: u} # the name\nspec: [a] # list\n"
    );
    // A comment put inside a flow collection cannot be written on its one
    // line: the collection is written in block style, keeping it.
    let mut r = root("metadata: {name: u, ns: x}\n");
    let name = r.get_mut("metadata").unwrap().get_mut("name").unwrap();
    name.extras.get_or_insert_with(Default::default).line = Some(" the name".into());
    assert_eq!(
        to_yaml_preserving(&r).unwrap(),
        "metadata:\n  name: u # the name\n  ns: x\n"
    );
}

#[test]
fn the_kustomize_writer_prints_block_style() {
    let text = "metadata: {name: u, labels: {b: '2', a: x}}\nspec:\n  args: [x, z]\n  e: {}\n";
    assert_eq!(
        to_kustomize_yaml(&root(text)).unwrap(),
        "metadata:\n  labels:\n    a: x\n    b: \"2\"\n  name: u\nspec:\n  args:\n  - x\n  - z\n  e: {}\n"
    );
}

#[test]
fn a_document_written_in_flow_comes_back_in_block_style() {
    assert_eq!(
        preserved("{\"apiVersion\": \"v1\", \"data\": {\"a\": \"1\"}, \"list\": [1]}\n"),
        "apiVersion: \"v1\"\ndata:\n  a: \"1\"\nlist:\n- 1\n"
    );
    let mut items = String::new();
    krusty_yaml::emit_seq_items_preserving(&[root("{a: 1, b: [x]}")], &mut items).unwrap();
    assert_eq!(items, "- a: 1\n  b:\n  - x\n");
}

#[test]
fn set_flow_marks_new_collections() {
    let mut m = Node::map_of([(Node::plain("a"), Node::plain("1"))]);
    m.set_flow(true);
    assert!(m.is_flow());
    let mut s = Node::plain("x");
    s.set_flow(true);
    assert!(!s.is_flow());
    let r = Node::map_of([(Node::plain("m"), m.clone())]);
    assert_eq!(to_yaml_preserving(&r).unwrap(), "m: {a: 1}\n");
    assert_eq!(to_kustomize_yaml(&r).unwrap(), "m:\n  a: 1\n");
    m.set_flow(false);
    let r = Node::map_of([(Node::plain("m"), m)]);
    assert_eq!(to_yaml_preserving(&r).unwrap(), "m:\n  a: 1\n");
}
