//! Flux's and Argo CD's own test cases, run through `krusty flux build`
//! and `krusty argocd build`, plus the rendering rules of both written
//! as small repositories here.
//!
//! The upstream inputs and expected outputs are under
//! `tests/gitops-upstream/` (its README says where each came from). Flux
//! prints objects with sorted keys and a `---` after each, krusty prints
//! them as Kustomize does, so outputs are compared as objects: each
//! document read as YAML and turned into JSON values with sorted keys
//! ([`canonical`]), in order.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Output;

use krusty_yaml::{Node, Resolved};
use serde_json::{json, Map, Value};

mod support;
use support::{copy_tree, copy_tree_filled, diff, krusty_output, scratch, text, write};

const UPSTREAM: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/gitops-upstream");

/// A file or folder of the upstream fixtures.
fn upstream(rel: &str) -> PathBuf {
    Path::new(UPSTREAM).join(rel)
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A fresh folder for one test.
fn dir(name: &str) -> PathBuf {
    scratch("gitops_upstream", name)
}

/// `text` without the indentation its lines share (blank lines aside), so
/// YAML can be written indented in the tests.
fn dedent(text: &str) -> String {
    let text = text.strip_prefix('\n').unwrap_or(text);
    let indent = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    let mut out = String::new();
    for line in text.lines() {
        out.push_str(line.get(indent..).unwrap_or(""));
        out.push('\n');
    }
    out
}

/// Writes each `(path, YAML)` under `dir`, the YAML dedented.
fn files(dir: &Path, files: &[(&str, &str)]) {
    for (rel, body) in files {
        write(dir, rel, &dedent(body));
    }
}

// ---------------------------------------------------------------------
// Objects as values
// ---------------------------------------------------------------------

/// A YAML node as a JSON value, keys sorted, scalars typed as Kubernetes
/// tools read them.
fn canonical(node: &Node) -> Value {
    if let Some(entries) = node.as_map() {
        let sorted: BTreeMap<String, Value> = entries
            .iter()
            .map(|(k, v)| (k.key_str().unwrap_or_default().to_string(), canonical(v)))
            .collect();
        let mut map = Map::new();
        for (k, v) in sorted {
            map.insert(k, v);
        }
        return Value::Object(map);
    }
    if let Some(items) = node.as_seq() {
        return Value::Array(items.iter().map(canonical).collect());
    }
    match krusty_yaml::resolve_input(node) {
        Resolved::Null => Value::Null,
        Resolved::Bool(b) => Value::Bool(b),
        Resolved::Int(i) => match i64::try_from(i) {
            Ok(i) => json!(i),
            Err(_) => json!(i as f64),
        },
        Resolved::Float(f) => json!(f),
        Resolved::Str(s) => json!(s),
        Resolved::Owned(s) => json!(s),
    }
}

/// The objects of a YAML stream (empty and null documents left out).
fn objects_of(yaml: &str) -> Vec<Value> {
    krusty_yaml::parse_stream(yaml)
        .unwrap_or_else(|e| panic!("not YAML: {e}\n{yaml}"))
        .into_iter()
        .filter_map(|d| d.root)
        .map(|r| canonical(&r))
        .filter(|v| !v.is_null())
        .collect()
}

/// The objects a run that must succeed printed.
fn succeeded(out: &Output, what: &str) -> Vec<Value> {
    assert!(
        out.status.success(),
        "{what}: krusty failed:\n{}",
        text(&out.stderr)
    );
    objects_of(&text(&out.stdout))
}

/// The message of a run that must fail (and print nothing on stdout).
fn failed(out: &Output, what: &str) -> String {
    assert!(
        !out.status.success(),
        "{what}: krusty succeeded, printing:\n{}",
        text(&out.stdout)
    );
    assert!(
        out.stdout.is_empty(),
        "{what}: failed, but printed:\n{}",
        text(&out.stdout)
    );
    text(&out.stderr)
}

/// A run fails with a message holding `part`.
fn fails_with(out: &Output, part: &str, what: &str) {
    let message = failed(out, what);
    assert!(
        message.contains(part),
        "{what}: the message lacks {part:?}:\n{message}"
    );
}

fn pretty(objects: &[Value]) -> String {
    objects
        .iter()
        .map(|o| serde_json::to_string_pretty(o).expect("JSON"))
        .collect::<Vec<_>>()
        .join("\n---\n")
}

/// The objects are the same, in the same order.
fn assert_objects(want: &[Value], got: &[Value], what: &str) {
    if want != got {
        panic!(
            "{what}: krusty's objects differ from the expected ones ({} expected, {} printed)\n{}",
            want.len(),
            got.len(),
            diff(&pretty(want), &pretty(got))
        );
    }
}

/// The value at `path` (`Null` when missing).
fn at<'a>(object: &'a Value, path: &[&str]) -> &'a Value {
    static NULL: Value = Value::Null;
    path.iter()
        .try_fold(object, |v, k| v.get(k))
        .unwrap_or(&NULL)
}

fn set_at(object: &mut Value, path: &[&str], value: Value) {
    let (last, parents) = path.split_last().expect("a path");
    let mut here = object;
    for key in parents {
        if here.get(key).is_none_or(Value::is_null) {
            here[key] = json!({});
        }
        here = here.get_mut(key).expect("just made");
    }
    here[*last] = value;
}

/// `metadata.name` of each object.
fn names(objects: &[Value]) -> Vec<&str> {
    objects
        .iter()
        .map(|o| at(o, &["metadata", "name"]).as_str().unwrap_or("?"))
        .collect()
}

/// The object of `kind` named `name`.
fn find<'a>(objects: &'a [Value], kind: &str, name: &str) -> &'a Value {
    objects
        .iter()
        .find(|o| o["kind"] == kind && at(o, &["metadata", "name"]) == name)
        .unwrap_or_else(|| panic!("no {kind} {name} among\n{}", pretty(objects)))
}

// ---------------------------------------------------------------------
// Flux
// ---------------------------------------------------------------------

const NAME_LABEL: &str = "kustomize.toolkit.fluxcd.io/name";
const NAMESPACE_LABEL: &str = "kustomize.toolkit.fluxcd.io/namespace";
const ORIGIN: &str = "config.kubernetes.io/origin";

/// `krusty flux build ARGS`, run in `cwd`.
fn flux(cwd: &Path, args: &[&str]) -> Output {
    let mut all = vec!["flux", "build"];
    all.extend_from_slice(args);
    krusty_output(cwd, &all)
}

/// A Flux Kustomization `name` in `namespace`, its `spec` the given YAML
/// (besides the fields that do not change what renders).
fn flux_ks(name: &str, namespace: &str, spec: &str) -> String {
    let mut s = format!(
        "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: {name}\n  namespace: {namespace}\nspec:\n  interval: 5m\n  prune: true\n  sourceRef:\n    kind: GitRepository\n    name: repo\n"
    );
    for line in dedent(spec).lines() {
        s.push_str("  ");
        s.push_str(line);
        s.push('\n');
    }
    s
}

/// The objects with the labels Flux adds naming their Kustomization.
fn with_owner_labels(mut objects: Vec<Value>, name: &str, namespace: &str) -> Vec<Value> {
    for o in &mut objects {
        set_at(o, &["metadata", "labels", NAME_LABEL], json!(name));
        set_at(
            o,
            &["metadata", "labels", NAMESPACE_LABEL],
            json!(namespace),
        );
    }
    objects
}

