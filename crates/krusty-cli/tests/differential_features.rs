//! Differential test of whole kustomization trees using the features real
//! trees use most: `krusty build DIR` must succeed exactly when
//! `kubectl kustomize DIR` (Kustomize v5.5.0) does, and then print the same
//! bytes.
//!
//! A deterministic generator derives every tree from one seed: a base, an
//! optional middle overlay and a top overlay, sometimes a component, with
//! resources of many kinds (workloads, Services, ConfigMaps, Secrets, RBAC
//! with subjects, Ingress, HPA, PVC, CronJob, DaemonSet, Job, StorageClass,
//! PriorityClass, IngressClass, PersistentVolume, PodDisruptionBudget,
//! NetworkPolicy, ValidatingWebhookConfiguration, APIService, a CRD and a
//! custom resource) that refer to each other by name. Each level uses,
//! with some probability, `namePrefix`/`nameSuffix`, `namespace`, `commonLabels`,
//! `commonAnnotations`, `labels`, `images`, `replicas`, ConfigMap and
//! Secret generators (merged or replaced across levels), generator
//! options, strategic merge and JSON 6902 patches with targets, and
//! replacements; the top sometimes sorts, records build metadata, or adds
//! field specs through `configurations` and `crds` files.
//!
//! `KRUSTY_DIFF_FEATURES_SEEDS` sets how many trees run (default
//! [`DEFAULT_SEEDS`]); their seeds derive from `KRUSTY_DIFF_SEED` (decimal
//! or `0x` hex, default [`DEFAULT_SEED`]). On a mismatch the test keeps the
//! tree and prints the seed, the tree's path and the first difference.
//! `KRUSTY_DIFF_FEATURES_REJECTS=1` prints Kustomize's error for every tree
//! both tools reject (to see what the generator gets wrong), and
//! `KRUSTY_DIFF_KEEP=1` keeps every tree. `KRUSTY_DIFF_BIN` names another
//! krusty binary to compare (a copy, for a long run while the tree is
//! being rebuilt). Trees are built on one thread per core;
//! `KRUSTY_DIFF_JOBS` sets how many.
//! Without `kubectl` on `PATH` the test prints `SKIPPED` and passes.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs;
use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

mod support;
use support::Rng;

/// Base seed used when `KRUSTY_DIFF_SEED` is not set.
const DEFAULT_SEED: u64 = 0x6665_6174_7572_6573;

/// Trees built when `KRUSTY_DIFF_FEATURES_SEEDS` is not set.
const DEFAULT_SEEDS: usize = 40;

/// How long one build may take.
const TIME_LIMIT: Duration = Duration::from_secs(60);

#[test]
fn differential_features_on_trees() {
    // Each release krusty reproduces whose kubectl is here: krusty builds
    // each tree as that release and is compared with it.
    let oracles: Vec<(&str, std::path::PathBuf)> = support::KUSTOMIZE_VERSIONS
        .into_iter()
        .filter_map(|v| support::kubectl_for(v).map(|k| (v, k)))
        .collect();
    if oracles.is_empty() {
        support::skip("kubectl not found on PATH; differential_features did not run");
        return;
    }
    for version in support::KUSTOMIZE_VERSIONS {
        if !oracles.iter().any(|(v, _)| *v == version) {
            support::skip(&format!(
                "no kubectl for Kustomize {version} (see support::kubectl_for): trees not compared with it"
            ));
        }
    }
    let base_seed = support::diff_seed(DEFAULT_SEED);
    let seeds = std::env::var("KRUSTY_DIFF_FEATURES_SEEDS")
        .ok()
        .map_or(DEFAULT_SEEDS, |s| {
            s.trim()
                .parse()
                .unwrap_or_else(|e| panic!("KRUSTY_DIFF_FEATURES_SEEDS={s:?} is not a count: {e}"))
        });
    let keep = std::env::var_os("KRUSTY_DIFF_KEEP").is_some();
    let krusty = std::env::var_os("KRUSTY_DIFF_BIN")
        .map_or_else(|| support::KRUSTY.into(), std::path::PathBuf::from);
    let show_rejects = std::env::var_os("KRUSTY_DIFF_FEATURES_REJECTS").is_some();
    let root = std::env::temp_dir().join(format!(
        "krusty-differential-features-{base_seed:016x}-{}",
        std::process::id()
    ));
    // Trees are independent: build them on as many threads as there are
    // cores (`KRUSTY_DIFF_JOBS` sets how many), each taking the next seed.
    let jobs = std::env::var("KRUSTY_DIFF_JOBS")
        .ok()
        .and_then(|j| j.trim().parse().ok())
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .max(1);
    let next = std::sync::atomic::AtomicUsize::new(0);
    let outcomes: Vec<(usize, Outcome)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..jobs)
            .map(|_| {
                scope.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let n = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        if n >= seeds {
                            return done;
                        }
                        let seed = base_seed ^ (n as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
                        let dir = root.join(format!("tree-{n:04}"));
                        let outcome = one_tree(&dir, seed, &oracles, &krusty);
                        match &outcome {
                            Outcome::Differ(report) => eprintln!(
                                "MISMATCH tree {n} seed {seed:#x} at {}\n{report}\n",
                                dir.display()
                            ),
                            Outcome::BothFailed(why) if show_rejects => {
                                eprintln!("REJECTED tree {n} seed {seed:#x}: {why}")
                            }
                            _ => {}
                        }
                        if !matches!(outcome, Outcome::Differ(_)) && !keep {
                            let _ = fs::remove_dir_all(&dir);
                        }
                        done.push((n, outcome));
                    }
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().expect("a differential worker panicked"))
            .collect()
    });
    let both_failed = outcomes
        .iter()
        .filter(|(_, o)| matches!(o, Outcome::BothFailed(_)))
        .count();
    let mut failures: Vec<(usize, String)> = outcomes
        .into_iter()
        .filter_map(|(n, o)| match o {
            Outcome::Differ(report) => {
                let seed = base_seed ^ (n as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
                Some((
                    n,
                    format!(
                        "tree {n} (tree seed {seed:#x}) kept at {}\n{report}",
                        root.join(format!("tree-{n:04}")).display()
                    ),
                ))
            }
            _ => None,
        })
        .collect();
    failures.sort();
    let failures: Vec<String> = failures.into_iter().map(|(_, f)| f).collect();
    let releases: Vec<&str> = oracles.iter().map(|(v, _)| *v).collect();
    eprintln!(
        "differential_features: seed {base_seed:#x}, {seeds} trees, each as {}: {} identical, {both_failed} rejected by both, {} differ",
        releases.join(" and "),
        seeds - both_failed - failures.len(),
        failures.len()
    );
    if failures.is_empty() && !keep {
        let _ = fs::remove_dir_all(&root);
    }
    assert!(
        failures.is_empty(),
        "{} of {seeds} trees differ from kubectl kustomize (reproduce with \
         KRUSTY_DIFF_SEED={base_seed:#x} KRUSTY_DIFF_FEATURES_SEEDS={seeds} cargo test \
         -p krusty-cli --test differential_features -- --nocapture):\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

/// How one tree came out.
enum Outcome {
    /// Both tools printed the same bytes.
    Same,
    /// Both failed (Kustomize's error).
    BothFailed(String),
    /// They differ (the first difference).
    Differ(String),
}

/// Writes the tree of `seed` in `dir` and builds it with krusty as each
/// release of `oracles` and with that release's kubectl: the same bytes
/// from every pair, or both failing, for every release.
fn one_tree(
    dir: &Path,
    seed: u64,
    oracles: &[(&str, std::path::PathBuf)],
    krusty: &Path,
) -> Outcome {
    let top = write_tree(dir, seed);
    let mut outcome = Outcome::Same;
    for (version, kubectl) in oracles {
        let expected = run(
            Command::new(kubectl).arg("kustomize").arg(&top),
            dir,
            &format!("kubectl-{version}"),
        );
        let actual = run(
            Command::new(krusty)
                .args(["--kustomize-version", version, "build"])
                .arg(&top),
            dir,
            &format!("krusty-{version}"),
        );
        match compare(&expected, &actual) {
            Some(report) => return Outcome::Differ(format!("as Kustomize {version}: {report}")),
            None if expected.status.success() => {}
            None => {
                outcome = Outcome::BothFailed(support::text(&expected.stderr).trim().to_string())
            }
        }
    }
    outcome
}

/// Runs a build, its output kept in files beside the tree; panics when it
/// takes longer than [`TIME_LIMIT`].
fn run(cmd: &mut Command, dir: &Path, name: &str) -> Output {
    support::run_bounded(cmd, dir, name, TIME_LIMIT)
}

/// `None` when both failed or both printed the same bytes; else the first
/// difference.
fn compare(expected: &Output, actual: &Output) -> Option<String> {
    let text = support::text;
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
            "kubectl failed, krusty succeeded\nkubectl stderr:\n{}",
            text(&expected.stderr)
        )),
    }
}

