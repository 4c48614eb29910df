//! Property test for strategic merge patches: `krusty build DIR` must print
//! byte for byte what `kubectl kustomize DIR` (Kustomize v5.5.0) prints for
//! randomly generated, realistic workloads and the patches users write for
//! them.
//!
//! Inputs: Deployments (sometimes StatefulSets, DaemonSets, batch/v1 Jobs and
//! CronJobs, Pods) with labels, annotations, replicas, selectors and a pod
//! template: containers and initContainers (image, command, args, ports with
//! and without protocol, including UDP twins of a TCP port, env with `value`
//! and `valueFrom`, envFrom, resources, volumeMounts, probes), volumes
//! (configMap, secret, emptyDir), tolerations, nodeSelector,
//! imagePullSecrets, topologySpreadConstraints, hostAliases, securityContext,
//! occasionally finalizers and a namespace.
//!
//! Patches: one to three per resource, given as `patches:` (inline or
//! `path:`, sometimes with a `target:`, sometimes two documents in one file)
//! or `patchesStrategicMerge:` (file or inline string). They change
//! containers by name (image, env, ports, volumeMounts, args, resources,
//! probes), add, delete, reorder and replace containers and other list
//! elements (`$patch: delete`, `- $patch: replace`), replace maps
//! (`$patch: replace`), delete fields with `null` and maps with
//! `$patch: delete`, add nested maps, and change labels, annotations,
//! selectors, strategies, tolerations, nodeSelector and volumes. Less often:
//! element-level `$patch: replace`, `$patch: merge`, a variable listed
//! twice, a quoted `containerPort`, `[]`/`{}`/`""` values, a nameless
//! container, deleting what is absent, a whole resource deleted. Values are
//! sometimes written unquoted where a string is meant (`value: 8080`), lists
//! of scalars sometimes in flow style, files sometimes start with a comment.
//! Every shape is one Kustomize accepts (no type mismatches).
//!
//! Every case is derived from the base seed (`KRUSTY_SMP_SEED`, decimal or
//! `0x` hex; default [`DEFAULT_SEED`]) and its index alone, so a case
//! reproduces whatever the case count (`KRUSTY_SMP_CASES`, default
//! [`DEFAULT_CASES`]) and batch size. `KRUSTY_SMP_ONLY=N` runs case N only;
//! `KRUSTY_SMP_KEEP=1` keeps every generated tree.
//!
//! For speed, [`BATCH`] cases share one kustomization (each resource has its
//! own name, each patch names its resource). When a batch's outputs differ,
//! or either tool fails, its halves are built again, down to single cases,
//! to name the cases at fault: a case passes when both outputs are equal or
//! both tools fail. A mismatch prints the seed, the case index, the input
//! files and a diff; the case's tree is kept under
//! `CARGO_TARGET_TMPDIR/smp_property/`.
//!
//! `kubectl` must be on `PATH` (CI has it); set `KRUSTY_SKIP_ORACLE=1` to
//! skip the test where it is not.

mod support;

use std::env;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Instant;

use support::diff;

/// Base seed used when `KRUSTY_SMP_SEED` is not set.
const DEFAULT_SEED: u64 = 0x736d_705f_7072_6f70;

/// Case count used when `KRUSTY_SMP_CASES` is not set.
const DEFAULT_CASES: usize = 300;

/// Cases per kustomization.
const BATCH: usize = 20;

/// Mismatches reported in full before the rest are only counted.
const MAX_REPORTS: usize = 5;

// ---------------------------------------------------------------------------
// Random numbers
// ---------------------------------------------------------------------------

/// splitmix64: small, fast, and good enough for picking shapes.
struct Rng(u64);

impl Rng {
    /// The generator of case `index` under base seed `seed`.
    fn for_case(seed: u64, index: usize) -> Rng {
        let mut rng = Rng(seed ^ (index as u64 + 1).wrapping_mul(0xd1b5_4a32_d192_ed03));
        rng.next();
        rng
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n > 0`).
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// A number in `lo..=hi`.
    fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi - lo + 1)
    }

    /// `true` with probability `pct` percent.
    fn chance(&mut self, pct: usize) -> bool {
        self.below(100) < pct
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    fn pick_str(&mut self, items: &[&str]) -> String {
        (*self.pick(items)).to_string()
    }

    /// An index chosen with the given weights.
    fn weighted(&mut self, weights: &[usize]) -> usize {
        let mut n = self.below(weights.iter().sum());
        for (i, &w) in weights.iter().enumerate() {
            if n < w {
                return i;
            }
            n -= w;
        }
        unreachable!("weights are not all zero")
    }

    fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            items.swap(i, self.below(i + 1));
        }
    }
}

// ---------------------------------------------------------------------------
// A YAML tree and its block-style writer
// ---------------------------------------------------------------------------

#[derive(Clone, Debug, PartialEq)]
enum Y {
    Null,
    Bool(bool),
    Int(i64),
    Str(String),
    Map(Vec<(String, Y)>),
    Seq(Vec<Y>),
}

fn s<T: AsRef<str> + ?Sized>(text: &T) -> Y {
    Y::Str(text.as_ref().to_string())
}

fn map(entries: Vec<(&str, Y)>) -> Y {
    Y::Map(
        entries
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
    )
}

fn seq_of(items: &[&str]) -> Y {
    Y::Seq(items.iter().map(s).collect())
}

impl Y {
    fn get(&self, key: &str) -> Option<&Y> {
        match self {
            Y::Map(entries) => entries.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    fn at(&self, path: &[&str]) -> Option<&Y> {
        path.iter().try_fold(self, |node, key| node.get(key))
    }

    fn str_at(&self, key: &str) -> Option<&str> {
        match self.get(key) {
            Some(Y::Str(text)) => Some(text),
            _ => None,
        }
    }

    fn items(&self) -> &[Y] {
        match self {
            Y::Seq(items) => items,
            _ => &[],
        }
    }

    fn keys(&self) -> Vec<String> {
        match self {
            Y::Map(entries) => entries.iter().map(|(k, _)| k.clone()).collect(),
            _ => Vec::new(),
        }
    }

    /// Sets `key` (in place if present, else appended); a non-map becomes
    /// an empty map first.
    fn set(&mut self, key: &str, value: Y) {
        if !matches!(self, Y::Map(_)) {
            *self = Y::Map(Vec::new());
        }
        let Y::Map(entries) = self else {
            unreachable!()
        };
        match entries.iter_mut().find(|(k, _)| k == key) {
            Some(slot) => slot.1 = value,
            None => entries.push((key.to_string(), value)),
        }
    }

    /// The map at `path`, created (and any non-map on the way replaced) as
    /// needed.
    fn map_at(&mut self, path: &[&str]) -> &mut Y {
        let mut node = self;
        for key in path {
            if !matches!(node, Y::Map(_)) {
                *node = Y::Map(Vec::new());
            }
            if node.get(key).is_none_or(|v| !matches!(v, Y::Map(_))) {
                node.set(key, Y::Map(Vec::new()));
            }
            let Y::Map(entries) = node else {
                unreachable!()
            };
            node = &mut entries
                .iter_mut()
                .find(|(k, _)| k == key)
                .expect("just set")
                .1;
        }
        node
    }

    /// The list at `key` of this map, created as needed.
    fn seq_at(&mut self, key: &str) -> &mut Vec<Y> {
        if self.get(key).is_none_or(|v| !matches!(v, Y::Seq(_))) {
            self.set(key, Y::Seq(Vec::new()));
        }
        let Y::Map(entries) = self else {
            unreachable!()
        };
        match &mut entries
            .iter_mut()
            .find(|(k, _)| k == key)
            .expect("just set")
            .1
        {
            Y::Seq(items) => items,
            _ => unreachable!(),
        }
    }
}

/// The element of a patch list whose `key` is `value`, appended as
/// `{key: value}` if missing.
fn element<'a>(list: &'a mut Vec<Y>, key: &str, value: Y) -> &'a mut Y {
    let found = list.iter().position(|e| e.get(key) == Some(&value));
    let index = found.unwrap_or_else(|| {
        list.push(Y::Map(vec![(key.to_string(), value)]));
        list.len() - 1
    });
    &mut list[index]
}

/// Whether a string can be written unquoted and still read back as the
/// same string.
fn plain_ok(text: &str) -> bool {
    const SPECIAL: &[&str] = &[
        "true", "false", "yes", "no", "on", "off", "y", "n", "null", "~",
    ];
    if text.is_empty()
        || text.trim() != text
        || SPECIAL.contains(&text.to_ascii_lowercase().as_str())
        || text.parse::<f64>().is_ok()
        || text.contains(": ")
        || text.contains(" #")
        || text.ends_with(':')
        || text.starts_with("- ")
        || text.starts_with(|c: char| "!&*{}[],#|>'\"%@`?:".contains(c))
    {
        return false;
    }
    // Dates and times: quoted, as users write them.
    if text.starts_with(|c: char| c.is_ascii_digit()) && (text.contains('-') || text.contains(':'))
    {
        return false;
    }
    text.chars().all(|c| c.is_ascii_graphic() || c == ' ')
}

fn scalar(node: &Y) -> String {
    match node {
        Y::Null => "null".into(),
        Y::Bool(b) => b.to_string(),
        Y::Int(i) => i.to_string(),
        Y::Str(text) if plain_ok(text) => text.clone(),
        Y::Str(text) => format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\"")),
        Y::Map(_) => "{}".into(),
        Y::Seq(_) => "[]".into(),
    }
}

/// A scalar inside a flow list (`[a, b]`): flow indicators need quotes.
fn flow_scalar(node: &Y) -> String {
    match node {
        Y::Str(text) if text.contains(|c: char| ",[]{}#".contains(c)) => {
            format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\""))
        }
        other => scalar(other),
    }
}

fn is_block(node: &Y) -> bool {
    match node {
        Y::Map(entries) => !entries.is_empty(),
        Y::Seq(items) => !items.is_empty(),
        _ => false,
    }
}

/// How a document is laid out.
#[derive(Clone, Copy)]
struct Layout {
    /// Lists indented under their key.
    seq_indent: bool,
    /// Lists of scalars written in flow style (`args: ["a", "b"]`).
    flow_lists: bool,
    /// A comment line at the top.
    comment: bool,
}

impl Layout {
    fn random(rng: &mut Rng) -> Layout {
        Layout {
            seq_indent: rng.chance(20),
            flow_lists: rng.chance(25),
            comment: rng.chance(15),
        }
    }

    const PLAIN: Layout = Layout {
        seq_indent: false,
        flow_lists: false,
        comment: false,
    };
}

/// Block-style YAML writer.
struct Writer {
    layout: Layout,
    out: String,
}

impl Writer {
    fn document(node: &Y, layout: Layout) -> String {
        let mut w = Writer {
            layout,
            out: String::new(),
        };
        if layout.comment {
            w.out.push_str("# generated by smp_property\n");
        }
        w.block(node, 0);
        w.out
    }

