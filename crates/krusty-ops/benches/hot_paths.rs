//! Micro-benchmarks of the build's hot paths: YAML parse and emit, strategic
//! merge, the name-reference fix-up, the generated-name hash and resource
//! lookup by id. Inputs are synthetic but shaped like the bench trees
//! (`../shared/bench/gen.py`): Deployments with containers, env, ports and
//! volumes, and the ConfigMaps they refer to.
//!
//! Run with `cargo bench -p krusty-ops --bench hot_paths`.

use criterion::{black_box, criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use krusty_ops::builtins::hash::content_hash;
use krusty_ops::builtins::nameref::FixNameReferences;
use krusty_ops::patch::smp;
use krusty_ops::schema::Schema;
use krusty_ops::{KustomizeVersion, TransformerConfig};
use krusty_resource::{ResMap, Resource};
use krusty_yaml::Node;

/// One application: a ConfigMap and a Deployment referring to it.
fn app(i: usize) -> String {
    format!(
        r#"apiVersion: v1
kind: ConfigMap
metadata:
  name: app-{i}-config
data:
  LOG_LEVEL: info
  FEATURE_FLAGS: "a,b,c"
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: app-{i}
  labels: {{app: app-{i}, tier: backend}}
spec:
  replicas: 2
  selector:
    matchLabels: {{app: app-{i}}}
  template:
    metadata:
      labels: {{app: app-{i}}}
    spec:
      containers:
      - name: main
        image: registry.example.com/acme/app-{i}:1.{i}.0
        args: ["--port=8080", "--verbose"]
        ports:
        - containerPort: 8080
          name: http
        - containerPort: 9090
          protocol: TCP
        env:
        - name: MODE
          value: production
        - name: SECRET
          valueFrom:
            secretKeyRef: {{name: app-{i}-secret, key: token}}
        envFrom:
        - configMapRef: {{name: app-{i}-config}}
        volumeMounts:
        - {{name: config, mountPath: /etc/app}}
      - name: sidecar
        image: registry.example.com/acme/proxy:2.0
      volumes:
      - name: config
        configMap: {{name: app-{i}-config}}
"#
    )
}

fn stream(apps: usize) -> String {
    (0..apps).map(app).collect::<Vec<_>>().join("---\n")
}

fn resources(text: &str) -> Vec<Resource> {
    krusty_yaml::parse_stream(text)
        .expect("valid YAML")
        .into_iter()
        .filter_map(|d| d.root)
        .map(|n| Resource::from_node(n).expect("a resource"))
        .collect()
}

fn yaml(c: &mut Criterion) {
    let text = stream(200);
    let mut group = c.benchmark_group("yaml (200 apps, 400 documents)");
    group.throughput(Throughput::Bytes(text.len() as u64));
    group.bench_function("parse", |b| {
        b.iter(|| krusty_yaml::parse_stream(black_box(&text)).expect("valid"))
    });
    let docs: Vec<Node> = krusty_yaml::parse_stream(&text)
        .expect("valid")
        .into_iter()
        .filter_map(|d| d.root)
        .collect();
    group.bench_function("emit", |b| {
        b.iter(|| {
            for d in &docs {
                black_box(krusty_yaml::to_kustomize_yaml(d).expect("emits"));
            }
        })
    });
    group.finish();
}

fn strategic_merge(c: &mut Criterion) {
    let target = resources(&app(1)).remove(1).node;
    let patch = krusty_yaml::parse_stream(
        r#"apiVersion: apps/v1
kind: Deployment
metadata: {name: app-1}
spec:
  template:
    spec:
      containers:
      - name: main
        image: registry.example.com/acme/app-1:2.0.0
        env:
        - {name: MODE, value: canary}
        - {name: EXTRA, value: "1"}
        ports:
        - {containerPort: 7070, name: debug}
      - name: sidecar
        $patch: delete
"#,
    )
    .expect("valid")
    .remove(0)
    .root
    .expect("a document");
    let schema = Schema::kubernetes();
    c.bench_function("strategic merge (one Deployment)", |b| {
        b.iter_batched(
            || (target.clone(), patch.clone()),
            |(t, p)| smp::merge(t, p, schema).expect("merges"),
            BatchSize::SmallInput,
        )
    });
}

fn renamed_map(apps: usize) -> ResMap {
    let mut m = ResMap::new();
    for mut r in resources(&stream(apps)) {
        let name = format!("prod-{}", r.name());
        r.store_previous_id();
        r.set_name(&name);
        r.meta.prefixes.push("prod-".into());
        m.append(r).expect("unique");
    }
    m
}

fn name_references(c: &mut Criterion) {
    let fix = FixNameReferences {
        back_refs: TransformerConfig::defaults(KustomizeVersion::default())
            .name_reference
            .clone(),
    };
    let map = renamed_map(500);
    c.bench_function("name references (500 apps, 1000 resources)", |b| {
        b.iter_batched(
            || map.clone(),
            |mut m| fix.apply(&mut m).expect("fixes"),
            BatchSize::LargeInput,
        )
    });
}

fn hash_and_lookup(c: &mut Criterion) {
    let rs = resources(&stream(1));
    c.bench_function("content hash (one ConfigMap)", |b| {
        b.iter(|| content_hash(black_box(&rs[0])))
    });
    let mut map = ResMap::new();
    for r in resources(&stream(1000)) {
        map.append(r).expect("unique");
    }
    let ids: Vec<_> = map.iter().map(Resource::id).collect();
    c.bench_function("lookup by id (2000 resources, all of them)", |b| {
        b.iter(|| {
            for id in &ids {
                black_box(map.get(id));
            }
        })
    });
}

criterion_group!(
    hot_paths,
    yaml,
    strategic_merge,
    name_references,
    hash_and_lookup
);
criterion_main!(hot_paths);
