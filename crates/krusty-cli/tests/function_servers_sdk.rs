//! KRM function spec v2 with the SDK's example functions
//! (`crates/krusty-fn-examples`): as exec servers over HTTP and gRPC
//! (unix sockets), and as podman images whose
//! `config.kubernetes.io/function-definition` label says they conform to
//! spec v2. Every run gives the output of the same kustomization run as
//! spec v1, byte for byte; a chain of calls starts one server (counted:
//! a wrapper's log for exec servers, podman's events for containers);
//! `kubectl kustomize` runs the labelled images as spec v1 with the same
//! output; and no krusty run leaves a container behind (`podman ps -a`
//! shows none of its containers after it, whether it succeeded, failed or
//! was interrupted).

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

mod support;
use support::examples::{example, fixture, read};
use support::podman::{docker_shim, kubectl_kustomize, with_podman_conf};
use support::{available, skip, text, wait_until, write};

fn scratch(name: &str) -> PathBuf {
    support::scratch("function-servers-sdk", name)
}

/// Examples and the fixture case each runs, with the field that lists it.
const EXAMPLES: [(&str, &str, &str); 5] = [
    (
        "krm-configmap-generator",
        "configmap-generator/plain",
        "generators",
    ),
    ("krm-set-labels", "set-labels/with-selector", "transformers"),
    ("krm-inject-sidecar", "inject-sidecar/basic", "transformers"),
    (
        "krm-set-annotations",
        "set-annotations/basic",
        "transformers",
    ),
    ("krm-image-policy", "image-policy/clean", "validators"),
];

/// The fixture's config named `name`, with `runtime` (YAML for the
/// function annotation) and, given, the spec v2 opt-in annotation.
fn config(case: &str, name: &str, runtime: &str, server: Option<&str>) -> String {
    // A fixture without a config: the function needs none.
    let config = std::fs::read_to_string(fixture(case).join("fn-config.yaml"))
        .unwrap_or_else(|_| "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: none\n".into());
    let runtime: String = runtime.lines().map(|l| format!("      {l}\n")).collect();
    let opt_in = server.map_or(String::new(), |p| {
        format!("    krusty.dev/function-server: {p}\n")
    });
    let annotation =
        format!("  annotations:\n{opt_in}    config.kubernetes.io/function: |\n{runtime}");
    let (head, rest) = config.split_once("metadata:\n").expect("metadata");
    let (_name_line, tail) = rest.split_once('\n').expect("name line");
    format!("{head}metadata:\n  name: {name}\n{annotation}{tail}")
}

/// A kustomization in `dir` over the fixture's input with `calls` calls
/// of the function in `field`.
fn kustomization(
    dir: &Path,
    case: &str,
    field: &str,
    runtime: &str,
    server: Option<&str>,
    calls: usize,
) {
    write(
        dir,
        "resources.yaml",
        &read(&fixture(case).join("input.yaml")),
    );
    let mut k = format!("resources:\n- resources.yaml\n{field}:\n");
    for i in 0..calls {
        write(
            dir,
            &format!("fn-{i}.yaml"),
            &config(case, &format!("fn-{i}"), runtime, server),
        );
        k.push_str(&format!("- fn-{i}.yaml\n"));
    }
    write(dir, "kustomization.yaml", &k);
}

/// `krusty build` in `dir`; no container of that krusty is left after it.
fn krusty(dir: &Path, args: &[&str]) -> Output {
    let child = with_podman_conf(support::krusty_command())
        .args(["build", "--enable-alpha-plugins", "--enable-exec"])
        .args(args)
        .arg(".")
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("krusty runs");
    let pid = child.id();
    let out = child.wait_with_output().expect("krusty ends");
    assert_eq!(containers_of(pid), "", "containers left by krusty");
    out
}

/// The containers (any state) that krusty process `pid` started and left;
/// empty when podman cannot be asked.
fn containers_of(pid: u32) -> String {
    with_podman_conf(Command::new("podman"))
        .args(["ps", "-a", "--format", "{{.Names}}", "--filter"])
        .arg(format!("name=^krusty-fn-{pid}-"))
        .output()
        .map(|o| text(&o.stdout).trim().to_string())
        .unwrap_or_default()
}

fn built(dir: &Path, args: &[&str], what: &str) -> String {
    let out = krusty(dir, args);
    assert!(out.status.success(), "{what}: {}", text(&out.stderr));
    text(&out.stdout)
}