    fn block(&mut self, node: &Y, indent: usize) {
        let pad = " ".repeat(indent);
        match node {
            Y::Map(entries) => {
                for (key, value) in entries {
                    let _ = write!(self.out, "{pad}{}:", scalar(&Y::Str(key.clone())));
                    self.value(value, indent);
                }
            }
            Y::Seq(items) => {
                for item in items {
                    if is_block(item) {
                        let mut inner = Writer {
                            layout: self.layout,
                            out: String::new(),
                        };
                        inner.block(item, indent + 2);
                        let _ = write!(self.out, "{pad}- {}", &inner.out[indent + 2..]);
                    } else {
                        let _ = writeln!(self.out, "{pad}- {}", scalar(item));
                    }
                }
            }
            other => {
                let _ = writeln!(self.out, "{pad}{}", scalar(other));
            }
        }
    }

    fn value(&mut self, value: &Y, indent: usize) {
        match value {
            Y::Map(entries) if !entries.is_empty() => {
                self.out.push('\n');
                self.block(value, indent + 2);
            }
            Y::Seq(items)
                if self.layout.flow_lists
                    && items
                        .iter()
                        .all(|i| !is_block(i) && !matches!(i, Y::Map(_) | Y::Seq(_)))
                    && !items.is_empty() =>
            {
                let items: Vec<String> = items.iter().map(flow_scalar).collect();
                let _ = writeln!(self.out, " [{}]", items.join(", "));
            }
            Y::Seq(items) if !items.is_empty() => {
                self.out.push('\n');
                self.block(value, indent + if self.layout.seq_indent { 2 } else { 0 });
            }
            other => {
                let _ = writeln!(self.out, " {}", scalar(other));
            }
        }
    }
}

/// `text` with every non-empty line indented by `n` spaces.
fn indent(text: &str, n: usize) -> String {
    let pad = " ".repeat(n);
    text.lines()
        .map(|l| {
            if l.is_empty() {
                "\n".to_string()
            } else {
                format!("{pad}{l}\n")
            }
        })
        .collect()
}

// ---------------------------------------------------------------------------
// Resources
// ---------------------------------------------------------------------------

#[derive(Clone, Copy, PartialEq, Debug)]
enum Workload {
    Deployment,
    StatefulSet,
    DaemonSet,
    Job,
    CronJob,
    Pod,
}

impl Workload {
    fn api_version(self) -> &'static str {
        match self {
            Workload::Deployment | Workload::StatefulSet | Workload::DaemonSet => "apps/v1",
            Workload::Job | Workload::CronJob => "batch/v1",
            Workload::Pod => "v1",
        }
    }

    fn kind(self) -> &'static str {
        match self {
            Workload::Deployment => "Deployment",
            Workload::StatefulSet => "StatefulSet",
            Workload::DaemonSet => "DaemonSet",
            Workload::Job => "Job",
            Workload::CronJob => "CronJob",
            Workload::Pod => "Pod",
        }
    }

    /// Path of the pod template (`None` for a Pod).
    fn template_path(self) -> Option<&'static [&'static str]> {
        match self {
            Workload::CronJob => Some(&["spec", "jobTemplate", "spec", "template"]),
            Workload::Pod => None,
            _ => Some(&["spec", "template"]),
        }
    }

    fn pod_spec_path(self) -> Vec<&'static str> {
        match self.template_path() {
            Some(path) => path.iter().copied().chain(["spec"]).collect(),
            None => vec!["spec"],
        }
    }
}

const APPS: &[&str] = &["web", "api", "worker", "frontend", "cache", "db", "gateway"];
const CONTAINERS: &[&str] = &[
    "app", "sidecar", "proxy", "logger", "metrics", "agent", "nginx", "envoy",
];
const INIT_CONTAINERS: &[&str] = &["init", "migrate", "wait-for-db", "setup", "fetch-config"];
const IMAGES: &[&str] = &[
    "nginx:1.25",
    "nginx:1.27-alpine",
    "busybox",
    "busybox:1.36",
    "registry.example.com/team/app:1.2.3",
    "registry.example.com:5000/app@sha256:0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0",
    "ghcr.io/example/sidecar:v0.4.1",
    "envoyproxy/envoy:v1.30.1",
    "postgres:16",
    "redis:7",
];
const VOLUMES: &[(&str, &str)] = &[
    ("config", "/etc/config"),
    ("secrets", "/etc/secrets"),
    ("cache", "/var/cache/app"),
    ("data", "/data"),
    ("tmp", "/tmp"),
    ("certs", "/etc/ssl/certs"),
    ("logs", "/var/log/app"),
];
const PORTS: &[i64] = &[80, 443, 8080, 8443, 9090, 53, 3000, 5432, 6379, 9000];
const ENV_NAMES: &[&str] = &[
    "LOG_LEVEL",
    "PORT",
    "DEBUG",
    "DATABASE_URL",
    "POD_NAME",
    "POD_NAMESPACE",
    "JAVA_OPTS",
    "FEATURE_FLAGS",
    "REPLICAS",
    "TZ",
];
const ENV_VALUES: &[&str] = &[
    "info",
    "debug",
    "8080",
    "true",
    "false",
    "postgres://db:5432/app",
    "-Xmx512m -Xms256m",
    "a,b,c",
    "3",
    "Europe/Paris",
    "",
    "1.5",
    "yes",
];
const LABEL_KEYS: &[&str] = &[
    "app",
    "tier",
    "env",
    "version",
    "team",
    "app.kubernetes.io/name",
    "app.kubernetes.io/part-of",
    "example.com/rev",
];
const LABEL_VALUES: &[&str] = &[
    "backend", "frontend", "prod", "staging", "v1", "v2", "blue", "green", "true", "1",
];
const ANNOTATION_KEYS: &[&str] = &[
    "team",
    "description",
    "example.com/owner",
    "prometheus.io/scrape",
    "prometheus.io/port",
    "kubectl.kubernetes.io/default-container",
    "deployment.kubernetes.io/revision",
];
const ANNOTATION_VALUES: &[&str] = &[
    "platform",
    "true",
    "9090",
    "The main service, do not scale down",
    "ops@example.com",
    "app",
    "2024-05-01T10:00:00Z",
    "3",
];
const FINALIZERS: &[&str] = &[
    "example.com/protect",
    "kubernetes.io/pvc-protection",
    "foregroundDeletion",
    "example.com/cleanup",
];
const NODE_LABELS: &[&str] = &[
    "kubernetes.io/os",
    "kubernetes.io/arch",
    "node-role.kubernetes.io/worker",
    "topology.kubernetes.io/zone",
    "disktype",
];
const NODE_VALUES: &[&str] = &["linux", "amd64", "arm64", "", "eu-west-1a", "ssd", "true"];

/// `text` as a string, or now and then as the number or boolean it looks
/// like, written unquoted (`prometheus.io/port: 9090`, `value: 8080`), as
/// people do.
fn loose(rng: &mut Rng, text: &str, pct: usize) -> Y {
    if rng.chance(pct) {
        if let Ok(n) = text.parse::<i64>() {
            return Y::Int(n);
        }
        if let Ok(b) = text.parse::<bool>() {
            return Y::Bool(b);
        }
    }
    s(text)
}

fn labels(rng: &mut Rng, app: &str, extra: usize) -> Y {
    let mut out = map(vec![("app", s(app))]);
    for _ in 0..extra {
        let key = rng.pick_str(LABEL_KEYS);
        if out.get(&key).is_none() {
            let value = rng.pick_str(LABEL_VALUES);
            let value = loose(rng, &value, 5);
            out.set(&key, value);
        }
    }
    out
}

fn annotations(rng: &mut Rng, n: usize) -> Y {
    let mut out = Y::Map(Vec::new());
    for _ in 0..n {
        let key = rng.pick_str(ANNOTATION_KEYS);
        let value = rng.pick_str(ANNOTATION_VALUES);
        let value = loose(rng, &value, 10);
        out.set(&key, value);
    }
    out
}

fn quantity(rng: &mut Rng, memory: bool) -> Y {
    if memory {
        s(rng.pick(&["64Mi", "128Mi", "256Mi", "512Mi", "1Gi", "2G"]))
    } else if rng.chance(20) {
        Y::Int(rng.range(1, 4) as i64)
    } else {
        s(rng.pick(&["50m", "100m", "250m", "500m", "1", "1.5", "2"]))
    }
}

fn resources(rng: &mut Rng) -> Y {
    let mut out = Y::Map(Vec::new());
    for part in ["requests", "limits"] {
        if rng.chance(75) {
            let mut m = Y::Map(Vec::new());
            if rng.chance(85) {
                m.set("cpu", quantity(rng, false));
            }
            if rng.chance(85) {
                m.set("memory", quantity(rng, true));
            }
            if rng.chance(5) {
                m.set("ephemeral-storage", s("1Gi"));
            }
            out.set(part, m);
        }
    }
    out
}

fn env_value_from(rng: &mut Rng, app: &str) -> Y {
    match rng.below(4) {
        0 => map(vec![(
            "configMapKeyRef",
            map(vec![
                ("name", Y::Str(format!("{app}-config"))),
                ("key", s(rng.pick(&["log-level", "url", "flags"]))),
            ]),
        )]),
        1 => {
            let mut r = map(vec![
                ("name", Y::Str(format!("{app}-secret"))),
                ("key", s(rng.pick(&["password", "token"]))),
            ]);
            if rng.chance(30) {
                r.set("optional", Y::Bool(true));
            }
            map(vec![("secretKeyRef", r)])
        }
        2 => map(vec![(
            "fieldRef",
            map(vec![(
                "fieldPath",
                s(rng.pick(&["metadata.name", "metadata.namespace", "status.podIP"])),
            )]),
        )]),
        _ => map(vec![(
            "resourceFieldRef",
            map(vec![
                ("containerName", s("app")),
                ("resource", s("limits.memory")),
            ]),
        )]),
    }
}

fn env_var(rng: &mut Rng, name: &str, app: &str) -> Y {
    if rng.chance(60) {
        let value = rng.pick_str(ENV_VALUES);
        map(vec![("name", s(name)), ("value", loose(rng, &value, 5))])
    } else {
        map(vec![
            ("name", s(name)),
            ("valueFrom", env_value_from(rng, app)),
        ])
    }
}

fn env_from(rng: &mut Rng, app: &str) -> Y {
    let mut items = Vec::new();
    for _ in 0..rng.range(1, 2) {
        let mut e = if rng.chance(60) {
            map(vec![(
                "configMapRef",
                map(vec![("name", Y::Str(format!("{app}-env")))]),
            )])
        } else {
            map(vec![(
                "secretRef",
                map(vec![("name", Y::Str(format!("{app}-secret-env")))]),
            )])
        };
        if rng.chance(25) {
            e.set("prefix", s("APP_"));
        }
        items.push(e);
    }
    Y::Seq(items)
}