/// What `flux build` alone does to a SOPS-encrypted Secret before
/// printing it (fluxcd/flux2 `maskSopsData`); kustomize-controller, whose
/// rendering krusty gives, applies the Secret as it is.
fn mask_sops_as_flux_build(object: &mut Value) {
    if object["kind"] != "Secret" {
        return;
    }
    let encrypted = |s: &str| s.contains("sops") && s.contains("ENC[");
    let whole_file = at(object, &["sops", "mac"])
        .as_str()
        .is_some_and(|m| m.starts_with("ENC["));
    let map = object.as_object_mut().expect("an object");
    if whole_file {
        map.remove("sops");
        let docker = map.get("type") == Some(&json!("kubernetes.io/dockerconfigjson"));
        let (data_mask, string_mask) = if docker {
            ("eyJtYXNrIjoiKipTT1BTKioifQ==", r#"{"mask":"**SOPS**"}"#)
        } else {
            ("KipTT1BTKio=", "**SOPS**")
        };
        for (field, mask) in [("data", data_mask), ("stringData", string_mask)] {
            if let Some(values) = map.get_mut(field).and_then(Value::as_object_mut) {
                for v in values.values_mut() {
                    *v = json!(mask);
                }
            }
        }
        return;
    }
    if let Some(values) = map.get_mut("data").and_then(Value::as_object_mut) {
        for v in values.values_mut() {
            let text = v.as_str().unwrap_or_default();
            let decoded = krusty_yaml::decode_base64_bytes(text)
                .unwrap_or_else(|| panic!("not base64: {text}"));
            if encrypted(&String::from_utf8_lossy(&decoded)) {
                *v = json!("KipTT1BTKio=");
            }
        }
    }
    if let Some(values) = map.get_mut("stringData").and_then(Value::as_object_mut) {
        for v in values.values_mut() {
            if encrypted(v.as_str().unwrap_or_default()) {
                *v = json!("KipTT1BTKio=");
            }
        }
    }
}

/// The namespace `{{ .fluxns }}` of flux2's templated test files stands
/// for (a random one there).
const FLUXNS: &str = "flux-system";

/// flux2's golden file `name` of `build-kustomization/`, as objects.
fn flux2_golden(name: &str) -> Vec<Value> {
    let path = upstream("flux2/build-kustomization").join(name);
    objects_of(&read(&path).replace("{{ .fluxns }}", FLUXNS))
}

/// flux2's podinfo Kustomization (`podinfo-kustomization.yaml`) with
/// `spec.path` naming `folder` of `build-kustomization/` (`flux build`
/// takes the folder from `--path` instead), written to `dir/ks.yaml`.
fn flux2_podinfo_kustomization(dir: &Path, folder: &str) {
    let ks = read(&upstream(
        "flux2/build-kustomization/podinfo-kustomization.yaml",
    ));
    let ks = ks
        .replace("{{ .fluxns }}", FLUXNS)
        .replace("path: ./kustomize", &format!("path: ./{folder}"));
    assert!(ks.contains(&format!("path: ./{folder}")));
    write(dir, "ks.yaml", &ks);
}

/// `flux build kustomization podinfo --path …/FOLDER` (with the
/// Kustomization from a file, not strict), in krusty's terms: the
/// folder's objects, SOPS masked as `flux build` masks them.
fn flux2_build(dir: &Path, folder: &str, more: &[&str]) -> Vec<Value> {
    flux2_podinfo_kustomization(dir, folder);
    let root = upstream("flux2/build-kustomization");
    let mut args = vec![
        "--source-root",
        root.to_str().expect("UTF-8 path"),
        "--strict-substitute=false",
        "ks.yaml",
    ];
    args.extend_from_slice(more);
    let mut got = succeeded(&flux(dir, &args), folder);
    got.iter_mut().for_each(mask_sops_as_flux_build);
    got
}

#[test]
fn flux2_build_kustomization_podinfo() {
    let got = flux2_build(&dir("flux2-podinfo"), "podinfo", &[]);
    assert_objects(&flux2_golden("podinfo-result.yaml"), &got, "podinfo");
}

#[test]
fn flux2_build_kustomization_without_service() {
    let got = flux2_build(&dir("flux2-delete-service"), "delete-service", &[]);
    assert_objects(
        &flux2_golden("podinfo-without-service-result.yaml"),
        &got,
        "delete-service",
    );
}

#[test]
fn flux2_build_kustomization_with_var_substitution() {
    let got = flux2_build(&dir("flux2-var-substitution"), "var-substitution", &[]);
    assert_objects(
        &flux2_golden("podinfo-with-var-substitution-result.yaml"),
        &got,
        "var-substitution",
    );
}

/// `flux build --recursive` renders the Flux Kustomization the parent's
/// objects hold (`my-app`, which the parent's targetNamespace puts in
/// `default`) after the parent's objects. krusty renders the
/// Kustomizations it is given, so it is given that child as the parent
/// built it.
#[test]
fn flux2_build_kustomization_recursive_with_my_app() {
    let dir = dir("flux2-recursive");
    let child = read(&upstream(
        "flux2/build-kustomization/podinfo-with-my-app/my-app.yaml",
    ))
    .replace("  name: my-app\n", "  name: my-app\n  namespace: default\n");
    assert!(child.contains("namespace: default"));
    write(&dir, "my-app.yaml", &child);
    let got = flux2_build(&dir, "podinfo-with-my-app", &["my-app.yaml"]);
    assert_objects(
        &flux2_golden("podinfo-with-my-app-result.yaml"),
        &got,
        "podinfo-with-my-app",
    );
}

/// flux2 `internal/build` `Test_Build_substituteStrategy`: an empty
/// `postBuild` with no variable substitutes nothing; `substituteStrategy:
/// Always` substitutes the defaults.
#[test]
fn flux2_substitute_strategy() {
    let root = upstream("flux2/internal-build/substitute-strategy");
    for (file, color, shape) in [
        ("with-variables.yaml", "${color:=blue}", "${shape:=square}"),
        ("always.yaml", "blue", "square"),
    ] {
        let out = flux(
            &root,
            &["--source-root", ".", "--strict-substitute=false", file],
        );
        let got = succeeded(&out, file);
        let cm = find(&got, "ConfigMap", "test-config");
        assert_eq!(at(cm, &["data", "color"]), color, "{file}");
        assert_eq!(at(cm, &["data", "shape"]), shape, "{file}");
    }
}

/// flux2 `internal/build` `Test_Build_preserveAllLabels`: label values
/// keep their types (`0` a number, `yes` a string), and the owner labels
/// are added.
#[test]
fn flux2_build_preserves_label_types() {
    let root = upstream("flux2/internal-build/invalid-labels");
    let got = succeeded(
        &flux(&root, &["--source-root", ".", "kustomization.yaml"]),
        "invalid-labels",
    );
    assert_eq!(got.len(), 1);
    let labels = at(&got[0], &["metadata", "labels"]);
    assert_eq!(labels["invalid"], json!(0));
    assert_eq!(labels["valid"], json!("yes"));
    assert_eq!(labels[NAME_LABEL], json!("test-ks"));
    assert_eq!(labels[NAMESPACE_LABEL], json!("flux-system"));
}

/// A fluxcd/pkg `kustomize/testdata` Kustomization (v1beta2 there, with
/// the v1beta2 field `validation`) as a v1 one whose `spec.path` is
/// `path`.
fn pkg_kustomization(file: &str, path: &str) -> String {
    let ks = read(&upstream("pkg-kustomize").join(file));
    let ks = ks
        .replace(
            "kustomize.toolkit.fluxcd.io/v1beta2",
            "kustomize.toolkit.fluxcd.io/v1",
        )
        .replace("  validation: client\n", "")
        .replace("path: ./kustomize", &format!("path: {path}"));
    assert!(ks.contains(&format!("path: {path}")), "{file}");
    ks
}

/// A source root holding copies of the fluxcd/pkg test folders `folders`.
fn pkg_source(dir: &Path, folders: &[&str]) -> PathBuf {
    let src = dir.join("src");
    for folder in folders {
        copy_tree(&upstream("pkg-kustomize").join(folder), &src.join(folder));
    }
    src
}

fn pkg_expected(file: &str) -> Vec<Value> {
    objects_of(&read(&upstream("pkg-kustomize").join(file)))
}

/// fluxcd/pkg `TestKustomizationGenerator`: targetNamespace and patches
/// merged into the folder's kustomization; resources in build order (the
/// Deployment before the ConfigMap), `${...}` left alone without
/// `postBuild`.
#[test]
fn flux_pkg_generator_merges_and_keeps_build_order() {
    let dir = dir("pkg-generator");
    pkg_source(&dir, &["resources"]);
    write(
        &dir,
        "ks.yaml",
        &pkg_kustomization("kustomization.yaml", "./resources"),
    );
    let got = succeeded(
        &flux(&dir, &["--source-root", "src", "ks.yaml"]),
        "generator",
    );
    let want = with_owner_labels(pkg_expected("kustomization_expected.yaml"), "app", "apps");
    assert_objects(&want, &got, "kustomization_expected.yaml");
}

/// fluxcd/pkg `TestKustomization_Varsub`, the substitution part: inline
/// variables and the cluster's ConfigMap `app-vars`
/// (`testdata/configmap.yaml`, given with `--substitute-from`); the
/// repository's own ConfigMap is labelled `substitute: disabled`.
#[test]
fn flux_pkg_varsub_from_the_cluster_configmap() {
    let dir = dir("pkg-varsub");
    pkg_source(&dir, &["resources"]);
    write(
        &dir,
        "ks.yaml",
        &pkg_kustomization("kustomization_varsub.yaml", "./resources"),
    );
    let cluster = upstream("pkg-kustomize/configmap.yaml");
    let got = succeeded(
        &flux(
            &dir,
            &[
                "--source-root",
                "src",
                "--substitute-from",
                cluster.to_str().expect("UTF-8"),
                "ks.yaml",
            ],
        ),
        "varsub",
    );
    let want = with_owner_labels(
        pkg_expected("kustomization_varsub_expected.yaml"),
        "app",
        "apps",
    );
    assert_objects(&want, &got, "kustomization_varsub_expected.yaml");
}

/// fluxcd/pkg `TestKustomization_Varsub`, the strict part: `${missing}`
/// fails in strict mode and is empty otherwise.
#[test]
fn flux_pkg_varsub_strict() {
    let dir = dir("pkg-varsub-strict");
    pkg_source(&dir, &["varsubstrict"]);
    write(
        &dir,
        "ks.yaml",
        &pkg_kustomization("kustomization_varsub.yaml", "./varsubstrict"),
    );
    let cluster = upstream("pkg-kustomize/configmap.yaml");
    let cluster = cluster.to_str().expect("UTF-8");
    let args = ["--source-root", "src", "--substitute-from", cluster];
    let strict = flux(&dir, &[&args[..], &["ks.yaml"]].concat());
    fails_with(&strict, "variable not set", "strict");
    let lax = flux(
        &dir,
        &[&args[..], &["--strict-substitute=false", "ks.yaml"]].concat(),
    );
    let got = succeeded(&lax, "not strict");
    let cm = find(&got, "ConfigMap", "app-vars-strict");
    assert_eq!(at(cm, &["metadata", "labels", "environment"]), "prod");
    assert_eq!(at(cm, &["metadata", "labels", "region"]), "eu-central-1");
    // An empty value read back as YAML is null.
    assert_eq!(at(cm, &["data", "missing"]), &Value::Null);
}

/// fluxcd/pkg `TestKustomization_Varsub_Always`: without `postBuild`
/// nothing is substituted; with `substituteStrategy: Always` the defaults
/// are.
#[test]
fn flux_pkg_varsub_always() {
    let dir = dir("pkg-varsub-always");
    pkg_source(&dir, &["varsubalways"]);
    let ks = pkg_kustomization("kustomization_varsub_novars.yaml", "./varsubalways");
    write(&dir, "novars.yaml", &ks);
    write(
        &dir,
        "always.yaml",
        &format!("{ks}  postBuild:\n    substituteStrategy: Always\n"),
    );
    for (file, environment, region) in [
        (
            "novars.yaml",
            "${cluster_env:=dev}",
            "${cluster_region:=eu-central-1}",
        ),
        ("always.yaml", "dev", "eu-central-1"),
    ] {
        let got = succeeded(&flux(&dir, &["--source-root", "src", file]), file);
        let cm = find(&got, "ConfigMap", "app-vars-always");
        assert_eq!(
            at(cm, &["metadata", "labels", "environment"]),
            environment,
            "{file}"
        );
        assert_eq!(at(cm, &["data", "region"]), region, "{file}");
    }
}

/// fluxcd/pkg `TestKustomization_Varsub_StrictEmptyValues`: variables
/// that exist with an empty value are fine in strict mode and give null
/// (the source's quotes are lost); the same as a non-strict build where
/// they do not exist.
#[test]
fn flux_pkg_varsub_strict_empty_values() {
    let dir = dir("pkg-varsub-empty");
    pkg_source(&dir, &["varsubstrictempty"]);
    write(
        &dir,
        "empty.yaml",
        &pkg_kustomization("kustomization_varsub_empty.yaml", "./varsubstrictempty"),
    );
    write(
        &dir,
        "dummy.yaml",
        &pkg_kustomization("kustomization_varsub_dummy.yaml", "./varsubstrictempty"),
    );
    let cm = upstream("pkg-kustomize/configmap_empty.yaml");
    let secret = upstream("pkg-kustomize/secret_empty.yaml");
    let strict = succeeded(
        &flux(
            &dir,
            &[
                "--source-root",
                "src",
                "--substitute-from",
                cm.to_str().expect("UTF-8"),
                "--substitute-from",
                secret.to_str().expect("UTF-8"),
                "empty.yaml",
            ],
        ),
        "strict",
    );
    let labels = at(&strict[0], &["metadata", "labels"]);
    for key in ["from-inline", "from-configmap", "from-secret"] {
        assert_eq!(labels[key], Value::Null, "{key}");
    }
    let lax = succeeded(
        &flux(
            &dir,
            &[
                "--source-root",
                "src",
                "--strict-substitute=false",
                "dummy.yaml",
            ],
        ),
        "dummy",
    );
    assert_objects(&strict, &lax, "strict with empty values against non-strict");
}

/// fluxcd/pkg `TestGenerator_NameTransformer`: namePrefix, nameSuffix and
/// targetNamespace; the kustomization lists no resources, so Flux adds
/// origin annotations.
#[test]
fn flux_pkg_name_transformer() {
    let root = upstream("pkg-kustomize/name");
    let got = succeeded(&flux(&root, &["--source-root", ".", "ks.yaml"]), "name");
    assert_eq!(got.len(), 1);
    let name = at(&got[0], &["metadata", "name"]).as_str().expect("a name");
    assert!(name.contains("prefix-test-configmap-suffix"), "{name}");
    assert_eq!(at(&got[0], &["metadata", "namespace"]), "test-namespace");
    assert!(
        at(&got[0], &["metadata", "annotations", ORIGIN]).is_string(),
        "no origin annotation:\n{}",
        pretty(&got)
    );
}

/// fluxcd/pkg `TestGenerator_NoResources` and `TestGenerator_EmptyDir`:
/// `resources: []` and an empty folder both build, to nothing.
#[test]
fn flux_pkg_no_resources_and_empty_folder() {
    let root = upstream("pkg-kustomize/noResources");
    let out = flux(&root, &["--source-root", ".", "ks.yaml"]);
    assert_eq!(succeeded(&out, "noResources"), Vec::<Value>::new());
    let dir = dir("pkg-empty");
    std::fs::create_dir_all(dir.join("src/empty")).expect("mkdir");
    let ks = upstream("pkg-kustomize/empty/ks.yaml");
    let out = flux(&dir, &["--source-root", "src", ks.to_str().expect("UTF-8")]);
    assert_eq!(succeeded(&out, "empty"), Vec::<Value>::new());
}

/// fluxcd/pkg `TestGenerator_BuildMetadata`, `…_EmptySpec` and
/// `…_NoResources`: `spec.buildMetadata` replaces the kustomization's,
/// and the origin annotations Flux forces on a kustomization without
/// resources.
#[test]
fn flux_pkg_build_metadata() {
    let root = upstream("pkg-kustomize/buildMetadata");
    let got = succeeded(
        &flux(&root, &["--source-root", ".", "ks.yaml"]),
        "buildMetadata",
    );
    assert_eq!(got.len(), 1);
    assert!(at(&got[0], &["metadata", "annotations", ORIGIN]).is_string());
    let dir = dir("pkg-build-metadata");
    for (file, spec, origin) in [
        ("fallback.yaml", "path: ./\n", true),
        (
            "replaced.yaml",
            "path: ./\nbuildMetadata: [transformerAnnotations]\n",
            false,
        ),
    ] {
        write(&dir, file, &flux_ks("test", "test-namespace", spec));
        let out = flux(
            &dir,
            &["--source-root", root.to_str().expect("UTF-8"), file],
        );
        let got = succeeded(&out, file);
        assert_eq!(got.len(), 1, "{file}");
        assert_eq!(
            at(&got[0], &["metadata", "annotations", ORIGIN]).is_string(),
            origin,
            "{file}: origin annotation\n{}",
            pretty(&got)
        );
    }
}

/// fluxcd/pkg `Test_Images`: `spec.images` merged by name into the
/// kustomization's `images` (newTag and digest replaced together), and
/// the image the Deployment renders with.
#[test]
fn flux_pkg_images() {
    const I: &str = "ghcr.io/example/app";
    const R: &str = "registry.example.com/app";
    let d = format!("sha256:{}", "a".repeat(64));
    let d = d.as_str();
    let image = |fields: &[(&str, &str)]| {
        let mut s = format!("- name: {I}\n");
        for (k, v) in fields {
            s.push_str(&format!("  {k}: \"{v}\"\n"));
        }
        s
    };
    #[rustfmt::skip]
    let cases: Vec<(&str, String, String, String)> = vec![
        ("existing newTag is preserved when only newName is set",
            image(&[("newTag", "v1.2.3")]), image(&[("newName", R)]), format!("{R}:v1.2.3")),
        ("existing newName is preserved when only newTag is set",
            image(&[("newName", R)]), image(&[("newTag", "v2.0.0")]), format!("{R}:v2.0.0")),
        ("existing digest is preserved when only newName is set",
            image(&[("digest", d)]), image(&[("newName", R)]), format!("{R}@{d}")),
        ("existing digest is cleared when only newTag is set",
            image(&[("digest", d)]), image(&[("newTag", "v2.0.0")]), format!("{I}:v2.0.0")),
        ("existing newTag is cleared when only digest is set",
            image(&[("newTag", "v1.2.3")]), image(&[("digest", d)]), format!("{I}@{d}")),
        ("existing newName is preserved when newTag replaces digest",
            image(&[("newName", R), ("digest", d)]), image(&[("newTag", "v2.0.0")]), format!("{R}:v2.0.0")),
        ("newTag and digest set together are both applied",
            image(&[("newTag", "v1.2.3")]), image(&[("newTag", "v2.0.0"), ("digest", d)]), format!("{I}:v2.0.0@{d}")),
        ("entry with only a name leaves the existing entry unchanged",
            image(&[("newName", R), ("newTag", "v1.2.3")]), image(&[]), format!("{R}:v1.2.3")),
        ("existing fields are overridden when set",
            image(&[("newName", "old.example.com/app"), ("newTag", "v1.2.3")]),
            image(&[("newName", R), ("newTag", "v2.0.0")]), format!("{R}:v2.0.0")),
        ("image without existing entry is appended",
            String::new(), image(&[("newName", R), ("newTag", "v2.0.0")]), format!("{R}:v2.0.0")),
    ];
    for (i, (case, existing, spec_images, rendered)) in cases.into_iter().enumerate() {
        let dir = dir(&format!("pkg-images-{i}"));
        let mut kustomization = String::from(
            "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- deployment.yaml\n",
        );
        if !existing.is_empty() {
            kustomization.push_str("images:\n");
            kustomization.push_str(&existing);
        }
        write(&dir, "src/kustomization.yaml", &kustomization);
        files(
            &dir,
            &[(
                "src/deployment.yaml",
                &format!(
                    r#"
                    apiVersion: apps/v1
                    kind: Deployment
                    metadata:
                      name: app
                    spec:
                      selector:
                        matchLabels:
                          app: app
                      template:
                        metadata:
                          labels:
                            app: app
                        spec:
                          containers:
                          - name: app
                            image: {I}
                    "#
                ),
            )],
        );
        let mut spec = String::from("path: ./\nimages:\n");
        spec.push_str(&spec_images);
        write(&dir, "ks.yaml", &flux_ks("app", "apps", &spec));
        let got = succeeded(&flux(&dir, &["--source-root", "src", "ks.yaml"]), case);
        assert_eq!(got.len(), 1, "{case}");
        assert_eq!(
            at(&got[0], &["spec", "template", "spec", "containers"])[0]["image"],
            json!(rendered),
            "{case}"
        );
    }
}

/// fluxcd/pkg `Test_IgnoreMissingComponents`: with
/// `ignoreMissingComponents` the missing ones are left out; without it
/// the build fails naming the missing one.
#[test]
fn flux_pkg_ignore_missing_components() {
    let cases: [(&str, &[&str], bool, bool); 4] = [
        (
            "missing components with ignore enabled",
            &["existing-component", "missing-component"],
            true,
            true,
        ),
        (
            "all components missing with ignore enabled",
            &["missing-component-1", "missing-component-2"],
            true,
            true,
        ),
        ("all components exist", &["existing-component"], true, true),
        (
            "missing with ignore disabled",
            &["existing-component", "missing-component"],
            false,
            false,
        ),
    ];
    for (i, (case, components, ignore, builds)) in cases.into_iter().enumerate() {
        let dir = dir(&format!("pkg-missing-components-{i}"));
        files(
            &dir,
            &[(
                "src/existing-component/kustomization.yaml",
                "
                apiVersion: kustomize.config.k8s.io/v1alpha1
                kind: Component
                resources: []
                ",
            )],
        );
        std::fs::create_dir_all(dir.join("src/overlay")).expect("mkdir");
        let mut spec = format!("path: ./overlay\nignoreMissingComponents: {ignore}\ncomponents:\n");
        for c in components {
            spec.push_str(&format!("- ../{c}\n"));
        }
        write(&dir, "ks.yaml", &flux_ks("app", "apps", &spec));
        let out = flux(&dir, &["--source-root", "src", "ks.yaml"]);
        if builds {
            assert_eq!(succeeded(&out, case), Vec::<Value>::new(), "{case}");
        } else {
            fails_with(&out, "missing-component", case);
        }
    }
}

/// fluxcd/pkg `TestScanManifests` and `…_WithIgnorePatterns` (without
/// patterns): the generated kustomization lists the folder's YAML files
/// in lexical order, hidden ones too, and a file that is not Kubernetes
/// YAML fails the generation.
#[test]
fn flux_pkg_scan_manifests() {
    let dir = dir("pkg-scan");
    write(&dir, "ks.yaml", &flux_ks("app", "apps", "path: ./\n"));
    let run = |folder: &str| {
        let root = upstream("pkg-kustomize").join(folder);
        flux(
            &dir,
            &["--source-root", root.to_str().expect("UTF-8"), "ks.yaml"],
        )
    };
    let got = succeeded(&run("nokustomization/resources"), "resources");
    assert_eq!(names(&got), ["cm", "secret"]);
    assert_eq!(got[0]["kind"], "ConfigMap");
    assert_eq!(got[1]["kind"], "Secret");
    let got = succeeded(&run("ignore-tests/basic"), "basic");
    assert_eq!(names(&got), ["test-app"]);
    fails_with(&run("nokustomization/panic"), "alert.yaml", "panic");
    fails_with(
        &run("ignore-tests/with-sops"),
        "failed to decode Kubernetes YAML from",
        "with-sops",
    );
    fails_with(&run("ignore-tests/with-sops"), ".sops.yaml", "with-sops");
    fails_with(
        &run("ignore-tests/with-gitlab-ci"),
        "failed to decode Kubernetes YAML from",
        "with-gitlab-ci",
    );
    fails_with(
        &run("ignore-tests/with-gitlab-ci"),
        ".gitlab-ci.yml",
        "with-gitlab-ci",
    );
}

/// fluxcd/pkg `Test_SecureBuild_rel_basedir`: bases and patches outside
/// the kustomization's folder but inside the source root load.
#[test]
fn flux_pkg_relative_base_inside_the_root() {
    let dir = dir("pkg-relbase");
    write(
        &dir,
        "ks.yaml",
        &flux_ks("app", "apps", "path: ./clusters/staging/flux-system\n"),
    );
    let root = upstream("pkg-kustomize/relbase");
    let got = succeeded(
        &flux(
            &dir,
            &["--source-root", root.to_str().expect("UTF-8"), "ks.yaml"],
        ),
        "relbase",
    );
    let secret = find(&got, "Secret", "secret");
    assert_eq!(secret["stringData"], json!({"foo": "bar", "bar": "foo"}));
    assert_eq!(
        find(&got, "ConfigMap", "cm")["data"],
        json!({"key": "value"})
    );
}

/// fluxcd/pkg `Test_SecureBuild_panic`: a whole-file SOPS Secret (its
/// apiVersion, kind and name encrypted) fails the build, twice.
#[test]
fn flux_pkg_sops_encrypted_resource_fails_the_build() {
    let dir = dir("pkg-panic");
    write(&dir, "ks.yaml", &flux_ks("app", "apps", "path: ./\n"));
    let root = upstream("pkg-kustomize/panic");
    for run in 0..2 {
        let out = flux(
            &dir,
            &["--source-root", root.to_str().expect("UTF-8"), "ks.yaml"],
        );
        fails_with(&out, "kustomize build failed", &format!("run {run}"));
    }
}

/// kustomize-controller's inline test files name their objects `%[1]s`.
const KC_ID: &str = "kc-test";

/// A source root holding kustomize-controller's inline files of `test`,
/// `%[1]s` replaced.
fn kc_inline(dir: &Path, test: &str) {
    let from = upstream("kustomize-controller/inline").join(test);
    copy_tree_filled(&from, &dir.join("src"), &|text| {
        text.replace("%[1]s", KC_ID)
    });
}

/// kustomize-controller `TestKustomizationReconciler_Varsub`: inline
/// variables, a ConfigMap and then a Secret (which wins), newlines
/// removed from their values; owner labels.
#[test]
fn kc_varsub() {
    let dir = dir("kc-varsub");
    kc_inline(&dir, "Varsub");
    files(
        &dir,
        &[
            (
                "cluster.yaml",
                r#"
                apiVersion: v1
                kind: ConfigMap
                metadata:
                  name: vars
                  namespace: kc-test
                data:
                  zone: "\naz-1a\n"
                ---
                apiVersion: v1
                kind: Secret
                metadata:
                  name: secret-vars
                  namespace: kc-test
                stringData:
                  zone: "\naz-1b\n"
                "#,
            ),
            (
                "ks.yaml",
                &flux_ks(
                    "ks",
                    KC_ID,
                    "
                    path: ./
                    postBuild:
                      substitute: {_Region: eu-central-1}
                      substituteFrom:
                      - {kind: ConfigMap, name: vars}
                      - {kind: Secret, name: secret-vars}
                    ",
                ),
            ),
        ],
    );
    let got = succeeded(
        &flux(
            &dir,
            &[
                "--source-root",
                "src",
                "--substitute-from",
                "cluster.yaml",
                "ks.yaml",
            ],
        ),
        "Varsub",
    );
    let sa = find(&got, "ServiceAccount", KC_ID);
    let labels = at(sa, &["metadata", "labels"]);
    assert_eq!(labels["environment"], "dev");
    assert_eq!(labels["region"], "eu-central-1");
    assert_eq!(labels["zone"], "az-1b");
    assert_eq!(labels[NAME_LABEL], "ks");
    assert_eq!(labels[NAMESPACE_LABEL], KC_ID);
    let secret = find(&got, "Secret", KC_ID);
    assert_eq!(at(secret, &["stringData", "zone"]), "az-1b");
}

/// kustomize-controller `TestKustomizationReconciler_VarsubOptional`:
/// optional sources used while they exist, the defaults once they are
/// gone.
#[test]
fn kc_varsub_optional() {
    let dir = dir("kc-varsub-optional");
    kc_inline(&dir, "VarsubOptional");
    files(
        &dir,
        &[
            (
                "cluster.yaml",
                r#"
                apiVersion: v1
                kind: ConfigMap
                metadata:
                  name: vars
                  namespace: kc-test
                data:
                  color: "\nred\n"
                ---
                apiVersion: v1
                kind: Secret
                metadata:
                  name: secret-vars
                  namespace: kc-test
                stringData:
                  shape: "\ntriangle\n"
                "#,
            ),
            (
                "ks.yaml",
                &flux_ks(
                    "ks",
                    KC_ID,
                    r#"
                    path: ./
                    postBuild:
                      substitute: {var_substitution_enabled: "true"}
                      substituteFrom:
                      - {kind: ConfigMap, name: vars, optional: true}
                      - {kind: Secret, name: secret-vars, optional: true}
                    "#,
                ),
            ),
        ],
    );
    let with = succeeded(
        &flux(
            &dir,
            &[
                "--source-root",
                "src",
                "--substitute-from",
                "cluster.yaml",
                "ks.yaml",
            ],
        ),
        "with the sources",
    );
    let labels = at(&with[0], &["metadata", "labels"]);
    assert_eq!(
        (&labels["color"], &labels["shape"]),
        (&json!("red"), &json!("triangle"))
    );
    let without = succeeded(
        &flux(&dir, &["--source-root", "src", "ks.yaml"]),
        "without the sources",
    );
    let labels = at(&without[0], &["metadata", "labels"]);
    assert_eq!(
        (&labels["color"], &labels["shape"]),
        (&json!("blue"), &json!("square"))
    );
}

/// kustomize-controller `TestKustomizationReconciler_VarsubAlways`: an
/// empty `postBuild` leaves `${color:=blue}` (which then fails at apply);
/// `substituteStrategy: Always` gives the defaults.
#[test]
fn kc_varsub_always() {
    let dir = dir("kc-varsub-always");
    kc_inline(&dir, "VarsubAlways");
    for (file, post_build, color, shape) in [
        (
            "empty.yaml",
            "postBuild: {}\n",
            "${color:=blue}",
            "${shape:=square}",
        ),
        (
            "always.yaml",
            "postBuild: {substituteStrategy: Always}\n",
            "blue",
            "square",
        ),
    ] {
        let spec = format!("path: ./\ntargetNamespace: {KC_ID}\n{post_build}");
        write(&dir, file, &flux_ks("ks", KC_ID, &spec));
        let got = succeeded(&flux(&dir, &["--source-root", "src", file]), file);
        let labels = at(&got[0], &["metadata", "labels"]);
        assert_eq!(labels["color"], color, "{file}");
        assert_eq!(labels["shape"], shape, "{file}");
    }
}

/// kustomize-controller `TestKustomizationReconciler_VarsubNumberBool`:
/// `!!str` values and quotes around a number keep strings strings;
/// `$${var}` is the text `${var}`.
#[test]
fn kc_varsub_number_bool() {
    let dir = dir("kc-varsub-number-bool");
    kc_inline(&dir, "VarsubNumberBool");
    write(
        &dir,
        "ks.yaml",
        &flux_ks(
            "ks",
            KC_ID,
            r#"
            path: ./
            postBuild:
              substitute:
                q: '"'
                numberStr: "!!str 123"
                number: "123"
                booleanStr: "!!str true"
                boolean: "true"
            "#,
        ),
    );
    let got = succeeded(
        &flux(&dir, &["--source-root", "src", "ks.yaml"]),
        "VarsubNumberBool",
    );
    let repo = find(&got, "GitRepository", KC_ID);
    for field in ["labels", "annotations"] {
        assert_eq!(at(repo, &["metadata", field, "id"]), "123", "{field}");
        assert_eq!(at(repo, &["metadata", field, "enabled"]), "true", "{field}");
    }
    assert_eq!(at(repo, &["spec", "interval"]), "123m");
    let cm = find(&got, "ConfigMap", KC_ID);
    assert_eq!(at(cm, &["data", "id"]), "123");
    let body = at(cm, &["data", "text"]).as_str().expect("text");
    assert!(
        body.contains("${var}") && !body.contains("$${var}"),
        "{body}"
    );
    assert!(body.contains("\\?"), "{body}");
}

/// kustomize-controller `TestKustomizationReconciler_VarsubStrict`.
#[test]
fn kc_varsub_strict() {
    let dir = dir("kc-varsub-strict");
    kc_inline(&dir, "VarsubStrict");
    write(
        &dir,
        "ks.yaml",
        &flux_ks(
            "ks",
            KC_ID,
            "path: ./\npostBuild:\n  substitute: {test: test}\n",
        ),
    );
    let out = flux(
        &dir,
        &["--source-root", "src", "--strict-substitute", "ks.yaml"],
    );
    fails_with(&out, "variable not set", "strict");
}

/// kustomize-controller `TestKustomizationReconciler_CommonMetadata`:
/// the file's annotation `tenant: test` is overridden.
#[test]
fn kc_common_metadata() {
    let dir = dir("kc-common-metadata");
    kc_inline(&dir, "CommonMetadata");
    let spec = format!(
        "path: ./\ntargetNamespace: {KC_ID}\ncommonMetadata:\n  labels: {{tenant: {KC_ID}}}\n  annotations: {{tenant: {KC_ID}}}\n"
    );
    write(&dir, "ks.yaml", &flux_ks("ks", KC_ID, &spec));
    let got = succeeded(
        &flux(&dir, &["--source-root", "src", "ks.yaml"]),
        "CommonMetadata",
    );
    assert_eq!(at(&got[0], &["metadata", "labels", "tenant"]), KC_ID);
    assert_eq!(
        at(&got[0], &["metadata", "annotations"]),
        &json!({"tenant": KC_ID})
    );
    assert_eq!(at(&got[0], &["metadata", "namespace"]), KC_ID);
}

/// kustomize-controller `TestKustomizationReconciler_NamePrefixSuffix`.
#[test]
fn kc_name_prefix_suffix() {
    let dir = dir("kc-name-prefix-suffix");
    kc_inline(&dir, "NamePrefixSuffix");
    let spec =
        format!("path: ./\nnamePrefix: prefix-\nnameSuffix: -suffix\ntargetNamespace: {KC_ID}\n");
    write(&dir, "ks.yaml", &flux_ks("ks", KC_ID, &spec));
    let got = succeeded(
        &flux(&dir, &["--source-root", "src", "ks.yaml"]),
        "NamePrefixSuffix",
    );
    let cm = find(&got, "ConfigMap", &format!("prefix-{KC_ID}-suffix"));
    assert_eq!(at(cm, &["metadata", "namespace"]), KC_ID);
}

/// kustomize-controller `TestKustomizationReconciler_BuildMetadata`.
#[test]
fn kc_build_metadata() {
    let dir = dir("kc-build-metadata");
    kc_inline(&dir, "BuildMetadata");
    for (file, build_metadata, origin) in [
        ("with.yaml", "buildMetadata: [originAnnotations]\n", true),
        ("without.yaml", "", false),
    ] {
        let spec = format!("path: ./\ntargetNamespace: {KC_ID}\n{build_metadata}");
        write(&dir, file, &flux_ks("ks", KC_ID, &spec));
        let got = succeeded(&flux(&dir, &["--source-root", "src", file]), file);
        assert_eq!(
            at(&got[0], &["metadata", "annotations", ORIGIN]).is_string(),
            origin,
            "{file}:\n{}",
            pretty(&got)
        );
    }
}

/// kustomize-controller `TestKustomizationReconciler_KustomizeTransformer`
/// and `…Files`: the kustomization's own transformers and generators,
/// fields and `apiVersion: builtin` files.
#[test]
fn kc_kustomize_transformers() {
    for (folder, namespace) in [
        ("transformers", "transformers-inline"),
        ("file-transformer", "transformer-files"),
    ] {
        let dir = dir(&format!("kc-{folder}"));
        write(&dir, "ks.yaml", &flux_ks("ks", "flux-system", "path: ./\n"));
        let root = upstream("kustomize-controller").join(folder);
        let got = succeeded(
            &flux(
                &dir,
                &["--source-root", root.to_str().expect("UTF-8"), "ks.yaml"],
            ),
            folder,
        );
        let quota = find(&got, "ResourceQuota", "test-common-transform");
        assert_eq!(at(quota, &["metadata", "namespace"]), namespace, "{folder}");
        assert_eq!(
            at(quota, &["spec", "hard", "limits.memory"]),
            "24Gi",
            "{folder}"
        );
        assert_eq!(
            at(quota, &["metadata", "annotations", "test"]),
            "annotations"
        );
        assert_eq!(at(quota, &["metadata", "labels", "test"]), "labels");
        let has = |kind: &str, part: &str| {
            got.iter().any(|o| {
                o["kind"] == kind
                    && at(o, &["metadata", "name"])
                        .as_str()
                        .is_some_and(|n| n.contains(part))
            })
        };
        assert!(has("ConfigMap", "test-metas-transform"), "{folder}");
        assert!(has("Secret", "test-secret-transform"), "{folder}");
        let deployment = find(&got, "Deployment", "test-podinfo-transform");
        let labels = at(deployment, &["metadata", "labels"]);
        assert_eq!(labels["patch"], "json6902", "{folder}");
        assert_eq!(labels["app.kubernetes.io/version"], "1.21.0", "{folder}");
        let pod = at(deployment, &["spec", "template", "spec"]);
        assert_eq!(pod["serviceAccountName"], "test", "{folder}");
        assert_eq!(pod["containers"][0]["image"], "podinfo:6.0.0", "{folder}");
        assert_eq!(at(deployment, &["spec", "replicas"]), &json!(2), "{folder}");
    }
}

/// kustomize-controller `TestKustomizationReconciler_FluxTransformers`:
/// `spec.images` and `spec.patches` (JSON 6902 with a label selector, and
/// a strategic merge patch) on a generated kustomization.
#[test]
fn kc_flux_transformers() {
    let dir = dir("kc-flux-transformers");
    let digest = "sha256:2832f53c577d44753e97b0ed5f00e7e3a06979c9fab77d0e78bdac4b612b14fb";
    let spec = format!(
        r#"
        path: ./
        targetNamespace: {KC_ID}
        images:
        - name: podinfo
          newName: ghcr.io/stefanprodan/podinfo
          newTag: 5.2.0
        - name: ghcr.io/fluxcd/flagger
          digest: "{digest}"
        patches:
        - patch: |

            - op: add
              path: /metadata/labels/patch1
              value: inline-json

          target:
            labelSelector: "app=podinfo"
        - patch: |

            apiVersion: apps/v1
            kind: Deployment
            metadata:
              name: podinfo
              labels:
                patch2: inline-yaml

        "#
    );
    write(&dir, "ks.yaml", &flux_ks("ks", KC_ID, &spec));
    let root = upstream("kustomize-controller/patch");
    let got = succeeded(
        &flux(
            &dir,
            &["--source-root", root.to_str().expect("UTF-8"), "ks.yaml"],
        ),
        "FluxTransformers",
    );
    let deployment = find(&got, "Deployment", "podinfo");
    let labels = at(deployment, &["metadata", "labels"]);
    assert_eq!(labels["patch1"], "inline-json");
    assert_eq!(labels["patch2"], "inline-yaml");
    let containers = at(deployment, &["spec", "template", "spec", "containers"]);
    assert!(containers[0]["image"]
        .as_str()
        .unwrap_or_default()
        .contains("5.2.0"));
    assert!(containers[1]["image"]
        .as_str()
        .unwrap_or_default()
        .contains(digest));
}

/// kustomize-controller `TestKustomizationReconciler_Validation`: an
/// object without apiVersion (`piVersion:` typo) fails the build, in a
/// generated kustomization and in the folder's own.
#[test]
fn kc_object_without_api_version_fails() {
    for folder in ["plain", "overlay"] {
        let dir = dir(&format!("kc-invalid-{folder}"));
        write(
            &dir,
            "ks.yaml",
            &flux_ks(
                "ks",
                KC_ID,
                &format!("path: ./\ntargetNamespace: {KC_ID}\n"),
            ),
        );
        let root = upstream("kustomize-controller/invalid").join(folder);
        let out = flux(
            &dir,
            &["--source-root", root.to_str().expect("UTF-8"), "ks.yaml"],
        );
        fails_with(
            &out,
            "failed to decode Kubernetes apiVersion, kind and name from",
            folder,
        );
    }
}

/// fluxcd/pkg `runtime/dependency` `TestSort`, the cases whose
/// Kustomizations are all given: dependencies render first (a
/// dependency's namespace defaulting to the dependent's), and a cycle is
/// an error naming it.
#[test]
fn flux_depends_on_order_and_cycles() {
    let dir = dir("flux-depends-on");
    let ks = |name: &str, namespace: &str, deps: &[(&str, &str)]| {
        let mut spec = format!("path: ./{name}\n");
        if !deps.is_empty() {
            spec.push_str("dependsOn:\n");
            for (ns, n) in deps {
                spec.push_str(&format!("- name: {n}\n"));
                if !ns.is_empty() {
                    spec.push_str(&format!("  namespace: {ns}\n"));
                }
            }
        }
        flux_ks(name, namespace, &spec)
    };
    let names_of = |o: &Value| at(o, &["metadata", "labels", NAME_LABEL]).clone();
    let run = |file: &str, kustomizations: Vec<String>| {
        write(&dir, file, &kustomizations.join("---\n"));
        flux(&dir, &["--source-root", "src", file])
    };
    for name in [
        "frontend",
        "linkerd",
        "backend",
        "dependency",
        "endless",
        "circular",
    ] {
        write(
            &dir,
            &format!("src/{name}/cm.yaml"),
            &format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n"),
        );
    }
    let simple = run(
        "simple.yaml",
        vec![
            ks(
                "frontend",
                "default",
                &[("linkerd", "linkerd"), ("default", "backend")],
            ),
            ks("linkerd", "linkerd", &[]),
            ks("backend", "default", &[("linkerd", "linkerd")]),
        ],
    );
    let got: Vec<Value> = succeeded(&simple, "simple").iter().map(names_of).collect();
    assert_eq!(got, [json!("linkerd"), json!("backend"), json!("frontend")]);
    let missing_namespace = run(
        "missing-namespace.yaml",
        vec![
            ks("frontend", "application", &[("", "backend")]),
            ks("backend", "application", &[]),
        ],
    );
    let got: Vec<Value> = succeeded(&missing_namespace, "missing namespace")
        .iter()
        .map(names_of)
        .collect();
    assert_eq!(got, [json!("backend"), json!("frontend")]);
    let cycle = run(
        "cycle.yaml",
        vec![
            ks("dependency", "default", &[("default", "endless")]),
            ks("endless", "default", &[("default", "circular")]),
            ks("circular", "default", &[("default", "dependency")]),
        ],
    );
    fails_with(
        &cycle,
        "circular dependency detected: default/dependency -> default/endless -> default/circular -> default/dependency",
        "cycle",
    );
}

// ---------------------------------------------------------------------
// Flux rules (rules.md), on small repositories
// ---------------------------------------------------------------------

/// A ConfigMap `name` whose `data` is the given YAML mapping.
fn config_map(name: &str, data: &str) -> String {
    format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata: {data}\n")
}

#[test]
fn flux_substitute_from_configmap_and_secret_with_precedence() {
    let dir = dir("flux-substitute-from");
    files(
        &dir,
        &[
            (
                "src/vars/a.yaml",
                "
                apiVersion: v1
                kind: ConfigMap
                metadata:
                  name: vars-a
                  namespace: apps
                data:
                  A: from-a
                  B: from-a
                  C: from-a
                ",
            ),
            // B and C `from-b`, D `from-b` and a newline, in base64.
            (
                "src/vars/b.yaml",
                "
                apiVersion: v1
                kind: Secret
                metadata:
                  name: vars-b
                  namespace: apps
                data:
                  B: ZnJvbS1i
                  C: ZnJvbS1i
                  D: ZnJvbS1iCg==
                ",
            ),
            (
                "src/app/cm.yaml",
                &config_map("out", "{a: '${A}', b: '${B}', c: '${C}', d: '${D}'}"),
            ),
            (
                "ks.yaml",
                &flux_ks(
                    "app",
                    "apps",
                    "
                    path: ./app
                    postBuild:
                      substitute: {C: inline}
                      substituteFrom:
                      - {kind: ConfigMap, name: vars-a}
                      - {kind: Secret, name: vars-b}
                    ",
                ),
            ),
        ],
    );
    let got = succeeded(&flux(&dir, &["--source-root", "src", "ks.yaml"]), "vars");
    assert_eq!(
        got[0]["data"],
        json!({"a": "from-a", "b": "from-b", "c": "inline", "d": "from-b"})
    );
}

#[test]
fn flux_substitute_from_missing_sources() {
    let dir = dir("flux-substitute-missing");
    write(&dir, "src/app/cm.yaml", &config_map("out", "{x: '${X}'}"));
    for (file, kind, optional) in [
        ("optional.yaml", "ConfigMap", true),
        ("configmap.yaml", "ConfigMap", false),
        ("secret.yaml", "Secret", false),
    ] {
        let spec = format!(
            "path: ./app\npostBuild:\n  substitute: {{X: x}}\n  substituteFrom:\n  - {{kind: {kind}, name: nope, optional: {optional}}}\n"
        );
        write(&dir, file, &flux_ks("app", "apps", &spec));
    }
    let got = succeeded(
        &flux(&dir, &["--source-root", "src", "optional.yaml"]),
        "optional",
    );
    assert_eq!(got[0]["data"], json!({"x": "x"}));
    fails_with(
        &flux(&dir, &["--source-root", "src", "configmap.yaml"]),
        r#"substitute from 'ConfigMap/nope' error: configmaps "nope" not found"#,
        "ConfigMap",
    );
    fails_with(
        &flux(&dir, &["--source-root", "src", "secret.yaml"]),
        r#"substitute from 'Secret/nope' error: secrets "nope" not found"#,
        "Secret",
    );
}

#[test]
fn flux_substitution_disabled_by_label_or_annotation() {
    let dir = dir("flux-substitute-disabled");
    files(
        &dir,
        &[
            (
                "src/app/cms.yaml",
                "
                apiVersion: v1
                kind: ConfigMap
                metadata:
                  name: by-label
                  labels:
                    kustomize.toolkit.fluxcd.io/substitute: disabled
                data:
                  v: ${X}
                ---
                apiVersion: v1
                kind: ConfigMap
                metadata:
                  name: by-annotation
                  annotations:
                    kustomize.toolkit.fluxcd.io/substitute: disabled
                data:
                  v: ${X}
                ---
                apiVersion: v1
                kind: ConfigMap
                metadata:
                  name: other-value
                  labels:
                    kustomize.toolkit.fluxcd.io/substitute: Disabled
                data:
                  v: ${X}
                ---
                apiVersion: v1
                kind: ConfigMap
                metadata:
                  name: plain
                data:
                  v: ${X}
                ",
            ),
            (
                "ks.yaml",
                &flux_ks(
                    "app",
                    "apps",
                    "path: ./app\npostBuild:\n  substitute: {X: val}\n",
                ),
            ),
        ],
    );
    let got = succeeded(
        &flux(&dir, &["--source-root", "src", "ks.yaml"]),
        "disabled",
    );
    assert_eq!(
        names(&got),
        ["by-label", "by-annotation", "other-value", "plain"]
    );
    let values: Vec<&Value> = got.iter().map(|o| at(o, &["data", "v"])).collect();
    assert_eq!(
        values,
        [&json!("${X}"), &json!("${X}"), &json!("val"), &json!("val")]
    );
}

#[test]
fn flux_substitution_escapes_and_strict_mode() {
    let dir = dir("flux-substitute-strict");
    files(
        &dir,
        &[
            (
                "src/app/cm.yaml",
                &config_map(
                    "out",
                    "{escaped: '$${X}', dollars: '$$X', bare: '$X', x: '${X}', dflt: '${NOPE:=fallback}'}",
                ),
            ),
            (
                "src/missing/cm.yaml",
                &config_map("missing", "{v: 'hello-${MISSING}-end'}"),
            ),
        ],
    );
    for (file, path) in [("ks.yaml", "./app"), ("missing.yaml", "./missing")] {
        let spec = format!("path: {path}\npostBuild:\n  substitute: {{X: val}}\n");
        write(&dir, file, &flux_ks("app", "apps", &spec));
    }
    let got = succeeded(&flux(&dir, &["--source-root", "src", "ks.yaml"]), "escapes");
    assert_eq!(
        got[0]["data"],
        json!({"escaped": "${X}", "dollars": "$X", "bare": "$X", "x": "val", "dflt": "fallback"})
    );
    // kustomize-controller's default (and krusty's) is strict.
    fails_with(
        &flux(&dir, &["--source-root", "src", "missing.yaml"]),
        r#"variable not set (strict mode): "MISSING""#,
        "strict",
    );
    let got = succeeded(
        &flux(
            &dir,
            &[
                "--source-root",
                "src",
                "--strict-substitute=false",
                "missing.yaml",
            ],
        ),
        "not strict",
    );
    assert_eq!(at(&got[0], &["data", "v"]), "hello--end");
}

#[test]
fn flux_invalid_variable_name() {
    let dir = dir("flux-invalid-var-name");
    files(
        &dir,
        &[
            (
                "src/vars.yaml",
                "
                apiVersion: v1
                kind: ConfigMap
                metadata:
                  name: vars
                  namespace: apps
                data:
                  app.name: web
                ",
            ),
            ("src/app/cm.yaml", &config_map("out", "{x: '1'}")),
            (
                "ks.yaml",
                &flux_ks(
                    "app",
                    "apps",
                    "path: ./app\npostBuild:\n  substituteFrom:\n  - {kind: ConfigMap, name: vars}\n",
                ),
            ),
        ],
    );
    fails_with(
        &flux(&dir, &["--source-root", "src", "ks.yaml"]),
        "'app.name' var name is invalid, must match '^[_[:alpha:]][_[:alpha:][:digit:]]*$'",
        "app.name",
    );
}

/// What substitution gives is read back as YAML 1.1 (yaml.v2): a value
/// put in quotes in the source loses them, so a number is a number.
#[test]
fn flux_substituted_number_loses_the_source_quotes() {
    let dir = dir("flux-substitute-number");
    files(
        &dir,
        &[
            (
                "src/app/deploy.yaml",
                r#"
                apiVersion: apps/v1
                kind: Deployment
                metadata:
                  name: web
                spec:
                  replicas: "${replicas}"
                "#,
            ),
            (
                "ks.yaml",
                &flux_ks(
                    "app",
                    "apps",
                    "path: ./app\npostBuild:\n  substitute: {replicas: \"3\"}\n",
                ),
            ),
        ],
    );
    let got = succeeded(&flux(&dir, &["--source-root", "src", "ks.yaml"]), "number");
    assert_eq!(at(&got[0], &["spec", "replicas"]), &json!(3));
}

/// Same rule for YAML 1.1's booleans: `yes` and `off` substituted into
/// plain or quoted `${...}` are booleans.
#[test]
fn flux_substituted_yaml_1_1_booleans() {
    let dir = dir("flux-substitute-bool");
    files(
        &dir,
        &[
            (
                "src/app/deploy.yaml",
                r#"
                apiVersion: apps/v1
                kind: Deployment
                metadata:
                  name: web
                spec:
                  paused: ${yes_value}
                  quoted: "${yes_value}"
                  stopped: ${off_value}
                "#,
            ),
            (
                "ks.yaml",
                &flux_ks(
                    "app",
                    "apps",
                    "path: ./app\npostBuild:\n  substitute: {yes_value: \"yes\", off_value: \"off\"}\n",
                ),
            ),
        ],
    );
    let got = succeeded(&flux(&dir, &["--source-root", "src", "ks.yaml"]), "bools");
    let spec = &got[0]["spec"];
    assert_eq!(
        (&spec["paused"], &spec["quoted"], &spec["stopped"]),
        (&json!(true), &json!(true), &json!(false))
    );
}

#[test]
fn flux_owner_labels_and_common_metadata() {
    let dir = dir("flux-common-metadata");
    files(
        &dir,
        &[
            (
                "src/app/objects.yaml",
                "
                apiVersion: v1
                kind: ConfigMap
                metadata:
                  name: labelled
                  labels:
                    team: a
                    kustomize.toolkit.fluxcd.io/name: stale
                  annotations:
                    tenant: test
                ---
                apiVersion: apps/v1
                kind: Deployment
                metadata:
                  name: bare
                spec:
                  selector:
                    matchLabels:
                      app: bare
                  template:
                    metadata:
                      labels:
                        app: bare
                ",
            ),
            (
                "ks.yaml",
                &flux_ks(
                    "web",
                    "flux-system",
                    "
                    path: ./app
                    commonMetadata:
                      labels:
                        team: b
                        kustomize.toolkit.fluxcd.io/namespace: overridden
                    ",
                ),
            ),
            (
                "annotated.yaml",
                &flux_ks(
                    "web",
                    "flux-system",
                    "
                    path: ./app
                    commonMetadata:
                      annotations:
                        tenant: t1
                    ",
                ),
            ),
        ],
    );
    let got = succeeded(&flux(&dir, &["--source-root", "src", "ks.yaml"]), "labels");
    let labelled = find(&got, "ConfigMap", "labelled");
    assert_eq!(
        at(labelled, &["metadata", "labels"]),
        &json!({"team": "b", NAME_LABEL: "web", NAMESPACE_LABEL: "overridden"})
    );
    assert_eq!(
        at(labelled, &["metadata", "annotations"]),
        &json!({"tenant": "test"})
    );
    let bare = find(&got, "Deployment", "bare");
    assert_eq!(
        at(bare, &["metadata", "labels"]),
        &json!({"team": "b", NAME_LABEL: "web", NAMESPACE_LABEL: "overridden"})
    );
    // Only metadata: no selector, no pod template, no empty annotations.
    assert_eq!(
        at(bare, &["spec", "selector", "matchLabels"]),
        &json!({"app": "bare"})
    );
    assert_eq!(
        at(bare, &["spec", "template", "metadata", "labels"]),
        &json!({"app": "bare"})
    );
    assert_eq!(at(bare, &["metadata", "annotations"]), &Value::Null);
    let got = succeeded(
        &flux(&dir, &["--source-root", "src", "annotated.yaml"]),
        "annotations",
    );
    let labelled = find(&got, "ConfigMap", "labelled");
    assert_eq!(
        at(labelled, &["metadata", "annotations"]),
        &json!({"tenant": "t1"})
    );
    assert_eq!(
        at(labelled, &["metadata", "labels"]),
        &json!({"team": "a", NAME_LABEL: "web", NAMESPACE_LABEL: "flux-system"})
    );
    assert_eq!(
        at(
            find(&got, "Deployment", "bare"),
            &["metadata", "annotations"]
        ),
        &json!({"tenant": "t1"})
    );
}

#[test]
fn flux_generated_kustomization() {
    let dir = dir("flux-generated");
    files(
        &dir,
        &[
            ("src/app/a.yaml", &config_map("a", "{}")),
            ("src/app/.hidden.yaml", &config_map("hidden", "{}")),
            ("src/app/z/b.yml", &config_map("b", "{}")),
            (
                "src/app/notes.json",
                r#"{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "json"}}"#,
            ),
            ("src/app/README.md", "# not listed\n"),
            (
                "src/app/sub/kustomization.yaml",
                "
                namePrefix: sub-
                resources: [cm.yaml]
                ",
            ),
            ("src/app/sub/cm.yaml", &config_map("s", "{}")),
            ("src/app/sub/extra.yaml", &config_map("extra", "{}")),
            ("src/bad/ok.yaml", &config_map("ok", "{}")),
            ("src/bad/values.yaml", "replicas: 3\n"),
            ("ks.yaml", &flux_ks("app", "apps", "path: ./app\n")),
            ("bad.yaml", &flux_ks("app", "apps", "path: ./bad\n")),
            ("empty.yaml", &flux_ks("app", "apps", "path: ./empty\n")),
        ],
    );
    std::fs::create_dir_all(dir.join("src/empty")).expect("mkdir");
    let got = succeeded(&flux(&dir, &["--source-root", "src", "ks.yaml"]), "app");
    // Lexical order (`.hidden.yaml`, `a.yaml`, `sub`, `z/b.yml`), not
    // sorted; the folder with a kustomization as one resource.
    assert_eq!(names(&got), ["hidden", "a", "sub-s", "b"]);
    let message = failed(&flux(&dir, &["--source-root", "src", "bad.yaml"]), "bad");
    assert!(
        message.contains("failed to decode Kubernetes YAML from")
            && message.contains("values.yaml"),
        "{message}"
    );
    let got = succeeded(
        &flux(&dir, &["--source-root", "src", "empty.yaml"]),
        "empty",
    );
    assert_eq!(got, Vec::<Value>::new());
}

#[test]
fn flux_origin_annotations_forced_without_resources() {
    let dir = dir("flux-origin");
    files(
        &dir,
        &[
            (
                "src/generators/kustomization.yaml",
                "
                configMapGenerator:
                - name: generated
                  literals: [a=b]
                  options: {disableNameSuffixHash: true}
                ",
            ),
            (
                "src/listed/kustomization.yaml",
                "
                resources: [cm.yaml]
                configMapGenerator:
                - name: generated
                  literals: [a=b]
                  options: {disableNameSuffixHash: true}
                ",
            ),
            ("src/listed/cm.yaml", &config_map("listed", "{}")),
            (
                "generators.yaml",
                &flux_ks("app", "apps", "path: ./generators\n"),
            ),
            ("listed.yaml", &flux_ks("app", "apps", "path: ./listed\n")),
        ],
    );
    let got = succeeded(
        &flux(&dir, &["--source-root", "src", "generators.yaml"]),
        "generators only",
    );
    let origin = at(&got[0], &["metadata", "annotations", ORIGIN]);
    assert!(
        origin
            .as_str()
            .is_some_and(|o| o.contains("ConfigMapGenerator")),
        "{}",
        pretty(&got)
    );
    let got = succeeded(
        &flux(&dir, &["--source-root", "src", "listed.yaml"]),
        "listed",
    );
    assert_eq!(names(&got), ["listed", "generated"]);
    for o in &got {
        assert_eq!(
            at(o, &["metadata", "annotations"]),
            &Value::Null,
            "{}",
            pretty(&got)
        );
    }
}

#[test]
fn flux_output_keeps_build_order() {
    let dir = dir("flux-order");
    files(
        &dir,
        &[
            (
                "src/app/kustomization.yaml",
                "resources: [deploy.yaml, ns.yaml, cm.yaml]\n",
            ),
            (
                "src/app/deploy.yaml",
                "
                apiVersion: apps/v1
                kind: Deployment
                metadata:
                  name: web
                ",
            ),
            (
                "src/app/ns.yaml",
                "
                apiVersion: v1
                kind: Namespace
                metadata:
                  name: team
                ",
            ),
            ("src/app/cm.yaml", &config_map("cm", "{}")),
            (
                "src/sorted/kustomization.yaml",
                "
                resources: [../app/deploy.yaml, ../app/ns.yaml, ../app/cm.yaml]
                sortOptions: {order: legacy}
                ",
            ),
            ("ks.yaml", &flux_ks("app", "apps", "path: ./app\n")),
            ("sorted.yaml", &flux_ks("app", "apps", "path: ./sorted\n")),
        ],
    );
    let got = succeeded(&flux(&dir, &["--source-root", "src", "ks.yaml"]), "order");
    assert_eq!(names(&got), ["web", "team", "cm"]);
    let got = succeeded(
        &flux(&dir, &["--source-root", "src", "sorted.yaml"]),
        "sorted",
    );
    assert_eq!(names(&got), ["team", "cm", "web"]);
}

#[test]
fn flux_fields_override_the_kustomization() {
    let dir = dir("flux-overrides");
    files(
        &dir,
        &[
            (
                "src/app/kustomization.yaml",
                "
                namespace: from-file
                namePrefix: file-
                resources: [cm.yaml]
                patches:
                - patch: |
                    apiVersion: v1
                    kind: ConfigMap
                    metadata:
                      name: cm
                      labels: {p: file, q: file}
                ",
            ),
            ("src/app/cm.yaml", &config_map("cm", "{}")),
            (
                "ks.yaml",
                &flux_ks(
                    "app",
                    "apps",
                    "
                    path: ./app
                    targetNamespace: from-flux
                    namePrefix: flux-
                    patches:
                    - patch: |
                        apiVersion: v1
                        kind: ConfigMap
                        metadata:
                          name: cm
                          labels: {p: flux}
                    ",
                ),
            ),
        ],
    );
    let got = succeeded(
        &flux(&dir, &["--source-root", "src", "ks.yaml"]),
        "overrides",
    );
    assert_eq!(names(&got), ["flux-cm"]);
    assert_eq!(at(&got[0], &["metadata", "namespace"]), "from-flux");
    let labels = at(&got[0], &["metadata", "labels"]);
    assert_eq!(
        (&labels["p"], &labels["q"]),
        (&json!("flux"), &json!("file"))
    );
}

/// fluxcd/pkg `Test_Components` (built): the file's components first,
/// then those of the spec; missing ones dropped with
/// `ignoreMissingComponents`; remote ones refused.
#[test]
fn flux_components_appended() {
    let dir = dir("flux-components");
    let mut all = vec![
        (
            "src/app/kustomization.yaml".to_string(),
            "resources: [cm.yaml]\ncomponents: [componentA]\n".to_string(),
        ),
        ("src/app/cm.yaml".to_string(), config_map("base", "{}")),
    ];
    for c in ["A", "B", "C"] {
        all.push((
            format!("src/app/component{c}/kustomization.yaml"),
            "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\nresources: [cm.yaml]\n"
                .to_string(),
        ));
        all.push((
            format!("src/app/component{c}/cm.yaml"),
            config_map(&format!("comp-{c}"), "{}"),
        ));
    }
    for (rel, body) in &all {
        write(&dir, rel, body);
    }
    files(
        &dir,
        &[
            (
                "ks.yaml",
                &flux_ks(
                    "app",
                    "apps",
                    "
                    path: ./app
                    ignoreMissingComponents: true
                    components: [componentB, componentMissing, componentC]
                    ",
                ),
            ),
            (
                "remote.yaml",
                &flux_ks(
                    "app",
                    "apps",
                    "path: ./app\ncomponents: ['https://github.com/org/repo//c?ref=v1']\n",
                ),
            ),
        ],
    );
    let got = succeeded(
        &flux(&dir, &["--source-root", "src", "ks.yaml"]),
        "components",
    );
    assert_eq!(names(&got), ["base", "comp-A", "comp-B", "comp-C"]);
    fails_with(
        &flux(&dir, &["--source-root", "src", "remote.yaml"]),
        "component path 'https://github.com/org/repo//c?ref=v1' must be local and relative",
        "remote",
    );
}

#[test]
fn flux_path_is_confined_to_the_source_root() {
    let dir = dir("flux-confined");
    files(
        &dir,
        &[
            ("src/app/cm.yaml", &config_map("inside", "{}")),
            ("outside.yaml", &config_map("outside", "{}")),
            (
                "src/escape/kustomization.yaml",
                "resources: [../../outside.yaml]\n",
            ),
            ("plain.yaml", &flux_ks("app", "apps", "path: ./app\n")),
            (
                "dotdot.yaml",
                &flux_ks("app", "apps", "path: ../../../app\n"),
            ),
            ("absolute.yaml", &flux_ks("app", "apps", "path: /app\n")),
            ("escape.yaml", &flux_ks("app", "apps", "path: ./escape\n")),
        ],
    );
    let plain = succeeded(
        &flux(&dir, &["--source-root", "src", "plain.yaml"]),
        "plain",
    );
    assert_eq!(names(&plain), ["inside"]);
    for file in ["dotdot.yaml", "absolute.yaml"] {
        let got = succeeded(&flux(&dir, &["--source-root", "src", file]), file);
        assert_objects(&plain, &got, file);
    }
    fails_with(
        &flux(&dir, &["--source-root", "src", "escape.yaml"]),
        "fs-security-constraint",
        "outside the root",
    );
}

// ---------------------------------------------------------------------
// Argo CD
// ---------------------------------------------------------------------

const TRACKING_ID: &str = "argocd.argoproj.io/tracking-id";

/// `krusty argocd build ARGS`, run in `cwd`.
fn argocd(cwd: &Path, args: &[&str]) -> Output {
    let mut all = vec!["argocd", "build"];
    all.extend_from_slice(args);
    krusty_output(cwd, &all)
}

/// An Application `name` whose source is `path` with the `kustomize:`
/// section `kustomize` (YAML, none when empty).
fn application(name: &str, path: &str, kustomize: &str) -> String {
    let mut s = format!(
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: {name}\nspec:\n  project: default\n  destination:\n    server: https://kubernetes.default.svc\n  source:\n    repoURL: https://git.example.com/repo.git\n    path: {path}\n"
    );
    if !kustomize.trim().is_empty() {
        s.push_str("    kustomize:\n");
        for line in dedent(kustomize).lines() {
            s.push_str("      ");
            s.push_str(line);
            s.push('\n');
        }
    }
    s
}

/// A copy of Argo CD's `util/kustomize/testdata/CASE` as `dir/repo`.
fn argo_repo(dir: &Path, case: &str) {
    copy_tree(
        &upstream("argocd/util-kustomize").join(case),
        &dir.join("repo"),
    );
}

/// The Application `app.yaml` (name `argo-cd-tests`, the repository's
/// top folder as its path) built on `dir/repo` without tracking, as the
/// Go tests build it.
fn argo_case(dir: &Path, kustomize: &str) -> Output {
    write(
        dir,
        "app.yaml",
        &application("argo-cd-tests", ".", kustomize),
    );
    argocd(
        dir,
        &[
            "--repo-root",
            "repo",
            "--argocd-tracking",
            "none",
            "app.yaml",
        ],
    )
}

/// T1 `TestKustomizeBuild`.
#[test]
fn argocd_t1_kustomize_build() {
    let dir = dir("argo-t1");
    argo_repo(&dir, "kustomization_yaml");
    let out = argo_case(
        &dir,
        r#"
        namePrefix: namePrefix-
        nameSuffix: -nameSuffix
        images: ["nginx:1.15.5"]
        commonLabels:
          app.kubernetes.io/managed-by: argo-cd
          app.kubernetes.io/part-of: ${ARGOCD_APP_NAME}
        commonAnnotations:
          app.kubernetes.io/managed-by: argo-cd
          app.kubernetes.io/part-of: ${ARGOCD_APP_NAME}
        commonAnnotationsEnvsubst: true
        namespace: custom-namespace
        replicas:
          - {name: nginx-deployment, count: 2}
          - {name: web, count: "4"}
        "#,
    );
    let got = succeeded(&out, "T1");
    let added = json!({
        "app.kubernetes.io/managed-by": "argo-cd",
        "app.kubernetes.io/part-of": "argo-cd-tests",
    });
    let sts = find(&got, "StatefulSet", "namePrefix-web-nameSuffix");
    assert_eq!(at(sts, &["metadata", "labels"]), &added);
    assert_eq!(at(sts, &["metadata", "annotations"]), &added);
    assert_eq!(at(sts, &["spec", "replicas"]), &json!(4));
    assert_eq!(at(sts, &["metadata", "namespace"]), "custom-namespace");
    let deployment = find(&got, "Deployment", "namePrefix-nginx-deployment-nameSuffix");
    let mut labels = added.clone();
    labels["app"] = json!("nginx");
    assert_eq!(at(deployment, &["metadata", "labels"]), &labels);
    assert_eq!(at(deployment, &["metadata", "annotations"]), &added);
    assert_eq!(at(deployment, &["spec", "replicas"]), &json!(2));
    assert_eq!(
        at(deployment, &["metadata", "namespace"]),
        "custom-namespace"
    );
    assert_eq!(
        at(deployment, &["spec", "template", "spec", "containers"])[0]["image"],
        "nginx:1.15.5"
    );
}

/// T2 `TestFailKustomizeBuild`.
#[test]
fn argocd_t2_replicas_count_not_a_number() {
    let dir = dir("argo-t2");
    argo_repo(&dir, "kustomization_yaml");
    let out = argo_case(
        &dir,
        "replicas:\n  - {name: nginx-deployment, count: garbage}\n",
    );
    fails_with(
        &out,
        "expected integer value for count. Received: garbage",
        "T2",
    );
}

/// T4 `TestKustomizeBuildForceCommonLabels`.
#[test]
fn argocd_t4_force_common_labels() {
    let dir = dir("argo-t4");
    argo_repo(&dir, "force_common");
    let got = succeeded(
        &argo_case(
            &dir,
            "forceCommonLabels: true\ncommonLabels: {foo: edited, test: \"${ARGOCD_APP_NAME}\"}\n",
        ),
        "T4a",
    );
    assert_eq!(got.len(), 1);
    assert_eq!(
        at(&got[0], &["metadata", "labels"]),
        &json!({"app": "nginx", "foo": "edited", "test": "argo-cd-tests"})
    );
    fails_with(
        &argo_case(
            &dir,
            "forceCommonLabels: false\ncommonLabels: {foo: edited}\n",
        ),
        "label foo already in kustomization file",
        "T4b",
    );
}

/// T5 `TestKustomizeBuildForceCommonAnnotations`.
#[test]
fn argocd_t5_force_common_annotations() {
    let dir = dir("argo-t5");
    argo_repo(&dir, "force_common");
    let overrides = |envsubst: bool| {
        format!(
            "forceCommonAnnotations: true\ncommonAnnotations: {{one: edited, two: \"${{test}}\", three: \"$ARGOCD_APP_NAME\"}}\ncommonAnnotationsEnvsubst: {envsubst}\n"
        )
    };
    let got = succeeded(&argo_case(&dir, &overrides(false)), "T5a");
    assert_eq!(
        at(&got[0], &["metadata", "annotations"]),
        &json!({"baz": "quux", "one": "edited", "two": "${test}", "three": "$ARGOCD_APP_NAME"})
    );
    let got = succeeded(&argo_case(&dir, &overrides(true)), "T5b");
    assert_eq!(
        at(&got[0], &["metadata", "annotations"]),
        &json!({"baz": "quux", "one": "edited", "two": "", "three": "argo-cd-tests"})
    );
    fails_with(
        &argo_case(
            &dir,
            "forceCommonAnnotations: false\ncommonAnnotations: {one: edited}\ncommonAnnotationsEnvsubst: true\n",
        ),
        "annotation one already in kustomization file",
        "T5c",
    );
}

/// T6 `TestKustomizeLabelWithoutSelector`.
#[test]
fn argocd_t6_label_without_selector() {
    #[rustfmt::skip]
    let cases = [
        ("T6a", "commonLabels: {foo: bar}\nlabelWithoutSelector: true\n",
            json!({"app": "nginx", "managed-by": "helm", "foo": "bar"}), json!({"app": "nginx"})),
        ("T6b", "commonLabels: {managed-by: argocd}\nlabelWithoutSelector: true\nforceCommonLabels: true\n",
            json!({"app": "nginx", "managed-by": "argocd"}), json!({"app": "nginx"})),
        ("T6c", "commonLabels: {foo: bar}\nlabelWithoutSelector: true\nlabelIncludeTemplates: true\n",
            json!({"app": "nginx", "managed-by": "helm", "foo": "bar"}), json!({"app": "nginx", "foo": "bar"})),
        ("T6d", "commonLabels: {managed-by: argocd}\nlabelWithoutSelector: true\nlabelIncludeTemplates: true\nforceCommonLabels: true\n",
            json!({"app": "nginx", "managed-by": "argocd"}), json!({"app": "nginx", "managed-by": "argocd"})),
    ];
    for (case, overrides, labels, template) in cases {
        let dir = dir(&format!("argo-{case}"));
        argo_repo(&dir, "label_without_selector");
        let got = succeeded(&argo_case(&dir, overrides), case);
        assert_eq!(got.len(), 1, "{case}");
        assert_eq!(at(&got[0], &["metadata", "labels"]), &labels, "{case}");
        assert_eq!(
            at(&got[0], &["spec", "selector", "matchLabels"]),
            &json!({"app": "nginx"}),
            "{case}"
        );
        assert_eq!(
            at(&got[0], &["spec", "template", "metadata", "labels"]),
            &template,
            "{case}"
        );
    }
}

/// T7 `TestKustomizeBuildComponents` (both cases on one copy, as there)
/// and T12 `TestKustomizeBuildComponentsNoFoundComponents`.
#[test]
fn argocd_t7_t12_components() {
    let dir = dir("argo-t7");
    argo_repo(&dir, "kustomization_yaml_components");
    let components = "components: [./components, ./missing-components]\n";
    fails_with(
        &argo_case(
            &dir,
            &format!("{components}ignoreMissingComponents: false\n"),
        ),
        "./missing-components has no match: must build at directory",
        "T7a",
    );
    let got = succeeded(
        &argo_case(
            &dir,
            &format!("{components}ignoreMissingComponents: true\n"),
        ),
        "T7b",
    );
    assert_eq!(at(&got[0], &["metadata", "name"]), "nginx-deployment");
    assert_eq!(
        at(&got[0], &["metadata", "labels"]),
        &json!({"app": "nginx"})
    );
    assert_eq!(at(&got[0], &["spec", "replicas"]), &json!(3));
    let plain = succeeded(&argo_case(&dir, ""), "no kustomize section");
    let got = succeeded(
        &argo_case(
            &dir,
            "components: [./non-existent-component1, ./non-existent-component2]\nignoreMissingComponents: true\n",
        ),
        "T12",
    );
    assert_objects(&plain, &got, "T12: no component added");
    assert_eq!(names(&got), ["nginx-deployment"]);
}

/// T7c `TestKustomizeBuildComponentsMonoRepo`: a component found
/// relative to the application's folder, inside the repository.
#[test]
fn argocd_t7c_components_in_a_monorepo() {
    let dir = dir("argo-t7c");
    argo_repo(&dir, "kustomization_yaml_components_monorepo");
    write(
        &dir,
        "app.yaml",
        &application(
            "argo-cd-tests",
            "envs/inseng-pdx-egert-sandbox/namespaces/inst-system/apps/hello-world",
            "components: [../../../../../../kustomize/components/all]\nignoreMissingComponents: true\n",
        ),
    );
    let got = succeeded(
        &argocd(
            &dir,
            &[
                "--repo-root",
                "repo",
                "--argocd-tracking",
                "none",
                "app.yaml",
            ],
        ),
        "T7c",
    );
    assert_eq!(got[2]["kind"], "Deployment");
    assert_eq!(at(&got[2], &["metadata", "name"]), "hello-world-kustomize");
    assert_eq!(
        at(&got[2], &["metadata", "labels"]),
        &json!({
            "app.kubernetes.io/name": "hello-world-kustomize",
            "app.kubernetes.io/owner": "fire-team",
        })
    );
    assert_eq!(
        at(&got[2], &["spec", "template", "spec", "tolerations"]),
        &json!([{"key": "my-special-toleration", "operator": "Exists"}])
    );
}

const T8_PATCH: &str = r#"
patches:
  - patch: '[ { "op": "replace", "path": "/spec/template/spec/containers/0/ports/0/containerPort", "value": 443 },  { "op": "replace", "path": "/spec/template/spec/containers/0/name", "value": "test" }]'
    target:
      kind: Deployment
      name: nginx-deployment
"#;

/// T8 `TestKustomizeBuildPatches`.
#[test]
fn argocd_t8_patches() {
    let dir = dir("argo-t8");
    argo_repo(&dir, "kustomization_yaml_patches");
    let got = succeeded(&argo_case(&dir, T8_PATCH), "T8");
    let container = &at(&got[0], &["spec", "template", "spec", "containers"])[0];
    assert_eq!(container["ports"][0]["containerPort"], json!(443));
    assert_eq!(container["name"], "test");
}

/// T9 `TestFailKustomizeBuildPatches`: no kustomization file; Argo CD's
/// own message from the patches step.
#[test]
fn argocd_t9_patches_without_kustomization() {
    let dir = dir("argo-t9");
    argo_repo(&dir, "kustomization_yaml_patches_empty");
    fails_with(
        &argo_case(&dir, T8_PATCH),
        "kustomization file not found in the path",
        "T9",
    );
}

/// Every file under `dir` with its bytes.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(d) = pending.pop() {
        for entry in std::fs::read_dir(&d).expect("read the tree") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                out.insert(
                    path.strip_prefix(dir).expect("below").to_path_buf(),
                    Vec::new(),
                );
                pending.push(path);
            } else {
                let bytes = std::fs::read(&path).expect("read a file");
                out.insert(path.strip_prefix(dir).expect("below").to_path_buf(), bytes);
            }
        }
    }
    out
}

