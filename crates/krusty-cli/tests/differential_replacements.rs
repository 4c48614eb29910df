//! Differential test of replacements on trees of bases and overlays:
//! `krusty build DIR` must succeed exactly when `kubectl kustomize DIR`
//! (Kustomize v5.5.0) does, and then print the same bytes.
//!
//! A deterministic generator derives every tree from one base seed (the
//! built-in [`DEFAULT_SEED`] or `KRUSTY_DIFF_SEED`, decimal or `0x` hex).
//! A tree has one or two bases, up to two overlays above them and sometimes
//! components, each level with a `namePrefix`, a `nameSuffix`, a
//! `namespace` or a renaming patch now and then, and `replacements:` whose
//! sources and targets select resources by their original, intermediate or
//! current names (or names they never had), write through field paths with
//! `[key=value]` selectors (matched as unanchored regular expressions),
//! indices and `*`, with the `create`, `delimiter` and `index` options.
//! Trees that Kustomize rejects are kept: both tools must then fail.
//!
//! On a mismatch the test prints the seed and tree number, the two outputs
//! (or errors) and keeps the tree on disk; `KRUSTY_DIFF_KEEP=1` keeps every
//! tree. `KRUSTY_DIFF_TREES` changes how many trees are generated. Without
//! `kubectl` on `PATH` the test prints `SKIPPED` and passes.

use std::env;
use std::fmt::Write as _;
use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

mod support;
use support::Rng;

/// Base seed used when `KRUSTY_DIFF_SEED` is not set.
const DEFAULT_SEED: u64 = 0x7265_706c_6163_6521;

/// How long one build may take.
const TIME_LIMIT: Duration = Duration::from_secs(60);

/// Trees generated when `KRUSTY_DIFF_TREES` is not set.
const DEFAULT_TREES: usize = 90;

#[test]
fn differential_replacements_on_trees() {
    let Some(kubectl) = support::find_in_path("kubectl") else {
        let banner = "!".repeat(72);
        let _ = writeln!(
            std::io::stderr(),
            "\n{banner}\nSKIPPED: kubectl not found on PATH; differential_replacements did not run.\n{banner}"
        );
        return;
    };
    let base_seed = env_u64("KRUSTY_DIFF_SEED").unwrap_or(DEFAULT_SEED);
    let trees = env_u64("KRUSTY_DIFF_TREES").map_or(DEFAULT_TREES, |n| n as usize);
    let keep = env::var_os("KRUSTY_DIFF_KEEP").is_some();
    let root = env::temp_dir().join(format!(
        "krusty-differential-replacements-{base_seed:016x}-{}",
        std::process::id()
    ));
    let mut failures = Vec::new();
    let mut both_failed = 0;
    for n in 0..trees {
        let seed = base_seed ^ (n as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let dir = root.join(format!("tree-{n:03}"));
        let top = write_tree(&dir, seed);
        let expected = run(
            Command::new(&kubectl).arg("kustomize").arg(&top),
            &dir,
            "kubectl",
        );
        let actual = run(
            support::krusty_command()
                // The reference is kubectl v1.32: Kustomize v5.5.0.
                .env("KRUSTY_KUSTOMIZE_VERSION", "v5.5.0")
                .arg("build")
                .arg(&top),
            &dir,
            "krusty",
        );
        match compare(&expected, &actual) {
            Some(report) => failures.push(format!(
                "tree {n} (seed {base_seed:#x}, tree seed {seed:#x}) kept at {}\n{report}",
                dir.display()
            )),
            None => {
                if !expected.status.success() {
                    both_failed += 1;
                }
                if !keep {
                    let _ = fs::remove_dir_all(&dir);
                }
            }
        }
    }
    eprintln!(
        "differential_replacements: seed {base_seed:#x}, {trees} trees, {both_failed} rejected by both"
    );
    if failures.is_empty() && !keep {
        let _ = fs::remove_dir_all(&root);
    }
    assert!(
        failures.is_empty(),
        "{} of {trees} trees differ from kubectl kustomize (reproduce with \
         KRUSTY_DIFF_SEED={base_seed:#x} cargo test -p krusty-cli --test \
         differential_replacements -- --nocapture):\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

/// Runs a build, its output kept in files beside the tree; panics when it
/// takes longer than [`TIME_LIMIT`] (Kustomize loops forever when a
/// `[key=pattern]` selector with `create` does not match the element it
/// appends: the generator must not write such selectors).
fn run(cmd: &mut Command, dir: &Path, name: &str) -> Output {
    let output = support::run_bounded(cmd, dir, name, TIME_LIMIT);
    let _ = fs::remove_file(dir.join(format!("{name}.stdout")));
    let _ = fs::remove_file(dir.join(format!("{name}.stderr")));
    output
}

/// Reads a `u64` from the environment (decimal or `0x` hex).
fn env_u64(name: &str) -> Option<u64> {
    let text = env::var(name).ok()?;
    let text = text.trim().replace('_', "");
    let parsed = match text.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => text.parse(),
    };
    Some(parsed.unwrap_or_else(|e| panic!("{name}={text:?} is not a u64: {e}")))
}

/// `None` when both failed or both printed the same bytes.
fn compare(expected: &Output, actual: &Output) -> Option<String> {
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    match (expected.status.success(), actual.status.success()) {
        (false, false) => None,
        (true, true) if expected.stdout == actual.stdout => None,
        (true, true) => Some(format!(
            "outputs differ (- kubectl kustomize, + krusty build):\n{}",
            support::diff(&text(&expected.stdout), &text(&actual.stdout))
        )),
        (true, false) => Some(format!(
            "krusty failed, kubectl succeeded\nkrusty stderr:\n{}",
            text(&actual.stderr)
        )),
        (false, true) => Some(format!(
            "kubectl failed, krusty succeeded\nkubectl stderr:\n{}\nkrusty stdout:\n{}",
            text(&expected.stderr),
            text(&actual.stdout)
        )),
    }
}

// ---------------------------------------------------------------------------
// Randomness
// ---------------------------------------------------------------------------

// ---------------------------------------------------------------------------
// The model the generator keeps of a tree
// ---------------------------------------------------------------------------

/// What kind of resource, and so which fields it has.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    ConfigMap,
    Deployment,
    Service,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::ConfigMap => "ConfigMap",
            Kind::Deployment => "Deployment",
            Kind::Service => "Service",
        }
    }
}