/// A wrapper around `bin` that logs each start to `dir/starts.log`.
fn counting_wrapper(dir: &Path, bin: &str) -> PathBuf {
    let path = dir.join(format!("bin/{bin}"));
    write(
        dir,
        &format!("bin/{bin}"),
        &format!(
            "#!/bin/sh\necho \"$*\" >> {}\nexec {} \"$@\"\n",
            dir.join("starts.log").display(),
            example(bin).display()
        ),
    );
    std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("chmod");
    path
}

/// The fixture case the container tests run.
const SET_ANNOTATIONS: &str = "set-annotations/basic";

/// A kustomization in `tree` over the [`SET_ANNOTATIONS`] fixture with
/// `calls` transformer calls of the function `runtime` describes (with the
/// opt-in annotation `server`, given).
fn set_annotations_calls(tree: &Path, runtime: &str, server: Option<&str>, calls: usize) {
    kustomization(
        tree,
        SET_ANNOTATIONS,
        "transformers",
        runtime,
        server,
        calls,
    );
}

/// The runtime YAML of the exec function at `path`.
fn exec_runtime(path: &Path) -> String {
    format!("exec:\n  path: {}\n", path.display())
}

/// The runtime YAML of a container function running `image`.
fn container_runtime(image: &str) -> String {
    format!("container:\n  image: {image}\n")
}

/// The server starts the wrapper logged (calls with an address flag).
fn server_starts(dir: &Path) -> usize {
    std::fs::read_to_string(dir.join("starts.log"))
        .unwrap_or_default()
        .lines()
        .filter(|l| l.contains("-addr unix://"))
        .count()
}

#[test]
fn examples_as_exec_servers_over_http_and_grpc_give_the_v1_output() {
    for (bin, case, field) in EXAMPLES {
        let dir = scratch(&format!("exec-{bin}"));
        let wrapper = counting_wrapper(&dir, bin);
        let runtime = exec_runtime(&wrapper);
        // Generators run once (a second would make the same names).
        let calls = if field == "generators" { 1 } else { 3 };
        kustomization(&dir, case, field, &runtime, None, calls);
        let v1 = built(&dir, &[], bin);
        assert_eq!(server_starts(&dir), 0);
        for (protocol, started) in [("http", 1), ("grpc", 2)] {
            kustomization(&dir, case, field, &runtime, Some(protocol), calls);
            let v2 = built(&dir, &[], &format!("{bin} over {protocol}"));
            assert_eq!(v2, v1, "{bin} over {protocol}: not the v1 output");
            assert_eq!(
                server_starts(&dir),
                started,
                "{bin} over {protocol}: one server"
            );
        }
    }
}

#[test]
fn a_failing_call_on_a_server_fails_the_build_with_its_results() {
    let dir = scratch("exec-violations");
    let case = "image-policy/violations";
    let runtime = exec_runtime(&example("krm-image-policy"));
    kustomization(&dir, case, "validators", &runtime, None, 1);
    let v1 = krusty(&dir, &[]);
    assert!(!v1.status.success());
    for protocol in ["http", "grpc"] {
        kustomization(&dir, case, "validators", &runtime, Some(protocol), 1);
        let v2 = krusty(&dir, &[]);
        assert!(!v2.status.success(), "{protocol}");
        let stderr = text(&v2.stderr);
        assert!(
            stderr.contains("uses the latest tag"),
            "{protocol}: {stderr}"
        );
    }
}

/// podman, or a loud skip.
fn podman_ready() -> bool {
    let ready = support::podman::podman_works();
    if !ready {
        skip("podman cannot run containers here: container servers are not tested");
    }
    ready
}

/// `podman ARGS` with the podman settings; its stdout, failing the test
/// when it fails.
fn podman(args: &[&str]) -> String {
    support::run(with_podman_conf(Command::new("podman")).args(args))
}

/// Packages `bin` as `image` with the SDK's script, then each `labelled`
/// image (tag, definition, extra Containerfile lines) from it with the
/// definition label.
fn package(dir: &Path, bin: &str, image: &str, labelled: &[(&str, &str, &str)]) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../krusty-fn/scripts/package.sh");
    let out = with_podman_conf(Command::new(script))
        .arg("--prebuilt")
        .arg(example(bin))
        .args(["--cli", "podman", bin, image])
        .output()
        .expect("package.sh runs");
    assert!(out.status.success(), "package.sh: {}", text(&out.stderr));
    for (tag, definition, entrypoint) in labelled {
        let context = dir.join(format!("image-{}", tag.replace([':', '/'], "_")));
        let escaped = definition.replace('"', "\\\"");
        write(
            &context,
            "Containerfile",
            &format!(
                "FROM {image}\nLABEL config.kubernetes.io/function-definition=\"{escaped}\"\n{entrypoint}"
            ),
        );
        podman(&["build", "-q", "-t", tag, &context.to_string_lossy()]);
    }
}

