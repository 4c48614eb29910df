//! Differential test of the output order: `krusty build DIR` must print
//! byte-for-byte what `kubectl kustomize DIR` (Kustomize v5.5.0) prints
//! for trees of many resources with awkward ids: names and namespaces with
//! `-`, `.`, `_`, digits and capitals, prefixes of one another, empty
//! namespaces, kinds of every rank of the legacy order, several groups and
//! versions; spread over a few files in random order. One tree uses the
//! default order, one a custom `legacySortOptions`.
//!
//! The trees derive from a fixed seed, or from `KRUSTY_DIFF_SEED` (decimal
//! or `0x` hex). A mismatch prints the seed and a diff, and keeps the tree.
//! Without `kubectl` on `PATH` the tests print `SKIPPED` and pass.

mod support;
use support::Rng;

use std::collections::HashSet;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;
use std::process::Command;

const DEFAULT_SEED: u64 = 0x6f72_6465_7220_6964;

/// Kinds of the legacy order's ranks (first, last), with their apiVersion
/// when they are cluster-scoped (then they get no namespace and keep it).
const CLUSTER_KINDS: [(&str, &str); 6] = [
    ("Namespace", "v1"),
    ("ClusterRole", "rbac.authorization.k8s.io/v1"),
    ("StorageClass", "storage.k8s.io/v1"),
    ("PersistentVolume", "v1"),
    ("CustomResourceDefinition", "apiextensions.k8s.io/v1"),
    (
        "ValidatingWebhookConfiguration",
        "admissionregistration.k8s.io/v1",
    ),
];

/// Namespaced kinds, ranked and unranked; their group and version are
/// drawn at random.
const KINDS: [&str; 12] = [
    "ConfigMap",
    "Secret",
    "Service",
    "Deployment",
    "Role",
    "ServiceAccount",
    "Widget",
    "Widget2",
    "WidgetX",
    "widget",
    "A",
    "Z-kind",
];

const GROUPS: [&str; 7] = ["", "apps", "apps.x", "apps-x", "example.com", "a", "z"];
const VERSIONS: [&str; 6] = ["v1", "v1beta1", "v2", "v1-x", "v1.x", "v10"];
const NAMESPACES: [&str; 12] = [
    "kubeflow",
    "kubeflow-system",
    "kubeflow.system",
    "kubeflow0",
    "a",
    "a-",
    "a.",
    "a-b",
    "a_b",
    "A",
    "ns",
    "ns-1",
];
const NAME_CHARS: &[u8] = b"abcxyzABZ0129.-_";

#[test]
fn differential_order_default() {
    run("default", 1, "");
}

#[test]
fn differential_order_custom_legacy() {
    run(
        "custom",
        2,
        "sortOptions:\n  order: legacy\n  legacySortOptions:\n    orderFirst: [Widget, Secret, ClusterRole]\n    orderLast: [ConfigMap, Namespace]\n",
    );
}

/// Writes a tree for `salt`, builds it with both tools, compares.
fn run(name: &str, salt: u64, extra: &str) {
    let Some(kubectl) = support::find_in_path("kubectl") else {
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED: kubectl not found on PATH; differential_order '{name}' did not run."
        );
        return;
    };
    let base = std::env::var("KRUSTY_DIFF_SEED")
        .ok()
        .and_then(|s| match s.strip_prefix("0x") {
            Some(hex) => u64::from_str_radix(hex, 16).ok(),
            None => s.parse().ok(),
        })
        .unwrap_or(DEFAULT_SEED);
    let mut rng = Rng::new(base ^ salt.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let dir = support::scratch("differential_order", name);
    write_tree(&dir, &mut rng, extra);
    let expected = Command::new(kubectl)
        .arg("kustomize")
        .arg(&dir)
        .output()
        .expect("spawning kubectl");
    assert!(
        expected.status.success(),
        "generator bug (seed {base:#x}): kubectl rejected {}:\n{}",
        dir.display(),
        String::from_utf8_lossy(&expected.stderr)
    );
    let actual = support::krusty_command()
        // The reference is kubectl v1.32: Kustomize v5.5.0.
        .env("KRUSTY_KUSTOMIZE_VERSION", "v5.5.0")
        .arg("build")
        .arg(&dir)
        .output()
        .expect("spawning krusty");
    let (want, got) = (
        String::from_utf8_lossy(&expected.stdout),
        String::from_utf8_lossy(&actual.stdout),
    );
    assert!(
        actual.status.success() && want == got,
        "seed {base:#x}, tree kept at {}\nkrusty stderr: {}\n{}",
        dir.display(),
        String::from_utf8_lossy(&actual.stderr),
        support::diff(&want, &got)
    );
}

/// Writes 4 resource files of distinct random resources and the
/// kustomization listing them.
fn write_tree(dir: &Path, rng: &mut Rng, extra: &str) {
    const FILES: usize = 4;
    const DOCS: usize = 600;
    let mut seen = HashSet::new();
    let mut files = vec![String::new(); FILES];
    let mut made = 0;
    while made < DOCS {
        let doc = resource(rng);
        if !seen.insert(doc.0.clone()) {
            continue;
        }
        let file = &mut files[rng.below(FILES)];
        file.push_str("---\n");
        file.push_str(&doc.1);
        made += 1;
    }
    let mut kustomization = String::from("resources:\n");
    for (i, text) in files.iter().enumerate() {
        support::write(dir, &format!("r{i}.yaml"), text);
        let _ = writeln!(kustomization, "- r{i}.yaml");
    }
    kustomization.push_str(extra);
    support::write(dir, "kustomization.yaml", &kustomization);
}

/// A random resource: its id text (for uniqueness) and its YAML.
fn resource(rng: &mut Rng) -> (String, String) {
    let (api_version, kind, namespace) = if rng.below(5) == 0 {
        let (kind, api_version) = CLUSTER_KINDS[rng.below(CLUSTER_KINDS.len())];
        (api_version.to_string(), kind, String::new())
    } else {
        let group = GROUPS[rng.below(GROUPS.len())];
        let version = VERSIONS[rng.below(VERSIONS.len())];
        let api_version = if group.is_empty() {
            version.to_string()
        } else {
            format!("{group}/{version}")
        };
        let namespace = match rng.below(4) {
            0 => String::new(),
            1 => random_text(rng),
            _ => NAMESPACES[rng.below(NAMESPACES.len())].to_string(),
        };
        (api_version, KINDS[rng.below(KINDS.len())], namespace)
    };
    let name = match rng.below(3) {
        0 => NAMESPACES[rng.below(NAMESPACES.len())].to_string(),
        _ => random_text(rng),
    };
    let mut yaml =
        format!("apiVersion: {api_version}\nkind: {kind}\nmetadata:\n  name: \"{name}\"\n");
    if !namespace.is_empty() {
        let _ = writeln!(yaml, "  namespace: \"{namespace}\"");
    }
    (format!("{api_version}|{kind}|{namespace}|{name}"), yaml)
}

/// 1 to 6 characters of names, often extending a common stem.
fn random_text(rng: &mut Rng) -> String {
    let mut text = String::from(["", "a", "ab", "a-", "a."][rng.below(5)]);
    for _ in 0..rng.below(4) + 1 {
        text.push(char::from(NAME_CHARS[rng.below(NAME_CHARS.len())]));
    }
    text
}