fn port(rng: &mut Rng, number: i64, protocol: Option<&str>) -> Y {
    let mut p = map(vec![("containerPort", Y::Int(number))]);
    if rng.chance(65) {
        let name = match (number, protocol) {
            (53, Some("UDP")) => "dns".to_string(),
            (53, _) => "dns-tcp".to_string(),
            (_, Some("UDP")) => format!("udp-{number}"),
            _ => rng.pick_str(&["http", "https", "metrics", "grpc", "admin"]),
        };
        p.set("name", Y::Str(name));
    }
    if let Some(protocol) = protocol {
        p.set("protocol", s(protocol));
    }
    if rng.chance(8) {
        p.set("hostPort", Y::Int(number + 30000));
    }
    p
}

fn protocol(rng: &mut Rng) -> Option<&'static str> {
    match rng.below(20) {
        0..=9 => None,
        10..=17 => Some("TCP"),
        _ => Some("UDP"),
    }
}

fn ports(rng: &mut Rng) -> Y {
    let mut numbers: Vec<i64> = PORTS.to_vec();
    rng.shuffle(&mut numbers);
    let mut items = Vec::new();
    for &number in numbers.iter().take(rng.range(1, 3)) {
        if number == 53 || rng.chance(12) {
            // The same port over TCP (explicit or implied) and UDP.
            let tcp = if rng.chance(50) { Some("TCP") } else { None };
            let udp_first = rng.chance(40);
            let a = port(rng, number, tcp);
            let b = port(rng, number, Some("UDP"));
            if udp_first {
                items.extend([b, a]);
            } else {
                items.extend([a, b]);
            }
        } else {
            let proto = protocol(rng);
            items.push(port(rng, number, proto));
        }
    }
    Y::Seq(items)
}

fn probe(rng: &mut Rng) -> Y {
    let handler = match rng.below(3) {
        0 => (
            "httpGet",
            map(vec![
                ("path", s(rng.pick(&["/healthz", "/ready", "/"]))),
                (
                    "port",
                    if rng.chance(50) {
                        Y::Int(8080)
                    } else {
                        s("http")
                    },
                ),
            ]),
        ),
        1 => ("tcpSocket", map(vec![("port", Y::Int(*rng.pick(PORTS)))])),
        _ => (
            "exec",
            map(vec![("command", seq_of(&["cat", "/tmp/healthy"]))]),
        ),
    };
    let mut p = map(vec![handler]);
    if rng.chance(60) {
        p.set("initialDelaySeconds", Y::Int(rng.range(0, 30) as i64));
    }
    if rng.chance(50) {
        p.set("periodSeconds", Y::Int(rng.range(5, 20) as i64));
    }
    p
}

fn args(rng: &mut Rng) -> Y {
    let pool = [
        "--port=8080",
        "--verbose",
        "--config=/etc/config/app.yaml",
        "-v=2",
        "serve",
        "--metrics-addr=:9090",
        "--log-format=json",
        "--db=postgres://db:5432/app",
    ];
    let n = rng.range(1, 3);
    let mut items: Vec<&str> = pool.to_vec();
    rng.shuffle(&mut items);
    seq_of(&items[..n])
}

fn command(rng: &mut Rng) -> Y {
    match rng.below(4) {
        0 => seq_of(&["/bin/sh", "-c"]),
        1 => seq_of(&["/app/server"]),
        2 => seq_of(&["sh", "-c", "echo starting && exec /app/run"]),
        _ => seq_of(&["python", "-m", "app"]),
    }
}

fn container(rng: &mut Rng, name: &str, app: &str, volumes: &[String], init: bool) -> Y {
    let mut c = map(vec![("name", s(name)), ("image", s(rng.pick(IMAGES)))]);
    if rng.chance(25) {
        c.set(
            "imagePullPolicy",
            s(rng.pick(&["IfNotPresent", "Always", "Never"])),
        );
    }
    if rng.chance(if init { 60 } else { 25 }) {
        c.set("command", command(rng));
    }
    if rng.chance(40) {
        c.set("args", args(rng));
    }
    if !init && rng.chance(65) {
        c.set("ports", ports(rng));
    }
    if rng.chance(60) {
        let mut names: Vec<&str> = ENV_NAMES.to_vec();
        rng.shuffle(&mut names);
        let n = rng.range(1, 4);
        let mut env: Vec<Y> = names[..n].iter().map(|n| env_var(rng, n, app)).collect();
        if rng.chance(4) {
            // A variable defined twice (the API server accepts it).
            let again = env_var(rng, names[0], app);
            env.push(again);
        }
        c.set("env", Y::Seq(env));
    }
    if rng.chance(25) {
        c.set("envFrom", env_from(rng, app));
    }
    if rng.chance(50) {
        c.set("resources", resources(rng));
    }
    let mut mounts = Vec::new();
    for v in volumes {
        if rng.chance(55) {
            mounts.push(volume_mount(rng, v));
        }
    }
    if !mounts.is_empty() {
        c.set("volumeMounts", Y::Seq(mounts));
    }
    if !init && rng.chance(20) {
        c.set("readinessProbe", probe(rng));
    }
    if !init && rng.chance(15) {
        c.set("livenessProbe", probe(rng));
    }
    if rng.chance(12) {
        c.set(
            "securityContext",
            map(vec![
                ("allowPrivilegeEscalation", Y::Bool(false)),
                ("readOnlyRootFilesystem", Y::Bool(true)),
            ]),
        );
    }
    c
}

fn mount_path(volume: &str) -> String {
    VOLUMES
        .iter()
        .find(|(n, _)| *n == volume)
        .map_or_else(|| format!("/mnt/{volume}"), |(_, p)| p.to_string())
}

fn volume_mount(rng: &mut Rng, volume: &str) -> Y {
    let mut m = map(vec![
        ("name", s(volume)),
        ("mountPath", Y::Str(mount_path(volume))),
    ]);
    if rng.chance(30) {
        m.set("readOnly", Y::Bool(true));
    }
    if rng.chance(10) {
        m.set("subPath", s("app.yaml"));
    }
    m
}

fn volume(rng: &mut Rng, name: &str, app: &str) -> Y {
    let mut v = map(vec![("name", s(name))]);
    match rng.below(3) {
        0 => {
            let mut cm = map(vec![("name", Y::Str(format!("{app}-{name}")))]);
            if rng.chance(20) {
                cm.set(
                    "items",
                    Y::Seq(vec![map(vec![
                        ("key", s("app.yaml")),
                        ("path", s("app.yaml")),
                    ])]),
                );
            }
            if rng.chance(15) {
                cm.set("defaultMode", Y::Int(420));
            }
            v.set("configMap", cm);
        }
        1 => {
            let mut sec = map(vec![("secretName", Y::Str(format!("{app}-{name}")))]);
            if rng.chance(20) {
                sec.set("optional", Y::Bool(true));
            }
            v.set("secret", sec);
        }
        _ => {
            let dir = if rng.chance(30) {
                map(vec![("medium", s("Memory")), ("sizeLimit", s("64Mi"))])
            } else {
                Y::Map(Vec::new())
            };
            v.set("emptyDir", dir);
        }
    }
    v
}

fn toleration(rng: &mut Rng) -> Y {
    let mut t = map(vec![(
        "key",
        s(rng.pick(&["dedicated", "node.kubernetes.io/not-ready", "gpu"])),
    )]);
    if rng.chance(50) {
        t.set("operator", s("Equal"));
        t.set("value", s(rng.pick(&["batch", "true", "infra"])));
    } else {
        t.set("operator", s("Exists"));
    }
    t.set(
        "effect",
        s(rng.pick(&["NoSchedule", "NoExecute", "PreferNoSchedule"])),
    );
    if rng.chance(15) {
        t.set("tolerationSeconds", Y::Int(300));
    }
    t
}

fn topology_spread(rng: &mut Rng, app: &str) -> Y {
    map(vec![
        ("maxSkew", Y::Int(rng.range(1, 2) as i64)),
        (
            "topologyKey",
            s(rng.pick(&["topology.kubernetes.io/zone", "kubernetes.io/hostname"])),
        ),
        (
            "whenUnsatisfiable",
            s(rng.pick(&["DoNotSchedule", "ScheduleAnyway"])),
        ),
        (
            "labelSelector",
            map(vec![("matchLabels", map(vec![("app", s(app))]))]),
        ),
    ])
}

fn distinct(rng: &mut Rng, pool: &[&str], n: usize) -> Vec<String> {
    let mut items: Vec<&str> = pool.to_vec();
    rng.shuffle(&mut items);
    items[..n.min(items.len())]
        .iter()
        .map(|i| i.to_string())
        .collect()
}

fn pod_spec(rng: &mut Rng, w: Workload, app: &str) -> Y {
    let mut spec = Y::Map(Vec::new());
    let volume_pool: Vec<&str> = VOLUMES.iter().map(|(n, _)| *n).collect();
    let n_volumes = rng.weighted(&[30, 30, 25, 15]);
    let volumes = distinct(rng, &volume_pool, n_volumes);
    if rng.chance(20) {
        spec.set("serviceAccountName", Y::Str(format!("{app}-sa")));
    }
    if rng.chance(20) {
        let n = rng.range(1, 2);
        let init = distinct(rng, INIT_CONTAINERS, n);
        let items = init
            .iter()
            .map(|n| container(rng, n, app, &volumes, true))
            .collect();
        spec.set("initContainers", Y::Seq(items));
    }
    let n = rng.weighted(&[0, 55, 30, 15]);
    let mut names = distinct(rng, CONTAINERS, n);
    if rng.chance(50) {
        names[0] = "app".into();
        names.dedup();
    }
    let items = names
        .iter()
        .map(|n| container(rng, n, app, &volumes, false))
        .collect();
    spec.set("containers", Y::Seq(items));
    if matches!(w, Workload::Job | Workload::CronJob) {
        spec.set("restartPolicy", s(rng.pick(&["OnFailure", "Never"])));
    } else if rng.chance(10) {
        spec.set("restartPolicy", s("Always"));
    }
    if !volumes.is_empty() {
        let items = volumes.iter().map(|v| volume(rng, v, app)).collect();
        spec.set("volumes", Y::Seq(items));
    }
    if rng.chance(25) {
        let items = (0..rng.range(1, 2)).map(|_| toleration(rng)).collect();
        spec.set("tolerations", Y::Seq(items));
    }
    if rng.chance(30) {
        let mut ns = Y::Map(Vec::new());
        let n = rng.range(1, 2);
        for key in distinct(rng, NODE_LABELS, n) {
            ns.set(&key, s(rng.pick(NODE_VALUES)));
        }
        spec.set("nodeSelector", ns);
    }
    if rng.chance(25) {
        let n = rng.range(1, 2);
        let items = distinct(rng, &["regcred", "ghcr-pull", "ecr"], n)
            .iter()
            .map(|n| map(vec![("name", s(n))]))
            .collect();
        spec.set("imagePullSecrets", Y::Seq(items));
    }
    if rng.chance(12) {
        let items = (0..rng.range(1, 2))
            .map(|_| topology_spread(rng, app))
            .collect();
        spec.set("topologySpreadConstraints", Y::Seq(items));
    }
    if rng.chance(15) {
        spec.set(
            "securityContext",
            map(vec![
                ("runAsNonRoot", Y::Bool(true)),
                ("runAsUser", Y::Int(1000)),
            ]),
        );
    }
    if rng.chance(10) {
        spec.set("terminationGracePeriodSeconds", Y::Int(30));
    }
    if rng.chance(8) {
        spec.set(
            "hostAliases",
            Y::Seq(vec![map(vec![
                ("ip", s("10.0.0.1")),
                ("hostnames", seq_of(&["db.local"])),
            ])]),
        );
    }
    spec
}