#[test]
fn argocd_tracking_annotation_and_label() {
    let dir = dir("argo-tracking");
    files(
        &dir,
        &[
            (
                "repo/app/kustomization.yaml",
                "resources: [cm.yaml, deploy.yaml, ns.yaml, crd.yaml]\n",
            ),
            ("repo/app/cm.yaml", &config_map("cm", "{}")),
            (
                "repo/app/deploy.yaml",
                "
                apiVersion: apps/v1
                kind: Deployment
                metadata:
                  name: web
                  namespace: other
                ",
            ),
            (
                "repo/app/ns.yaml",
                "
                apiVersion: v1
                kind: Namespace
                metadata:
                  name: team
                ",
            ),
            (
                "repo/app/crd.yaml",
                "
                apiVersion: apiextensions.k8s.io/v1
                kind: CustomResourceDefinition
                metadata:
                  name: widgets.example.com
                spec:
                  group: example.com
                  names: {kind: Widget, plural: widgets}
                  scope: Namespaced
                  versions: [{name: v1, served: true, storage: true}]
                ",
            ),
        ],
    );
    let app = application("guestbook", "app", "")
        .replace("    server:", "    namespace: prod\n    server:");
    write(&dir, "app.yaml", &app);
    let elsewhere = app.replace(
        "  name: guestbook\n",
        "  name: guestbook\n  namespace: team-a\n",
    );
    write(&dir, "elsewhere.yaml", &elsewhere);
    let got = succeeded(
        &argocd(&dir, &["--repo-root", "repo", "app.yaml"]),
        "annotation",
    );
    let tracking = |o: &Value| at(o, &["metadata", "annotations", TRACKING_ID]).clone();
    // Kustomize's own (legacy) order: Argo CD does not sort.
    let kinds: Vec<&Value> = got.iter().map(|o| &o["kind"]).collect();
    assert_eq!(
        kinds,
        [
            "Namespace",
            "CustomResourceDefinition",
            "ConfigMap",
            "Deployment"
        ]
    );
    assert_eq!(
        got.iter().map(tracking).collect::<Vec<_>>(),
        [
            json!("guestbook:/Namespace:prod/team"),
            Value::Null,
            json!("guestbook:/ConfigMap:prod/cm"),
            json!("guestbook:apps/Deployment:other/web"),
        ]
    );
    // The destination namespace is not set on the objects.
    assert_eq!(
        at(find(&got, "ConfigMap", "cm"), &["metadata", "namespace"]),
        &Value::Null
    );
    let crd = find(&got, "CustomResourceDefinition", "widgets.example.com");
    assert_eq!(at(crd, &["metadata", "annotations"]), &Value::Null);
    let got = succeeded(
        &argocd(
            &dir,
            &[
                "--repo-root",
                "repo",
                "--argocd-tracking",
                "label",
                "app.yaml",
            ],
        ),
        "label",
    );
    for o in &got {
        let instance = at(o, &["metadata", "labels", "app.kubernetes.io/instance"]);
        if o["kind"] == "CustomResourceDefinition" {
            assert_eq!(instance, &Value::Null);
        } else {
            assert_eq!(instance, "guestbook", "{}", pretty(&got));
            assert_eq!(
                at(o, &["metadata", "annotations", TRACKING_ID]),
                &Value::Null
            );
        }
    }
    let got = succeeded(
        &argocd(&dir, &["--repo-root", "repo", "elsewhere.yaml"]),
        "another namespace",
    );
    assert_eq!(
        tracking(find(&got, "ConfigMap", "cm")),
        "team-a_guestbook:/ConfigMap:prod/cm"
    );
}