// ---------------------------------------------------------------------------
// The model the generator keeps of a tree
// ---------------------------------------------------------------------------

/// The kinds of resource the generator writes.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Kind {
    Deployment,
    StatefulSet,
    Service,
    ConfigMap,
    Secret,
    ServiceAccount,
    Role,
    RoleBinding,
    ClusterRoleBinding,
    Ingress,
    Hpa,
    Pvc,
    CronJob,
    DaemonSet,
    Job,
    StorageClass,
    PriorityClass,
    IngressClass,
    PersistentVolume,
    Pdb,
    NetworkPolicy,
    Webhook,
    ApiService,
    Crd,
    Widget,
}

impl Kind {
    /// The `kind` field.
    fn name(self) -> &'static str {
        match self {
            Kind::Deployment => "Deployment",
            Kind::StatefulSet => "StatefulSet",
            Kind::Service => "Service",
            Kind::ConfigMap => "ConfigMap",
            Kind::Secret => "Secret",
            Kind::ServiceAccount => "ServiceAccount",
            Kind::Role => "Role",
            Kind::RoleBinding => "RoleBinding",
            Kind::ClusterRoleBinding => "ClusterRoleBinding",
            Kind::Ingress => "Ingress",
            Kind::Hpa => "HorizontalPodAutoscaler",
            Kind::Pvc => "PersistentVolumeClaim",
            Kind::CronJob => "CronJob",
            Kind::DaemonSet => "DaemonSet",
            Kind::Job => "Job",
            Kind::StorageClass => "StorageClass",
            Kind::PriorityClass => "PriorityClass",
            Kind::IngressClass => "IngressClass",
            Kind::PersistentVolume => "PersistentVolume",
            Kind::Pdb => "PodDisruptionBudget",
            Kind::NetworkPolicy => "NetworkPolicy",
            Kind::Webhook => "ValidatingWebhookConfiguration",
            Kind::ApiService => "APIService",
            Kind::Crd => "CustomResourceDefinition",
            Kind::Widget => "Widget",
        }
    }

    /// The `apiVersion` field.
    fn api_version(self) -> &'static str {
        match self {
            Kind::Deployment | Kind::StatefulSet | Kind::DaemonSet => "apps/v1",
            Kind::Role | Kind::RoleBinding | Kind::ClusterRoleBinding => {
                "rbac.authorization.k8s.io/v1"
            }
            Kind::Ingress | Kind::IngressClass | Kind::NetworkPolicy => "networking.k8s.io/v1",
            Kind::Hpa => "autoscaling/v2",
            Kind::CronJob | Kind::Job => "batch/v1",
            Kind::StorageClass => "storage.k8s.io/v1",
            Kind::PriorityClass => "scheduling.k8s.io/v1",
            Kind::Pdb => "policy/v1",
            Kind::Webhook => "admissionregistration.k8s.io/v1",
            Kind::ApiService => "apiregistration.k8s.io/v1",
            Kind::Crd => "apiextensions.k8s.io/v1",
            Kind::Widget => "example.com/v1",
            _ => "v1",
        }
    }

    fn is_workload(self) -> bool {
        matches!(
            self,
            Kind::Deployment | Kind::StatefulSet | Kind::CronJob | Kind::DaemonSet | Kind::Job
        )
    }
}

/// A resource as the generator knows it: its kind and every name it has
/// had so far (original first).
#[derive(Clone)]
struct Res {
    kind: Kind,
    names: Vec<String>,
}

impl Res {
    fn current(&self) -> &str {
        self.names.last().expect("a resource has a name")
    }
}

/// What the levels below the one being written produced.
#[derive(Default, Clone)]
struct Model {
    res: Vec<Res>,
    /// Names of generated ConfigMaps and Secrets (as written in generators).
    gen_cms: Vec<String>,
    gen_secrets: Vec<String>,
    /// The namespace a level below set, if any.
    namespace: Option<String>,
}

impl Model {
    fn of(&self, kind: Kind) -> Vec<&Res> {
        self.res.iter().filter(|r| r.kind == kind).collect()
    }

    fn rename_all(&mut self, prefix: &str, suffix: &str) {
        for r in &mut self.res {
            if r.kind == Kind::Crd {
                continue;
            }
            let n = format!("{prefix}{}{suffix}", r.current());
            if n != r.current() {
                r.names.push(n);
            }
        }
    }
}

const WORDS: [&str; 14] = [
    "web", "db", "cache", "api", "front", "back", "jobs", "queue", "auth", "log", "mail", "search",
    "store", "proxy",
];
const CONTAINERS: [&str; 3] = ["app", "sidecar", "metrics"];
const IMAGES: [&str; 4] = ["nginx", "redis", "busybox", "example.com/team/tool"];
const LABEL_KEYS: [&str; 5] = ["team", "tier", "env", "app.kubernetes.io/part-of", "track"];
const VALUES: [&str; 6] = ["blue", "green", "prod", "dev", "core", "edge"];

/// The files of a tree, by path relative to its root.
#[derive(Default)]
struct Files(BTreeMap<String, String>);

impl Files {
    fn put(&mut self, path: &str, text: String) {
        self.0.insert(path.to_string(), text);
    }
}

/// Writes one tree generated from `seed` under `dir`; returns the
/// directory to build.
fn write_tree(dir: &Path, seed: u64) -> std::path::PathBuf {
    let _ = fs::remove_dir_all(dir);
    let mut g = Gen {
        rng: Rng::new(seed),
        files: Files::default(),
        fresh: 0,
    };
    let top = g.tree();
    for (path, text) in &g.files.0 {
        support::write(dir, path, text);
    }
    dir.join(top)
}

/// The generator's state while writing one tree.
struct Gen {
    rng: Rng,
    files: Files,
    /// Counter making new names unique.
    fresh: usize,
}

/// A kustomization (or component) file being written.
struct Kust {
    dir: String,
    yaml: String,
}

impl Kust {
    fn new(dir: &str, component: bool) -> Kust {
        let yaml = if component {
            "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\n".to_string()
        } else {
            "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n".to_string()
        };
        Kust {
            dir: dir.to_string(),
            yaml,
        }
    }