/// A resource as the generator knows it: its kind and every name it has
/// had so far (original first), and its namespaces.
#[derive(Clone)]
struct Res {
    kind: Kind,
    names: Vec<String>,
    namespaces: Vec<String>,
}

impl Res {
    fn current(&self) -> &str {
        self.names.last().expect("a resource has a name")
    }
}

/// Container names: `[name=app]` also matches `my-app-x` (unanchored).
const CONTAINERS: [&str; 4] = ["app", "my-app-x", "sidecar", "init-app"];
const WORDS: [&str; 10] = [
    "web", "db", "cache", "api", "front", "back", "jobs", "queue", "auth", "log",
];
const DATA_KEYS: [&str; 4] = ["host", "mode", "image", "port"];

fn resource_yaml(rng: &mut Rng, r: &Res) -> String {
    let name = r.current();
    let ns = match r.namespaces.last() {
        Some(ns) if !ns.is_empty() => format!("\n  namespace: {ns}"),
        _ => String::new(),
    };
    match r.kind {
        Kind::ConfigMap => format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}{ns}\ndata:\n  host: {}.example.com\n  mode: {}\n  image: nginx:1.{}\n  port: \"80{}\"\n",
            rng.pick(&WORDS),
            rng.pick(&WORDS),
            rng.below(30),
            rng.below(90) + 10
        ),
        Kind::Deployment => {
            let mut containers = String::new();
            let count = 1 + rng.below(3);
            let start = 1 + rng.below(CONTAINERS.len() - 1);
            for i in 0..count {
                let c = match i {
                    0 => CONTAINERS[0],
                    _ => CONTAINERS[1 + (start + i) % (CONTAINERS.len() - 1)],
                };
                let _ = write!(
                    containers,
                    "      - name: {c}\n        image: repo/{c}:v{}\n        args: [\"--{}\", \"{}\"]\n",
                    rng.below(9),
                    rng.pick(&WORDS),
                    rng.pick(&WORDS)
                );
            }
            format!(
                "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {name}{ns}\n  labels:\n    app: {name}\nspec:\n  replicas: {}\n  template:\n    metadata:\n      labels:\n        app: {name}\n    spec:\n      containers:\n{containers}",
                1 + rng.below(4)
            )
        }
        Kind::Service => format!(
            "apiVersion: v1\nkind: Service\nmetadata:\n  name: {name}{ns}\nspec:\n  selector:\n    app: {}\n  ports:\n  - name: http\n    port: {}\n",
            rng.pick(&WORDS),
            8000 + rng.below(100)
        ),
    }
}