/// R5 `TestGenerateManifestsWithAppParameterFile` and
/// `TestGetAppDetailsWithAppParameterFile`: `.argocd-source.yaml`, then
/// `.argocd-source-<app>.yaml`, merged into the source.
#[test]
fn argocd_parameter_override_files() {
    const IMAGE: &str = "quay.io/argoprojlabs/argocd-e2e-container";
    let cases = [
        ("single-global", "testapp", Some("0.2")),
        ("single-app-only", "testapp", Some("0.3")),
        ("single-app-only", "testapp2", Some("0.1")),
        ("multi", "other", Some("0.2")),
        ("multi", "testapp", Some("0.3")),
        ("multi", "unmergeable", Some("0.3")),
        ("multi", "broken", None),
    ];
    for (folder, app, tag) in cases {
        let dir = dir(&format!("argo-override-{folder}-{app}"));
        copy_tree(
            &upstream("argocd/reposerver").join(folder),
            &dir.join("repo"),
        );
        write(&dir, "app.yaml", &application(app, ".", ""));
        let out = argocd(
            &dir,
            &[
                "--repo-root",
                "repo",
                "--argocd-tracking",
                "none",
                "app.yaml",
            ],
        );
        let what = format!("{folder} as {app}");
        match tag {
            Some(tag) => {
                let got = succeeded(&out, &what);
                let deployment = find(&got, "Deployment", "guestbook-ui");
                assert_eq!(
                    at(deployment, &["spec", "template", "spec", "containers"])[0]["image"],
                    json!(format!("{IMAGE}:{tag}")),
                    "{what}"
                );
            }
            None => {
                failed(&out, &what);
            }
        }
    }
}

