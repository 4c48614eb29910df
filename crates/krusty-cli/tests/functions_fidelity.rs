//! KRM functions as Kustomize v5.5.0 runs them, side by side with
//! `kubectl kustomize --enable-alpha-plugins`: the same container function
//! (a small static C program, packaged as an image with nothing else) runs
//! through kubectl (with a `docker` shim that runs podman) and through
//! krusty, and the outputs must be byte-identical. Checked: where returned
//! items go in the list (kept, renamed, dropped, added, reordered; with
//! `sortOptions: fifo` and legacy order), the build records an item comes
//! back with, the annotations and environment a function gets, its stderr,
//! and results of unknown severity. Tests that need podman, kubectl or a C
//! compiler say so loudly and skip when one is missing.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

mod support;
use support::write;
use support::Rng;

/// The test function. Its mode is its first argument:
/// - `echo`: prints one ConfigMap `fn-input` holding the whole input
///   (`data.input`) and its environment, a variable a line (`data.env`);
/// - `config`: prints the block scalar `out` of its functionConfig's
///   `data` (the output list, decided by the test);
/// - `stderr`: writes a line on stderr, then works as `config`.
const FUNCTION_C: &str = r#"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
extern char **environ;
static char *slurp(size_t *len) {
    size_t cap = 65536, n = 0; char *b = malloc(cap + 1); ssize_t r;
    while ((r = read(0, b + n, cap - n)) > 0) {
        n += r;
        if (n == cap) { cap *= 2; b = realloc(b, cap + 1); }
    }
    b[n] = 0; *len = n; return b;
}
static void block(const char *key, const char *s, size_t n) {
    printf("    %s: |\n", key);
    size_t i = 0;
    while (i < n) {
        printf("      ");
        while (i < n && s[i] != '\n') putchar(s[i++]);
        putchar('\n'); i++;
    }
}
static int echo(const char *in, size_t n) {
    printf("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n"
           "- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: fn-input\n  data:\n");
    block("input", in, n);
    size_t len = 0;
    for (char **e = environ; *e; e++) len += strlen(*e) + 1;
    char *env = malloc(len + 1), *p = env;
    for (char **e = environ; *e; e++) { size_t l = strlen(*e); memcpy(p, *e, l); p += l; *p++ = '\n'; }
    if (len) block("env", env, len);
    return 0;
}
static int config(const char *in) {
    const char *fc = strstr(in, "\nfunctionConfig:\n");
    const char *key = fc ? strstr(fc, " out: |") : NULL;
    const char *line = key ? strchr(key, '\n') : NULL;
    if (!line) { fprintf(stderr, "no functionConfig data.out\n"); return 2; }
    line++;
    size_t indent = strspn(line, " ");
    while (*line) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        size_t spaces = strspn(line, " ");
        if (spaces >= len) putchar('\n');
        else if (spaces < indent) break;
        else { fwrite(line + indent, 1, len - indent, stdout); putchar('\n'); }
        if (!end) break;
        line = end + 1;
    }
    return 0;
}
int main(int argc, char **argv) {
    size_t n; char *in = slurp(&n);
    const char *mode = argc > 1 ? argv[1] : "echo";
    if (!strcmp(mode, "echo")) return echo(in, n);
    if (!strcmp(mode, "stderr")) fprintf(stderr, "a note from the function\n");
    return config(in);
}
"#;

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn skip(what: &str) {
    eprintln!("\n!!!!!!!! SKIPPED: {what} !!!!!!!!\n");
}

