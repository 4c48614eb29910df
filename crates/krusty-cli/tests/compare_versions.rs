//! `krusty build --compare-versions OLD,NEW DIR`: the upgrade report
//! (issue 38). The reports asserted here were checked against the two
//! oracles (`kubectl kustomize` as Kustomize v5.5.0, `/work/k58/kubectl
//! kustomize` as v5.8.1): their outputs, diffed resource by resource with
//! `diff -U3`, give these hunks.

use std::path::{Path, PathBuf};
use std::process::Output;

mod support;
use support::{copy_tree, write};

/// A fresh directory for one test.
fn scratch(name: &str) -> PathBuf {
    support::scratch("compare-versions", name)
}

fn krusty(args: &[&str], cwd: &Path) -> Output {
    support::krusty_command()
        .args(args)
        .current_dir(cwd)
        .env_remove("KRUSTY_KUSTOMIZE_VERSION")
        .output()
        .expect("krusty runs")
}

/// `krusty build --compare-versions VERSIONS DIR` in `cwd`.
fn compare(versions: &str, dir: &str, cwd: &Path) -> Output {
    krusty(&["build", "--compare-versions", versions, dir], cwd)
}

fn stdout(out: &Output) -> String {
    support::text(&out.stdout)
}

fn stderr(out: &Output) -> String {
    support::text(&out.stderr)
}

#[test]
fn identical_builds_exit_zero_with_a_summary() {
    let dir = scratch("identical");
    write(
        &dir,
        "k/kustomization.yaml",
        "namePrefix: dev-\nresources:\n- r.yaml\n",
    );
    write(
        &dir,
        "k/r.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  a: \"1\"\n---\n\
         apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 2\n",
    );
    for versions in ["v5.5.0,v5.8.1", "v5.8.1,v5.5.0", "5.5.0, 5.8.1"] {
        let out = compare(versions, "k", &dir);
        assert_eq!(out.status.code(), Some(0), "{versions}: {}", stderr(&out));
        assert_eq!(
            stdout(&out),
            "no difference between Kustomize v5.5.0 and v5.8.1 (2 resources)\n",
            "{versions}"
        );
    }
}

/// Only v5.8.1 sets the images of image volumes
/// (builtins/v58-images-volume-image-reference).
const IMAGES_VOLUME_REPORT: &str = r#"--- Kustomize v5.5.0
+++ Kustomize v5.8.1

~ Deployment dep
@@ -10,7 +10,7 @@
         name: app
       volumes:
       - image:
-          reference: registry.example.com/models@sha256:0000000000000000000000000000000000000000000000000000000000000000
+          reference: mirror.example.com/ml/models:v2
         name: models
       - configMap:
           name: cfg
@@ -19,5 +19,5 @@
           pullPolicy: Always
         name: noref
       - image:
-          reference: busybox:1.36
+          reference: busybox@sha256:1111111111111111111111111111111111111111111111111111111111111111
         name: tools

~ Pod pod
@@ -9,12 +9,12 @@
   volumes:
   - image:
       pullPolicy: IfNotPresent
-      reference: registry.example.com/models:v1
+      reference: mirror.example.com/ml/models:v2
     name: models
   - emptyDir: {}
     name: scratch
   - image:
-      reference: busybox
+      reference: busybox@sha256:1111111111111111111111111111111111111111111111111111111111111111
     name: tools
   - image:
       reference: quay.io/other/thing:2

2 resources differ between Kustomize v5.5.0 and v5.8.1 (2 changed, 0 only in v5.5.0, 0 only in v5.8.1)
"#;

#[test]
fn changed_resources_show_a_unified_diff_and_exit_one() {
    let dir = scratch("images-volume");
    let case = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/builtins/v58-images-volume-image-reference/in");
    copy_tree(&case, &dir.join("in"));
    // Either order of the flag's value gives the same report.
    for versions in ["v5.5.0,v5.8.1", "v5.8.1,v5.5.0"] {
        let out = compare(versions, "in", &dir);
        assert_eq!(out.status.code(), Some(1), "{versions}: {}", stderr(&out));
        assert_eq!(stdout(&out), IMAGES_VOLUME_REPORT, "{versions}");
    }
}

/// v5.8.1 leaves a resource marked `internal.config.kubernetes.io/helm-generated:
/// "true"` out of the `namespace:` transformer (and drops the mark): the
/// resource's id changes, and the report pairs it anyway.
const NAMESPACE_CHANGE_REPORT: &str = r#"--- Kustomize v5.5.0
+++ Kustomize v5.8.1