#[test]
fn argocd_build_environment_substitution() {
    let dir = dir("argo-env");
    files(
        &dir,
        &[
            (
                "repo/app/kustomization.yaml",
                "resources: [cm.yaml, deploy.yaml]\n",
            ),
            ("repo/app/cm.yaml", &config_map("cm", "{}")),
            (
                "repo/app/deploy.yaml",
                "
                apiVersion: apps/v1
                kind: Deployment
                metadata:
                  name: web
                spec:
                  template:
                    spec:
                      containers:
                      - name: web
                        image: nginx
                ",
            ),
        ],
    );
    let repo = dir.join("repo");
    support::run(support::git_command(&repo).args(["init", "-q"]));
    support::run(support::git_command(&repo).args(["add", "."]));
    support::run(support::git_command(&repo).args(["commit", "-q", "-m", "app"]));
    let head = support::run(support::git_command(&repo).args(["rev-parse", "HEAD"]));
    let head = head.trim();
    write(
        &dir,
        "app.yaml",
        &application(
            "envapp",
            "app",
            r#"
            namePrefix: $ARGOCD_APP_NAME-
            images: ["nginx=registry.example/${ARGOCD_APP_NAME}:$ARGOCD_APP_REVISION_SHORT"]
            commonLabels:
              rev: ${ARGOCD_APP_REVISION_SHORT_8}
              price: $$5
              unknown: a${NOT_SET}b
              path: $ARGOCD_APP_SOURCE_PATH
            commonAnnotations:
              full: $ARGOCD_APP_REVISION
              name: ${ARGOCD_APP_NAME}
            commonAnnotationsEnvsubst: true
            "#,
        ),
    );
    let got = succeeded(
        &argocd(
            &dir,
            &[
                "--repo-root",
                "repo",
                "--argocd-tracking",
                "none",
                "app.yaml",
            ],
        ),
        "env",
    );
    // The name prefix is never substituted.
    assert_eq!(names(&got), ["$ARGOCD_APP_NAME-cm", "$ARGOCD_APP_NAME-web"]);
    let cm = &got[0];
    assert_eq!(
        at(cm, &["metadata", "labels"]),
        &json!({"rev": &head[..8], "price": "$5", "unknown": "ab", "path": "app"})
    );
    assert_eq!(
        at(cm, &["metadata", "annotations"]),
        &json!({"full": head, "name": "envapp"})
    );
    let web = &got[1];
    assert_eq!(
        at(web, &["spec", "template", "spec", "containers"])[0]["image"],
        json!(format!("registry.example/envapp:{}", &head[..7]))
    );
    // Without commonAnnotationsEnvsubst, annotations are kept as written.
    write(
        &dir,
        "literal.yaml",
        &application(
            "envapp",
            "app",
            "commonAnnotations: {full: $ARGOCD_APP_REVISION}\n",
        ),
    );
    let got = succeeded(
        &argocd(
            &dir,
            &[
                "--repo-root",
                "repo",
                "--argocd-tracking",
                "none",
                "literal.yaml",
            ],
        ),
        "literal",
    );
    assert_eq!(
        at(&got[0], &["metadata", "annotations"]),
        &json!({"full": "$ARGOCD_APP_REVISION"})
    );
}