fn template(rng: &mut Rng, w: Workload, app: &str, selector: &Y) -> Y {
    let mut meta = map(vec![("labels", selector.clone())]);
    if rng.chance(25) {
        let n = rng.range(1, 2);
        meta.set("annotations", annotations(rng, n));
    }
    map(vec![("metadata", meta), ("spec", pod_spec(rng, w, app))])
}

/// A resource named `name`.
fn resource(rng: &mut Rng, w: Workload, name: &str, app: &str, namespace: Option<&str>) -> Y {
    let mut meta = map(vec![("name", s(name))]);
    if let Some(ns) = namespace {
        meta.set("namespace", s(ns));
    }
    if rng.chance(85) {
        let n = rng.range(0, 2);
        meta.set("labels", labels(rng, app, n));
    }
    if rng.chance(35) {
        let n = rng.range(1, 3);
        meta.set("annotations", annotations(rng, n));
    }
    if rng.chance(8) {
        let finalizer = *rng.pick(FINALIZERS);
        meta.set("finalizers", seq_of(&[finalizer]));
    }
    let n = rng.range(0, 1);
    let selector = labels(rng, app, n);
    let mut spec = Y::Map(Vec::new());
    match w {
        Workload::Deployment | Workload::StatefulSet | Workload::DaemonSet => {
            if w == Workload::StatefulSet {
                spec.set("serviceName", Y::Str(format!("{app}-headless")));
            }
            if w != Workload::DaemonSet && rng.chance(80) {
                spec.set("replicas", Y::Int(rng.range(1, 5) as i64));
            }
            spec.set("selector", map(vec![("matchLabels", selector.clone())]));
            if w == Workload::Deployment && rng.chance(25) {
                spec.set(
                    "strategy",
                    map(vec![
                        ("type", s("RollingUpdate")),
                        (
                            "rollingUpdate",
                            map(vec![("maxSurge", s("25%")), ("maxUnavailable", Y::Int(0))]),
                        ),
                    ]),
                );
            }
            spec.set("template", template(rng, w, app, &selector));
            if w == Workload::StatefulSet && rng.chance(60) {
                let claim = map(vec![
                    ("metadata", map(vec![("name", s("data"))])),
                    (
                        "spec",
                        map(vec![
                            ("accessModes", seq_of(&["ReadWriteOnce"])),
                            (
                                "resources",
                                map(vec![("requests", map(vec![("storage", s("1Gi"))]))]),
                            ),
                        ]),
                    ),
                ]);
                spec.set("volumeClaimTemplates", Y::Seq(vec![claim]));
            }
        }
        Workload::Job => {
            if rng.chance(50) {
                spec.set("backoffLimit", Y::Int(rng.range(0, 6) as i64));
            }
            spec.set("template", template(rng, w, app, &selector));
        }
        Workload::CronJob => {
            spec.set(
                "schedule",
                s(rng.pick(&["0 3 * * *", "*/5 * * * *", "@hourly"])),
            );
            if rng.chance(30) {
                spec.set("concurrencyPolicy", s("Forbid"));
            }
            spec.set(
                "jobTemplate",
                map(vec![(
                    "spec",
                    map(vec![("template", template(rng, w, app, &selector))]),
                )]),
            );
        }
        Workload::Pod => {
            spec = pod_spec(rng, w, app);
        }
    }
    map(vec![
        ("apiVersion", s(w.api_version())),
        ("kind", s(w.kind())),
        ("metadata", meta),
        ("spec", spec),
    ])
}

// ---------------------------------------------------------------------------
// Patches
// ---------------------------------------------------------------------------

/// Builds one patch document against a base resource.
struct PatchGen<'a> {
    rng: &'a mut Rng,
    w: Workload,
    app: &'a str,
    base: &'a Y,
    patch: Y,
}

