//! Differential test of label and annotation interplay: `krusty build DIR`
//! must print byte-for-byte what `kubectl kustomize DIR` (Kustomize v5.5.0)
//! prints, or fail where it fails, for seeded base/overlay trees in which
//! several levels set the same label keys (`commonLabels`, `labels` with
//! and without `includeSelectors`/`includeTemplates`, `fields` entries),
//! `commonAnnotations`, and later steps change one occurrence of a label in
//! place (a replacement into `metadata.labels.KEY`, a strategic merge
//! patch, a JSON patch), with Kustomize's build records in play (prefixes,
//! namespaces, `buildMetadata`, a JSON patch replacing the annotations,
//! `fields` entries for `metadata/annotations`, generated ConfigMaps) and
//! `$patch: replace`, and a ConfigMap marked local-config (with values
//! Kustomize tells apart) or with a scalar `metadata.annotations`.
//!
//! The trees derive from a fixed seed, or from `KRUSTY_DIFF_SEED` (decimal
//! or `0x` hex). A mismatch prints the seed and the tree's path and keeps
//! the tree. Without `kubectl` on `PATH` the test prints `SKIPPED` and
//! passes.

mod support;

use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;

const DEFAULT_SEED: u64 = 0x6c61_6265_6c73_2121;
const TREES: usize = 40;

const KEYS: [&str; 4] = ["app", "tier", "team", "app.kubernetes.io/name"];
const VALUES: [&str; 5] = ["web", "db", "blue", "v1", "x-y"];