~ Deployment prod/web (namespace prod → none)
@@ -1,9 +1,6 @@
 apiVersion: apps/v1
 kind: Deployment
 metadata:
-  annotations:
-    internal.config.kubernetes.io/helm-generated: "true"
   name: web
-  namespace: prod
 spec:
   replicas: 1

1 resource differs between Kustomize v5.5.0 and v5.8.1 (1 changed, 0 only in v5.5.0, 0 only in v5.8.1)
"#;

#[test]
fn a_namespace_the_newer_release_drops_still_pairs_the_resource() {
    let dir = scratch("namespace-change");
    write(
        &dir,
        "k/kustomization.yaml",
        "namespace: prod\nresources:\n- resources.yaml\n",
    );
    write(
        &dir,
        "k/resources.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  mode: fast\n---\n\
         apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  annotations:\n    \
         internal.config.kubernetes.io/helm-generated: \"true\"\nspec:\n  replicas: 1\n",
    );
    let out = compare("v5.5.0,v5.8.1", "k", &dir);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(stdout(&out), NAMESPACE_CHANGE_REPORT);
}

#[test]
fn a_tree_only_the_newer_release_accepts_is_a_difference() {
    let dir = scratch("builds-only-as-newer");
    write(
        &dir,
        "k/kustomization.yaml",
        "resources:\n- cm.yaml\nreplacements:\n- sourceValue: fast\n  targets:\n  - select:\n      \
         kind: ConfigMap\n    fieldPaths:\n    - data.mode\n",
    );
    write(
        &dir,
        "k/cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  mode: slow\n",
    );
    let out = compare("v5.8.1,v5.5.0", "k", &dir);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let report = stdout(&out);
    assert!(
        report
            .starts_with("builds only as Kustomize v5.8.1: as Kustomize v5.5.0 it fails with\n  "),
        "{report}"
    );
    assert!(report.contains("unknown field \"sourceValue\""), "{report}");
    assert!(!stderr(&out).contains("Error:"), "{}", stderr(&out));
}

#[test]
fn a_tree_neither_release_builds_is_an_error_naming_both() {
    let dir = scratch("neither-builds");
    std::fs::create_dir_all(dir.join("empty")).expect("mkdir");
    let out = compare("v5.5.0,v5.8.1", "empty", &dir);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty(), "{}", stdout(&out));
    let err = stderr(&out);
    assert!(
        err.starts_with("Error: the build fails as Kustomize v5.5.0"),
        "{err}"
    );
    assert!(err.contains("v5.8.1"), "{err}");
    assert!(err.contains("kustomization.yaml"), "{err}");
}

#[test]
fn bad_flag_values_are_refused() {
    let dir = scratch("bad-values");
    write(&dir, "k/kustomization.yaml", "resources: []\n");
    for (versions, says) in [
        (
            "v5.5.0",
            "expected two Kustomize versions separated by a comma",
        ),
        ("v5.5.0,v5.8.1,v5.5.0", "expected two Kustomize versions"),
        ("v5.5.0,v5.7.0", "unknown Kustomize version \"v5.7.0\""),
        ("v5.8.1,5.8.1", "both versions are v5.8.1"),
        ("", "expected two Kustomize versions"),
    ] {
        let out = compare(versions, "k", &dir);
        assert_eq!(out.status.code(), Some(2), "{versions:?}: {}", stdout(&out));
        let err = stderr(&out);
        assert!(err.contains("--compare-versions"), "{versions:?}: {err}");
        assert!(err.contains(says), "{versions:?}: {err}");
        assert!(out.stdout.is_empty(), "{versions:?}");
    }
}

#[test]
fn compare_versions_refuses_output_and_several_dirs() {
    let dir = scratch("refused-combinations");
    write(&dir, "a/kustomization.yaml", "resources: []\n");
    write(&dir, "b/kustomization.yaml", "resources: []\n");
    let out = krusty(
        &[
            "build",
            "--compare-versions",
            "v5.5.0,v5.8.1",
            "a",
            "-o",
            "out.yaml",
        ],
        &dir,
    );
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("cannot be used with"), "{err}");
    assert!(!dir.join("out.yaml").exists());

    let out = compare("v5.5.0,v5.8.1", "a", &dir);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = krusty(
        &["build", "--compare-versions", "v5.5.0,v5.8.1", "a", "b"],
        &dir,
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("--compare-versions compares the builds of one DIR, not 2"),
        "{}",
        stderr(&out)
    );
}