impl PatchGen<'_> {
    fn pod_path(&self) -> Vec<&'static str> {
        self.w.pod_spec_path()
    }

    fn base_pod(&self) -> &Y {
        let path = self.pod_path();
        self.base.at(&path).expect("every workload has a pod spec")
    }

    fn patch_pod(&mut self) -> &mut Y {
        let path = self.pod_path();
        self.patch.map_at(&path)
    }

    fn base_containers(&self, init: bool) -> Vec<Y> {
        let field = if init { "initContainers" } else { "containers" };
        self.base_pod()
            .get(field)
            .map_or_else(Vec::new, |l| l.items().to_vec())
    }

    fn volume_names(&self) -> Vec<String> {
        self.base_pod().get("volumes").map_or_else(Vec::new, |l| {
            l.items()
                .iter()
                .filter_map(|v| v.str_at("name").map(String::from))
                .collect()
        })
    }

    /// A base container (an init container now and then) and whether it
    /// is an init container.
    fn pick_container(&mut self) -> Option<(Y, bool)> {
        let init = self.rng.chance(15);
        let list = self.base_containers(init);
        if list.is_empty() {
            let list = self.base_containers(false);
            return Some((self.rng.pick(&list).clone(), false));
        }
        Some((self.rng.pick(&list).clone(), init))
    }

    /// The patch element for the container named `name`.
    fn container_patch(&mut self, init: bool, name: &str) -> &mut Y {
        let field = if init { "initContainers" } else { "containers" };
        let list = self.patch_pod().seq_at(field);
        element(list, "name", s(name))
    }

    /// Runs one randomly chosen operation; `false` if it did not apply.
    fn op(&mut self) -> bool {
        const WEIGHTS: &[usize] = &[
            10, // 0 metadata labels
            8,  // 1 metadata annotations
            5,  // 2 replicas
            6,  // 3 template metadata
            3,  // 4 finalizers
            12, // 5 container image
            12, // 6 container env
            8,  // 7 container ports
            8,  // 8 container volumeMounts
            6,  // 9 container args/command
            6,  // 10 container resources
            4,  // 11 container probe
            3,  // 12 container envFrom
            6,  // 13 new container
            4,  // 14 delete container
            4,  // 15 reorder containers
            2,  // 16 replace containers
            8,  // 17 volumes
            4,  // 18 nodeSelector
            3,  // 19 tolerations
            3,  // 20 imagePullSecrets
            5,  // 21 pod-level fields
            3,  // 22 workload strategy fields
            3,  // 23 `$patch: delete` on a map
            2,  // 24 topologySpreadConstraints
            2,  // 25 reorder env
            2,  // 26 selector and template labels
            3,  // 27 a container list set to null or []
            1,  // 28 a container element without its name
            8,  // 29 less common shapes
        ];
        match self.rng.weighted(WEIGHTS) {
            0 => self.metadata_map("labels", LABEL_KEYS, LABEL_VALUES),
            1 => self.metadata_map("annotations", ANNOTATION_KEYS, ANNOTATION_VALUES),
            2 => self.replicas(),
            3 => self.template_metadata(),
            4 => self.finalizers(),
            5 => self.container_image(),
            6 => self.container_env(),
            7 => self.container_ports(),
            8 => self.container_mounts(),
            9 => self.container_args(),
            10 => self.container_resources(),
            11 => self.container_probe(),
            12 => self.container_env_from(),
            13 => self.new_container(),
            14 => self.delete_container(),
            15 => self.reorder_containers(),
            16 => self.replace_containers(),
            17 => self.volumes(),
            18 => self.node_selector(),
            19 => self.tolerations(),
            20 => self.pull_secrets(),
            21 => self.pod_fields(),
            22 => self.strategy(),
            23 => self.delete_map(),
            24 => self.topology(),
            25 => self.reorder_env(),
            26 => self.selector(),
            27 => self.container_list_cleared(),
            28 => self.nameless_container(),
            _ => self.unusual(),
        }
    }

    /// Adds, overrides or deletes entries of a string map (`metadata.labels`
    /// or `metadata.annotations`), or replaces or deletes the whole map.
    fn metadata_map(&mut self, field: &str, keys: &[&str], values: &[&str]) -> bool {
        let existing = self
            .base
            .at(&["metadata", field])
            .map_or_else(Vec::new, Y::keys);
        let choice = self.rng.below(20);
        if choice == 0 {
            self.patch.map_at(&["metadata"]).set(field, Y::Null);
            return true;
        }
        let mut entries = Vec::new();
        for _ in 0..self.rng.range(1, 3) {
            let text = self.rng.pick_str(values);
            let value = loose(self.rng, &text, 15);
            if !existing.is_empty() && self.rng.chance(40) {
                let key = self.rng.pick(&existing).clone();
                let value = if self.rng.chance(35) { Y::Null } else { value };
                entries.push((key, value));
            } else {
                entries.push((self.rng.pick_str(keys), value));
            }
        }
        let replace = choice == 1;
        let target = self.patch.map_at(&["metadata", field]);
        if replace {
            target.set("$patch", s("replace"));
        }
        for (k, v) in entries {
            if replace && v == Y::Null {
                continue;
            }
            target.set(&k, v);
        }
        true
    }

    fn replicas(&mut self) -> bool {
        if !matches!(self.w, Workload::Deployment | Workload::StatefulSet) {
            return false;
        }
        let value = if self.rng.chance(10) {
            Y::Null
        } else {
            Y::Int(self.rng.range(0, 10) as i64)
        };
        self.patch.map_at(&["spec"]).set("replicas", value);
        true
    }

    fn template_metadata(&mut self) -> bool {
        let Some(path) = self.w.template_path() else {
            return false;
        };
        let meta: Vec<&str> = path.iter().copied().chain(["metadata"]).collect();
        let (field, key, value) = if self.rng.chance(50) {
            (
                "annotations",
                self.rng.pick_str(&[
                    "kubectl.kubernetes.io/restartedAt",
                    "checksum/config",
                    "prometheus.io/scrape",
                    "sidecar.istio.io/inject",
                ]),
                s(self
                    .rng
                    .pick(&["2024-06-01T12:00:00Z", "5f3c2a1b", "true", "false"])),
            )
        } else {
            (
                "labels",
                self.rng.pick_str(LABEL_KEYS),
                s(self.rng.pick(LABEL_VALUES)),
            )
        };
        let mut path = meta.clone();
        path.push(field);
        self.patch.map_at(&path).set(&key, value);
        true
    }

    fn finalizers(&mut self) -> bool {
        let n = self.rng.range(1, 2);
        let items = distinct(self.rng, FINALIZERS, n);
        let items: Vec<&str> = items.iter().map(String::as_str).collect();
        self.patch
            .map_at(&["metadata"])
            .set("finalizers", seq_of(&items));
        true
    }

    fn container_image(&mut self) -> bool {
        let Some((c, init)) = self.pick_container() else {
            return false;
        };
        let name = c.str_at("name").unwrap_or_default().to_string();
        let image = s(self.rng.pick(IMAGES));
        let pull = self.rng.chance(15);
        let e = self.container_patch(init, &name);
        e.set("image", image);
        if pull {
            e.set("imagePullPolicy", s("Always"));
        }
        true
    }

    fn container_env(&mut self) -> bool {
        let Some((c, init)) = self.pick_container() else {
            return false;
        };
        let name = c.str_at("name").unwrap_or_default().to_string();
        let existing: Vec<Y> = c.get("env").map_or_else(Vec::new, |e| e.items().to_vec());
        let app = self.app;
        let mut entries = Vec::new();
        let mut replace = false;
        for _ in 0..self.rng.range(1, 3) {
            let choice = if existing.is_empty() {
                self.rng.weighted(&[90, 0, 0, 0, 0, 5, 5])
            } else {
                self.rng.weighted(&[30, 30, 15, 15, 4, 3, 3])
            };
            match choice {
                5 => {
                    // Delete a variable the container does not have.
                    entries.push(map(vec![("name", s("NOT_SET")), ("$patch", s("delete"))]));
                }
                6 => {
                    let value = if self.rng.chance(50) {
                        Y::Null
                    } else {
                        Y::Seq(Vec::new())
                    };
                    self.container_patch(init, &name).set("env", value);
                    return true;
                }
                0 => {
                    let var = self.rng.pick_str(&[
                        "NEW_FEATURE",
                        "OTEL_EXPORTER_OTLP_ENDPOINT",
                        "GOMAXPROCS",
                        "LOG_LEVEL",
                        "HTTP_PROXY",
                    ]);
                    entries.push(env_var(self.rng, &var, app));
                }
                1 => {
                    let old = self.rng.pick(&existing).clone();
                    let var = old.str_at("name").unwrap_or_default().to_string();
                    let value = self.rng.pick_str(ENV_VALUES);
                    let mut e = map(vec![
                        ("name", Y::Str(var)),
                        ("value", loose(self.rng, &value, 20)),
                    ]);
                    if old.get("valueFrom").is_some() && self.rng.chance(60) {
                        e.set("valueFrom", Y::Null);
                    }
                    entries.push(e);
                }
                2 => {
                    let old = self.rng.pick(&existing).clone();
                    let var = old.str_at("name").unwrap_or_default().to_string();
                    let mut e = map(vec![
                        ("name", Y::Str(var)),
                        ("valueFrom", env_value_from(self.rng, app)),
                    ]);
                    if old.get("value").is_some() && self.rng.chance(60) {
                        e.set("value", Y::Null);
                    }
                    entries.push(e);
                }
                3 => {
                    let old = self.rng.pick(&existing).clone();
                    let var = old.str_at("name").unwrap_or_default().to_string();
                    entries.push(map(vec![("name", Y::Str(var)), ("$patch", s("delete"))]));
                }
                _ => replace = true,
            }
        }
        let e = self.container_patch(init, &name);
        let list = e.seq_at("env");
        if replace {
            list.push(map(vec![("$patch", s("replace"))]));
        }
        for entry in entries {
            let var = entry.get("name").cloned().unwrap_or(Y::Null);
            let slot = element(list, "name", var);
            *slot = entry;
        }
        true
    }

    fn reorder_env(&mut self) -> bool {
        let Some((c, init)) = self.pick_container() else {
            return false;
        };
        let mut existing: Vec<Y> = c.get("env").map_or_else(Vec::new, |e| e.items().to_vec());
        if existing.len() < 2 {
            return false;
        }
        self.rng.shuffle(&mut existing);
        let name = c.str_at("name").unwrap_or_default().to_string();
        let full = self.rng.chance(50);
        let e = self.container_patch(init, &name);
        let list = e.seq_at("env");
        for var in existing {
            let key = var.get("name").cloned().unwrap_or(Y::Null);
            let slot = element(list, "name", key.clone());
            if full {
                *slot = var;
            }
        }
        true
    }

    fn container_ports(&mut self) -> bool {
        let list = self.base_containers(false);
        let c = self.rng.pick(&list).clone();
        let name = c.str_at("name").unwrap_or_default().to_string();
        let existing: Vec<Y> = c.get("ports").map_or_else(Vec::new, |p| p.items().to_vec());
        let choice = if existing.is_empty() {
            0
        } else {
            self.rng.weighted(&[30, 20, 30, 12, 8])
        };
        let entry = match choice {
            0 => {
                let number = *self.rng.pick(PORTS);
                let proto = protocol(self.rng);
                port(self.rng, number, proto)
            }
            1 => {
                // A UDP twin of an existing port.
                let old = self.rng.pick(&existing).clone();
                let number = match old.get("containerPort") {
                    Some(Y::Int(n)) => *n,
                    _ => 80,
                };
                port(self.rng, number, Some("UDP"))
            }
            2 | 4 => {
                // The same port, changed; choice 4 leaves out its protocol.
                let old = self.rng.pick(&existing).clone();
                let mut p = map(vec![(
                    "containerPort",
                    old.get("containerPort").cloned().unwrap_or(Y::Int(80)),
                )]);
                if choice == 2 {
                    match old.get("protocol") {
                        Some(proto) => p.set("protocol", proto.clone()),
                        // Spelling out the default protocol.
                        None if self.rng.chance(30) => p.set("protocol", s("TCP")),
                        None => {}
                    }
                }
                if self.rng.chance(60) {
                    p.set("name", s(self.rng.pick(&["http-alt", "web", "main"])));
                } else {
                    p.set("hostPort", Y::Int(self.rng.range(30000, 32000) as i64));
                }
                p
            }
            _ => {
                let old = self.rng.pick(&existing).clone();
                let mut p = map(vec![(
                    "containerPort",
                    old.get("containerPort").cloned().unwrap_or(Y::Int(80)),
                )]);
                if let Some(proto) = old.get("protocol") {
                    p.set("protocol", proto.clone());
                }
                p.set("$patch", s("delete"));
                p
            }
        };
        let e = self.container_patch(false, &name);
        e.seq_at("ports").push(entry);
        true
    }

    fn container_mounts(&mut self) -> bool {
        let Some((c, init)) = self.pick_container() else {
            return false;
        };
        let name = c.str_at("name").unwrap_or_default().to_string();
        let existing: Vec<Y> = c
            .get("volumeMounts")
            .map_or_else(Vec::new, |m| m.items().to_vec());
        let volumes = self.volume_names();
        let choice = if existing.is_empty() {
            self.rng.below(2)
        } else {
            self.rng.weighted(&[25, 25, 30, 20])
        };
        let mut new_volume = None;
        let entry = match choice {
            0 if !volumes.is_empty() => {
                // Mount an existing volume (maybe at a second path).
                let v = self.rng.pick(&volumes).clone();
                let mut m = volume_mount(self.rng, &v);
                if self.rng.chance(30) {
                    m.set("mountPath", Y::Str(format!("/srv/{v}")));
                }
                m
            }
            0 | 1 => {
                let v = self.rng.pick_str(&["scratch", "shared", "run", "cache"]);
                new_volume = Some(volume(self.rng, &v, self.app));
                volume_mount(self.rng, &v)
            }
            2 => {
                let old = self.rng.pick(&existing).clone();
                let mut m = map(vec![(
                    "mountPath",
                    old.get("mountPath").cloned().unwrap_or(Y::Null),
                )]);
                if self.rng.chance(50) {
                    m.set("readOnly", Y::Bool(self.rng.chance(50)));
                } else if self.rng.chance(50) {
                    m.set("subPath", s("conf.d"));
                } else {
                    m.set("readOnly", Y::Null);
                }
                if self.rng.chance(40) {
                    m.set("name", old.get("name").cloned().unwrap_or(Y::Null));
                }
                m
            }
            _ => {
                let old = self.rng.pick(&existing).clone();
                let mut m = map(vec![(
                    "mountPath",
                    old.get("mountPath").cloned().unwrap_or(Y::Null),
                )]);
                if self.rng.chance(50) {
                    m.set("name", old.get("name").cloned().unwrap_or(Y::Null));
                }
                m.set("$patch", s("delete"));
                m
            }
        };
        let e = self.container_patch(init, &name);
        let list = e.seq_at("volumeMounts");
        let key = entry.get("mountPath").cloned().unwrap_or(Y::Null);
        *element(list, "mountPath", key) = entry;
        if let Some(v) = new_volume {
            let key = v.get("name").cloned().unwrap_or(Y::Null);
            let list = self.patch_pod().seq_at("volumes");
            *element(list, "name", key) = v;
        }
        true
    }

    fn container_args(&mut self) -> bool {
        let Some((c, init)) = self.pick_container() else {
            return false;
        };
        let name = c.str_at("name").unwrap_or_default().to_string();
        let (field, value) = match self.rng.below(6) {
            0..=2 => ("args", args(self.rng)),
            3 => ("command", command(self.rng)),
            4 => ("args", Y::Null),
            _ => ("args", Y::Seq(Vec::new())),
        };
        self.container_patch(init, &name).set(field, value);
        true
    }

    fn container_resources(&mut self) -> bool {
        let Some((c, init)) = self.pick_container() else {
            return false;
        };
        let name = c.str_at("name").unwrap_or_default().to_string();
        let value = match self.rng.weighted(&[50, 20, 10, 10, 3, 7]) {
            0 => {
                let part = self.rng.pick_str(&["limits", "requests"]);
                let memory = self.rng.chance(50);
                let q = quantity(self.rng, memory);
                map(vec![(
                    part.as_str(),
                    map(vec![(if memory { "memory" } else { "cpu" }, q)]),
                )])
            }
            1 => resources(self.rng),
            2 => {
                let mut r = resources(self.rng);
                r.set("$patch", s("replace"));
                r
            }
            3 => Y::Null,
            4 => {
                let mut r = resources(self.rng);
                r.set("$patch", s("merge"));
                r
            }
            _ => map(vec![(
                "limits",
                map(vec![("cpu", Y::Null), ("memory", s("1Gi"))]),
            )]),
        };
        self.container_patch(init, &name).set("resources", value);
        true
    }

    fn container_probe(&mut self) -> bool {
        let list = self.base_containers(false);
        let c = self.rng.pick(&list).clone();
        let name = c.str_at("name").unwrap_or_default().to_string();
        let field = self
            .rng
            .pick_str(&["readinessProbe", "livenessProbe", "startupProbe"]);
        let value = if c.get(&field).is_some() && self.rng.chance(50) {
            map(vec![
                ("periodSeconds", Y::Int(self.rng.range(5, 60) as i64)),
                ("failureThreshold", Y::Int(self.rng.range(1, 5) as i64)),
            ])
        } else if c.get(&field).is_some() && self.rng.chance(30) {
            Y::Null
        } else {
            probe(self.rng)
        };
        self.container_patch(false, &name).set(&field, value);
        true
    }

    fn container_env_from(&mut self) -> bool {
        let Some((c, init)) = self.pick_container() else {
            return false;
        };
        let name = c.str_at("name").unwrap_or_default().to_string();
        let value = env_from(self.rng, self.app);
        self.container_patch(init, &name).set("envFrom", value);
        true
    }

    fn new_container(&mut self) -> bool {
        let init = self.rng.chance(25);
        let taken: Vec<String> = self
            .base_containers(init)
            .iter()
            .filter_map(|c| c.str_at("name").map(String::from))
            .collect();
        let pool = if init { INIT_CONTAINERS } else { CONTAINERS };
        let free: Vec<&str> = pool
            .iter()
            .copied()
            .filter(|n| !taken.iter().any(|t| t == n))
            .collect();
        if free.is_empty() {
            return false;
        }
        let name = self.rng.pick_str(&free);
        let volumes = self.volume_names();
        let c = container(self.rng, &name, self.app, &volumes, init);
        *self.container_patch(init, &name) = c;
        true
    }

    fn delete_container(&mut self) -> bool {
        let Some((c, init)) = self.pick_container() else {
            return false;
        };
        let name = c.str_at("name").unwrap_or_default().to_string();
        let e = self.container_patch(init, &name);
        *e = map(vec![("name", s(&name)), ("$patch", s("delete"))]);
        true
    }

    fn reorder_containers(&mut self) -> bool {
        let init = self.rng.chance(20);
        let mut names: Vec<String> = self
            .base_containers(init)
            .iter()
            .filter_map(|c| c.str_at("name").map(String::from))
            .collect();
        if names.len() < 2 {
            return false;
        }
        self.rng.shuffle(&mut names);
        let keep = self.rng.range(1, names.len());
        let image = self.rng.chance(30).then(|| s(self.rng.pick(IMAGES)));
        for name in &names[..keep] {
            let e = self.container_patch(init, name);
            if let Some(image) = &image {
                e.set("image", image.clone());
            }
        }
        true
    }

    fn replace_containers(&mut self) -> bool {
        let volumes = self.volume_names();
        let n = self.rng.range(1, 2);
        let names = distinct(self.rng, CONTAINERS, n);
        let mut items = vec![map(vec![("$patch", s("replace"))])];
        for name in &names {
            items.push(container(self.rng, name, self.app, &volumes, false));
        }
        if self.rng.chance(30) {
            // The directive last.
            items.rotate_left(1);
        }
        self.patch_pod().set("containers", Y::Seq(items));
        true
    }

    fn volumes(&mut self) -> bool {
        let existing: Vec<Y> = self
            .base_pod()
            .get("volumes")
            .map_or_else(Vec::new, |v| v.items().to_vec());
        let choice = if existing.is_empty() {
            self.rng.weighted(&[90, 0, 10, 0, 0])
        } else {
            self.rng.weighted(&[30, 30, 25, 5, 10])
        };
        let app = self.app;
        match choice {
            0 => {
                let name = self
                    .rng
                    .pick_str(&["extra", "scratch", "plugins", "config"]);
                let v = volume(self.rng, &name, app);
                let list = self.patch_pod().seq_at("volumes");
                *element(list, "name", s(&name)) = v;
            }
            1 => {
                let old = self.rng.pick(&existing).clone();
                let name = old.str_at("name").unwrap_or_default().to_string();
                let mut v = map(vec![("name", s(&name))]);
                if let Some(cm) = old.get("configMap") {
                    let mut cm = cm.clone();
                    if self.rng.chance(60) {
                        cm = map(vec![("name", Y::Str(format!("{app}-{name}-v2")))]);
                    } else {
                        cm.set("defaultMode", Y::Int(0o644));
                    }
                    v.set("configMap", cm);
                } else if old.get("secret").is_some() {
                    v.set(
                        "secret",
                        map(vec![("secretName", Y::Str(format!("{app}-{name}-v2")))]),
                    );
                } else if self.rng.chance(50) {
                    v.set("emptyDir", map(vec![("sizeLimit", s("128Mi"))]));
                } else {
                    // A different source: both stay (no retainKeys).
                    v.set("emptyDir", Y::Null);
                    v.set(
                        "configMap",
                        map(vec![("name", Y::Str(format!("{app}-{name}")))]),
                    );
                }
                let list = self.patch_pod().seq_at("volumes");
                *element(list, "name", s(&name)) = v;
            }
            2 => {
                let name = if existing.is_empty() || self.rng.chance(10) {
                    "absent".to_string()
                } else {
                    let old = self.rng.pick(&existing).clone();
                    old.str_at("name").unwrap_or_default().to_string()
                };
                let list = self.patch_pod().seq_at("volumes");
                *element(list, "name", s(&name)) =
                    map(vec![("name", s(&name)), ("$patch", s("delete"))]);
            }
            3 => {
                self.patch_pod().set("volumes", Y::Null);
            }
            _ => {
                let name = self.rng.pick_str(&["config", "data", "extra"]);
                let v = volume(self.rng, &name, app);
                self.patch_pod().set(
                    "volumes",
                    Y::Seq(vec![map(vec![("$patch", s("replace"))]), v]),
                );
            }
        }
        true
    }

    fn node_selector(&mut self) -> bool {
        let existing = self
            .base_pod()
            .get("nodeSelector")
            .map_or_else(Vec::new, Y::keys);
        match self.rng.below(10) {
            0 => self.patch_pod().set("nodeSelector", Y::Null),
            1 => {
                let key = self.rng.pick_str(NODE_LABELS);
                let value = s(self.rng.pick(NODE_VALUES));
                let ns = self.patch_pod().map_at(&["nodeSelector"]);
                ns.set("$patch", s("replace"));
                ns.set(&key, value);
            }
            2 | 3 if !existing.is_empty() => {
                let key = self.rng.pick(&existing).clone();
                self.patch_pod()
                    .map_at(&["nodeSelector"])
                    .set(&key, Y::Null);
            }
            _ => {
                let key = self.rng.pick_str(NODE_LABELS);
                let value = s(self.rng.pick(NODE_VALUES));
                self.patch_pod().map_at(&["nodeSelector"]).set(&key, value);
            }
        }
        true
    }

    fn tolerations(&mut self) -> bool {
        let value = if self.rng.chance(15) {
            Y::Null
        } else {
            Y::Seq(
                (0..self.rng.range(1, 2))
                    .map(|_| toleration(self.rng))
                    .collect(),
            )
        };
        self.patch_pod().set("tolerations", value);
        true
    }

    fn pull_secrets(&mut self) -> bool {
        let existing: Vec<String> =
            self.base_pod()
                .get("imagePullSecrets")
                .map_or_else(Vec::new, |l| {
                    l.items()
                        .iter()
                        .filter_map(|e| e.str_at("name").map(String::from))
                        .collect()
                });
        let delete = !existing.is_empty() && self.rng.chance(40);
        let name = if delete {
            self.rng.pick(&existing).clone()
        } else {
            self.rng.pick_str(&["regcred", "quay-pull", "ecr"])
        };
        let list = self.patch_pod().seq_at("imagePullSecrets");
        let e = element(list, "name", s(&name));
        if delete {
            e.set("$patch", s("delete"));
        }
        true
    }

    fn pod_fields(&mut self) -> bool {
        let app = self.app;
        let (field, value) = match self.rng.below(8) {
            0 => ("serviceAccountName", Y::Str(format!("{app}-runner"))),
            1 => (
                "securityContext",
                map(vec![
                    ("runAsNonRoot", Y::Bool(true)),
                    ("runAsUser", Y::Int(self.rng.range(1000, 2000) as i64)),
                    ("fsGroup", Y::Int(2000)),
                ]),
            ),
            2 => (
                "affinity",
                map(vec![(
                    "nodeAffinity",
                    map(vec![(
                        "requiredDuringSchedulingIgnoredDuringExecution",
                        map(vec![(
                            "nodeSelectorTerms",
                            Y::Seq(vec![map(vec![(
                                "matchExpressions",
                                Y::Seq(vec![map(vec![
                                    ("key", s("kubernetes.io/arch")),
                                    ("operator", s("In")),
                                    ("values", seq_of(&["amd64", "arm64"])),
                                ])]),
                            )])]),
                        )]),
                    )]),
                )]),
            ),
            3 => ("terminationGracePeriodSeconds", Y::Int(60)),
            4 => ("dnsPolicy", s("ClusterFirstWithHostNet")),
            5 => (
                "hostAliases",
                Y::Seq(vec![map(vec![
                    ("ip", s("10.0.0.1")),
                    ("hostnames", seq_of(&["db.local", "cache.local"])),
                ])]),
            ),
            6 => ("securityContext", map(vec![("runAsUser", Y::Null)])),
            _ => ("priorityClassName", s("high-priority")),
        };
        self.patch_pod().set(field, value);
        true
    }

    fn strategy(&mut self) -> bool {
        match self.w {
            Workload::Deployment => {
                let value = match self.rng.below(3) {
                    0 => map(vec![("type", s("Recreate")), ("rollingUpdate", Y::Null)]),
                    1 => map(vec![("$patch", s("replace")), ("type", s("Recreate"))]),
                    _ => map(vec![(
                        "rollingUpdate",
                        map(vec![("maxSurge", Y::Int(1)), ("maxUnavailable", s("10%"))]),
                    )]),
                };
                self.patch.map_at(&["spec"]).set("strategy", value);
            }
            Workload::StatefulSet => {
                if self.rng.chance(50) {
                    self.patch
                        .map_at(&["spec"])
                        .set("podManagementPolicy", s("Parallel"));
                } else {
                    let claim = map(vec![
                        ("metadata", map(vec![("name", s("data"))])),
                        (
                            "spec",
                            map(vec![(
                                "resources",
                                map(vec![("requests", map(vec![("storage", s("10Gi"))]))]),
                            )]),
                        ),
                    ]);
                    self.patch
                        .map_at(&["spec"])
                        .set("volumeClaimTemplates", Y::Seq(vec![claim]));
                }
            }
            Workload::DaemonSet => {
                self.patch.map_at(&["spec"]).set(
                    "updateStrategy",
                    map(vec![
                        ("type", s("RollingUpdate")),
                        ("rollingUpdate", map(vec![("maxUnavailable", Y::Int(1))])),
                    ]),
                );
            }
            Workload::Job => {
                let spec = self.patch.map_at(&["spec"]);
                spec.set("backoffLimit", Y::Int(2));
                spec.set("ttlSecondsAfterFinished", Y::Int(3600));
            }
            Workload::CronJob => {
                let spec = self.patch.map_at(&["spec"]);
                if self.rng.chance(50) {
                    spec.set("schedule", s("30 1 * * 0"));
                } else {
                    spec.set("suspend", Y::Bool(true));
                }
            }
            Workload::Pod => return false,
        }
        true
    }

    fn delete_map(&mut self) -> bool {
        let directive = || map(vec![("$patch", s("delete"))]);
        match self.rng.below(4) {
            0 => {
                self.patch_pod().set("securityContext", directive());
            }
            1 => {
                let Some((c, init)) = self.pick_container() else {
                    return false;
                };
                let name = c.str_at("name").unwrap_or_default().to_string();
                self.container_patch(init, &name)
                    .set("resources", directive());
            }
            2 => {
                let Some(path) = self.w.template_path() else {
                    return false;
                };
                let mut meta: Vec<&str> = path.to_vec();
                meta.push("metadata");
                self.patch.map_at(&meta).set("annotations", directive());
            }
            _ => {
                self.patch_pod().set("nodeSelector", directive());
            }
        }
        true
    }

    /// A new selector label, added to the pod template as well.
    fn selector(&mut self) -> bool {
        let Some(path) = self.w.template_path() else {
            return false;
        };
        if self.w == Workload::CronJob {
            return false;
        }
        let key = self
            .rng
            .pick_str(&["version", "track", "app.kubernetes.io/instance"]);
        let text = self.rng.pick_str(LABEL_VALUES);
        let value = loose(self.rng, &text, 10);
        self.patch
            .map_at(&["spec", "selector", "matchLabels"])
            .set(&key, value.clone());
        let mut labels: Vec<&str> = path.to_vec();
        labels.extend(["metadata", "labels"]);
        self.patch.map_at(&labels).set(&key, value);
        true
    }

    /// `ports`, `volumeMounts`, `envFrom` or `args` of a container set to
    /// `null` or `[]`.
    fn container_list_cleared(&mut self) -> bool {
        let Some((c, init)) = self.pick_container() else {
            return false;
        };
        let name = c.str_at("name").unwrap_or_default().to_string();
        let field = self
            .rng
            .pick_str(&["ports", "volumeMounts", "envFrom", "args", "command"]);
        let value = if self.rng.chance(50) {
            Y::Null
        } else {
            Y::Seq(Vec::new())
        };
        self.container_patch(init, &name).set(&field, value);
        true
    }

    /// Shapes seen less often: element-level `$patch: replace`, repeated
    /// elements, quoted merge keys, empty maps and strings, `$patch: merge`
    /// list elements, a replaced pod spec.
    fn unusual(&mut self) -> bool {
        let app = self.app;
        let volumes = self.volume_names();
        match self.rng.below(12) {
            0 => {
                let Some((c, init)) = self.pick_container() else {
                    return false;
                };
                let name = c.str_at("name").unwrap_or_default().to_string();
                let mut fresh = container(self.rng, &name, app, &volumes, init);
                fresh.set("$patch", s("replace"));
                *self.container_patch(init, &name) = fresh;
            }
            1 | 2 => {
                let Some((c, init)) = self.pick_container() else {
                    return false;
                };
                let name = c.str_at("name").unwrap_or_default().to_string();
                let var = c
                    .get("env")
                    .and_then(|e| e.items().first())
                    .and_then(|e| e.str_at("name"))
                    .unwrap_or("LOG_LEVEL")
                    .to_string();
                let first = env_var(self.rng, &var, app);
                let second = env_var(self.rng, &var, app);
                let replace = self.rng.chance(50);
                let list = self.container_patch(init, &name).seq_at("env");
                if replace {
                    let mut e = first;
                    e.set("$patch", s("replace"));
                    list.push(e);
                } else {
                    // The same variable twice.
                    list.push(first);
                    list.push(second);
                }
            }
            3 => {
                let list = self.base_containers(false);
                let c = self.rng.pick(&list).clone();
                let Some(port) = c.get("ports").and_then(|p| p.items().first()).cloned() else {
                    return false;
                };
                let name = c.str_at("name").unwrap_or_default().to_string();
                let number = match port.get("containerPort") {
                    Some(Y::Int(n)) => *n,
                    _ => 80,
                };
                let mut p = map(vec![("containerPort", Y::Str(number.to_string()))]);
                if let Some(proto) = port.get("protocol") {
                    p.set("protocol", proto.clone());
                }
                p.set("name", s("quoted"));
                self.container_patch(false, &name).seq_at("ports").push(p);
            }
            4 => {
                let Some((c, init)) = self.pick_container() else {
                    return false;
                };
                let name = c.str_at("name").unwrap_or_default().to_string();
                let field = self
                    .rng
                    .pick_str(&["securityContext", "resources", "readinessProbe"]);
                self.container_patch(init, &name)
                    .set(&field, Y::Map(Vec::new()));
            }
            5 => {
                if self.w.template_path().is_none() {
                    return false;
                }
                let name = self.rng.pick_str(CONTAINERS);
                let c = container(self.rng, &name, app, &[], false);
                let spec = map(vec![
                    ("$patch", s("replace")),
                    ("containers", Y::Seq(vec![c])),
                ]);
                let path = self.pod_path();
                let (last, parent) = path.split_last().expect("a pod spec path");
                self.patch.map_at(parent).set(last, spec);
            }
            6 => {
                let key = self
                    .base_pod()
                    .get("topologySpreadConstraints")
                    .and_then(|l| l.items().first())
                    .and_then(|t| t.get("topologyKey"))
                    .cloned()
                    .unwrap_or_else(|| s("kubernetes.io/hostname"));
                let t = map(vec![("topologyKey", key), ("maxSkew", Y::Int(2))]);
                self.patch_pod().seq_at("topologySpreadConstraints").push(t);
            }
            7 => {
                let name = self.rng.pick_str(&["extra", "config", "cache"]);
                let v = volume(self.rng, &name, app);
                let list = self.patch_pod().seq_at("volumes");
                list.push(map(vec![("$patch", s("merge"))]));
                list.push(v);
            }
            8 => {
                self.patch_pod().set(
                    "imagePullSecrets",
                    Y::Seq(vec![
                        map(vec![("$patch", s("replace"))]),
                        map(vec![("name", s("new-pull"))]),
                    ]),
                );
            }
            9 => {
                let Some((c, init)) = self.pick_container() else {
                    return false;
                };
                let name = c.str_at("name").unwrap_or_default().to_string();
                let field = self
                    .rng
                    .pick_str(&["image", "imagePullPolicy", "workingDir"]);
                self.container_patch(init, &name).set(&field, s(""));
            }
            10 => {
                let field = self
                    .rng
                    .pick_str(&["volumes", "imagePullSecrets", "initContainers"]);
                self.patch_pod()
                    .set(&field, Y::Seq(vec![map(vec![("$patch", s("delete"))])]));
            }
            _ => {
                // Deleting an element of a list the pod does not have.
                let list = self.patch_pod().seq_at("hostAliases");
                list.push(map(vec![("ip", s("10.9.9.9")), ("$patch", s("delete"))]));
            }
        }
        true
    }

    /// A container written without its name (a mistake Kustomize accepts:
    /// such elements are dropped).
    fn nameless_container(&mut self) -> bool {
        let image = s(self.rng.pick(IMAGES));
        self.patch_pod()
            .seq_at("containers")
            .push(map(vec![("image", image)]));
        true
    }

    fn topology(&mut self) -> bool {
        let app = self.app;
        let mut t = topology_spread(self.rng, app);
        if self.rng.chance(50) {
            // Same keys as an existing constraint, new skew.
            if let Some(old) = self
                .base_pod()
                .get("topologySpreadConstraints")
                .and_then(|l| l.items().first())
            {
                t = map(vec![
                    (
                        "topologyKey",
                        old.get("topologyKey").cloned().unwrap_or(Y::Null),
                    ),
                    (
                        "whenUnsatisfiable",
                        old.get("whenUnsatisfiable").cloned().unwrap_or(Y::Null),
                    ),
                    ("maxSkew", Y::Int(3)),
                ]);
            }
        }
        self.patch_pod().seq_at("topologySpreadConstraints").push(t);
        true
    }
}