/// The definition of a function conforming to `specs`, served over
/// `protocols` (krusty's `serverProtocols`; none: HTTP).
fn definition(specs: &str, protocols: &str) -> String {
    format!(
        "{{\"apiVersion\":\"config.kubernetes.io/v1alpha1\",\"kind\":\"KRMFunctionDefinition\",\"spec\":{{\"group\":\"fn.krusty.dev\",\"names\":{{\"kind\":\"AnnotationSetter\"}},\"versions\":[{{\"name\":\"v1\",\"conformWithSpecVersions\":[{specs}]{protocols}}}]}}}}"
    )
}

/// How many containers of `image` podman started since `since` (Unix
/// time, seconds and nanoseconds), once `expected` (podman may record
/// events a little late) or after a few seconds.
fn container_starts(image: &str, since: &str, expected: usize) -> usize {
    let mut seen = 0;
    for _ in 0..20 {
        seen = started_containers(image, since);
        if seen >= expected {
            break;
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    seen
}

fn started_containers(image: &str, since: &str) -> usize {
    let until = now()
        .split('.')
        .next()
        .unwrap_or("0")
        .parse::<u64>()
        .unwrap_or(0)
        + 1;
    podman(&[
        "events",
        "--stream=false",
        "--since",
        since,
        "--until",
        &until.to_string(),
        "--filter",
        "event=start",
    ])
    .lines()
    .filter(|l| l.contains("container start") && l.contains(&format!("(image={image},")))
    .count()
}

/// The time, as `seconds.nanoseconds` since the Unix epoch.
fn now() -> String {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock");
    format!("{}.{:09}", t.as_secs(), t.subsec_nanos())
}

#[test]
fn labelled_images_run_as_container_servers_with_the_v1_output() {
    if !podman_ready() {
        return;
    }
    let dir = scratch("images");
    let base = "localhost/krusty-test/v2srv-set-annotations:v1";
    let http = "localhost/krusty-test/v2srv-set-annotations:http";
    let grpc = "localhost/krusty-test/v2srv-set-annotations:grpc";
    let http_def = definition("\"v2\",\"v1\"", "");
    let grpc_def = definition("\"v2\",\"v1\"", ",\"serverProtocols\":[\"grpc\"]");
    package(
        &dir,
        "krm-set-annotations",
        base,
        &[(http, &http_def, ""), (grpc, &grpc_def, "")],
    );
    let tree = dir.join("tree");
    // The image without the label runs as spec v1, one container a call.
    set_annotations_calls(&tree, &container_runtime(base), None, 10);
    let since = now();
    let v1 = built(&tree, &[], "v1");
    assert_eq!(container_starts(base, &since, 10), 10);
    for image in [http, grpc] {
        set_annotations_calls(&tree, &container_runtime(image), None, 10);
        let since = now();
        let v2 = built(&tree, &[], image);
        assert_eq!(v2, v1, "{image}: not the v1 output");
        assert_eq!(
            container_starts(image, &since, 1),
            1,
            "{image}: one container for 10 calls"
        );
    }
    // The opt-in annotation chooses gRPC for an image that says only v2.
    set_annotations_calls(&tree, &container_runtime(http), Some("grpc"), 10);
    assert_eq!(built(&tree, &[], "grpc by annotation"), v1);
    // Fifty calls: one container, the output of the executable run fifty
    // times as spec v1.
    let exec = exec_runtime(&example("krm-set-annotations"));
    set_annotations_calls(&tree, &exec, None, 50);
    let exec_v1 = built(&tree, &[], "fifty exec v1 calls");
    set_annotations_calls(&tree, &container_runtime(http), None, 50);
    let since = now();
    assert_eq!(built(&tree, &[], "fifty container v2 calls"), exec_v1);
    assert_eq!(
        container_starts(http, &since, 1),
        1,
        "one container for 50 calls"
    );

    if !available("kubectl", &["version", "--client"]) {
        return skip("kubectl is not installed: the labelled image is not run under kubectl");
    }
    // Kustomize runs the labelled image, with the opt-in annotation, as
    // spec v1: the same output.
    let shim = docker_shim(&dir);
    set_annotations_calls(&tree, &container_runtime(http), Some("http"), 3);
    let kubectl = kubectl_kustomize(&tree, &shim);
    assert!(kubectl.status.success(), "{}", text(&kubectl.stderr));
    assert_eq!(built(&tree, &[], "three calls"), text(&kubectl.stdout));
}

#[test]
fn a_v2_only_image_whose_server_never_gets_ready_fails_with_its_stderr() {
    if !podman_ready() {
        return;
    }
    let dir = scratch("never-ready");
    let base = "localhost/krusty-test/v2srv-broken:v1";
    let broken = "localhost/krusty-test/v2srv-broken:v2-only";
    // Its entrypoint gives the function an argument besides the address
    // krusty adds: the server refuses to start.
    let entrypoint = "ENTRYPOINT [\"/fn\", \"/nope\"]\n";
    package(
        &dir,
        "krm-set-annotations",
        base,
        &[(broken, &definition("\"v2\"", ""), entrypoint)],
    );
    let tree = dir.join("tree");
    set_annotations_calls(&tree, &container_runtime(broken), None, 2);
    let since = now();
    let out = krusty(&tree, &[]);
    assert!(!out.status.success());
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("does not support spec v1") && stderr.contains("take no other arguments"),
        "{stderr}"
    );
    assert_eq!(
        container_starts(broken, &since, 2),
        2,
        "started twice, then given up"
    );
}

#[test]
fn every_example_fixture_gives_the_same_output_as_v1_over_http_and_grpc() {
    let fixtures =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../krusty-fn-examples/tests/fixtures");
    let mut cases: Vec<(String, String)> = Vec::new();
    for function in support::cases(&fixtures) {
        for case in support::cases(&function.dir) {
            cases.push((function.name.clone(), case.name));
        }
    }
    assert!(cases.len() >= 15, "{cases:?}");
    for (function, case) in cases {
        let bin = format!("krm-{function}");
        let fixture_case = format!("{function}/{case}");
        let dir = scratch(&format!("fixture-{function}-{case}"));
        let runtime = exec_runtime(&example(&bin));
        kustomization(&dir, &fixture_case, "transformers", &runtime, None, 1);
        let v1 = krusty(&dir, &[]);
        for protocol in ["http", "grpc"] {
            kustomization(
                &dir,
                &fixture_case,
                "transformers",
                &runtime,
                Some(protocol),
                1,
            );
            let v2 = krusty(&dir, &[]);
            assert_eq!(
                (v2.status.success(), text(&v2.stdout)),
                (v1.status.success(), text(&v1.stdout)),
                "{fixture_case} over {protocol}: {}",
                text(&v2.stderr)
            );
        }
    }
}

#[test]
fn an_interrupt_removes_the_server_container() {
    if !podman_ready() {
        return;
    }
    let dir = scratch("interrupt");
    let base = "localhost/krusty-test/v2srv-interrupt:v1";
    let http = "localhost/krusty-test/v2srv-interrupt:http";
    package(
        &dir,
        "krm-set-annotations",
        base,
        &[(http, &definition("\"v2\",\"v1\"", ""), "")],
    );
    let tree = dir.join("tree");
    set_annotations_calls(&tree, &container_runtime(http), None, 50);
    // A list long enough for fifty calls to take a while.
    let mut input = String::new();
    for i in 0..3000 {
        input.push_str(&format!(
            "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-{i}\ndata:\n  k: v\n"
        ));
    }
    write(&tree, "resources.yaml", &input);
    let child = with_podman_conf(support::krusty_command())
        .args(["build", "--enable-alpha-plugins", "."])
        .current_dir(&tree)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("krusty runs");
    let pid = child.id();
    wait_until(Duration::from_secs(60), Duration::from_millis(100), || {
        !containers_of(pid).is_empty()
    });
    assert_ne!(containers_of(pid), "", "the server container started");
    // SAFETY: kill(2) on the child this test started.
    unsafe {
        libc::kill(pid as libc::pid_t, libc::SIGTERM);
    }
    let out = child.wait_with_output().expect("krusty ends");
    assert_eq!(
        out.status.code(),
        Some(128 + libc::SIGTERM),
        "{}",
        text(&out.stderr)
    );
    assert!(
        text(&out.stderr).contains("removing function server container"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(
        containers_of(pid),
        "",
        "containers left after the interrupt"
    );
}

/// A function server behind `tests/fixtures/v2-wire/proxy.py`, which logs
/// the `Content-Type` and `Accept` of each request to `dir/wire.log`: an
/// exec runtime for `program` (`PROGRAM ARG...`).
fn logging_proxy(dir: &Path, name: &str, program: &[&str]) -> PathBuf {
    let proxy = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/v2-wire/proxy.py");
    let quoted: Vec<String> = program.iter().map(|a| format!("'{a}'")).collect();
    let rel = format!("bin/{name}");
    write(
        dir,
        &rel,
        &format!(
            "#!/bin/sh\nexec python3 '{}' '{}' {} \"$@\"\n",
            proxy.display(),
            dir.join("wire.log").display(),
            quoted.join(" ")
        ),
    );
    let path = dir.join(rel);
    std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("chmod");
    path
}

/// The requests a logging proxy saw: each one's header lines.
fn requests_seen(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join("wire.log"))
        .unwrap_or_default()
        .split("--\n")
        .filter(|r| !r.is_empty())
        .map(str::to_string)
        .collect()
}

#[test]
fn sdk_servers_get_the_binary_encoding_and_other_servers_yaml_with_the_v1_output() {
    if !available("python3", &["-c", "import yaml"]) {
        return skip("python3 with PyYAML is missing");
    }
    let resources = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a # kept\n  annotations:\n    note: 'quoted: yes'\ndata:\n  list: |\n    one\n    two\n  flow: '{a: b}'\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 2\n  template:\n    spec:\n      containers: [{name: web, image: nginx}]\n";
    let runtime_config = |name: &str, path: &Path, server: Option<&str>| {
        let opt_in = server.map_or(String::new(), |p| {
            format!("    krusty.dev/function-server: {p}\n")
        });
        format!(
            "apiVersion: fn.krusty.dev/v1\nkind: SetLabels\nmetadata:\n  name: {name}\n  annotations:\n{opt_in}    config.kubernetes.io/function: |\n      exec:\n        path: {}\nlabels:\n  team: web\nfieldSpecs:\n- path: metadata/labels\n  create: true\n",
            path.display()
        )
    };
    let tree = |dir: &Path, path: &Path, server: Option<&str>| {
        write(dir, "resources.yaml", resources);
        let mut k = String::from("resources:\n- resources.yaml\ntransformers:\n");
        for i in 0..3 {
            write(
                dir,
                &format!("fn-{i}.yaml"),
                &runtime_config(&format!("fn-{i}"), path, server),
            );
            k.push_str(&format!("- fn-{i}.yaml\n"));
        }
        write(dir, "kustomization.yaml", &k);
    };
    let v1_dir = scratch("wire-v1");
    tree(&v1_dir, &example("krm-set-labels"), None);
    let v1 = built(&v1_dir, &[], "krm-set-labels as spec v1");
    assert!(v1.contains("team: web"), "{v1}");

    // The SDK's server: asked for the binary encoding first, it answers in
    // it, and gets it from the second call on.
    let sdk = scratch("wire-sdk");
    let sdk_bin = example("krm-set-labels");
    let proxied = logging_proxy(&sdk, "set-labels", &[sdk_bin.to_str().unwrap()]);
    tree(&sdk, &proxied, Some("http"));
    assert_eq!(built(&sdk, &[], "the SDK's server"), v1);
    let seen = requests_seen(&sdk);
    assert_eq!(seen.len(), 3, "{seen:?}");
    assert!(
        seen[0].contains("Content-Type: text/yaml\n")
            && seen[0].contains("Accept: application/vnd.krusty.node, text/yaml;q=0.9\n"),
        "{seen:?}"
    );
    for later in &seen[1..] {
        assert!(
            later.contains("Content-Type: application/vnd.krusty.node\n"),
            "{seen:?}"
        );
    }

    // A server without it (Python, no SDK): YAML every time, the same output.
    let other = scratch("wire-python");
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../krusty-fn/tests/python/krm_v2_http.py");
    let proxied = logging_proxy(&other, "set-labels", &["python3", script.to_str().unwrap()]);
    tree(&other, &proxied, Some("http"));
    assert_eq!(built(&other, &[], "the Python server"), v1);
    let seen = requests_seen(&other);
    assert_eq!(seen.len(), 3, "{seen:?}");
    assert!(
        seen.iter().all(|r| r.contains("Content-Type: text/yaml\n")),
        "{seen:?}"
    );
    assert!(
        seen[1..].iter().all(|r| r.contains("Accept: text/yaml\n")),
        "{seen:?}"
    );
}