fn available(cmd: &str, args: &[&str]) -> bool {
    podman_conf(Command::new(cmd))
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// A command with the podman settings this project's machines need
/// (`.ci/containers.conf`), unless the caller's environment names its own.
fn podman_conf(mut cmd: Command) -> Command {
    if std::env::var_os("CONTAINERS_CONF").is_none() {
        let conf = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.ci/containers.conf");
        cmd.env("CONTAINERS_CONF", conf);
    }
    cmd
}

/// What a side-by-side test needs: a scratch directory, the test function
/// compiled there, and a `docker` shim that runs podman (for kubectl).
struct Bench {
    dir: PathBuf,
    function: PathBuf,
    shim: PathBuf,
    /// Prefix of this test's image names.
    images: String,
}

impl Bench {
    /// The bench for test `name`, or `None` (after saying why) when
    /// podman, kubectl or a C compiler with a static libc is missing.
    fn new(name: &str) -> Option<Bench> {
        if !available("podman", &["info"]) {
            skip("podman cannot run containers here: no side-by-side function checks");
            return None;
        }
        if !available("kubectl", &["version", "--client"]) {
            skip("kubectl is not installed: no side-by-side function checks");
            return None;
        }
        let dir = support::scratch("functions-fidelity", name);
        write(&dir, "fn.c", FUNCTION_C);
        let function = dir.join("fn");
        let built = Command::new("cc")
            .args(["-static", "-Os", "-s", "-o"])
            .arg(&function)
            .arg(dir.join("fn.c"))
            .output();
        if !built.is_ok_and(|o| o.status.success()) {
            skip("no C compiler with a static libc (cc -static): no side-by-side function checks");
            return None;
        }
        let shim = dir.join("shim");
        write(&shim, "docker", "#!/bin/sh\nexec podman \"$@\"\n");
        chmod_x(&shim.join("docker"));
        Some(Bench {
            dir,
            function,
            shim,
            images: format!("localhost/krusty-fidelity/{name}"),
        })
    }

    /// Builds the image running the test function in `mode`; its name.
    fn image(&self, mode: &str) -> String {
        let name = format!("{}-{mode}:v1", self.images);
        let rootfs = self.dir.join(format!("rootfs-{mode}"));
        let _ = std::fs::remove_dir_all(&rootfs);
        std::fs::create_dir_all(&rootfs).expect("mkdir");
        std::fs::copy(&self.function, rootfs.join("fn")).expect("copy function");
        write(
            &rootfs,
            "etc/passwd",
            "root:x:0:0::/:/sbin/nologin\nnobody:x:65534:65534::/:/sbin/nologin\n",
        );
        write(&rootfs, "etc/group", "root:x:0:\nnogroup:x:65534:\n");
        let tar = self.dir.join(format!("rootfs-{mode}.tar"));
        let tarred = Command::new("tar")
            .arg("-C")
            .arg(&rootfs)
            .arg("-cf")
            .arg(&tar)
            .arg(".")
            .status()
            .expect("tar runs");
        assert!(tarred.success());
        let out = podman_conf(Command::new("podman"))
            .args(["import", "-q", "--change"])
            .arg(format!("ENTRYPOINT [\"/fn\", \"{mode}\"]"))
            .args(["--change", "USER 65534:65534"])
            .arg(&tar)
            .arg(&name)
            .output()
            .expect("podman import runs");
        assert!(out.status.success(), "podman import: {}", text(&out.stderr));
        name
    }

    /// `kubectl kustomize --enable-alpha-plugins` of `tree`, with the shim.
    fn kubectl(&self, tree: &Path) -> Output {
        let path = format!(
            "{}:{}",
            self.shim.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        podman_conf(Command::new("kubectl"))
            .args(["kustomize", "--enable-alpha-plugins"])
            .arg(tree)
            .env("PATH", path)
            .output()
            .expect("kubectl runs")
    }

    /// `krusty build --enable-alpha-plugins --container-cli podman` of `tree`.
    fn krusty(&self, tree: &Path) -> Output {
        podman_conf(support::krusty_command())
            .args([
                "build",
                "--enable-alpha-plugins",
                "--container-cli",
                "podman",
            ])
            .arg(tree)
            .output()
            .expect("krusty runs")
    }

    /// Builds `tree` both ways; both must succeed with the same stdout,
    /// which is returned with both stderrs.
    fn same(&self, tree: &Path, what: &str) -> (String, String, String) {
        let want = self.kubectl(tree);
        assert!(
            want.status.success(),
            "{what}: kubectl failed: {}",
            text(&want.stderr)
        );
        let got = self.krusty(tree);
        assert!(
            got.status.success(),
            "{what}: krusty failed: {}",
            text(&got.stderr)
        );
        let (want_out, got_out) = (text(&want.stdout), text(&got.stdout));
        assert!(
            want_out == got_out,
            "{what}: krusty differs from kubectl\n{}",
            support::diff(&want_out, &got_out)
        );
        (got_out, text(&want.stderr), text(&got.stderr))
    }
}

fn chmod_x(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

/// A function config running `image` in `config` mode, told to print
/// `items` (YAML sequence entries at column 0) and `rest` (top-level keys
/// after the items, such as `results:`).
fn config_function(image: &str, items: &str, rest: &str) -> String {
    let out =
        format!("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n{items}{rest}");
    let body: String = out.lines().map(|l| format!("    {l}\n")).collect();
    format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fn\n  annotations:\n    config.kubernetes.io/function: |\n      container:\n        image: {image}\ndata:\n  out: |\n{body}"
    )
}

/// One item as a function would print it.
fn item(api_version: &str, kind: &str, name: &str, namespace: &str, extra: &str) -> String {
    let ns = if namespace.is_empty() {
        String::new()
    } else {
        format!("    namespace: {namespace}\n")
    };
    format!(
        "- apiVersion: {api_version}\n  kind: {kind}\n  metadata:\n    name: {name}\n{ns}{extra}"
    )
}

const FOUR: &str = "apiVersion: v1
kind: ConfigMap
metadata:
  name: a
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: b
---
apiVersion: v1
kind: Secret
metadata:
  name: c
---
apiVersion: v1
kind: Service
metadata:
  name: d
";

/// A function that reverses the list, renames one item, drops one and
/// adds one: kept items stay where they were, the renamed and the new one
/// follow in the function's order (fifo), and legacy order sorts them all;
/// with build metadata, only the kept items record the function among
/// their transformations.
#[test]
fn returned_items_take_the_places_kustomize_gives_them() {
    let Some(bench) = Bench::new("places") else {
        return;
    };
    let image = bench.image("config");
    let tree = bench.dir.join("k");
    write(&tree, "res.yaml", FOUR);
    // The kept items come back with Kustomize's annotations (as from a
    // function that passes items through), or without any.
    let kept_with_annotations = "  metadata:\n    annotations:\n      kustomize.config.k8s.io/id: |\n        kind: Service\n        name: d\n        version: v1\n      config.k8s.io/id: '4'\n";
    for annotated in [false, true] {
        let d = if annotated {
            format!("- apiVersion: v1\n  kind: Service\n{kept_with_annotations}    name: d\n")
        } else {
            item("v1", "Service", "d", "", "")
        };
        let items = [
            d,
            item("v1", "Secret", "c2", "", ""),
            item("v1", "Namespace", "e", "", ""),
            item("v1", "ConfigMap", "a", "", "  data:\n    k: changed\n"),
        ]
        .concat();
        write(&tree, "fn.yaml", &config_function(&image, &items, ""));
        for order in [
            "",
            "sortOptions:\n  order: fifo\n",
            "sortOptions:\n  order: legacy\n",
            // What a transformer adds or renames records it as its
            // origin only; what it keeps records it as a transformation.
            "buildMetadata: [originAnnotations, transformerAnnotations]\n",
        ] {
            write(
                &tree,
                "kustomization.yaml",
                &format!("resources:\n- res.yaml\ntransformers:\n- fn.yaml\n{order}"),
            );
            bench.same(&tree, &format!("annotated: {annotated}, order: {order:?}"));
        }
    }
}

/// A generated ConfigMap keeps its hash suffix only when it comes back
/// with the record asking for one; an item may bring that record along
/// even when it was not generated. References follow.
#[test]
fn build_records_an_item_comes_back_with_are_its_own() {
    let Some(bench) = Bench::new("records") else {
        return;
    };
    let image = bench.image("config");
    let tree = bench.dir.join("k");
    let items = [
        item("v1", "ConfigMap", "gen", "", "  data:\n    x: \"y\"\n"),
        item(
            "v1",
            "ConfigMap",
            "gen2",
            "",
            "    annotations:\n      internal.config.kubernetes.io/needsHashSuffix: enabled\n      internal.config.kubernetes.io/generatorBehavior: unspecified\n  data:\n    x: z\n",
        ),
        item(
            "apps/v1",
            "Deployment",
            "dep",
            "",
            "  spec:\n    template:\n      spec:\n        volumes:\n        - name: v\n          configMap:\n            name: gen\n        - name: w\n          configMap:\n            name: gen2\n",
        ),
    ]
    .concat();
    write(&tree, "fn.yaml", &config_function(&image, &items, ""));
    write(
        &tree,
        "kustomization.yaml",
        "configMapGenerator:\n- name: gen\n  literals: [x=y]\n- name: gen2\n  literals: [x=y]\ntransformers:\n- fn.yaml\n",
    );
    let (out, _, _) = bench.same(&tree, "records");
    assert!(out.contains("name: gen2-"), "{out}");
}

/// Seeded random function outputs: each original is kept (sometimes
/// changed), dropped, renamed or moved to another namespace; new items are
/// added; the whole list is shuffled. The output must match kubectl's,
/// under fifo and legacy order.
#[test]
fn seeded_function_outputs_are_placed_like_kustomize() {
    let Some(bench) = Bench::new("seeded") else {
        return;
    };
    let image = bench.image("config");
    for seed in 1..=8u64 {
        let mut rng = Rng::new(seed);
        let tree = bench.dir.join(format!("seed-{seed}"));
        let case = SeededCase::new(&mut rng);
        write(&tree, "a.yaml", &case.file(0));
        write(&tree, "b.yaml", &case.file(1));
        write(
            &tree,
            "fn.yaml",
            &config_function(&image, &case.output(&mut rng), ""),
        );
        for order in ["sortOptions:\n  order: fifo\n", ""] {
            write(
                &tree,
                "kustomization.yaml",
                &format!(
                    "{}resources:\n- a.yaml\n- b.yaml\nconfigMapGenerator:\n- name: gen\n  literals: [k=v]\ntransformers:\n- fn.yaml\n{order}",
                    case.prefix
                ),
            );
            bench.same(&tree, &format!("seed {seed}, order {order:?}"));
        }
    }
}

/// Kinds the seeded cases draw from: apiVersion, kind, namespaced.
const KINDS: [(&str, &str, bool); 6] = [
    ("v1", "ConfigMap", true),
    ("v1", "Secret", true),
    ("v1", "Service", true),
    ("apps/v1", "Deployment", true),
    ("rbac.authorization.k8s.io/v1", "ClusterRole", false),
    ("v1", "Namespace", false),
];

/// One seeded case: resources in two files, maybe a name prefix.
struct SeededCase {
    /// (kind index, name, namespace, file).
    resources: Vec<(usize, String, String, usize)>,
    /// A `namePrefix:` line, or nothing.
    prefix: String,
}

impl SeededCase {
    fn new(rng: &mut Rng) -> SeededCase {
        let count = 3 + rng.below(5);
        let resources = (0..count)
            .map(|i| {
                let kind = rng.below(KINDS.len());
                let namespace = if KINDS[kind].2 && rng.below(3) == 0 {
                    "ns1".to_string()
                } else {
                    String::new()
                };
                (kind, format!("r{i}"), namespace, rng.below(2))
            })
            .collect();
        let prefix = if rng.below(2) == 0 {
            "namePrefix: p-\n".to_string()
        } else {
            String::new()
        };
        SeededCase { resources, prefix }
    }

    /// The text of file `file`.
    fn file(&self, file: usize) -> String {
        let docs: Vec<String> = self
            .resources
            .iter()
            .filter(|r| r.3 == file)
            .map(|(kind, name, namespace, _)| {
                let (api_version, kind, _) = KINDS[*kind];
                item(api_version, kind, name, namespace, "")
                    .lines()
                    .map(|l| format!("{}\n", l.get(2..).unwrap_or_default()))
                    .collect()
            })
            .collect();
        if docs.is_empty() {
            "[]\n".to_string()
        } else {
            docs.join("---\n")
        }
    }

    /// What the function prints: the decisions drawn from `rng`.
    fn output(&self, rng: &mut Rng) -> String {
        let prefix = if self.prefix.is_empty() { "" } else { "p-" };
        let mut items: Vec<String> = Vec::new();
        let current = self
            .resources
            .iter()
            .map(|(kind, name, namespace, _)| (*kind, format!("{prefix}{name}"), namespace.clone()))
            .chain([(0, format!("{prefix}gen"), String::new())]);
        for (sent, (kind, name, namespace)) in current.enumerate() {
            let (api_version, kind_name, namespaced) = KINDS[kind];
            // Annotations a function passing items through returns (an id,
            // sometimes wrong: matching ignores it) and build records.
            let mut annotations = String::new();
            if rng.below(3) == 0 {
                let id = if rng.below(2) == 0 {
                    sent + 1
                } else {
                    rng.below(9) + 1
                };
                annotations.push_str(&format!("      config.k8s.io/id: '{id}'\n"));
            }
            let mut rest = String::new();
            if name.ends_with("gen") {
                rest.push_str("  data:\n    k: v\n");
                if rng.below(2) == 0 {
                    annotations
                        .push_str("      internal.config.kubernetes.io/needsHashSuffix: enabled\n");
                }
            }
            let mut extra = String::new();
            if !annotations.is_empty() {
                extra = format!("    annotations:\n{annotations}");
            }
            if rng.below(3) == 0 {
                extra.push_str("    labels:\n      changed: \"yes\"\n");
            }
            extra.push_str(&rest);
            let extra = extra.as_str();
            match rng.below(10) {
                0 | 1 => {}
                2 | 3 => items.push(item(
                    api_version,
                    kind_name,
                    &format!("{name}-renamed"),
                    &namespace,
                    extra,
                )),
                4 if namespaced => items.push(item(api_version, kind_name, &name, "ns2", extra)),
                _ => items.push(item(api_version, kind_name, &name, &namespace, extra)),
            }
        }
        for i in 0..rng.below(3) {
            let (api_version, kind, namespaced) = KINDS[rng.below(KINDS.len())];
            let namespace = if namespaced && rng.below(2) == 0 {
                "ns1"
            } else {
                ""
            };
            items.push(item(api_version, kind, &format!("new{i}"), namespace, ""));
        }
        for i in (1..items.len()).rev() {
            items.swap(i, rng.below(i + 1));
        }
        items.concat()
    }
}

/// The list a function got and its environment, as the `echo` function
/// reported them in a build's output.
struct Seen {
    /// Each item, and then the functionConfig, in Go's JSON form (keys
    /// sorted): the values, whatever the layout.
    input: Vec<String>,
    /// The environment, without the container's host name.
    env: Vec<String>,
}

fn seen(output: &str) -> Seen {
    let doc = krusty_yaml::parse_stream(output)
        .expect("output is YAML")
        .into_iter()
        .find_map(|d| d.root)
        .expect("one document");
    let data = |key: &str| {
        doc.get("data")
            .and_then(|d| d.get(key))
            .and_then(krusty_yaml::Node::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let list = krusty_yaml::parse_stream(&data("input"))
        .expect("the input list is YAML")
        .into_iter()
        .find_map(|d| d.root)
        .expect("an input list");
    let mut input: Vec<String> = list
        .get("items")
        .and_then(krusty_yaml::Node::as_seq)
        .map(|items| items.iter().map(krusty_yaml::to_go_json).collect())
        .unwrap_or_default();
    input.extend(list.get("functionConfig").map(krusty_yaml::to_go_json));
    let mut env: Vec<String> = data("env")
        .lines()
        .filter(|l| !l.starts_with("HOSTNAME="))
        .map(str::to_string)
        .collect();
    env.sort();
    Seen { input, env }
}

/// The function gets the same items with the same annotations (Kustomize's
/// build records, the item's identity and position) and the same
/// environment: resources from several files and a base, generated ones,
/// renamed ones, a function config by path and inline.
#[test]
fn functions_get_the_items_annotations_and_environment_kustomize_sends() {
    let Some(bench) = Bench::new("echo") else {
        return;
    };
    let image = bench.image("echo");
    let tree = bench.dir.join("t");
    write(
        &tree,
        "base/kustomization.yaml",
        "namePrefix: bp-\nnamespace: bns\nresources:\n- svc.yaml\nconfigMapGenerator:\n- name: g\n  behavior: create\n  literals: [a=b]\n- name: g2\n  options:\n    disableNameSuffixHash: true\n  literals: [a=b]\n",
    );
    write(
        &tree,
        "base/svc.yaml",
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: svc\n---\napiVersion: v1\nkind: Service\nmetadata:\n  name: svc2\n  annotations:\n    keep: me\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: cr\n",
    );
    write(
        &tree,
        "app/a.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: v\n---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n",
    );
    write(
        &tree,
        "app/b.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n  namespace: ns1\n",
    );
    let function = format!(
        "apiVersion: example.com/v1\nkind: Echo\nmetadata:\n  name: echo\n  annotations:\n    config.kubernetes.io/function: |\n      container:\n        image: {image}\nspec:\n  x: 1\n"
    );
    write(&tree, "app/fn.yaml", &function);
    let inline: String = function.lines().map(|l| format!("  {l}\n")).collect();
    let common = "namePrefix: ap-\nresources:\n- ../base\n- a.yaml\n- b.yaml\nconfigMapGenerator:\n- name: gen\n  literals: [x=y]\npatches:\n- target: {kind: Service, name: bp-svc}\n  patch: |-\n    - op: replace\n      path: /metadata/name\n      value: renamed\n";
    for (how, transformers) in [
        ("by path", "transformers:\n- fn.yaml\n".to_string()),
        ("inline", format!("transformers:\n- |-\n{inline}")),
        // With build metadata, each item also carries its origin and
        // transformation records.
        (
            "with build metadata",
            "transformers:\n- fn.yaml\nbuildMetadata: [originAnnotations, transformerAnnotations]\n"
                .to_string(),
        ),
    ] {
        write(
            &tree,
            "app/kustomization.yaml",
            &format!("{common}{transformers}"),
        );
        let want = bench.kubectl(&tree.join("app"));
        assert!(want.status.success(), "{how}: {}", text(&want.stderr));
        let got = bench.krusty(&tree.join("app"));
        assert!(got.status.success(), "{how}: {}", text(&got.stderr));
        let (want, got) = (seen(&text(&want.stdout)), seen(&text(&got.stdout)));
        assert_eq!(want.input.len(), 10, "{how}: {:?}", want.input);
        for (w, g) in want.input.iter().zip(&got.input) {
            assert_eq!(w, g, "{how}: kubectl sent the first, krusty the second");
        }
        assert_eq!(want.input.len(), got.input.len(), "{how}");
        assert_eq!(want.env, got.env, "{how}: the environment differs");
    }
}

/// A function that succeeds may write on stderr: the user sees it. A
/// result of unknown severity is reported (krusty: as a warning) and does
/// not fail the build.
#[test]
fn stderr_reaches_the_user_and_unknown_severities_are_not_fatal() {
    let Some(bench) = Bench::new("stderr") else {
        return;
    };
    let image = bench.image("stderr");
    let tree = bench.dir.join("k");
    let items = item("v1", "ConfigMap", "a", "", "");
    let results = "results:\n- message: odd one\n  severity: bogus\n";
    write(&tree, "fn.yaml", &config_function(&image, &items, results));
    write(&tree, "kustomization.yaml", "transformers:\n- fn.yaml\n");
    let (_, kubectl_err, krusty_err) = bench.same(&tree, "stderr");
    assert_eq!(kubectl_err, "a note from the function\n");
    assert!(
        krusty_err.contains("a note from the function\n"),
        "{krusty_err}"
    );
    assert!(
        krusty_err.contains("[warning]: odd one (unknown severity 'bogus', read as a warning)"),
        "{krusty_err}"
    );
}

/// An exec function's path is relative to the kustomization's directory
/// and may lead anywhere, as in Kustomize: the load restrictor is about
/// what a build reads, and `--enable-exec` is the user's trust in what it
/// runs. (kubectl has no `--enable-exec`, so there is no side-by-side
/// check.)
#[test]
fn exec_paths_are_relative_to_the_kustomization_and_not_restricted() {
    let dir = support::scratch("functions-fidelity", "exec-paths");
    write(&dir, "fns/pass.sh", "#!/bin/sh\ncat\n");
    chmod_x(&dir.join("fns/pass.sh"));
    let root = dir.join("k");
    write(
        &root,
        "res.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n",
    );
    write(
        &root,
        "kustomization.yaml",
        "resources:\n- res.yaml\ntransformers:\n- fn.yaml\n",
    );
    let absolute = dir.join("fns/pass.sh").display().to_string();
    let build = |path: &str| {
        write(
            &root,
            "fn.yaml",
            &format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fn\nruntime:\n  exec:\n    path: {path}\n"),
        );
        // Run from elsewhere: the path does not depend on the working
        // directory.
        support::krusty_command()
            .args(["build", "--enable-alpha-plugins", "--enable-exec"])
            .arg(&root)
            .current_dir("/")
            .output()
            .expect("krusty runs")
    };
    for path in ["../fns/pass.sh", absolute.as_str()] {
        let out = build(path);
        assert!(out.status.success(), "{path}: {}", text(&out.stderr));
        assert_eq!(
            text(&out.stdout),
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n"
        );
    }
    let out = build("./fns/pass.sh");
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(
        err.contains("exec path './fns/pass.sh' (relative to")
            && err.contains("no such file or directory"),
        "{err}"
    );
    let out = build("../fns");
    assert!(
        text(&out.stderr).contains("is a directory"),
        "{}",
        text(&out.stderr)
    );
}

/// What Kustomize removes from returned items (its own annotations, build
/// records, `buildMetadata` annotations) and what it keeps (other
/// `internal.` annotations, generator options on a transformer's output);
/// legacy and internal annotations that disagree fail the build.
#[test]
fn returned_annotations_are_removed_as_kustomize_removes_them() {
    let Some(bench) = Bench::new("returned-annotations") else {
        return;
    };
    let image = bench.image("config");
    let tree = bench.dir.join("k");
    write(
        &tree,
        "res.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n",
    );
    write(
        &tree,
        "kustomization.yaml",
        "resources:\n- res.yaml\ntransformers:\n- fn.yaml\n",
    );
    let annotations = [
        "config.kubernetes.io/path: foo.yaml",
        "internal.config.kubernetes.io/path: foo.yaml",
        "config.kubernetes.io/index: '3'",
        "internal.config.kubernetes.io/foo: x",
        "internal.config.kubernetes.io/bar: x",
        "internal.config.kubernetes.io/refBy: x",
        "internal.config.kubernetes.io/seqindent: compact",
        "internal.config.kubernetes.io/allowNameChange: allowed",
        "internal.config.kubernetes.io/annotations-migration-resource-id: '7'",
        "internal.config.kubernetes.io/prefixes: p-",
        "kustomize.config.k8s.io/id: 'kind: Nope'",
        "config.k8s.io/id: '9'",
        "config.kubernetes.io/id: '3'",
        "kustomize.config.k8s.io/needs-hash: \"true\"",
        "kustomize.config.k8s.io/behavior: merge",
        "config.kubernetes.io/origin: 'path: x.yaml'",
        "alpha.config.kubernetes.io/transformations: x",
        "config.kubernetes.io/local-config: \"false\"",
    ];
    let extra: String = annotations.iter().map(|a| format!("      {a}\n")).collect();
    let items = [
        item(
            "v1",
            "ConfigMap",
            "a",
            "",
            &format!("    annotations:\n{extra}"),
        ),
        item(
            "v1",
            "ConfigMap",
            "local",
            "",
            "    annotations:\n      config.kubernetes.io/local-config: \"true\"\n",
        ),
    ]
    .concat();
    write(&tree, "fn.yaml", &config_function(&image, &items, ""));
    let (out, _, _) = bench.same(&tree, "returned annotations");
    assert!(
        out.contains("internal.config.kubernetes.io/foo: x"),
        "{out}"
    );

    let mismatched = item(
        "v1",
        "ConfigMap",
        "a",
        "",
        "    annotations:\n      config.kubernetes.io/path: a.yaml\n      internal.config.kubernetes.io/path: b.yaml\n",
    );
    write(&tree, "fn.yaml", &config_function(&image, &mismatched, ""));
    let want = bench.kubectl(&tree);
    assert!(!want.status.success());
    let want_err = text(&want.stderr);
    let message = "mismatched legacy and internal path annotations";
    assert!(want_err.contains(message), "{want_err}");
    let got = bench.krusty(&tree);
    assert!(!got.status.success());
    assert!(text(&got.stderr).contains(message), "{}", text(&got.stderr));
}

/// A generator's items are added as Kustomize adds them: the public
/// `needs-hash` and `behavior` options, the internal `needsHashSuffix`
/// record, merging into an existing ConfigMap; under fifo and legacy order.
#[test]
fn generator_output_is_added_like_kustomize() {
    let Some(bench) = Bench::new("generator") else {
        return;
    };
    let image = bench.image("config");
    let tree = bench.dir.join("k");
    write(
        &tree,
        "res.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: v\n---\napiVersion: v1\nkind: Service\nmetadata:\n  name: s\n",
    );
    let items = [
        item(
            "v1",
            "ConfigMap",
            "z",
            "",
            "    annotations:\n      kustomize.config.k8s.io/needs-hash: \"true\"\n  data: {a: b}\n",
        ),
        item(
            "v1",
            "ConfigMap",
            "a",
            "",
            "    annotations:\n      kustomize.config.k8s.io/behavior: merge\n  data: {m: n}\n",
        ),
        item(
            "v1",
            "ConfigMap",
            "h",
            "",
            "    annotations:\n      internal.config.kubernetes.io/needsHashSuffix: enabled\n      internal.config.kubernetes.io/foo: x\n      config.kubernetes.io/path: foo.yaml\n  data: {a: c}\n",
        ),
        item("v1", "Secret", "b", "", ""),
    ]
    .concat();
    write(&tree, "fn.yaml", &config_function(&image, &items, ""));
    for order in ["", "sortOptions:\n  order: fifo\n"] {
        write(
            &tree,
            "kustomization.yaml",
            &format!("resources:\n- res.yaml\ngenerators:\n- fn.yaml\n{order}"),
        );
        bench.same(&tree, &format!("generator, order {order:?}"));
    }
}

/// Name references follow a rename a function reports in the earlier
/// names it returns an item with, and only then.
#[test]
fn name_references_follow_the_earlier_names_an_item_comes_back_with() {
    let Some(bench) = Bench::new("references") else {
        return;
    };
    let image = bench.image("config");
    let tree = bench.dir.join("k");
    write(
        &tree,
        "res.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n",
    );
    let items = [
        item(
            "v1",
            "ConfigMap",
            "a2",
            "",
            "    annotations:\n      internal.config.kubernetes.io/previousNames: a\n      internal.config.kubernetes.io/previousKinds: ConfigMap\n      internal.config.kubernetes.io/previousNamespaces: default\n",
        ),
        item("v1", "ConfigMap", "b2", "", ""),
        item(
            "apps/v1",
            "Deployment",
            "d",
            "",
            "  spec:\n    template:\n      spec:\n        volumes:\n        - name: v\n          configMap:\n            name: a\n        - name: w\n          configMap:\n            name: b\n",
        ),
    ]
    .concat();
    write(&tree, "fn.yaml", &config_function(&image, &items, ""));
    write(
        &tree,
        "kustomization.yaml",
        "resources:\n- res.yaml\ntransformers:\n- fn.yaml\n",
    );
    let (out, _, _) = bench.same(&tree, "references");
    assert!(out.contains("name: a2\n        name: v"), "{out}");
}