/// One patch document for `base`.
fn patch_doc(rng: &mut Rng, w: Workload, app: &str, base: &Y) -> Y {
    let mut meta = map(vec![(
        "name",
        base.at(&["metadata", "name"]).cloned().unwrap_or(Y::Null),
    )]);
    if let Some(ns) = base.at(&["metadata", "namespace"]) {
        meta.set("namespace", ns.clone());
    }
    let root = map(vec![
        ("apiVersion", s(w.api_version())),
        ("kind", s(w.kind())),
        ("metadata", meta),
    ]);
    // Rarely: the whole resource deleted, or a (no-op) root replace.
    match rng.below(200) {
        0 => {
            let mut root = root;
            root.set("$patch", s("delete"));
            return root;
        }
        1 => {
            let mut root = root;
            root.set("$patch", s("replace"));
            root.set("spec", map(vec![("replicas", Y::Int(9))]));
            return root;
        }
        _ => {}
    }
    let mut gen = PatchGen {
        rng,
        w,
        app,
        base,
        patch: root,
    };
    let wanted = gen.rng.weighted(&[0, 40, 30, 20, 10]);
    let mut done = 0;
    for _ in 0..50 {
        if done == wanted {
            break;
        }
        if gen.op() {
            done += 1;
        }
    }
    gen.patch
}