#[test]
fn argocd_never_modifies_the_repository() {
    let dir = dir("argo-unmodified");
    argo_repo(&dir, "kustomization_yaml");
    write(
        &dir,
        "repo/.argocd-source-argo-cd-tests.yaml",
        "kustomize:\n  nameSuffix: -override\n",
    );
    files(
        &dir,
        &[
            (
                "repo/components/kustomization.yaml",
                "
                apiVersion: kustomize.config.k8s.io/v1alpha1
                kind: Component
                resources: [cm.yaml]
                ",
            ),
            (
                "repo/components/cm.yaml",
                &config_map("from-component", "{}"),
            ),
        ],
    );
    let before = snapshot(&dir.join("repo"));
    let overrides = format!(
        "{}{}",
        r#"
        namePrefix: p-
        images: ["nginx:1.15.5"]
        commonLabels: {a: b}
        commonAnnotations: {c: d}
        namespace: ns
        replicas: [{name: web, count: 1}]
        components: [./components]
        "#,
        T8_PATCH.replace('\n', "\n        ")
    );
    let got = succeeded(&argo_case(&dir, &overrides), "edits");
    // Every change took effect: the override file's suffix, the
    // replicas, the component, the patch.
    let sts = find(&got, "StatefulSet", "p-web-override");
    assert_eq!(at(sts, &["spec", "replicas"]), &json!(1));
    find(&got, "ConfigMap", "p-from-component-override");
    let deployment = find(&got, "Deployment", "p-nginx-deployment-override");
    let container = &at(deployment, &["spec", "template", "spec", "containers"])[0];
    assert_eq!(container["ports"][0]["containerPort"], json!(443));
    assert_eq!(
        before,
        snapshot(&dir.join("repo")),
        "the repository changed"
    );
}