    fn line(&mut self, text: &str) {
        self.yaml.push_str(text);
        if !text.ends_with('\n') {
            self.yaml.push('\n');
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

impl Gen {
    fn word(&mut self) -> &'static str {
        self.rng.pick_str(&WORDS)
    }

    /// A name not used before in this tree.
    fn new_name(&mut self) -> String {
        self.fresh += 1;
        format!("{}{}", self.word(), self.fresh)
    }

    fn chance(&mut self, p: u32) -> bool {
        self.rng.chance(p)
    }

    /// The whole tree; returns the top directory.
    fn tree(&mut self) -> &'static str {
        let mut model = Model::default();
        self.base(&mut model);
        let mut comp = self.chance(35);
        let mut below = "../base".to_string();
        // ConfigMaps a component generates: the level's own generators
        // run before its components, so they cannot merge into these.
        let mut made = Vec::new();
        if self.chance(55) {
            let mut k = Kust::new("mid", false);
            let mut resources = vec![below.clone()];
            resources.extend(self.extra_resources(&mut k, &mut model));
            k.list("resources", &resources);
            if comp && self.chance(50) {
                comp = false;
                k.list("components", &["../comp".to_string()]);
                made = self.component(&mut model);
            }
            self.level(&mut k, &mut model, "mid", false);
            model.gen_cms.append(&mut made);
            self.finish(k);
            below = "../mid".to_string();
        }
        let mut k = Kust::new("top", false);
        let mut resources = vec![below];
        resources.extend(self.extra_resources(&mut k, &mut model));
        k.list("resources", &resources);
        if comp {
            k.list("components", &["../comp".to_string()]);
            made = self.component(&mut model);
        }
        self.level(&mut k, &mut model, "top", true);
        model.gen_cms.append(&mut made);
        self.top_only(&mut k, &model);
        self.finish(k);
        "top"
    }

    fn finish(&mut self, k: Kust) {
        self.files
            .put(&format!("{}/kustomization.yaml", k.dir), k.yaml);
    }

    // -----------------------------------------------------------------------
    // Resources
    // -----------------------------------------------------------------------

    /// The base: resources of many kinds, generators, and a level's
    /// transformers.
    fn base(&mut self, model: &mut Model) {
        let mut k = Kust::new("base", false);
        self.want(model, Kind::ConfigMap, 60, 2);
        self.want(model, Kind::Secret, 40, 2);
        self.want(model, Kind::ServiceAccount, 50, 2);
        self.want(model, Kind::Pvc, 30, 1);
        self.want(model, Kind::Service, 60, 2);
        self.want(model, Kind::Role, 30, 1);
        self.want(model, Kind::Deployment, 85, 2);
        self.want(model, Kind::StatefulSet, 30, 1);
        self.want(model, Kind::CronJob, 25, 1);
        self.want(model, Kind::Ingress, 25, 1);
        self.want(model, Kind::Hpa, 25, 1);
        self.want(model, Kind::RoleBinding, 30, 1);
        self.want(model, Kind::ClusterRoleBinding, 20, 1);
        self.want(model, Kind::DaemonSet, 15, 1);
        self.want(model, Kind::Job, 15, 1);
        self.want(model, Kind::StorageClass, 20, 1);
        self.want(model, Kind::PriorityClass, 20, 1);
        self.want(model, Kind::IngressClass, 15, 1);
        self.want(model, Kind::PersistentVolume, 15, 1);
        self.want(model, Kind::Pdb, 20, 1);
        self.want(model, Kind::NetworkPolicy, 20, 1);
        self.want(model, Kind::Webhook, 15, 1);
        self.want(model, Kind::ApiService, 10, 1);
        if self.chance(20) {
            model.res.push(Res {
                kind: Kind::Crd,
                names: vec!["widgets.example.com".into()],
            });
            self.want(model, Kind::Widget, 100, 2);
        }
        // Generators of the base.
        if self.chance(60) {
            let n = self.rng.range(1, 2);
            for _ in 0..n {
                let name = self.new_name();
                model.gen_cms.push(name);
            }
        }
        if self.chance(35) {
            let name = self.new_name();
            model.gen_secrets.push(name);
        }
        let mut resource_files = Vec::new();
        let res = model.res.clone();
        let mut one_file = String::new();
        let combine = self.chance(30);
        for r in &res {
            let text = self.resource_yaml(r, model);
            if combine {
                if !one_file.is_empty() {
                    one_file.push_str("---\n");
                }
                one_file.push_str(&text);
            } else {
                let file = format!("{}-{}.yaml", r.kind.name().to_lowercase(), r.current());
                self.files.put(&format!("base/{file}"), text);
                resource_files.push(file);
            }
        }
        if combine && !one_file.is_empty() {
            self.files.put("base/all.yaml", one_file);
            resource_files.push("all.yaml".into());
        }
        k.list("resources", &resource_files);
        let cms = model.gen_cms.clone();
        let secrets = model.gen_secrets.clone();
        self.generators(&mut k, "ConfigMap", &cms, &[], None);
        self.generators(&mut k, "Secret", &secrets, &[], None);
        if self.chance(30) {
            self.generator_options(&mut k);
        }
        self.level(&mut k, model, "base", false);
        self.finish(k);
    }

    /// With chance `p`, one to `max` resources of `kind` with new names.
    fn want(&mut self, model: &mut Model, kind: Kind, p: u32, max: usize) {
        if self.chance(p) {
            for _ in 0..self.rng.range(1, max) {
                let name = self.new_name();
                model.res.push(Res {
                    kind,
                    names: vec![name],
                });
            }
        }
    }

    /// Resources an overlay adds beside its bases (file names).
    fn extra_resources(&mut self, k: &mut Kust, model: &mut Model) -> Vec<String> {
        if !self.chance(25) {
            return Vec::new();
        }
        let kind = *self.rng.pick(&[
            Kind::ConfigMap,
            Kind::Service,
            Kind::ServiceAccount,
            Kind::Deployment,
        ]);
        let r = Res {
            kind,
            names: vec![self.new_name()],
        };
        let text = self.resource_yaml(&r, model);
        let file = format!("extra-{}.yaml", r.current());
        self.files.put(&format!("{}/{file}", k.dir), text);
        model.res.push(r);
        vec![file]
    }

    /// A reference to one of the model's ConfigMaps (resource or generated).
    fn cm_ref(&mut self, model: &Model) -> Option<String> {
        let mut all: Vec<String> = model
            .of(Kind::ConfigMap)
            .iter()
            .map(|r| r.names[0].clone())
            .collect();
        all.extend(model.gen_cms.iter().cloned());
        (!all.is_empty()).then(|| self.rng.pick(&all).clone())
    }

    fn secret_ref(&mut self, model: &Model) -> Option<String> {
        let mut all: Vec<String> = model
            .of(Kind::Secret)
            .iter()
            .map(|r| r.names[0].clone())
            .collect();
        all.extend(model.gen_secrets.iter().cloned());
        (!all.is_empty()).then(|| self.rng.pick(&all).clone())
    }

    /// The `app` label a selector picks: one of the model's Deployments,
    /// else the resource's own `name`.
    fn selected_app(&mut self, model: &Model, name: &str) -> String {
        self.name_of(model, Kind::Deployment)
            .unwrap_or_else(|| name.to_string())
    }

    fn name_of(&mut self, model: &Model, kind: Kind) -> Option<String> {
        let all = model.of(kind);
        (!all.is_empty()).then(|| self.rng.pick(&all).names[0].clone())
    }

    /// A pod spec (indented by `ind` spaces) referring to the model's
    /// ConfigMaps, Secrets, ServiceAccounts and PVCs.
    fn pod_spec(&mut self, model: &Model, app: &str, ind: usize) -> String {
        let p = " ".repeat(ind);
        let mut s = String::new();
        if let Some(sa) = self.name_of(model, Kind::ServiceAccount) {
            let _ = writeln!(s, "{p}serviceAccountName: {sa}");
        }
        if let Some(pc) = self.name_of(model, Kind::PriorityClass) {
            if self.chance(60) {
                let _ = writeln!(s, "{p}priorityClassName: {pc}");
            }
        }
        if let Some(sec) = self.secret_ref(model) {
            if self.chance(25) {
                let _ = writeln!(s, "{p}imagePullSecrets:\n{p}- name: {sec}");
            }
        }
        let _ = writeln!(s, "{p}containers:");
        let n = self.rng.range(1, 2);
        let cm = self.cm_ref(model);
        let secret = self.secret_ref(model);
        for c in CONTAINERS.iter().take(n) {
            let image = self.rng.pick_str(&IMAGES);
            let tag = match self.rng.below(4) {
                0 => String::new(),
                1 => "@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
                    .into(),
                _ => format!(":1.{}", self.rng.below(20)),
            };
            let _ = writeln!(s, "{p}- name: {c}\n{p}  image: {image}{tag}");
            if *c == "app" {
                let _ = writeln!(
                    s,
                    "{p}  ports:\n{p}  - containerPort: 80{}\n{p}    name: http",
                    self.rng.below(10)
                );
            }
            let mut env = Vec::new();
            if *c == "app" || self.chance(50) {
                env.push(format!(
                    "{p}  - name: APP_NAME\n{p}    value: {app}\n{p}  - name: MODE\n{p}    value: \"{}\"",
                    self.rng.pick_str(&VALUES)
                ));
            }
            if let Some(cm) = &cm {
                if self.chance(50) {
                    env.push(format!(
                        "{p}  - name: FROM_CM\n{p}    valueFrom:\n{p}      configMapKeyRef:\n{p}        name: {cm}\n{p}        key: mode"
                    ));
                }
            }
            if let Some(sec) = &secret {
                if self.chance(50) {
                    env.push(format!(
                        "{p}  - name: PASSWORD\n{p}    valueFrom:\n{p}      secretKeyRef:\n{p}        name: {sec}\n{p}        key: password"
                    ));
                }
            }
            if !env.is_empty() {
                let _ = writeln!(s, "{p}  env:\n{}", env.join("\n"));
            }
            if let Some(cm) = &cm {
                if self.chance(30) {
                    let _ = writeln!(
                        s,
                        "{p}  envFrom:\n{p}  - configMapRef:\n{p}      name: {cm}"
                    );
                }
            }
        }
        let mut vols = Vec::new();
        if let Some(cm) = &cm {
            if self.chance(50) {
                vols.push(format!(
                    "{p}- name: config\n{p}  configMap:\n{p}    name: {cm}"
                ));
            }
        }
        if let Some(sec) = &secret {
            if self.chance(40) {
                vols.push(format!(
                    "{p}- name: creds\n{p}  secret:\n{p}    secretName: {sec}"
                ));
            }
        }
        if let Some(pvc) = self.name_of(model, Kind::Pvc) {
            if self.chance(70) {
                vols.push(format!(
                    "{p}- name: data\n{p}  persistentVolumeClaim:\n{p}    claimName: {pvc}"
                ));
            }
        }
        if !vols.is_empty() {
            let _ = writeln!(s, "{p}volumes:\n{}", vols.join("\n"));
        }
        s
    }

    fn resource_yaml(&mut self, r: &Res, model: &Model) -> String {
        let name = r.current().to_string();
        let kind = r.kind;
        let mut s = format!(
            "apiVersion: {}\nkind: {}\nmetadata:\n  name: {name}\n",
            kind.api_version(),
            kind.name()
        );
        if kind != Kind::Crd {
            let _ = writeln!(s, "  labels:\n    app: {name}");
        }
        if self.chance(20) {
            let _ = writeln!(s, "  annotations:\n    owner: {}", self.word());
        }
        match kind {
            Kind::Deployment | Kind::StatefulSet => {
                let _ = writeln!(s, "spec:\n  replicas: {}", self.rng.range(1, 3));
                if kind == Kind::StatefulSet {
                    if let Some(svc) = self.name_of(model, Kind::Service) {
                        let _ = writeln!(s, "  serviceName: {svc}");
                    }
                }
                let _ = writeln!(
                    s,
                    "  selector:\n    matchLabels:\n      app: {name}\n  template:\n    metadata:\n      labels:\n        app: {name}\n    spec:"
                );
                s.push_str(&self.pod_spec(model, &name, 6));
                if kind == Kind::StatefulSet && self.chance(50) {
                    s.push_str("  volumeClaimTemplates:\n  - metadata:\n      name: state\n    spec:\n      accessModes: [ReadWriteOnce]\n      resources:\n        requests:\n          storage: 1Gi\n");
                    if let Some(sc) = self.name_of(model, Kind::StorageClass) {
                        let _ = writeln!(s, "      storageClassName: {sc}");
                    }
                }
            }
            Kind::DaemonSet => {
                let _ = writeln!(
                    s,
                    "spec:\n  selector:\n    matchLabels:\n      app: {name}\n  template:\n    metadata:\n      labels:\n        app: {name}\n    spec:"
                );
                s.push_str(&self.pod_spec(model, &name, 6));
            }
            Kind::Job => {
                s.push_str("spec:\n  template:\n    spec:\n      restartPolicy: Never\n");
                s.push_str(&self.pod_spec(model, &name, 6));
            }
            Kind::StorageClass => {
                s.push_str("provisioner: example.com/disk\n");
                if let Some(sec) = self.secret_ref(model) {
                    if self.chance(40) {
                        let _ = writeln!(s, "parameters:\n  secretName: {sec}");
                    }
                }
            }
            Kind::PriorityClass => {
                let _ = writeln!(s, "value: {}", 1000 + self.rng.below(1000));
            }
            Kind::IngressClass => {
                s.push_str("spec:\n  controller: example.com/ingress\n");
            }
            Kind::PersistentVolume => {
                s.push_str("spec:\n  capacity:\n    storage: 2Gi\n  accessModes: [ReadWriteOnce]\n  hostPath:\n    path: /data\n");
                if let Some(sc) = self.name_of(model, Kind::StorageClass) {
                    if self.chance(50) {
                        let _ = writeln!(s, "  storageClassName: {sc}");
                    }
                }
            }
            Kind::Pdb => {
                let target = self.selected_app(model, &name);
                let _ = writeln!(
                    s,
                    "spec:\n  minAvailable: 1\n  selector:\n    matchLabels:\n      app: {target}"
                );
            }
            Kind::Webhook => {
                let svc = self
                    .name_of(model, Kind::Service)
                    .unwrap_or_else(|| "missing".into());
                let ns = if self.chance(50) {
                    "\n        namespace: default"
                } else {
                    ""
                };
                let _ = writeln!(
                    s,
                    "webhooks:\n- name: check.example.com\n  admissionReviewVersions: [v1]\n  sideEffects: None\n  clientConfig:\n    service:\n        name: {svc}{ns}\n        path: /check"
                );
            }
            Kind::ApiService => {
                let svc = self
                    .name_of(model, Kind::Service)
                    .unwrap_or_else(|| "missing".into());
                let _ = writeln!(
                    s,
                    "spec:\n  group: metrics.example.com\n  version: v1\n  groupPriorityMinimum: 100\n  versionPriority: 10\n  service:\n    name: {svc}\n    namespace: default"
                );
            }
            Kind::NetworkPolicy => {
                let target = self.selected_app(model, &name);
                let _ = writeln!(
                    s,
                    "spec:\n  podSelector:\n    matchLabels:\n      app: {target}\n  ingress:\n  - from:\n    - podSelector:\n        matchLabels:\n          app: {target}"
                );
            }
            Kind::CronJob => {
                let _ = writeln!(
                    s,
                    "spec:\n  schedule: \"*/{} * * * *\"\n  jobTemplate:\n    spec:\n      template:\n        spec:\n          restartPolicy: OnFailure",
                    self.rng.range(2, 30)
                );
                s.push_str(&self.pod_spec(model, &name, 10));
            }
            Kind::Service => {
                let target = self.selected_app(model, &name);
                let _ = writeln!(
                    s,
                    "spec:\n  selector:\n    app: {target}\n  ports:\n  - name: http\n    port: {}\n    targetPort: http",
                    8000 + self.rng.below(100)
                );
            }
            Kind::ConfigMap => {
                let _ = writeln!(
                    s,
                    "data:\n  mode: {}\n  host: {}.example.com\n  port: \"80{}\"",
                    self.rng.pick_str(&VALUES),
                    self.word(),
                    self.rng.below(10)
                );
            }
            Kind::Secret => {
                s.push_str("type: Opaque\ndata:\n  password: c2VjcmV0\n");
                if self.chance(30) {
                    s.push_str("stringData:\n  user: admin\n");
                }
            }
            Kind::ServiceAccount => {
                if let Some(sec) = self.secret_ref(model) {
                    if self.chance(30) {
                        let _ = writeln!(s, "secrets:\n- name: {sec}");
                    }
                }
            }
            Kind::Pvc => {
                s.push_str("spec:\n  accessModes:\n  - ReadWriteOnce\n  resources:\n    requests:\n      storage: 2Gi\n");
                if let Some(sc) = self.name_of(model, Kind::StorageClass) {
                    if self.chance(60) {
                        let _ = writeln!(s, "  storageClassName: {sc}");
                    }
                }
                if let Some(pv) = self.name_of(model, Kind::PersistentVolume) {
                    if self.chance(60) {
                        let _ = writeln!(s, "  volumeName: {pv}");
                    }
                }
            }
            Kind::Role => {
                s.push_str("rules:\n- apiGroups: [\"\"]\n  resources: [configmaps]\n  verbs: [get, list]\n");
                if let Some(cm) = self.cm_ref(model) {
                    if self.chance(50) {
                        let _ = writeln!(s, "  resourceNames: [{cm}]");
                    }
                }
            }
            Kind::RoleBinding | Kind::ClusterRoleBinding => {
                let role = match (kind, self.name_of(model, Kind::Role)) {
                    (Kind::RoleBinding, Some(r)) => format!("kind: Role\n  name: {r}"),
                    _ => "kind: ClusterRole\n  name: view".into(),
                };
                let _ = writeln!(
                    s,
                    "roleRef:\n  apiGroup: rbac.authorization.k8s.io\n  {role}\nsubjects:"
                );
                let sas: Vec<String> = model
                    .of(Kind::ServiceAccount)
                    .iter()
                    .map(|r| r.names[0].clone())
                    .collect();
                let mut any = false;
                for sa in &sas {
                    if self.chance(70) {
                        any = true;
                        let ns = match self.rng.below(3) {
                            0 => String::new(),
                            1 => "\n  namespace: default".into(),
                            _ => "\n  namespace: other".into(),
                        };
                        let _ = writeln!(s, "- kind: ServiceAccount\n  name: {sa}{ns}");
                    }
                }
                if !any || self.chance(30) {
                    s.push_str(
                        "- kind: User\n  name: alice\n  apiGroup: rbac.authorization.k8s.io\n",
                    );
                }
            }
            Kind::Ingress => {
                let svc = self
                    .name_of(model, Kind::Service)
                    .unwrap_or_else(|| "missing".into());
                let class = match self.name_of(model, Kind::IngressClass) {
                    Some(class) if self.chance(60) => format!("  ingressClassName: {class}\n"),
                    _ => String::new(),
                };
                let _ = writeln!(
                    s,
                    "spec:\n{}  rules:\n  - host: {}.example.com\n    http:\n      paths:\n      - path: /\n        pathType: Prefix\n        backend:\n          service:\n            name: {svc}\n            port:\n              number: 80",
                    class,
                    self.word()
                );
                if let Some(sec) = self.secret_ref(model) {
                    if self.chance(40) {
                        let _ = writeln!(
                            s,
                            "  tls:\n  - hosts: [a.example.com]\n    secretName: {sec}"
                        );
                    }
                }
            }
            Kind::Hpa => {
                let (k, t) = match self.name_of(model, Kind::Deployment) {
                    Some(d) => ("Deployment", d),
                    None => match self.name_of(model, Kind::StatefulSet) {
                        Some(d) => ("StatefulSet", d),
                        None => ("Deployment", "none".into()),
                    },
                };
                let _ = writeln!(
                    s,
                    "spec:\n  scaleTargetRef:\n    apiVersion: apps/v1\n    kind: {k}\n    name: {t}\n  minReplicas: 1\n  maxReplicas: {}",
                    self.rng.range(2, 9)
                );
            }
            Kind::Crd => {
                s.push_str("spec:\n  group: example.com\n  names:\n    kind: Widget\n    plural: widgets\n  scope: Namespaced\n  versions:\n  - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema:\n        type: object\n        x-kubernetes-preserve-unknown-fields: true\n");
            }
            Kind::Widget => {
                let _ = writeln!(s, "spec:\n  size: {}", self.rng.range(1, 5));
                if let Some(cm) = self.cm_ref(model) {
                    let _ = writeln!(s, "  configRef:\n    name: {cm}");
                }
                let _ = writeln!(s, "  selector:\n    app: {name}");
                s.push_str(
                    "  parts:\n  - name: a\n    image: nginx:1.0\n  - name: b\n    image: redis\n",
                );
            }
        }
        s
    }

    // -----------------------------------------------------------------------
    // Generators
    // -----------------------------------------------------------------------

    /// A `configMapGenerator` or `secretGenerator` creating `create` and
    /// merging into or replacing `existing`.
    fn generators(
        &mut self,
        k: &mut Kust,
        kind: &str,
        create: &[String],
        existing: &[String],
        namespace: Option<&str>,
    ) {
        let mut entries = Vec::new();
        for name in create {
            entries.push(self.generator_entry(k, kind, name, None, None));
        }
        for name in existing {
            let behavior = if self.chance(70) { "merge" } else { "replace" };
            entries.push(self.generator_entry(k, kind, name, Some(behavior), namespace));
        }
        if entries.is_empty() {
            return;
        }
        let field = if kind == "ConfigMap" {
            "configMapGenerator"
        } else {
            "secretGenerator"
        };
        let _ = writeln!(k.yaml, "{field}:");
        for e in entries {
            k.yaml.push_str(&e);
        }
    }

    fn generator_entry(
        &mut self,
        k: &Kust,
        kind: &str,
        name: &str,
        behavior: Option<&str>,
        namespace: Option<&str>,
    ) -> String {
        let mut s = format!("- name: {name}\n");
        if let Some(b) = behavior {
            let _ = writeln!(s, "  behavior: {b}");
            if let Some(ns) = namespace {
                let _ = writeln!(s, "  namespace: {ns}");
            }
        }
        if kind == "Secret" && behavior.is_none() && self.chance(20) {
            s.push_str("  type: kubernetes.io/basic-auth\n");
        }
        let mut any = false;
        if self.chance(70) {
            any = true;
            s.push_str("  literals:\n");
            if kind == "Secret" {
                let _ = writeln!(s, "  - password={}", self.word());
            } else {
                let _ = writeln!(s, "  - mode={}", self.rng.pick_str(&VALUES));
            }
            if self.chance(50) {
                let _ = writeln!(s, "  - {}_KEY={}", self.word().to_uppercase(), self.word());
            }
        }
        if self.chance(35) {
            any = true;
            let file = format!("{name}-{}.txt", self.word());
            let text = format!("line {}\n", self.word());
            self.files.put(&format!("{}/{file}", k.dir), text);
            if self.chance(50) {
                let _ = writeln!(s, "  files:\n  - {file}");
            } else {
                let _ = writeln!(s, "  files:\n  - conf-{}={file}", self.fresh);
            }
        }
        if !any || self.chance(25) {
            let file = format!("{name}.env");
            let mode = if kind == "Secret" { "PASS" } else { "ENV_MODE" };
            self.files.put(
                &format!("{}/{file}", k.dir),
                format!(
                    "# settings\n{mode}={}\nLEVEL={}\n",
                    self.rng.pick_str(&VALUES),
                    self.rng.below(5)
                ),
            );
            let _ = writeln!(s, "  envs:\n  - {file}");
        }
        if self.chance(25) {
            s.push_str("  options:\n");
            if self.chance(50) {
                let _ = writeln!(s, "    labels:\n      gen: {}", self.word());
            }
            if self.chance(40) {
                let _ = writeln!(s, "    annotations:\n      note: \"{}\"", self.word());
            }
            if self.chance(30) {
                s.push_str("    disableNameSuffixHash: true\n");
            } else {
                s.push_str("    disableNameSuffixHash: false\n");
            }
        }
        s
    }

    fn generator_options(&mut self, k: &mut Kust) {
        k.line("generatorOptions:");
        if self.chance(50) {
            let _ = writeln!(k.yaml, "  labels:\n    generated: \"{}\"", self.word());
        }
        if self.chance(40) {
            let _ = writeln!(k.yaml, "  annotations:\n    origin: {}", self.word());
        }
        if self.chance(40) {
            k.line("  disableNameSuffixHash: true");
        }
        if self.chance(10) {
            k.line("  immutable: true");
        }
        if k.yaml.ends_with("generatorOptions:\n") {
            k.line("  labels:\n    generated: \"yes\"");
        }
    }

    // -----------------------------------------------------------------------
    // Components
    // -----------------------------------------------------------------------

    /// A component (at `comp/`): maybe a ConfigMap, generators creating
    /// or merging, labels, images, patches and replacements of what
    /// `model` holds where the component is used; adds what it makes.
    fn component(&mut self, model: &mut Model) -> Vec<String> {
        let mut k = Kust::new("comp", true);
        let mut made = Vec::new();
        if self.chance(40) {
            let r = Res {
                kind: Kind::ConfigMap,
                names: vec![self.new_name()],
            };
            let text = self.resource_yaml(&r, model);
            let file = format!("{}.yaml", r.current());
            self.files.put(&format!("comp/{file}"), text);
            k.list("resources", &[file]);
            model.res.push(r);
        }
        if self.chance(50) {
            let new = vec![self.new_name()];
            let merge: Vec<String> = if !model.gen_cms.is_empty() && self.chance(50) {
                vec![self.rng.pick(&model.gen_cms).clone()]
            } else {
                Vec::new()
            };
            let ns = model.namespace.clone();
            self.generators(&mut k, "ConfigMap", &new, &merge, ns.as_deref());
            made = new;
        }
        if self.chance(50) {
            self.common_labels(&mut k);
        }
        if self.chance(40) {
            self.images(&mut k);
        }
        if !model.res.is_empty() && self.chance(50) {
            self.patches(&mut k, model);
        }
        if self.chance(25) {
            self.replacements(&mut k, model);
        }
        if k.yaml.ends_with("kind: Component\n") {
            k.line("commonAnnotations:\n  component: \"on\"");
        }
        self.finish(k);
        made
    }

    // -----------------------------------------------------------------------
    // A level's transformers
    // -----------------------------------------------------------------------

    /// The transformers of one level, in an order a person might write
    /// them; updates the names in `model`.
    fn level(&mut self, k: &mut Kust, model: &mut Model, tag: &str, top: bool) {
        // A level's generators make their ConfigMaps in its namespace, so
        // they can merge into those below only where it sets none.
        let namespace = self.chance(25).then(|| format!("ns-{tag}"));
        if tag != "base" {
            // Generators merging into or replacing the base's, or new ones.
            let merge_cms: Vec<String> = model
                .gen_cms
                .clone()
                .into_iter()
                .filter(|_| namespace.is_none() && self.chance(30))
                .collect();
            let merge_secrets: Vec<String> = model
                .gen_secrets
                .clone()
                .into_iter()
                .filter(|_| namespace.is_none() && self.chance(25))
                .collect();
            let new_cms: Vec<String> = if self.chance(20) {
                vec![self.new_name()]
            } else {
                Vec::new()
            };
            let ns = model.namespace.clone();
            self.generators(k, "ConfigMap", &new_cms, &merge_cms, ns.as_deref());
            self.generators(k, "Secret", &[], &merge_secrets, ns.as_deref());
            model.gen_cms.extend(new_cms);
            if self.chance(15) {
                self.generator_options(k);
            }
        }
        // Patches see the names before this level's prefix and suffix.
        if !model.res.is_empty() && self.chance(55) {
            self.patches(k, model);
        }
        if let Some(ns) = namespace {
            let _ = writeln!(k.yaml, "namespace: {ns}");
            model.namespace = Some(ns);
        }
        let prefix = if self.chance(40) {
            format!("{tag}-")
        } else {
            String::new()
        };
        let suffix = if self.chance(25) {
            format!("-{tag}")
        } else {
            String::new()
        };
        if !prefix.is_empty() {
            let _ = writeln!(k.yaml, "namePrefix: {prefix}");
        }
        if !suffix.is_empty() {
            let _ = writeln!(k.yaml, "nameSuffix: {suffix}");
        }
        model.rename_all(&prefix, &suffix);
        if self.chance(30) {
            self.common_labels(k);
        }
        if self.chance(30) {
            let _ = writeln!(
                k.yaml,
                "commonAnnotations:\n  team: {}\n  note: \"{} {}\"",
                self.rng.pick_str(&VALUES),
                self.word(),
                self.rng.below(100)
            );
        }
        if self.chance(25) {
            self.labels(k);
        }
        if self.chance(30) {
            self.images(k);
        }
        if self.chance(20) {
            self.replicas(k, model);
        }
        if !model.res.is_empty() && self.chance(30) {
            self.replacements(k, model);
        }
        if top || self.chance(20) {
            self.configurations(k, model);
        }
    }

    fn common_labels(&mut self, k: &mut Kust) {
        let key = self.rng.pick_str(&LABEL_KEYS);
        let _ = writeln!(
            k.yaml,
            "commonLabels:\n  {key}: {}",
            self.rng.pick_str(&VALUES)
        );
    }

    fn labels(&mut self, k: &mut Kust) {
        k.line("labels:");
        for _ in 0..self.rng.range(1, 2) {
            let key = self.rng.pick_str(&LABEL_KEYS);
            let _ = writeln!(
                k.yaml,
                "- pairs:\n    {key}: {}",
                self.rng.pick_str(&VALUES)
            );
            if self.chance(40) {
                k.line("  includeSelectors: true");
            } else if self.chance(50) {
                k.line("  includeTemplates: true");
            }
            if self.chance(25) {
                let (path, kind) = *self.rng.pick(&[
                    ("spec/selector", "Widget"),
                    ("metadata/annotations/copied", "Deployment"),
                    ("spec/template/metadata/annotations", "StatefulSet"),
                    ("spec/labels", "Service"),
                ]);
                let create = if self.chance(60) { "true" } else { "false" };
                let _ = writeln!(
                    k.yaml,
                    "  fields:\n  - path: {path}\n    kind: {kind}\n    create: {create}"
                );
            }
        }
    }

    fn images(&mut self, k: &mut Kust) {
        k.line("images:");
        for _ in 0..self.rng.range(1, 2) {
            let name = self.rng.pick_str(&IMAGES);
            let _ = writeln!(k.yaml, "- name: {name}");
            match self.rng.below(5) {
                0 => {
                    let _ = writeln!(k.yaml, "  newName: registry.local/{}", self.word());
                }
                1 => {
                    let _ = writeln!(k.yaml, "  newTag: \"2.{}\"", self.rng.below(9));
                }
                2 => {
                    k.line("  digest: sha256:fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210");
                }
                3 => {
                    let _ = writeln!(
                        k.yaml,
                        "  newName: mirror.example.com/{name}\n  newTag: v{}",
                        self.rng.below(9)
                    );
                }
                _ => {
                    let _ = writeln!(
                        k.yaml,
                        "  newName: {}\n  digest: sha256:00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff",
                        self.rng.pick_str(&IMAGES)
                    );
                }
            }
        }
    }

    fn replicas(&mut self, k: &mut Kust, model: &Model) {
        let targets: Vec<Res> = model
            .res
            .iter()
            .filter(|r| matches!(r.kind, Kind::Deployment | Kind::StatefulSet))
            .cloned()
            .collect();
        if targets.is_empty() {
            return;
        }
        k.line("replicas:");
        let r = self.rng.pick(&targets).clone();
        let name = self.some_name(&r);
        let _ = writeln!(k.yaml, "- name: {name}\n  count: {}", self.rng.range(0, 7));
    }

    /// A name a selector may use for `r`: mostly its current one, sometimes
    /// an earlier one.
    fn some_name(&mut self, r: &Res) -> String {
        if self.chance(75) {
            r.current().to_string()
        } else {
            self.rng.pick(&r.names).clone()
        }
    }

    // -----------------------------------------------------------------------
    // Patches
    // -----------------------------------------------------------------------

    fn patches(&mut self, k: &mut Kust, model: &mut Model) {
        k.line("patches:");
        for _ in 0..self.rng.range(1, 3) {
            if model.res.is_empty() {
                break;
            }
            let i = self.rng.below(model.res.len());
            let r = model.res[i].clone();
            if r.kind == Kind::Crd {
                continue;
            }
            match self.rng.below(20) {
                0 => self.rename(k, &mut model.res[i]),
                1 => {
                    // Deletes the resource.
                    let ns = match &model.namespace {
                        Some(ns) if r.kind != Kind::ClusterRoleBinding => {
                            format!("  namespace: {ns}\n")
                        }
                        _ => String::new(),
                    };
                    let body = format!(
                        "apiVersion: {}\nkind: {}\nmetadata:\n  name: {}\n{ns}$patch: delete\n",
                        r.kind.api_version(),
                        r.kind.name(),
                        r.current()
                    );
                    let _ = write!(k.yaml, "- patch: |-\n{}", indent(&body, 4));
                    model.res.remove(i);
                }
                2..=10 => {
                    let ns = model.namespace.clone();
                    self.smp(k, &r, ns.as_deref());
                }
                _ => self.json6902(k, &r),
            }
        }
        if k.yaml.ends_with("patches:\n") {
            // Every pick was the CRD: patch it harmlessly.
            k.line("- patch: |\n    apiVersion: apiextensions.k8s.io/v1\n    kind: CustomResourceDefinition\n    metadata:\n      name: widgets.example.com\n      labels:\n        patched: \"true\"");
        }
    }

    /// A target selecting `r` (or, now and then, more or nothing).
    fn target(&mut self, r: &Res) -> String {
        let mut t = String::from("  target:\n");
        let name = self.some_name(r);
        match self.rng.below(8) {
            0 => {
                let _ = writeln!(t, "    kind: {}", r.kind.name());
            }
            1 => {
                let stem = &r.names[0][..3.min(r.names[0].len())];
                let _ = writeln!(t, "    kind: {}\n    name: \".*{stem}.*\"", r.kind.name());
            }
            2 => {
                let _ = writeln!(
                    t,
                    "    kind: {}\n    labelSelector: app={}",
                    r.kind.name(),
                    r.names[0]
                );
            }
            3 => {
                let _ = writeln!(
                    t,
                    "    annotationSelector: owner\n    kind: {}",
                    r.kind.name()
                );
            }
            4 => {
                let group = match r.kind.api_version().split_once('/') {
                    Some((g, _)) => g.to_string(),
                    None => String::new(),
                };
                let _ = writeln!(
                    t,
                    "    group: \"{group}\"\n    version: {}\n    kind: {}\n    name: {name}",
                    r.kind.api_version().rsplit('/').next().unwrap_or("v1"),
                    r.kind.name()
                );
            }
            5 => {
                let _ = writeln!(t, "    kind: ({}|Service)\n    name: {name}", r.kind.name());
            }
            _ => {
                let _ = writeln!(t, "    kind: {}\n    name: {name}", r.kind.name());
            }
        }
        t
    }

    /// A strategic merge patch of `r`, inline or in a file, with or without
    /// a target.
    fn smp(&mut self, k: &mut Kust, r: &Res, namespace: Option<&str>) {
        let name = self.some_name(r);
        let mut body = format!(
            "apiVersion: {}\nkind: {}\nmetadata:\n  name: {name}\n",
            r.kind.api_version(),
            r.kind.name()
        );
        if let Some(ns) = namespace {
            if r.kind != Kind::ClusterRoleBinding && self.chance(90) {
                let _ = writeln!(body, "  namespace: {ns}");
            }
        }
        let choice = self.rng.below(10);
        match r.kind {
            Kind::Deployment | Kind::StatefulSet if choice < 8 => {
                body.push_str("spec:\n");
                match choice {
                    0 => {
                        let _ = writeln!(body, "  replicas: {}", self.rng.range(1, 9));
                    }
                    1 => {
                        let _ = writeln!(
                            body,
                            "  template:\n    spec:\n      containers:\n      - name: app\n        env:\n        - name: EXTRA\n          value: \"{}\"",
                            self.word()
                        );
                    }
                    2 => body.push_str(
                        "  template:\n    spec:\n      containers:\n      - name: sidecar\n        $patch: delete\n",
                    ),
                    3 => body.push_str(
                        "  template:\n    spec:\n      containers:\n      - name: debug\n        image: busybox:1.36\n        args: [sleep, \"3600\"]\n",
                    ),
                    4 => body.push_str(
                        "  template:\n    spec:\n      $patch: replace\n      containers:\n      - name: app\n        image: nginx:replaced\n",
                    ),
                    5 => body.push_str(
                        "  template:\n    spec:\n      $setElementOrder/containers:\n      - name: metrics\n      - name: app\n      containers:\n      - name: metrics\n        image: busybox\n",
                    ),
                    6 => body.push_str(
                        "  template:\n    metadata:\n      annotations:\n        patched: \"yes\"\n    spec:\n      containers:\n      - name: app\n        resources:\n          limits:\n            cpu: 100m\n",
                    ),
                    _ => body.push_str(
                        "  template:\n    spec:\n      volumes:\n      - name: scratch\n        emptyDir: {}\n",
                    ),
                }
            }
            Kind::ConfigMap if choice < 7 => {
                let _ = writeln!(
                    body,
                    "data:\n  mode: {}\n  extra: \"{}\"",
                    self.rng.pick_str(&VALUES),
                    self.rng.below(100)
                );
            }
            Kind::Service if choice < 7 => {
                body.push_str("spec:\n  ports:\n  - name: metrics\n    port: 9090\n");
            }
            Kind::Widget if choice < 7 => {
                body.push_str("spec:\n  parts:\n  - name: c\n    image: busybox\n");
            }
            _ => {
                let _ = writeln!(
                    body,
                    "  labels:\n    patched: {}",
                    self.rng.pick_str(&VALUES)
                );
            }
        }
        let target = if self.chance(35) {
            self.target(r)
        } else {
            String::new()
        };
        if self.chance(50) {
            self.fresh += 1;
            let file = format!("patch-{}.yaml", self.fresh);
            self.files.put(&format!("{}/{file}", k.dir), body);
            let _ = write!(k.yaml, "- path: {file}\n{target}");
        } else {
            let _ = write!(k.yaml, "- patch: |-\n{}{target}", indent(&body, 4));
        }
    }

    /// Renames `r` by a JSON patch or a strategic merge patch that may
    /// change names.
    fn rename(&mut self, k: &mut Kust, r: &mut Res) {
        let new = self.new_name();
        let (kind, name) = (r.kind.name(), r.current().to_string());
        if self.chance(50) {
            let _ = write!(
                k.yaml,
                "- target:\n    kind: {kind}\n    name: {name}\n  patch: |-\n    - op: replace\n      path: /metadata/name\n      value: {new}\n"
            );
        } else {
            let _ = write!(
                k.yaml,
                "- target:\n    kind: {kind}\n    name: {name}\n  options:\n    allowNameChange: true\n  patch: |-\n    apiVersion: {}\n    kind: {kind}\n    metadata:\n      name: {new}\n",
                r.kind.api_version()
            );
        }
        r.names.push(new);
    }

    /// A JSON 6902 patch of `r`, with a target.
    fn json6902(&mut self, k: &mut Kust, r: &Res) {
        let mut ops = Vec::new();
        for _ in 0..self.rng.range(1, 3) {
            let op = match (r.kind, self.rng.below(9)) {
                (Kind::Deployment | Kind::StatefulSet, 0) => format!(
                    "- op: replace\n  path: /spec/replicas\n  value: {}",
                    self.rng.range(1, 9)
                ),
                (Kind::Deployment | Kind::StatefulSet, 1) => format!(
                    "- op: add\n  path: /spec/template/spec/containers/0/args\n  value: [\"--{}\"]",
                    self.word()
                ),
                (Kind::Deployment | Kind::StatefulSet, 2) => {
                    "- op: test\n  path: /spec/template/spec/containers/0/name\n  value: app".into()
                }
                (Kind::Deployment | Kind::StatefulSet, 3) => {
                    "- op: copy\n  from: /spec/template/spec/containers/0/image\n  path: /metadata/annotations/image".into()
                }
                (Kind::ConfigMap, 0 | 1) => {
                    "- op: move\n  from: /data/mode\n  path: /data/moved".into()
                }
                (Kind::ConfigMap, 2) => format!(
                    "- op: replace\n  path: /data/mode\n  value: {}",
                    self.rng.pick_str(&VALUES)
                ),
                (_, 4) => "- op: remove\n  path: /metadata/labels/app".into(),
                (Kind::ConfigMap, 5) => "- op: remove\n  path: /data/host".into(),
                (Kind::Deployment | Kind::StatefulSet, 5) => {
                    "- op: remove\n  path: /spec/replicas".into()
                }
                _ => format!(
                    "- op: add\n  path: /metadata/labels/added\n  value: \"{}\"",
                    self.word()
                ),
            };
            ops.push(op);
        }
        let body = ops.join("\n") + "\n";
        let target = self.target(r);
        if self.chance(40) {
            self.fresh += 1;
            let file = format!("json-{}.yaml", self.fresh);
            self.files.put(&format!("{}/{file}", k.dir), body);
            let _ = write!(k.yaml, "- path: {file}\n{target}");
        } else {
            let _ = write!(k.yaml, "- patch: |-\n{}{target}", indent(&body, 4));
        }
    }

    // -----------------------------------------------------------------------
    // Replacements
    // -----------------------------------------------------------------------

    fn replacements(&mut self, k: &mut Kust, model: &Model) {
        let sources: Vec<Res> = model
            .res
            .iter()
            .filter(|r| matches!(r.kind, Kind::ConfigMap | Kind::Deployment | Kind::Service))
            .cloned()
            .collect();
        let targets: Vec<Res> = model
            .res
            .iter()
            .filter(|r| r.kind.is_workload() || r.kind == Kind::ConfigMap || r.kind == Kind::Widget)
            .cloned()
            .collect();
        if sources.is_empty() || targets.is_empty() {
            return;
        }
        k.line("replacements:");
        for _ in 0..self.rng.range(1, 2) {
            let src = self.rng.pick(&sources).clone();
            let src_field = match src.kind {
                Kind::ConfigMap => *self.rng.pick(&["data.mode", "data.host", "metadata.name"]),
                Kind::Deployment => *self.rng.pick(&[
                    "spec.template.spec.containers.[name=app].image",
                    "metadata.name",
                    "spec.replicas",
                ]),
                _ => *self.rng.pick(&["spec.ports.0.port", "metadata.name"]),
            };
            let src_name = if self.chance(90) {
                src.current().to_string()
            } else {
                self.some_name(&src)
            };
            let _ = writeln!(
                k.yaml,
                "- source:\n    kind: {}\n    name: {src_name}\n    fieldPath: {src_field}",
                src.kind.name()
            );
            if src_field.ends_with("image") && self.chance(50) {
                let _ = writeln!(
                    k.yaml,
                    "    options:\n      delimiter: \":\"\n      index: {}",
                    self.rng.below(2)
                );
            }
            k.line("  targets:");
            let tgt = self.rng.pick(&targets).clone();
            let select = match self.rng.below(4) {
                0 => format!("      kind: {}", tgt.kind.name()),
                1 => format!(
                    "      kind: {}\n      name: {}",
                    tgt.kind.name(),
                    self.some_name(&tgt)
                ),
                _ => format!("      name: {}", self.some_name(&tgt)),
            };
            let _ = writeln!(k.yaml, "  - select:\n{select}");
            if self.chance(20) {
                let _ = writeln!(k.yaml, "    reject:\n    - name: {}", self.word());
            }
            let pod = match tgt.kind {
                Kind::CronJob => "spec.jobTemplate.spec.template.spec",
                _ => "spec.template.spec",
            };
            let (path, opts) = match (tgt.kind, self.rng.below(5)) {
                (Kind::ConfigMap, 0 | 1) => ("data.copied".to_string(), "\n      create: true"),
                (Kind::ConfigMap, _) => ("data.mode".to_string(), ""),
                (Kind::Widget, 0 | 1) => ("spec.parts.[name=a].image".to_string(), ""),
                (Kind::Widget, _) => ("spec.label".to_string(), "\n      create: true"),
                (_, 0) => (
                    format!("{pod}.containers.[name=app].image"),
                    "\n      delimiter: \":\"\n      index: 1",
                ),
                (_, 1) => (
                    format!("{pod}.containers.[name=app].env.[name=MODE].value"),
                    "",
                ),
                (_, 2) => (
                    "metadata.annotations.replaced".to_string(),
                    "\n      create: true",
                ),
                (_, 3) => (format!("{pod}.containers.0.image"), ""),
                _ => ("metadata.labels.app".to_string(), ""),
            };
            let _ = writeln!(k.yaml, "    fieldPaths:\n    - {path}");
            if !opts.is_empty() {
                let _ = writeln!(k.yaml, "    options:{opts}");
            }
        }
    }

    // -----------------------------------------------------------------------
    // Top only: configurations, crds, sortOptions, buildMetadata
    // -----------------------------------------------------------------------

    fn configurations(&mut self, k: &mut Kust, model: &Model) {
        let has_widget = model.res.iter().any(|r| r.kind == Kind::Widget);
        if has_widget && self.chance(40) {
            self.fresh += 1;
            let file = format!("config-{}.yaml", self.fresh);
            let mut text = String::new();
            if self.chance(70) {
                text.push_str("nameReference:\n- kind: ConfigMap\n  fieldSpecs:\n  - kind: Widget\n    path: spec/configRef/name\n");
            }
            if self.chance(60) {
                text.push_str(
                    "commonLabels:\n- kind: Widget\n  path: spec/selector\n  create: true\n",
                );
            }
            if self.chance(40) {
                text.push_str("images:\n- kind: Widget\n  path: spec/parts/image\n");
            }
            if text.is_empty() {
                text.push_str(
                    "commonAnnotations:\n- kind: Widget\n  path: spec/notes\n  create: true\n",
                );
            }
            self.files.put(&format!("{}/{file}", k.dir), text);
            k.list("configurations", &[file]);
        } else if has_widget && self.chance(20) {
            let file = "widget-crd.json".to_string();
            self.files
                .put(&format!("{}/{file}", k.dir), WIDGET_CRDS.into());
            k.list("crds", &[file]);
        }
    }

    fn top_only(&mut self, k: &mut Kust, model: &Model) {
        if model.res.iter().any(|r| r.kind == Kind::Widget) && self.chance(8) {
            // The schema replaces the built-in one for the whole build.
            self.files
                .put("top/widget-schema.json", WIDGET_OPENAPI.to_string());
            k.line("openapi:\n  path: widget-schema.json");
        }
        if self.chance(20) {
            if self.chance(40) {
                k.line("sortOptions:\n  order: fifo");
            } else {
                k.line("sortOptions:\n  order: legacy\n  legacySortOptions:");
                let mut kinds: Vec<&str> = model.res.iter().map(|r| r.kind.name()).collect();
                kinds.dedup();
                let first: Vec<&str> = kinds.iter().rev().take(2).copied().collect();
                let _ = writeln!(k.yaml, "    orderFirst:");
                for f in &first {
                    let _ = writeln!(k.yaml, "    - {f}");
                }
                let _ = writeln!(k.yaml, "    orderLast:\n    - ConfigMap");
            }
        }
        if self.chance(15) {
            let mut opts = Vec::new();
            for o in [
                "originAnnotations",
                "transformerAnnotations",
                "managedByLabel",
            ] {
                if self.chance(50) {
                    opts.push(o.to_string());
                }
            }
            if opts.is_empty() {
                opts.push("originAnnotations".into());
            }
            let _ = writeln!(k.yaml, "buildMetadata: [{}]", opts.join(", "));
        }
    }
}

/// A `crds:` file registering the Widget's ConfigMap reference.
const WIDGET_CRDS: &str = r#"{
  "github.com/example/apis/v1.Widget": {
    "Schema": {
      "properties": {
        "apiVersion": {"type": "string"},
        "kind": {"type": "string"},
        "metadata": {"$ref": "k8s.io/apimachinery/pkg/apis/meta/v1.ObjectMeta"},
        "spec": {"$ref": "github.com/example/apis/v1.WidgetSpec"}
      }
    },
    "Dependencies": ["github.com/example/apis/v1.WidgetSpec"]
  },
  "github.com/example/apis/v1.WidgetSpec": {
    "Schema": {
      "properties": {
        "configRef": {
          "type": "string",
          "x-kubernetes-object-ref-api-version": "v1",
          "x-kubernetes-object-ref-kind": "ConfigMap"
        }
      }
    },
    "Dependencies": []
  }
}
"#;

/// An `openapi:` schema merging the Widget's `parts` by name.
const WIDGET_OPENAPI: &str = r##"{
  "definitions": {
    "com.example.v1.Widget": {
      "type": "object",
      "properties": {
        "apiVersion": {"type": "string"},
        "kind": {"type": "string"},
        "spec": {"$ref": "#/definitions/com.example.v1.WidgetSpec"}
      },
      "x-kubernetes-group-version-kind": [
        {"group": "example.com", "kind": "Widget", "version": "v1"}
      ]
    },
    "com.example.v1.WidgetSpec": {
      "type": "object",
      "properties": {
        "parts": {
          "type": "array",
          "items": {"$ref": "#/definitions/com.example.v1.Part"},
          "x-kubernetes-patch-merge-key": "name",
          "x-kubernetes-patch-strategy": "merge"
        }
      }
    },
    "com.example.v1.Part": {
      "type": "object",
      "properties": {
        "name": {"type": "string"},
        "image": {"type": "string"}
      }
    }
  }
}
"##;

/// `text` with every line indented by `n` spaces.
fn indent(text: &str, n: usize) -> String {
    let p = " ".repeat(n);
    text.lines().map(|l| format!("{p}{l}\n")).collect()
}