#[test]
fn differential_labels() {
    let Some(kubectl) = support::find_in_path("kubectl") else {
        eprintln!("SKIPPED: kubectl not found on PATH; differential_labels did not run.");
        return;
    };
    let base = support::diff_seed(DEFAULT_SEED);
    let mut failures = Vec::new();
    for tree in 0..TREES {
        let seed = base ^ (tree as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let mut rng = support::Rng::new(seed);
        let dir = support::scratch("differential_labels", &format!("tree-{tree:02}"));
        write_tree(&dir, &mut rng);
        let target = dir.join("overlay");
        let expected = Command::new(&kubectl)
            .arg("kustomize")
            .arg(&target)
            .output()
            .expect("spawning kubectl");
        let actual = support::krusty_command()
            // The reference is kubectl v1.32: Kustomize v5.5.0.
            .env("KRUSTY_KUSTOMIZE_VERSION", "v5.5.0")
            .arg("build")
            .arg(&target)
            .output()
            .expect("spawning krusty");
        let verdict = match (expected.status.success(), actual.status.success()) {
            (true, true) if expected.stdout == actual.stdout => continue,
            (false, false) => continue,
            (true, true) => support::diff(
                &String::from_utf8_lossy(&expected.stdout),
                &String::from_utf8_lossy(&actual.stdout),
            ),
            (true, false) => format!(
                "kubectl succeeded, krusty failed: {}",
                String::from_utf8_lossy(&actual.stderr)
            ),
            (false, true) => format!(
                "kubectl failed, krusty succeeded: {}",
                String::from_utf8_lossy(&expected.stderr)
            ),
        };
        failures.push(format!(
            "tree {tree} (seed {seed:#x}) at {}:\n{verdict}",
            dir.display()
        ));
    }
    assert!(
        failures.is_empty(),
        "{} of {TREES} trees differ (base seed {base:#x}):\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

/// A base with a Deployment, a Service and a ConfigMap, and an overlay
/// above it; each level draws its label and annotation settings.
fn write_tree(dir: &Path, rng: &mut support::Rng) {
    let app = rng.pick(&VALUES);
    support::write(
        dir,
        "base/deploy.yaml",
        &format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  labels:\n    app: {app}\nspec:\n  selector:\n    matchLabels:\n      app: {app}\n  template:\n    metadata:\n      labels:\n        app: {app}\n    spec:\n      containers:\n      - name: c\n        image: nginx\n"
        ),
    );
    support::write(
        dir,
        "base/service.yaml",
        &format!(
            "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec:\n  selector:\n    app: {app}\n  ports:\n  - port: 80\n"
        ),
    );
    support::write(
        dir,
        "base/cm.yaml",
        &format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n{}data:\n  team: {}\n  tier: {}\n",
            cm_annotations(rng),
            rng.pick(&VALUES),
            rng.pick(&VALUES)
        ),
    );
    let mut base = String::from("resources:\n- deploy.yaml\n- service.yaml\n- cm.yaml\n");
    if rng.chance(25) {
        let hash = if rng.chance(50) {
            "\n  options:\n    disableNameSuffixHash: true"
        } else {
            ""
        };
        let _ = write!(
            base,
            "configMapGenerator:\n- name: generated\n  literals: [k={}]{hash}\n",
            rng.pick(&VALUES)
        );
    }
    level_labels(rng, &mut base);
    support::write(dir, "base/kustomization.yaml", &base);

    let mut overlay = String::from("resources:\n- ../base\n");
    level_labels(rng, &mut overlay);
    let mut patches = String::new();
    if rng.chance(40) {
        let _ = write!(
            patches,
            "- patch: |-\n    apiVersion: apps/v1\n    kind: Deployment\n    metadata:\n      name: web\n      labels:\n        {}: {}\n",
            rng.pick(&KEYS),
            rng.pick(&VALUES)
        );
    }
    if rng.chance(30) {
        let _ = write!(
            patches,
            "- target:\n    kind: Deployment\n  patch: |-\n    - op: replace\n      path: /spec/template/metadata/labels/app\n      value: {}\n",
            rng.pick(&VALUES)
        );
    }
    if rng.chance(15) {
        // Replaces the map holding Kustomize's build records.
        let _ = write!(
            patches,
            "- target:\n    kind: {}\n  patch: |-\n    - op: replace\n      path: /metadata/annotations\n      value: {{seen: {}}}\n",
            rng.pick(&["Deployment", "Service"]),
            rng.pick(&VALUES)
        );
    }
    if rng.chance(15) {
        // A deleted copy, written again later, is a new value.
        let _ = write!(
            patches,
            "- patch: |-\n    apiVersion: apps/v1\n    kind: Deployment\n    metadata:\n      name: web\n    spec:\n      template:\n        metadata:\n          labels:\n            {}: null\n",
            rng.pick(&KEYS)
        );
    }
    if rng.chance(15) {
        // A replaced map holds new values, no longer shared.
        let _ = write!(
            patches,
            "- patch: |-\n    apiVersion: apps/v1\n    kind: Deployment\n    metadata:\n      name: web\n    spec:\n      template:\n        metadata:\n          labels:\n            $patch: replace\n            app: {}\n",
            rng.pick(&VALUES)
        );
    }
    if !patches.is_empty() {
        overlay.push_str("patches:\n");
        overlay.push_str(&patches);
    }
    if rng.chance(50) {
        let key = rng.pick(&["team", "tier"]);
        let target = rng.pick(&[
            "metadata.labels.app",
            "metadata.labels.team",
            "spec.selector.matchLabels.app",
            "spec.template.metadata.labels.app",
        ]);
        let create = if rng.chance(50) {
            "\n    options:\n      create: true"
        } else {
            ""
        };
        let _ = write!(
            overlay,
            "replacements:\n- source:\n    kind: ConfigMap\n    name: settings\n    fieldPath: data.{key}\n  targets:\n  - select:\n      kind: Deployment\n    fieldPaths:\n    - {target}{create}\n"
        );
    }
    if rng.chance(20) {
        let _ = writeln!(
            overlay,
            "buildMetadata: [{}]",
            rng.pick(&[
                "originAnnotations",
                "transformerAnnotations",
                "managedByLabel"
            ])
        );
    }
    support::write(dir, "overlay/kustomization.yaml", &overlay);
}

/// The settings ConfigMap's annotations: none, a local-config mark with
/// one of the values Kustomize tells apart, or a scalar where a mapping
/// belongs.
fn cm_annotations(rng: &mut support::Rng) -> String {
    match rng.below(6) {
        0 => format!(
            "  annotations:\n    config.kubernetes.io/local-config: \"{}\"\n",
            rng.pick(&["true", "false", "", "False"])
        ),
        1 => "  annotations: scalar\n".to_string(),
        _ => String::new(),
    }
}

/// Appends a level's label and annotation fields.
fn level_labels(rng: &mut support::Rng, out: &mut String) {
    if rng.chance(45) {
        let _ = write!(
            out,
            "commonLabels:\n  {}: {}\n",
            rng.pick(&KEYS),
            rng.pick(&VALUES)
        );
    }
    if rng.chance(60) {
        out.push_str("labels:\n");
        for _ in 0..rng.below(2) + 1 {
            let _ = write!(
                out,
                "- pairs:\n    {}: {}\n",
                rng.pick(&KEYS),
                rng.pick(&VALUES)
            );
            if rng.chance(50) {
                out.push_str("  includeSelectors: true\n");
            }
            if rng.chance(40) {
                out.push_str("  includeTemplates: true\n");
            }
            if rng.chance(25) {
                let path = rng.pick(&[
                    "spec/template/metadata/labels",
                    "spec/selector",
                    "metadata/annotations",
                ]);
                let create = rng.pick(&["true", "false"]);
                let kind = rng.pick(&["Deployment", "Service", ""]);
                let _ = write!(
                    out,
                    "  fields:\n  - path: {path}\n    kind: {kind}\n    create: {create}\n"
                );
            }
        }
    }
    if rng.chance(30) {
        let _ = write!(out, "commonAnnotations:\n  note: {}\n", rng.pick(&VALUES));
    }
    if rng.chance(20) {
        out.push_str("namePrefix: p-\n");
    }
    if rng.chance(15) {
        out.push_str("namespace: apps\n");
    }
}
