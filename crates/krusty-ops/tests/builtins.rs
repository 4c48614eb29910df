//! Each builtin on its own: resources in, resources out (or an error).
//! Expected texts follow `kubectl kustomize` v5.5.0 for the same inputs.

use krusty_ops::builtins::generator::{GeneratedKind, GeneratorArgs};
use krusty_ops::builtins::hash::AddHashSuffixes;
use krusty_ops::builtins::nameref::FixNameReferences;
use krusty_ops::builtins::namespace::{SetNamespace, SubjectsMode};
use krusty_ops::builtins::prefix_suffix::AddNameAffixes;
use krusty_ops::builtins::replicas::SetReplicas;
use krusty_ops::Env;
use krusty_ops::KustomizeVersion;
use krusty_ops::{Builtin, TransformerConfig};
use krusty_resource::{Origin, ResMap, Resource};

fn resmap(text: &str) -> ResMap {
    let mut m = ResMap::new();
    for d in krusty_yaml::parse_stream(text).expect("test YAML parses") {
        if let Some(root) = d.root {
            m.append(Resource::from_node(root).expect("a resource"))
                .expect("unique");
        }
    }
    m
}

fn render(m: &ResMap) -> String {
    m.iter()
        .map(|r| krusty_yaml::to_kustomize_yaml(&r.node).expect("emits"))
        .collect::<Vec<_>>()
        .join("---\n")
}

fn origin() -> Origin {
    Origin::File("kustomization.yaml".into())
}

fn generator(text: &str) -> Builtin {
    let node = krusty_yaml::parse_stream(text).expect("parses")[0]
        .root
        .clone()
        .expect("root");
    Builtin::Generate(
        GeneratorArgs::from_node(
            GeneratedKind::ConfigMap,
            &node,
            "configMapGenerator",
            true,
            KustomizeVersion::default(),
        )
        .expect("valid generator"),
    )
}

#[test]
fn namespace_skips_cluster_scoped_kinds_and_sets_default_subjects() {
    let mut m = resmap(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n---\n\
         apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: cr\n---\n\
         apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata:\n  name: rb\n\
         subjects:\n- kind: ServiceAccount\n  name: default\n- kind: ServiceAccount\n  name: other\n",
    );
    SetNamespace {
        namespace: "prod".into(),
        specs: TransformerConfig::defaults(KustomizeVersion::default())
            .namespace
            .clone(),
        unset_only: false,
        subjects: SubjectsMode::DefaultOnly,
    }
    .apply(&mut m, KustomizeVersion::default())
    .expect("applies");
    assert_eq!(
        render(&m),
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n  namespace: prod\n---\n\
         apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: cr\n---\n\
         apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata:\n  name: rb\n  namespace: prod\n\
         subjects:\n- kind: ServiceAccount\n  name: default\n  namespace: prod\n- kind: ServiceAccount\n  name: other\n"
    );
}

#[test]
fn prefixes_skip_crds_and_namespaces_and_remember_old_names() {
    let mut m = resmap(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n---\n\
         apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ns\n---\n\
         apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: crd\n",
    );
    AddNameAffixes {
        prefix: "p-".into(),
        suffix: String::new(),
        specs: TransformerConfig::defaults(KustomizeVersion::default())
            .name_prefix
            .clone(),
    }
    .apply(&mut m)
    .expect("applies");
    let names: Vec<&str> = m.iter().map(Resource::name).collect();
    assert_eq!(names, ["p-c", "ns", "crd"]);
    let cm = m.iter().next().expect("first");
    assert_eq!(cm.original_id().name, "c");
    assert_eq!(cm.meta.prefixes, ["p-"]);
}

#[test]
fn replicas_match_by_name_and_fail_when_nothing_matches() {
    let mut m = resmap("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n");
    let op = |name: &str| SetReplicas {
        name: name.into(),
        count: 3,
        specs: TransformerConfig::defaults(KustomizeVersion::default())
            .replicas
            .clone(),
        written_at: Default::default(),
    };
    op("web").apply(&mut m).expect("applies");
    assert!(render(&m).ends_with("spec:\n  replicas: 3\n"));
    let err = op("nope").apply(&mut m).expect_err("no match");
    assert!(err
        .to_string()
        .starts_with("resource with name nope does not match a config"));
}

#[test]
fn hash_suffixes_then_name_references_follow_the_rename() {
    let mut m = resmap(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n\
         \x20     containers:\n      - name: c\n        envFrom:\n        - configMapRef:\n            name: cfg\n\
         \x20     volumes:\n      - name: v\n        configMap:\n          name: cfg\n",
    );
    generator("name: cfg\nliterals: [a=b]\n")
        .apply(&mut m, &Env::detached(), &origin())
        .expect("generates");
    AddHashSuffixes.apply(&mut m).expect("hashes");
    FixNameReferences {
        back_refs: TransformerConfig::defaults(KustomizeVersion::default())
            .name_reference
            .clone(),
    }
    .apply(&mut m)
    .expect("fixes references");
    let out = render(&m);
    let hashed = m.iter().nth(1).expect("the ConfigMap").name().to_string();
    assert!(hashed.starts_with("cfg-") && hashed.len() == "cfg-".len() + 10);
    assert_eq!(out.matches(&format!("name: {hashed}")).count(), 3, "{out}");
}

#[test]
fn merge_generators_merge_data_and_keep_the_existing_name() {
    let mut m = resmap(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\ndata:\n  a: old\n  b: kept\n",
    );
    generator("name: cfg\nbehavior: merge\nliterals: [a=new]\n")
        .apply(&mut m, &Env::detached(), &origin())
        .expect("merges");
    assert_eq!(
        render(&m),
        "apiVersion: v1\ndata:\n  a: new\n  b: kept\nkind: ConfigMap\nmetadata:\n  name: cfg\n"
    );
    let r = m.iter().next().expect("one");
    assert!(
        !r.meta.needs_hash,
        "a plain ConfigMap stays unhashed after a merge"
    );
    let err = generator("name: cfg\nliterals: [a=b]\n")
        .apply(&mut m, &Env::detached(), &origin())
        .expect_err("create over an existing id");
    assert!(
        err.to_string()
            .ends_with("exists; can not use behavior: 'unspecified', behavior must be merge or replace (line 1, column 1)"),
        "{err}"
    );
    let err = generator("name: absent\nbehavior: replace\n")
        .apply(&mut m, &Env::detached(), &origin())
        .expect_err("replace with nothing to replace");
    assert!(err
        .to_string()
        .ends_with("does not exist; cannot merge or replace (line 1, column 1)"));
}
