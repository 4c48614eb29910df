//! `strategic_merge_with` against Kustomize.
//!
//! Each directory under `tests/smp_schema/` is a case: `crd.yaml` (the
//! CustomResourceDefinition), `openapi.yaml` (the same schema in the
//! Swagger 2.0 form Kustomize's `openapi: path:` reads, with `$ref`s),
//! `resource.yaml`, `patch.yaml`, and `expected.yaml`, which is what
//! `kubectl kustomize CASE` (Kustomize v5.5.0) prints for the case's
//! `kustomization.yaml` (`regenerate.sh` writes them all again). Kustomize's
//! `crds:` field does not give strategic merge its keys, so the oracle
//! reads the schema as `openapi:`; the merge must give the same result
//! with either form of the schema. Kustomize sorts keys and normalizes
//! styles, and `strategic_merge_with` keeps the target's order and style,
//! so results are compared as values (key order aside, list order kept).

use std::path::{Path, PathBuf};

use krusty_fn::{
    parse_object, parse_objects, strategic_merge, strategic_merge_with, to_yaml, MergeSchema, Node,
};

fn case_dir(case: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/smp_schema")
        .join(case)
}

fn read(case: &str, file: &str) -> String {
    let path = case_dir(case).join(file);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn docs(case: &str, file: &str) -> Vec<Node> {
    parse_objects(&read(case, file)).unwrap()
}

fn name(node: &Node) -> &str {
    node.get_path(&["metadata", "name"])
        .and_then(Node::as_str)
        .unwrap_or("")
}

fn value(node: &Node) -> serde_json::Value {
    serde_json::to_value(node).unwrap()
}

/// Merges each patch of the case into the resource of its name and
/// compares the results with Kustomize's.
fn check(case: &str, schema: &MergeSchema) {
    let mut resources = docs(case, "resource.yaml");
    for patch in docs(case, "patch.yaml") {
        let target = resources
            .iter_mut()
            .find(|r| name(r) == name(&patch))
            .expect("a resource for each patch");
        strategic_merge_with(target, patch, schema);
    }
    let expected = docs(case, "expected.yaml");
    assert_eq!(resources.len(), expected.len(), "{case}: resource count");
    for want in &expected {
        let got = resources.iter().find(|r| name(r) == name(want)).unwrap();
        assert_eq!(
            value(got),
            value(want),
            "{case}: {} differs from Kustomize's; got:\n{}",
            name(want),
            to_yaml(got).unwrap()
        );
    }
}

/// Checks a case with the schema read from its CRD and from its OpenAPI
/// document.
fn check_both(case: &str) {
    let from_crd = MergeSchema::from_yaml(&read(case, "crd.yaml")).unwrap();
    check(case, &from_crd);
    let from_openapi = MergeSchema::from_yaml(&read(case, "openapi.yaml")).unwrap();
    check(case, &from_openapi);
}

#[test]
fn merge_key_merges_items_patch_first_and_scalars_as_a_set() {
    check_both("merge-key");
}

#[test]
fn list_map_keys_are_composite_keys_when_the_strategy_is_merge() {
    check_both("list-map-keys");
}

#[test]
fn replace_strategy_or_none_replaces_the_list() {
    check_both("replace");
}

#[test]
fn keys_deep_inside_objects_lists_and_maps() {
    check_both("nested");
}

#[test]
fn directives_in_items_lists_and_mappings() {
    check_both("directives");
}

#[test]
fn each_version_has_its_schema() {
    check_both("versions");
}

#[test]
fn empty_deleted_added_repeated_and_multi_key_lists() {
    check_both("edges");
}

/// A patch item without its merge key is dropped, and the rest merges as
/// usual. Kustomize's result there is erratic and loses target items (with
/// the `edges` schema and parts `a`, `b`: patch `[{name: b, color: blue},
/// {size: 9}]` gives `[b]`, `[{size: 9}]` gives `[]`, `[{name: c}, {size:
/// 9}, {name: a, color: red}]` gives `[c, a]`), so this is not compared
/// with it.
#[test]
fn patch_items_without_their_key_are_dropped() {
    let schema = MergeSchema::from_yaml(&read("edges", "crd.yaml")).unwrap();
    let mut board = parse_object(
        "apiVersion: example.com/v1\nkind: Board\nmetadata: {name: b}\nspec:\n  parts:\n  - name: a\n    size: 1\n  - name: b\n    size: 2\n",
    )
    .unwrap();
    let patch =
        parse_object("spec:\n  parts:\n  - size: 9\n  - name: b\n    color: blue\n").unwrap();
    strategic_merge_with(&mut board, patch, &schema);
    assert_eq!(
        to_yaml(&board).unwrap(),
        "apiVersion: example.com/v1\nkind: Board\nmetadata: {name: b}\nspec:\n  parts:\n  - name: b\n    size: 2\n    color: blue\n  - name: a\n    size: 1\n"
    );
}

#[test]
fn the_schema_says_which_lists_merge_by_what() {
    for file in ["crd.yaml", "openapi.yaml"] {
        let schema = MergeSchema::from_yaml(&read("list-map-keys", file)).unwrap();
        let keys = |path: &[&str]| {
            schema
                .list_merge_keys("net.example.com/v1alpha1", "Gateway", path)
                .map(<[String]>::to_vec)
        };
        assert_eq!(
            keys(&["spec", "listeners"]),
            Some(vec!["port".into(), "protocol".into()])
        );
        assert_eq!(keys(&["spec", "routes"]), None);
        assert_eq!(keys(&["spec", "backends"]), Some(vec!["host".into()]));
        assert!(schema.knows("net.example.com/v1alpha1", "Gateway"));
        assert!(!schema.knows("net.example.com/v1", "Gateway"));
    }
    let nested = MergeSchema::from_yaml(&read("nested", "openapi.yaml")).unwrap();
    let steps = ["spec", "stages", "steps"];
    let keys = nested.list_merge_keys("ci.example.com/v1", "Pipeline", &steps);
    assert_eq!(keys, Some(&["id".to_string()][..]));
    let members = ["spec", "pools", "east", "members"];
    let keys = nested.list_merge_keys("ci.example.com/v1", "Pipeline", &members);
    assert_eq!(keys, Some(&["host".to_string()][..]));
    let hosts = MergeSchema::from_yaml(&read("merge-key", "crd.yaml")).unwrap();
    let keys = hosts.list_merge_keys("example.com/v1", "Widget", &["spec", "hosts"]);
    assert_eq!(keys, Some(&[][..]));
}

/// Kinds the schema does not know (built-in ones, other custom ones, other
/// versions) merge exactly as `strategic_merge` does.
#[test]
fn unknown_kinds_merge_as_before() {
    let schema = MergeSchema::from_yaml(&read("merge-key", "crd.yaml")).unwrap();
    let cases = [
        (
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  template:\n    spec:\n      containers:\n      - name: app # main\n        image: a\n      - name: old\n        image: o\n      tolerations: [{key: a}]\n",
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  template:\n    spec:\n      containers:\n      - name: side\n        image: s\n      - name: app\n        image: b\n      - name: old\n        $patch: delete\n      tolerations: [{key: b}]\n",
        ),
        (
            "apiVersion: example.com/v1\nkind: Gadget\nmetadata: {name: g}\nspec:\n  parts:\n  - name: a\n  - name: b\n  containers:\n  - name: c\n    image: x\n",
            "spec:\n  parts:\n  - name: b\n    size: 2\n  containers:\n  - name: c\n    image: y\n",
        ),
        (
            "apiVersion: example.com/v2\nkind: Widget\nmetadata: {name: w}\nspec:\n  parts:\n  - name: a\n  - name: b\n",
            "spec:\n  parts:\n  - name: b\n    size: 2\n",
        ),
    ];
    for (target, patch) in cases {
        let mut before = parse_object(target).unwrap();
        let mut with = before.clone();
        strategic_merge(&mut before, parse_object(patch).unwrap());
        strategic_merge_with(&mut with, parse_object(patch).unwrap(), &schema);
        assert_eq!(to_yaml(&with).unwrap(), to_yaml(&before).unwrap());
    }
}

#[test]
fn comments_and_order_of_what_stays_are_kept() {
    let schema = MergeSchema::from_yaml(&read("merge-key", "crd.yaml")).unwrap();
    let mut widget = parse_object(
        "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w # the widget\nspec:\n  hosts: [h1, h2] # where\n  parts:\n  - name: a # first\n    size: 1\n  - size: 2 # size first\n    name: b\n",
    )
    .unwrap();
    let patch = parse_object(
        "spec:\n  parts:\n  - name: b\n    size: 3\n    color: red\n  hosts: [h0]\n  extra: {on: true}\n",
    )
    .unwrap();
    strategic_merge_with(&mut widget, patch, &schema);
    assert_eq!(
        to_yaml(&widget).unwrap(),
        "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w # the widget\nspec:\n  hosts: [h0, h1, h2] # where\n  parts:\n  - size: 3 # size first\n    name: b\n    color: red\n  - name: a # first\n    size: 1\n  extra: {on: true}\n"
    );
}

/// A bare OpenAPI schema for an apiVersion and kind, a `List` of CRDs and a
/// `v1beta1` CRD read like a `v1` CRD; `$ref`s in a bare schema name the
/// definitions of OpenAPI documents.
#[test]
fn other_forms_of_schemas() {
    let crd = parse_object(&read("merge-key", "crd.yaml")).unwrap();
    let bare = crd
        .get_path(&["spec", "versions"])
        .and_then(|v| v.as_seq())
        .and_then(|v| v[0].get_path(&["schema", "openAPIV3Schema"]))
        .unwrap();
    let mut schema = MergeSchema::new();
    schema.add_kind("example.com/v1", "Widget", bare).unwrap();
    check("merge-key", &schema);

    let list = format!(
        "apiVersion: v1\nkind: List\nitems:\n- {}",
        read("merge-key", "crd.yaml")
            .trim_end()
            .replace('\n', "\n  ")
    );
    check("merge-key", &MergeSchema::from_yaml(&list).unwrap());

    let v1beta1 = r#"
apiVersion: apiextensions.k8s.io/v1beta1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  version: v1
  validation:
    openAPIV3Schema:
      properties:
        spec:
          properties:
            parts:
              type: array
              x-kubernetes-patch-merge-key: name
              x-kubernetes-patch-strategy: merge
              items:
                properties:
                  ports:
                    type: array
                    x-kubernetes-patch-merge-key: port
                    x-kubernetes-patch-strategy: merge
                    items: {type: object}
            hosts:
              type: array
              x-kubernetes-patch-strategy: merge
              items: {type: string}
"#;
    check("merge-key", &MergeSchema::from_yaml(v1beta1).unwrap());

    let mut by_ref = MergeSchema::from_yaml(&read("nested", "openapi.yaml")).unwrap();
    let spec = parse_object(
        "properties:\n  spec: {$ref: '#/definitions/com.example.ci.v1.PipelineSpec'}\n",
    )
    .unwrap();
    by_ref
        .add_kind("ci.example.com/v1", "Pipeline", &spec)
        .unwrap();
    check("nested", &by_ref);
}

#[test]
fn documents_that_are_not_schemas_are_errors() {
    let errors = [
        (
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n",
            "not from a ConfigMap",
        ),
        (
            "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: x.example.com}\nspec:\n  names: {kind: X}\n  versions: []\n",
            "CustomResourceDefinition 'x.example.com': spec.group is missing",
        ),
        (
            "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: x.example.com}\nspec:\n  group: example.com\n  names: {kind: X}\n  versions:\n  - name: v1\n    schema:\n      openAPIV3Schema:\n        properties: [a]\n",
            "CustomResourceDefinition 'x.example.com': spec.versions[0].schema.openAPIV3Schema.properties must be a mapping",
        ),
        ("definitions: [a]\n", "OpenAPI definitions must be a mapping"),
    ];
    for (text, message) in errors {
        let error = MergeSchema::from_yaml(text).unwrap_err().to_string();
        assert!(error.contains(message), "{error:?} lacks {message:?}");
    }
}

/// `$patch: replace` at the top is ignored by Kustomize (the resource
/// stays as it was: `crates/krusty-cli/tests/patches/
/// smp-directive-replace-whole-resource`), `delete` deletes the resource,
/// which is the caller's to do, and `merge` merges.
#[test]
fn directives_at_the_top() {
    let schema = MergeSchema::from_yaml(&read("merge-key", "crd.yaml")).unwrap();
    let widget = "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\nspec:\n  parts:\n  - name: a\n";
    for (directive, expected) in [
        ("replace", widget.to_string()),
        ("delete", widget.to_string()),
        (
            "merge",
            widget.replace("- name: a\n", "- name: b\n  - name: a\n"),
        ),
    ] {
        let mut target = parse_object(widget).unwrap();
        let patch = format!("$patch: {directive}\nspec:\n  parts:\n  - name: b\n");
        strategic_merge_with(&mut target, parse_object(&patch).unwrap(), &schema);
        assert_eq!(to_yaml(&target).unwrap(), expected, "{directive}");
    }
}