// ---------------------------------------------------------------------------
// Cases
// ---------------------------------------------------------------------------

/// One generated case: its files and its entries in the kustomization.
struct Case {
    index: usize,
    files: Vec<(String, String)>,
    resources: Vec<String>,
    /// `patchesStrategicMerge:` items, written as list items.
    psm: Vec<String>,
    /// `patches:` items, written as list items.
    patches: Vec<String>,
}

fn gen_case(seed: u64, index: usize) -> Case {
    let mut rng = Rng::for_case(seed, index);
    let w = match rng.weighted(&[55, 10, 8, 9, 9, 9]) {
        0 => Workload::Deployment,
        1 => Workload::StatefulSet,
        2 => Workload::DaemonSet,
        3 => Workload::Job,
        4 => Workload::CronJob,
        _ => Workload::Pod,
    };
    let app = rng.pick_str(APPS);
    let name = format!("c{index:04}-{app}");
    let namespace = if rng.chance(20) {
        Some(rng.pick_str(&["prod", "staging"]))
    } else {
        None
    };
    let base = resource(&mut rng, w, &name, &app, namespace.as_deref());
    let layout = Layout::random(&mut rng);
    let resource_file = format!("c{index:04}.yaml");
    let mut case = Case {
        index,
        files: vec![(resource_file.clone(), Writer::document(&base, layout))],
        resources: vec![resource_file],
        psm: Vec::new(),
        patches: Vec::new(),
    };
    let n_patches = rng.weighted(&[0, 60, 30, 10]);
    let mut docs: Vec<Y> = Vec::new();
    for _ in 0..n_patches {
        let doc = patch_doc(&mut rng, w, &app, &base);
        let deletes = doc.get("$patch") == Some(&s("delete"));
        docs.push(doc);
        if deletes {
            // Kustomize crashes when a later patch names a deleted resource.
            break;
        }
    }
    let mut k = 0;
    while k < docs.len() {
        let layout = Layout::random(&mut rng);
        let text = Writer::document(&docs[k], layout);
        let file = format!("c{index:04}-p{k}.yaml");
        // A patch deleting the resource goes last: `patchesStrategicMerge`
        // runs before `patches`.
        let deletes = docs[k].get("$patch") == Some(&s("delete"));
        let weights: &[usize] = if deletes {
            &[50, 50, 0, 0]
        } else {
            &[40, 35, 15, 10]
        };
        match rng.weighted(weights) {
            0 => {
                let mut item = format!("- patch: |-\n{}", indent(&text, 4));
                if rng.chance(15) {
                    let _ = write!(
                        item,
                        "  target:\n    kind: {}\n    name: {name}\n",
                        w.kind()
                    );
                }
                case.patches.push(item);
            }
            1 => {
                let mut text = text;
                let mut multi = false;
                if k + 1 < docs.len() && rng.chance(30) {
                    // Two documents in one file (then without a target,
                    // which Kustomize refuses for several patches).
                    k += 1;
                    multi = true;
                    text = format!("{text}---\n{}", Writer::document(&docs[k], Layout::PLAIN));
                }
                let mut item = format!("- path: {file}\n");
                if !multi && rng.chance(15) {
                    let _ = write!(
                        item,
                        "  target:\n    group: {}\n    kind: {}\n    name: {name}\n",
                        w.api_version().rsplit_once('/').map_or("", |(g, _)| g),
                        w.kind()
                    );
                }
                case.files.push((file, text));
                case.patches.push(item);
            }
            2 => {
                case.psm.push(format!("- {file}\n"));
                case.files.push((file, text));
            }
            _ => case.psm.push(format!("- |-\n{}", indent(&text, 2))),
        }
        k += 1;
    }
    case
}