/// One kustomization being written, and the resources it sees.
struct Level {
    yaml: String,
    /// Other files of the level's directory (name, text).
    files: Vec<(&'static str, String)>,
}

impl Level {
    fn new(component: bool) -> Level {
        let yaml = if component {
            "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\n".to_string()
        } else {
            "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n".to_string()
        };
        Level {
            yaml,
            files: Vec::new(),
        }
    }

    /// Writes the kustomization and the level's other files into `dir`.
    fn write_to(&self, root: &Path, dir: &str) {
        write(root, &format!("{dir}/kustomization.yaml"), &self.yaml);
        for (name, text) in &self.files {
            write(root, &format!("{dir}/{name}"), text);
        }
    }

    fn list(&mut self, field: &str, items: &[String]) {
        if items.is_empty() {
            return;
        }
        let _ = writeln!(self.yaml, "{field}:");
        for i in items {
            let _ = writeln!(self.yaml, "- {i}");
        }
    }
}

/// Names that a selector may use for `r`: any it has had, or one it never had.
fn some_name(rng: &mut Rng, r: &Res, source: bool) -> String {
    match rng.below(30) {
        0 if !source => format!("{}-nope", r.names[0]),
        1..=10 => r.names[0].clone(),
        11..=20 => r.current().to_string(),
        _ => rng.pick(&r.names).clone(),
    }
}

/// Renames every resource of `rs` by `prefix` and `suffix` (as the level's
/// `namePrefix`/`nameSuffix` do, one after the other).
fn rename_all(rs: &mut [Res], prefix: &str, suffix: &str) {
    for r in rs {
        if !prefix.is_empty() {
            let n = format!("{prefix}{}", r.current());
            r.names.push(n);
        }
        if !suffix.is_empty() {
            let n = format!("{}{suffix}", r.current());
            r.names.push(n);
        }
    }
}

/// Adds the level's own transformers: maybe a renaming patch, a namespace,
/// a prefix and a suffix, then replacements; updates the names in `rs`.
fn transformers(
    rng: &mut Rng,
    level: &mut Level,
    rs: &mut [Res],
    tag: &str,
    force_prefix: bool,
    is_base: bool,
) {
    if !rs.is_empty() && rng.chance(if is_base { 40 } else { 20 }) {
        // A rename by JSON patch or by strategic merge patch (which also
        // sets the name again and quotes the number-like fields
        // replacements made below).
        let i = rng.below(rs.len());
        let r = &rs[i];
        let new_name = format!("{}-{tag}r", rng.pick(&WORDS));
        let (kind, name) = (r.kind.name(), r.current());
        let _ = if rng.chance(50) {
            write!(
                level.yaml,
                "patches:\n- target:\n    kind: {kind}\n    name: {name}\n  patch: |\n    - op: replace\n      path: /metadata/name\n      value: {new_name}\n",
            )
        } else {
            let api_version = if r.kind == Kind::Deployment {
                "apps/v1"
            } else {
                "v1"
            };
            write!(
                level.yaml,
                "patches:\n- target:\n    kind: {kind}\n    name: {name}\n  options:\n    allowNameChange: true\n  patch: |\n    apiVersion: {api_version}\n    kind: {kind}\n    metadata:\n      name: {new_name}\n",
            )
        };
        rs[i].names.push(new_name);
    }
    if rng.chance(15) {
        let ns = format!("ns-{tag}");
        let _ = writeln!(level.yaml, "namespace: {ns}");
        for r in rs.iter_mut() {
            r.namespaces.push(ns.clone());
        }
    }
    let prefix = if force_prefix || rng.chance(50) {
        format!("{tag}-")
    } else {
        String::new()
    };
    let suffix = if rng.chance(40) {
        format!("-{tag}")
    } else {
        String::new()
    };
    if !prefix.is_empty() {
        let _ = writeln!(level.yaml, "namePrefix: {prefix}");
    }
    if !suffix.is_empty() {
        let _ = writeln!(level.yaml, "nameSuffix: {suffix}");
    }
    rename_all(rs, &prefix, &suffix);
    if !rs.is_empty() && rng.chance(70) {
        replacements(rng, level, rs);
    }
}

/// A source field of `r` and the options reading it.
fn source_field(rng: &mut Rng, r: &Res) -> (String, String) {
    match (r.kind, rng.below(5)) {
        (_, 0) => ("metadata.name".into(), String::new()),
        (Kind::Deployment, 4) => (
            rng.pick(&[
                "spec.template.metadata.labels",
                "spec.template.spec.containers.0.args",
            ])
            .to_string(),
            String::new(),
        ),
        (_, 1) => (
            "metadata.name".into(),
            format!("\n    options: {{delimiter: '-', index: {}}}", rng.below(2)),
        ),
        (Kind::ConfigMap, _) => (format!("data.{}", rng.pick(&DATA_KEYS)), String::new()),
        (Kind::Deployment, 2) => (
            format!(
                "spec.template.spec.containers.[name={}].image",
                CONTAINERS[0]
            ),
            String::new(),
        ),
        (Kind::Deployment, _) => (
            "spec.template.spec.containers.0.image".into(),
            format!("\n    options: {{delimiter: ':', index: {}}}", rng.below(2)),
        ),
        (Kind::Service, _) => ("spec.ports.0.port".into(), String::new()),
    }
}

/// A target field of a resource of `kind`, with options.
fn target_field(rng: &mut Rng, kind: Kind) -> (String, String) {
    let create = |rng: &mut Rng| {
        if rng.chance(96) {
            "\n    options: {create: true}".to_string()
        } else {
            String::new()
        }
    };
    match (kind, rng.below(8)) {
        (Kind::Deployment, 7) => (
            rng.pick(&[
                "spec.template.spec.containers.0.args.[=--]",
                "spec.template.spec.containers.*.args.[=e]",
            ])
            .to_string(),
            create(rng),
        ),
        (_, 0) => ("metadata.annotations.copied".into(), create(rng)),
        (_, 1) => (
            "metadata.labels.[app.kubernetes.io/part-of]".into(),
            create(rng),
        ),
        (Kind::ConfigMap, 2) => (format!("data.{}", rng.pick(&DATA_KEYS)), String::new()),
        (Kind::ConfigMap, 3) => (
            "data.image".into(),
            format!(
                "\n    options: {{delimiter: ':', index: {}}}",
                rng.pick(&[-1, 0, 1, 4])
            ),
        ),
        (Kind::ConfigMap, _) => ("data.copied".into(), "\n    options: {create: true}".into()),
        (Kind::Deployment, 2) => (
            format!(
                "spec.template.spec.containers.[name={}].image",
                rng.pick(&["app", "side", "x", "init-app", "app$", "^app"])
            ),
            create(rng),
        ),
        (Kind::Deployment, 3) => (
            "spec.template.spec.containers.*.args.1".into(),
            String::new(),
        ),
        (Kind::Deployment, 4) => (
            "spec.template.spec.containers.0.image".into(),
            format!(
                "\n    options: {{delimiter: ':', index: {}}}",
                rng.pick(&[-1, 0, 1, 3])
            ),
        ),
        (Kind::Deployment, _) => (
            "spec.template.spec.containers.[name=app].env.[name=COPIED].value".into(),
            "\n    options: {create: true}".into(),
        ),
        (Kind::Service, 2) => ("spec.selector.app".into(), String::new()),
        (Kind::Service, _) => ("spec.ports.[name=ht].name".into(), create(rng)),
    }
}

/// A target field of a resource of `kind` for a map or list value.
fn collection_target_field(rng: &mut Rng, kind: Kind) -> (String, String) {
    let create = "\n    options: {create: true}".to_string();
    match kind {
        Kind::Deployment => (
            rng.pick(&[
                "spec.template.metadata.labels",
                "spec.template.spec.containers.[name=app].args",
                "spec.template.spec.containers.*.args",
            ])
            .to_string(),
            String::new(),
        ),
        Kind::ConfigMap => ("data.nested".into(), create),
        Kind::Service => ("spec.selector".into(), String::new()),
    }
}

/// A selector for `r`: its kind (usually) and a name or namespace it has
/// or had.
fn selector_for(rng: &mut Rng, r: &Res, indent: &str, source: bool) -> String {
    let mut s = String::new();
    if !source && r.kind == Kind::Deployment && rng.chance(15) {
        let _ = writeln!(s, "{indent}labelSelector: app={}", r.names[0]);
    }
    if rng.chance(85) {
        let _ = writeln!(s, "{indent}kind: {}", r.kind.name());
    }
    if source || rng.chance(85) || s.is_empty() {
        let _ = writeln!(s, "{indent}name: {}", some_name(rng, r, source));
    }
    if rng.chance(10) {
        if let Some(ns) = r.namespaces.last().filter(|ns| !ns.is_empty()) {
            let _ = writeln!(s, "{indent}namespace: {ns}");
        }
    }
    s
}

/// Adds replacements between `rs`: inline, in a file named by `path:`, or
/// in a ReplacementTransformer config named by `transformers:`.
fn replacements(rng: &mut Rng, level: &mut Level, rs: &mut [Res]) {
    let list = replacement_list(rng, rs);
    match rng.below(5) {
        0 => {
            level
                .yaml
                .push_str("replacements:\n- path: replacements.yaml\n");
            level.files.push(("replacements.yaml", list));
        }
        1 => {
            level.yaml.push_str("transformers:\n- replacer.yaml\n");
            let config = format!(
                "apiVersion: builtin\nkind: ReplacementTransformer\nmetadata:\n  name: replacer\nreplacements:\n{list}"
            );
            level.files.push(("replacer.yaml", config));
        }
        _ => {
            level.yaml.push_str("replacements:\n");
            level.yaml.push_str(&list);
        }
    }
}

/// One to three replacements between `rs`, as a YAML list.
fn replacement_list(rng: &mut Rng, rs: &[Res]) -> String {
    let mut out = String::new();
    for _ in 0..1 + rng.below(3) {
        let src = rng.pick(rs).clone();
        let (field, options) = source_field(rng, &src);
        let _ = write!(
            out,
            "- source:\n{}    fieldPath: {field}{options}\n  targets:\n",
            selector_for(rng, &src, "    ", true)
        );
        for _ in 0..1 + rng.below(3) {
            // The source itself now and then, so later targets see its change.
            let target = if rng.chance(20) {
                src.clone()
            } else {
                rng.pick(rs).clone()
            };
            // Maps and lists go into maps and lists only, and scalars into
            // scalars (a map or list written into a scalar prints as an
            // empty string or a null in Kustomize, depending on the
            // scalar's history).
            let collection = field.ends_with("labels") || field.ends_with("args");
            let mut fields = vec![];
            let mut options = String::new();
            for _ in 0..1 + rng.below(2) {
                let (f, o) = if collection {
                    collection_target_field(rng, target.kind)
                } else {
                    target_field(rng, target.kind)
                };
                fields.push(format!("\"{f}\""));
                if options.is_empty() {
                    options = o;
                }
            }
            // A renaming target (a number written into a name that a
            // prefix, suffix or patch set prints as a number); no map or
            // list goes there (Kustomize then panics on its own records).
            if !collection && rng.chance(if field == "metadata.name" { 8 } else { 3 }) {
                fields.push("metadata.name".into());
            }
            let _ = write!(
                out,
                "  - select:\n{}    fieldPaths: [{}]{options}\n",
                selector_for(rng, &target, "      ", false),
                fields.join(", ")
            );
            if rng.chance(25) {
                let other = rng.pick(rs).clone();
                let _ = write!(
                    out,
                    "    reject:\n    - {}",
                    selector_for(rng, &other, "      ", false).trim_start()
                );
            }
        }
    }
    out
}

/// Writes a base (resources of its own) named `dir`; returns its resources.
fn base(rng: &mut Rng, root: &Path, dir: &str, tag: &str) -> Vec<Res> {
    let mut rs = Vec::new();
    let mut text = String::new();
    let kinds = [Kind::ConfigMap, Kind::Deployment, Kind::Service];
    for i in 0..2 + rng.below(3) {
        let kind = if i < 2 { kinds[i] } else { *rng.pick(&kinds) };
        let r = Res {
            kind,
            names: vec![format!("{}-{tag}{i}", rng.pick(&WORDS))],
            namespaces: vec![String::new()],
        };
        if !text.is_empty() {
            text.push_str("---\n");
        }
        text.push_str(&resource_yaml(rng, &r));
        rs.push(r);
    }
    write(root, &format!("{dir}/resources.yaml"), &text);
    let mut level = Level::new(false);
    level.list("resources", &["resources.yaml".to_string()]);
    if rng.chance(30) {
        let name = format!("gen-{tag}");
        let _ = write!(
            level.yaml,
            "configMapGenerator:\n- name: {name}\n  literals:\n  - host={}.example.com\n  - mode={}\n  - image=nginx:1.{}\n  - port=\"80{}\"\n",
            rng.pick(&WORDS),
            rng.pick(&WORDS),
            rng.below(30),
            rng.below(90) + 10
        );
        rs.push(Res {
            kind: Kind::ConfigMap,
            names: vec![name],
            namespaces: vec![String::new()],
        });
    }
    transformers(rng, &mut level, &mut rs, tag, false, true);
    level.write_to(root, dir);
    rs
}

/// Writes a component named `dir` acting on `rs` (the parent's resources
/// so far); it may bring one resource of its own.
fn component(rng: &mut Rng, root: &Path, dir: &str, tag: &str, rs: &mut Vec<Res>) {
    let mut level = Level::new(true);
    if rng.chance(40) {
        let r = Res {
            kind: Kind::ConfigMap,
            names: vec![format!("{}-{tag}", rng.pick(&WORDS))],
            namespaces: vec![String::new()],
        };
        write(root, &format!("{dir}/extra.yaml"), &resource_yaml(rng, &r));
        level.list("resources", &["extra.yaml".to_string()]);
        rs.push(r);
    }
    transformers(rng, &mut level, rs, tag, false, false);
    level.write_to(root, dir);
}

/// Writes an overlay named `dir` over `below` (directories and their
/// resources); returns its resources.
fn overlay(
    rng: &mut Rng,
    root: &Path,
    dir: &str,
    tag: &str,
    below: Vec<(String, Vec<Res>)>,
    force_prefix: bool,
) -> Vec<Res> {
    let mut level = Level::new(false);
    let mut rs = Vec::new();
    let mut entries = Vec::new();
    for (d, r) in below {
        entries.push(format!("../{d}"));
        rs.extend(r);
    }
    level.list("resources", &entries);
    if rng.chance(35) {
        let c = format!("{dir}-comp");
        component(rng, root, &c, &format!("{tag}c"), &mut rs);
        level.list("components", &[format!("../{c}")]);
    }
    transformers(rng, &mut level, &mut rs, tag, force_prefix, false);
    level.write_to(root, dir);
    rs
}

/// Writes a whole tree under `root`; returns the directory to build.
fn write_tree(root: &Path, seed: u64) -> PathBuf {
    let _ = fs::remove_dir_all(root);
    let mut rng = Rng::new(seed);
    let base1 = base(&mut rng, root, "base1", "a");
    if rng.chance(25) {
        // One base twice, through two overlays that rename it apart.
        let left = overlay(
            &mut rng,
            root,
            "left",
            "l",
            vec![("base1".into(), base1.clone())],
            true,
        );
        let right = overlay(
            &mut rng,
            root,
            "right",
            "r",
            vec![("base1".into(), base1)],
            true,
        );
        let below = vec![("left".to_string(), left), ("right".to_string(), right)];
        overlay(&mut rng, root, "top", "t", below, false);
        return root.join("top");
    }
    let mut below = vec![("base1".to_string(), base1)];
    if rng.chance(40) {
        below.push(("base2".to_string(), base(&mut rng, root, "base2", "b")));
    }
    let levels = match rng.below(3) {
        0 if below.len() == 2 => 1,
        n => n,
    };
    let mut top = below[0].0.clone();
    for l in 0..levels {
        let dir = format!("overlay{l}");
        let tag = ["m", "t"][l];
        let rs = overlay(&mut rng, root, &dir, tag, std::mem::take(&mut below), false);
        below = vec![(dir.clone(), rs)];
        top = dir;
    }
    root.join(top)
}

fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    fs::create_dir_all(path.parent().expect("has a parent")).expect("mkdir");
    fs::write(path, text).expect("writing a generated file");
}