fn kustomization(cases: &[&Case]) -> String {
    let mut out = String::from(
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n",
    );
    for case in cases {
        for r in &case.resources {
            let _ = writeln!(out, "- {r}");
        }
    }
    if cases.iter().any(|c| !c.psm.is_empty()) {
        out.push_str("patchesStrategicMerge:\n");
        for case in cases {
            case.psm.iter().for_each(|i| out.push_str(i));
        }
    }
    if cases.iter().any(|c| !c.patches.is_empty()) {
        out.push_str("patches:\n");
        for case in cases {
            case.patches.iter().for_each(|i| out.push_str(i));
        }
    }
    out
}

fn write_tree(dir: &Path, cases: &[&Case]) {
    let _ = fs::remove_dir_all(dir);
    fs::create_dir_all(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for case in cases {
        for (name, text) in &case.files {
            fs::write(dir.join(name), text).expect("write input file");
        }
    }
    fs::write(dir.join("kustomization.yaml"), kustomization(cases)).expect("write kustomization");
}

// ---------------------------------------------------------------------------
// Running the tools
// ---------------------------------------------------------------------------

/// Builds `dir` with kubectl and krusty at the same time.
fn build_both(dir: &Path) -> (Output, Output) {
    let spawn = |cmd: &mut Command, what: &str| {
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot run {what}: {e}"))
    };
    let kubectl = spawn(Command::new("kubectl").arg("kustomize").arg(dir), "kubectl");
    let krusty = spawn(support::krusty_command().arg("build").arg(dir), "krusty");
    let krusty = krusty.wait_with_output().expect("krusty output");
    let kubectl = kubectl.wait_with_output().expect("kubectl output");
    (kubectl, krusty)
}

/// `None` when the outputs agree (equal, or both builds fail).
fn compare(kubectl: &Output, krusty: &Output) -> Option<String> {
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    match (kubectl.status.success(), krusty.status.success()) {
        (true, true) if kubectl.stdout == krusty.stdout => None,
        (false, false) => None,
        (true, true) => Some(format!(
            "output differs (- kubectl, + krusty)\n{}",
            diff(&text(&kubectl.stdout), &text(&krusty.stdout))
        )),
        (true, false) => Some(format!(
            "kubectl succeeds, krusty fails:\n{}",
            text(&krusty.stderr).trim_end()
        )),
        (false, true) => Some(format!(
            "kubectl fails, krusty succeeds:\n{}\nkrusty printed:\n{}",
            text(&kubectl.stderr).trim_end(),
            text(&krusty.stdout)
        )),
    }
}

fn parse_u64(text: &str) -> Option<u64> {
    let text = text.trim();
    match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(&hex.replace('_', ""), 16).ok(),
        None => text.replace('_', "").parse().ok(),
    }
}

fn env_number(name: &str) -> Option<u64> {
    let value = env::var(name).ok()?;
    Some(parse_u64(&value).unwrap_or_else(|| panic!("{name}={value:?} is not a number")))
}

/// Whether `kubectl` runs; warns when its Kustomize is not the oracle's
/// version.
fn kubectl_available() -> bool {
    let Ok(out) = Command::new("kubectl")
        .args(["version", "--client"])
        .stdin(Stdio::null())
        .output()
    else {
        return false;
    };
    let text = String::from_utf8_lossy(&out.stdout);
    if out.status.success() && !text.contains("Kustomize Version: v5.5.0") {
        eprintln!("warning: the oracle is Kustomize v5.5.0, kubectl reports:\n{text}");
    }
    out.status.success()
}

/// The report of a failed case: seed, index, inputs and the difference.
fn report(seed: u64, case: &Case, dir: &Path, problem: &str) -> String {
    let mut out = format!(
        "MISMATCH seed {seed:#x} case {} (rerun: KRUSTY_SMP_SEED={seed:#x} KRUSTY_SMP_ONLY={})\n\
         tree kept in {}\n",
        case.index,
        case.index,
        dir.display()
    );
    let _ = writeln!(out, "--- kustomization.yaml\n{}", kustomization(&[case]));
    for (name, text) in &case.files {
        let _ = writeln!(out, "--- {name}\n{text}");
    }
    let _ = writeln!(out, "{problem}");
    out
}

/// The state of one test run.
struct Run {
    seed: u64,
    root: PathBuf,
    keep: bool,
    /// Kustomizations built (by each tool).
    builds: usize,
    /// Full reports, at most [`MAX_REPORTS`].
    failures: Vec<String>,
    /// One line per mismatch.
    mismatched: Vec<String>,
    /// One line per case both tools reject.
    rejected: Vec<String>,
}

impl Run {
    /// Builds `cases` together; when the tools disagree or fail, builds
    /// each half again (down to single cases) to name the cases at fault.
    fn check(&mut self, cases: &[&Case]) {
        let (first, last) = (cases[0].index, cases[cases.len() - 1].index);
        let dir = match cases {
            [one] => self.root.join(format!("case-{:04}", one.index)),
            _ => self.root.join(format!("cases-{first:04}-{last:04}")),
        };
        write_tree(&dir, cases);
        let (kubectl, krusty) = build_both(&dir);
        self.builds += 1;
        let problem = compare(&kubectl, &krusty);
        if let [case] = cases {
            match problem {
                None => {
                    if !kubectl.status.success() {
                        let err = String::from_utf8_lossy(&kubectl.stderr);
                        let line = err
                            .lines()
                            .find(|l| ["err=", "Error:", "panic:"].iter().any(|m| l.contains(m)))
                            .or_else(|| err.lines().last())
                            .unwrap_or_default();
                        self.rejected.push(format!("  case {}: {line}", case.index));
                    }
                    self.clean(&dir);
                }
                Some(problem) => {
                    let line = problem
                        .lines()
                        .find(|l| l.starts_with(['-', '+']))
                        .or_else(|| problem.lines().nth(1))
                        .unwrap_or_default()
                        .trim();
                    self.mismatched
                        .push(format!("  case {}: {line}", case.index));
                    if self.failures.len() < MAX_REPORTS {
                        self.failures.push(report(self.seed, case, &dir, &problem));
                    }
                }
            }
            return;
        }
        if problem.is_none() && kubectl.status.success() {
            self.clean(&dir);
            return;
        }
        let before = self.mismatched.len();
        let (left, right) = cases.split_at(cases.len() / 2);
        self.check(left);
        self.check(right);
        match problem {
            Some(problem) if self.mismatched.len() == before => {
                let seed = self.seed;
                self.mismatched
                    .push(format!("  cases {first}..={last}: only together"));
                self.failures.push(format!(
                    "MISMATCH seed {seed:#x} cases {first}..={last}: each half matches, \
                     the whole differs; tree kept in {}\n{problem}",
                    dir.display()
                ));
            }
            _ => self.clean(&dir),
        }
    }

    fn clean(&self, dir: &Path) {
        if !self.keep {
            let _ = fs::remove_dir_all(dir);
        }
    }
}

#[test]
fn strategic_merge_patches_match_kubectl_kustomize() {
    if !kubectl_available() {
        if env::var("KRUSTY_SKIP_ORACLE").is_ok_and(|v| v == "1") {
            eprintln!("SKIPPED: kubectl not found and KRUSTY_SKIP_ORACLE=1");
            return;
        }
        panic!(
            "kubectl (Kustomize v5.5.0) is not on PATH: this test compares krusty \
             with `kubectl kustomize`; install kubectl, or set KRUSTY_SKIP_ORACLE=1 to skip it"
        );
    }
    let seed = env_number("KRUSTY_SMP_SEED").unwrap_or(DEFAULT_SEED);
    let count = env_number("KRUSTY_SMP_CASES").map_or(DEFAULT_CASES, |n| n as usize);
    let indices: Vec<usize> = match env_number("KRUSTY_SMP_ONLY") {
        Some(only) => vec![only as usize],
        None => (0..count).collect(),
    };
    let root = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("smp_property")
        .join(format!("{seed:#x}"));
    let mut run = Run {
        seed,
        root,
        keep: env::var("KRUSTY_SMP_KEEP").is_ok_and(|v| v == "1"),
        builds: 0,
        failures: Vec::new(),
        mismatched: Vec::new(),
        rejected: Vec::new(),
    };
    let started = Instant::now();
    let cases: Vec<Case> = indices.iter().map(|&i| gen_case(seed, i)).collect();
    for chunk in cases.chunks(BATCH) {
        let refs: Vec<&Case> = chunk.iter().collect();
        run.check(&refs);
    }
    let Run {
        builds,
        failures,
        mismatched,
        rejected,
        ..
    } = run;
    let summary = format!(
        "smp property: seed {seed:#x}, {} cases, {} mismatched, {} rejected by both tools, \
         {builds} builds, {:.1}s",
        cases.len(),
        mismatched.len(),
        rejected.len(),
        started.elapsed().as_secs_f64()
    );
    let failed_cases = rejected;
    let mismatched_cases = mismatched;
    for failure in &failures {
        eprintln!("{failure}");
    }
    if !failed_cases.is_empty() {
        eprintln!("cases both tools reject (kubectl's error):");
        for line in &failed_cases {
            eprintln!("{line}");
        }
    }
    if !mismatched_cases.is_empty() {
        eprintln!("mismatched cases (first differing line):");
        for line in &mismatched_cases {
            eprintln!("{line}");
        }
    }
    eprintln!("{summary}");
    assert!(mismatched_cases.is_empty(), "{summary}");
}
