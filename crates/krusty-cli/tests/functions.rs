//! KRM functions end to end, with real components: the example functions
//! (built by `cargo test --workspace` into the same target directory) run
//! as exec functions and, packaged as images, as podman containers; the
//! same functions and inputs go through `kpt fn eval --exec` and through
//! `kubectl kustomize --enable-alpha-plugins` as cross-checks. Tests that
//! need kpt, kubectl or podman say so loudly and skip when it is missing.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

mod support;
use support::examples::example;
use support::podman::with_podman_conf;
use support::{available, normalized_items, process_gone, skip, text, wait_until, write};

/// A fresh directory for one test.
fn scratch(name: &str) -> PathBuf {
    support::scratch("functions", name)
}

fn write_script(dir: &Path, rel: &str, text: &str) {
    use std::os::unix::fs::PermissionsExt;
    write(dir, rel, text);
    let path = dir.join(rel);
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

fn krusty(args: &[&str], cwd: &Path) -> Output {
    support::krusty_output(cwd, args)
}

/// `krusty build --enable-alpha-plugins FLAGS .` in `dir`.
fn build_with(dir: &Path, flags: &[&str]) -> Output {
    let mut args = vec!["build", "--enable-alpha-plugins"];
    args.extend_from_slice(flags);
    args.push(".");
    krusty(&args, dir)
}

/// Checks that a run's stderr contains `want`.
fn expect_stderr(out: &Output, want: &str) {
    let err = text(&out.stderr);
    assert!(err.contains(want), "want {want:?} in stderr:\n{err}");
}

/// Copies the example functions into `dir`, as exec functions.
fn install_examples(dir: &Path) {
    for name in [
        "krm-configmap-generator",
        "krm-set-labels",
        "krm-require-limits",
    ] {
        std::fs::copy(example(name), dir.join(name)).expect("copy function");
    }
}

const RESOURCES: &str = "apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  # kept through the wire
  annotations:
    owner: web
data:
  mode: fast
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    spec:
      containers:
      - name: app
        image: nginx
        envFrom:
        - configMapRef:
            name: settings
        resources:
          limits: {cpu: 100m, memory: 64Mi}
";

/// Function configs for the three examples, with `runtime` as the
/// `config.kubernetes.io/function` annotation's content.
fn configs(runtime: &dyn Fn(&str) -> String) -> Vec<(&'static str, String)> {
    let annotated = |name: &str, rest: &str, kind: &str, meta_name: &str| {
        let runtime = runtime(name)
            .lines()
            .map(|l| format!("      {l}\n"))
            .collect::<String>();
        format!(
            "apiVersion: fn.krusty.dev/v1\nkind: {kind}\nmetadata:\n  name: {meta_name}\n  annotations:\n    config.kubernetes.io/function: |\n{runtime}{rest}"
        )
    };
    vec![
        (
            "gen.yaml",
            annotated(
                "krm-configmap-generator",
                "spec:\n  data:\n    LOG_LEVEL: info\n  hash: true\n",
                "ConfigMapGenerator",
                "extra",
            ),
        ),
        (
            "labels.yaml",
            annotated(
                "krm-set-labels",
                "labels:\n  team: web\nfieldSpecs:\n- path: metadata/labels\n  create: true\n- kind: Deployment\n  path: spec/template/metadata/labels\n  create: true\n",
                "SetLabels",
                "team",
            ),
        ),
        (
            "limits.yaml",
            annotated("krm-require-limits", "", "RequireLimits", "limits"),
        ),
    ]
}

/// A kustomization using the three examples, declared with `runtime`.
fn example_tree(dir: &Path, runtime: &dyn Fn(&str) -> String) {
    write(dir, "resources.yaml", RESOURCES);
    for (file, text) in configs(runtime) {
        write(dir, file, &text);
    }
    write(
        dir,
        "kustomization.yaml",
        &format!("{WITHOUT_VALIDATOR}validators:\n- limits.yaml\n"),
    );
}

/// The example kustomization without its validator: Kustomize v5.5.0
/// rejects every function validator ("validator shouldn't modify the
/// resource map: nodes unequal", even for an unchanged list), so the
/// side-by-side checks leave it out (docs/compatibility.md).
const WITHOUT_VALIDATOR: &str =
    "namePrefix: p-\nresources:\n- resources.yaml\ngenerators:\n- gen.yaml\ntransformers:\n- labels.yaml\n";

/// Builds `dir` with kubectl kustomize (`--enable-alpha-plugins`) with
/// `path_dir` first in PATH (a docker shim), without the validator.
fn kustomize_without_validator(dir: &Path, path_dir: &Path) -> String {
    write(dir, "kustomization.yaml", WITHOUT_VALIDATOR);
    let path = format!(
        "{}:{}",
        path_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = with_podman_conf(Command::new("kubectl"))
        .args(["kustomize", "--enable-alpha-plugins", "."])
        .current_dir(dir)
        .env("PATH", path)
        .output()
        .expect("kubectl runs");
    assert!(out.status.success(), "{}", text(&out.stderr));
    text(&out.stdout)
}

fn exec_runtime(name: &str) -> String {
    format!("exec:\n  path: ./{name}\n")
}

#[test]
fn exec_functions_generate_transform_and_validate_like_kustomize() {
    let dir = scratch("exec-examples");
    install_examples(&dir);
    example_tree(&dir, &exec_runtime);
    let out = build_with(&dir, &["--enable-exec"]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    // The generated ConfigMap got a hash suffix and the prefix; the
    // reference to the renamed ConfigMap was fixed through the function.
    assert!(stdout.contains("name: p-extra-"), "{stdout}");
    assert!(stdout.contains("name: p-settings\n"), "{stdout}");
    assert!(
        stdout.contains("            name: p-settings\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains("      labels:\n        team: web"),
        "{stdout}"
    );
    expect_stderr(&out, "[info]: generated ConfigMap extra with 1 keys");
    assert!(
        !stdout.contains("internal.config.kubernetes.io"),
        "{stdout}"
    );

    // Side by side: kubectl kustomize runs the same executables as
    // "container" functions through a fake docker that execs them.
    if !available("kubectl", &["version", "--client"]) {
        return skip("kubectl is not installed: no side-by-side check with kustomize");
    }
    let side = scratch("exec-examples-kustomize");
    install_examples(&side);
    example_tree(&side, &|name| {
        format!("container:\n  image: fake.invalid/{name}\n")
    });
    write_script(
        &side,
        "bin/docker",
        &format!(
            "#!/bin/sh\nfor a in \"$@\"; do img=$a; done\nexec \"{}/${{img##*/}}\"\n",
            side.display()
        ),
    );
    let expected = kustomize_without_validator(&side, &side.join("bin"));
    assert_eq!(
        expected,
        stdout,
        "krusty and kustomize differ:\n{}",
        support::diff(&expected, &stdout)
    );
}

#[test]
fn validator_errors_fail_the_build_and_name_resource_and_field() {
    let dir = scratch("validator-errors");
    install_examples(&dir);
    example_tree(&dir, &exec_runtime);
    let no_limits = RESOURCES.replace(
        "        resources:\n          limits: {cpu: 100m, memory: 64Mi}\n",
        "",
    );
    write(&dir, "resources.yaml", &no_limits);
    let out = build_with(&dir, &["--enable-exec"]);
    let err = text(&out.stderr);
    assert!(!out.status.success());
    assert!(out.stdout.is_empty(), "no partial output");
    assert!(
        err.contains("running validator RequireLimits.v1.fn.krusty.dev/limits"),
        "{err}"
    );
    assert!(
        err.contains("[error] apps/v1/Deployment/p-web field=spec.template.spec.containers[0].resources.limits.cpu: container 'app' has no cpu limit"),
        "{err}"
    );
}

#[test]
fn nothing_runs_without_the_flags_and_errors_say_which_flag() {
    let dir = scratch("gating");
    install_examples(&dir);
    example_tree(&dir, &exec_runtime);
    write_script(&dir, "marker-fn", "#!/bin/sh\ntouch ran\ncat\n");
    for (args, want) in [
        (vec!["build", "."], "--enable-alpha-plugins to allow them"),
        (
            vec!["build", "--enable-alpha-plugins", "."],
            "run with --enable-alpha-plugins --enable-exec",
        ),
        (
            vec!["build", "--enable-exec", "."],
            "--enable-alpha-plugins to allow them",
        ),
    ] {
        let out = krusty(&args, &dir);
        assert!(!out.status.success(), "{args:?}");
        assert!(
            text(&out.stderr).contains(want),
            "{args:?}: {}",
            text(&out.stderr)
        );
    }
    write(
        &dir,
        "star.yaml",
        "apiVersion: fn.krusty.dev/v1\nkind: StarlarkRun\nmetadata:\n  name: s\nruntime:\n  starlark: {}\nsource: print(1)\n",
    );
    write(
        &dir,
        "kustomization.yaml",
        "resources:\n- resources.yaml\ntransformers:\n- star.yaml\n",
    );
    let out = build_with(&dir, &["--enable-exec"]);
    expect_stderr(&out, "run with --enable-alpha-plugins --enable-star");
    write(
        &dir,
        "plugin.yaml",
        "apiVersion: someteam.example.com/v1\nkind: ChartInflator\nmetadata:\n  name: x\n",
    );
    write(&dir, "kustomization.yaml", "transformers:\n- plugin.yaml\n");
    let out = build_with(&dir, &[]);
    expect_stderr(&out, "declares no KRM function runtime");
    assert!(!dir.join("ran").exists());
}

/// One transformer running `script` (a shell script) over resources.yaml.
fn script_tree(name: &str, script: &str) -> PathBuf {
    let dir = scratch(name);
    write(&dir, "resources.yaml", RESOURCES);
    write_script(&dir, "fn.sh", script);
    write(
        &dir,
        "fn.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fn\n  annotations:\n    config.kubernetes.io/function: 'exec: {path: ./fn.sh}'\n",
    );
    write(
        &dir,
        "kustomization.yaml",
        "resources:\n- resources.yaml\ntransformers:\n- fn.yaml\n",
    );
    dir
}

fn build_fails_with(dir: &Path, extra: &[&str], want: &[&str]) {
    let mut flags = vec!["--enable-exec"];
    flags.extend_from_slice(extra);
    let out = build_with(dir, &flags);
    let err = text(&out.stderr);
    assert!(
        !out.status.success(),
        "{}: expected a failure",
        dir.display()
    );
    assert!(
        out.stdout.is_empty(),
        "no partial output: {}",
        text(&out.stdout)
    );
    for w in want {
        assert!(err.contains(w), "{}: want {w:?} in:\n{err}", dir.display());
    }
    assert!(
        err.contains("ConfigMap.v1.[noGrp]/fn.[noNs] (exec function)"),
        "{err}"
    );
}

#[test]
fn bad_functions_are_clear_errors() {
    let dir = script_tree(
        "bad-exit",
        "#!/bin/sh\ncat >/dev/null\necho 'cannot reach the vault' >&2\nexit 3\n",
    );
    build_fails_with(
        &dir,
        &[],
        &["exited with status 3", "cannot reach the vault"],
    );

    let dir = script_tree(
        "bad-hang",
        "#!/bin/sh\necho 'waiting forever' >&2\nexec sleep 600\n",
    );
    let start = Instant::now();
    build_fails_with(
        &dir,
        &["--function-timeout", "0.5"],
        &["timed out after 0.5 s", "waiting forever"],
    );
    assert!(start.elapsed() < Duration::from_secs(20));

    let dir = script_tree(
        "bad-garbage",
        "#!/bin/sh\ncat >/dev/null\necho 'hello: [world'\n",
    );
    build_fails_with(
        &dir,
        &[],
        &["did not print a ResourceList", "hello: [world"],
    );

    let dir = script_tree(
        "bad-kind",
        "#!/bin/sh\ncat >/dev/null\nprintf 'apiVersion: v1\\nkind: ConfigMap\\nmetadata: {name: x}\\n'\n",
    );
    build_fails_with(&dir, &[], &["expected kind ResourceList, got 'ConfigMap'"]);

    let dir = script_tree("bad-enormous", "#!/bin/sh\ncat >/dev/null\nexec yes\n");
    build_fails_with(
        &dir,
        &["--function-max-output", "1000000"],
        &["printed more than 1000000 bytes"],
    );

    let dir = script_tree("bad-missing", "");
    std::fs::remove_file(dir.join("fn.sh")).expect("rm");
    let out = build_with(&dir, &["--enable-exec"]);
    assert!(
        text(&out.stderr).contains("exec path './fn.sh'")
            && text(&out.stderr).contains("no such file or directory"),
        "{}",
        text(&out.stderr)
    );

    // A validator that changes its input.
    let dir = script_tree(
        "bad-validator",
        "#!/bin/sh\nsed 's/mode: fast/mode: slow/'\n",
    );
    write(
        &dir,
        "kustomization.yaml",
        "resources:\n- resources.yaml\nvalidators:\n- fn.yaml\n",
    );
    build_fails_with(
        &dir,
        &[],
        &[
            "validators must not modify resources",
            "ConfigMap.v1.[noGrp]/settings.[noNs] was modified",
        ],
    );
}

/// Waits up to `limit` for `pid` to end; whether it did.
/// How long a process krusty should stop may take to end: its own end
/// comes in milliseconds; a loaded machine may delay it by seconds.
const STOP_LIMIT: Duration = Duration::from_secs(5);

fn ends_within(pid: &str, limit: Duration) -> bool {
    wait_until(limit, Duration::from_millis(20), || process_gone(pid));
    process_gone(pid)
}

/// Waits up to a minute for `path` to exist and hold a line; its content.
fn wait_for_file(path: &Path) -> String {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Ok(text) = std::fs::read_to_string(path) {
            if text.ends_with('\n') {
                return text;
            }
        }
        assert!(
            Instant::now() < deadline,
            "{} never appeared",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A process an exec function started in the background dies with the
/// function: at the time limit, when krusty is interrupted, and when
/// krusty is killed outright.
#[test]
fn exec_function_processes_stop_with_the_function() {
    let dir = script_tree(
        "exec-children",
        "#!/bin/sh
sleep 600 &
echo $! > sleeper.pid
wait
",
    );
    let started = Instant::now();
    build_fails_with(&dir, &["--function-timeout", "1"], &["timed out after 1 s"]);
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    let sleeper = wait_for_file(&dir.join("sleeper.pid"));
    assert!(
        ends_within(&sleeper, STOP_LIMIT),
        "the function's own child outlived the time limit"
    );

    std::fs::remove_file(dir.join("sleeper.pid")).expect("rm");
    let child = support::krusty_command()
        .args(["build", "--enable-alpha-plugins", "--enable-exec", "."])
        .current_dir(&dir)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("krusty starts");
    let sleeper = wait_for_file(&dir.join("sleeper.pid"));
    assert!(Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill runs")
        .success());
    let out = child.wait_with_output().expect("krusty exits");
    assert_eq!(out.status.code(), Some(130), "{}", text(&out.stderr));
    assert!(
        ends_within(&sleeper, STOP_LIMIT),
        "the function's own child outlived the interrupt"
    );

    // krusty killed outright: its watchdog kills the function's group.
    std::fs::remove_file(dir.join("sleeper.pid")).expect("rm");
    let mut child = support::krusty_command()
        .args(["build", "--enable-alpha-plugins", "--enable-exec", "."])
        .current_dir(&dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("krusty starts");
    let sleeper = wait_for_file(&dir.join("sleeper.pid"));
    child.kill().expect("kill -9");
    child.wait().expect("reaped");
    assert!(
        ends_within(&sleeper, STOP_LIMIT),
        "the function's own child outlived krusty"
    );
}

#[test]
/// An exec path may lead outside the kustomization's directory, as in
/// Kustomize (tests/functions_fidelity.rs has the details).
fn exec_path_may_lead_outside_the_kustomization_root() {
    let dir = scratch("escape");
    write_script(&dir, "outside.sh", "#!/bin/sh\ncat\n");
    let root = dir.join("k");
    write(&root, "resources.yaml", RESOURCES);
    write(
        &root,
        "fn.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fn\nruntime:\n  exec:\n    path: ../outside.sh\n",
    );
    write(
        &root,
        "kustomization.yaml",
        "resources:\n- resources.yaml\ntransformers:\n- fn.yaml\n",
    );
    let out = krusty(
        &["build", "--enable-alpha-plugins", "--enable-exec", "k"],
        &dir,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = krusty(
        &[
            "build",
            "--enable-alpha-plugins",
            "--enable-exec",
            "--load-restrictor",
            "LoadRestrictionsNone",
            "k",
        ],
        &dir,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
}

#[test]
fn multi_megabyte_lists_stream_through_exec_functions() {
    let dir = scratch("large");
    install_examples(&dir);
    let mut resources = String::new();
    let value = "x".repeat(1000);
    for i in 0..4000 {
        resources.push_str(&format!(
            "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-{i}\ndata:\n  value: {value}\n"
        ));
    }
    assert!(resources.len() > 4 << 20);
    write(&dir, "resources.yaml", &resources);
    write(
        &dir,
        "labels.yaml",
        "apiVersion: fn.krusty.dev/v1\nkind: SetLabels\nmetadata:\n  name: team\nruntime:\n  exec: {path: ./krm-set-labels}\nlabels:\n  team: web\n",
    );
    write(
        &dir,
        "kustomization.yaml",
        "resources:\n- resources.yaml\ntransformers:\n- labels.yaml\n- labels.yaml\n",
    );
    let out = build_with(&dir, &["--enable-exec"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert_eq!(stdout.matches("team: web").count(), 4000);
    assert!(stdout.len() > 4 << 20);
}

#[test]
fn starlark_functions_edit_the_list_in_place() {
    let dir = scratch("starlark");
    write(&dir, "resources.yaml", RESOURCES);
    write(
        &dir,
        "annotate.star",
        "def run(items, value):\n    for r in items:\n        r[\"metadata\"].setdefault(\"annotations\", {})[\"example.com/owner\"] = value\nrun(ctx.resource_list[\"items\"], ctx.resource_list[\"functionConfig\"][\"data\"][\"owner\"])\n",
    );
    write(
        &dir,
        "star.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: annotate\n  annotations:\n    config.kubernetes.io/function: |\n      starlark:\n        path: annotate.star\ndata:\n  owner: platform\n",
    );
    write(
        &dir,
        "run.yaml",
        "apiVersion: fn.kpt.dev/v1alpha1\nkind: StarlarkRun\nmetadata:\n  name: ns\nruntime:\n  starlark: {}\nsource: |\n  items = [r for r in ctx.resource_list[\"items\"] if r[\"kind\"] != \"Deployment\"]\n  items.append({\"apiVersion\": \"v1\", \"kind\": \"Namespace\", \"metadata\": {\"name\": \"web\"}})\n  ctx.resource_list[\"items\"] = items\n",
    );
    write(
        &dir,
        "fail.yaml",
        "apiVersion: fn.kpt.dev/v1alpha1\nkind: StarlarkRun\nmetadata:\n  name: no\nruntime:\n  starlark: {}\nsource: |\n  fail(\"replicas must be set\")\n",
    );
    write(
        &dir,
        "kustomization.yaml",
        "resources:\n- resources.yaml\ntransformers:\n- star.yaml\n- run.yaml\n",
    );
    let out = build_with(&dir, &["--enable-star"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    // Annotated by the first program; the Deployment deleted and a
    // Namespace created by the second.
    assert_eq!(
        stdout.matches("example.com/owner: platform").count(),
        1,
        "{stdout}"
    );
    assert!(!stdout.contains("kind: Deployment"), "{stdout}");
    assert!(
        stdout.starts_with("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: web\n"),
        "{stdout}"
    );
    write(
        &dir,
        "kustomization.yaml",
        "resources:\n- resources.yaml\ntransformers:\n- fail.yaml\n",
    );
    let out = build_with(&dir, &["--enable-star"]);
    assert!(!out.status.success());
    expect_stderr(&out, "[error]: fail: replicas must be set");
}

/// Starlark programs run in the `krusty-starlark` program beside krusty:
/// what they print reaches krusty's stderr, a runaway program is stopped
/// at the time limit, and without the runtime program the error says
/// what to do.
#[test]
fn starlark_runs_out_of_process_within_limits() {
    let dir = scratch("starlark-limits");
    write(&dir, "resources.yaml", RESOURCES);
    let config = |source: &str| {
        format!("apiVersion: fn.kpt.dev/v1alpha1\nkind: StarlarkRun\nmetadata:\n  name: s\nruntime:\n  starlark: {{}}\nsource: |\n  {source}\n")
    };
    write(
        &dir,
        "star.yaml",
        &config("print(\"seen\", len(ctx.resource_list[\"items\"]))"),
    );
    write(
        &dir,
        "kustomization.yaml",
        "resources:\n- resources.yaml\ntransformers:\n- star.yaml\n",
    );
    let out = build_with(&dir, &["--enable-star"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    expect_stderr(&out, "seen 2");
    // Unchanged by a program that only prints.
    assert_eq!(
        text(&out.stdout),
        text(&build_with(&dir, &["--enable-star"]).stdout)
    );

    let out = support::krusty_command()
        .args(["build", "--enable-alpha-plugins", "--enable-star", "."])
        .current_dir(&dir)
        .env("KRUSTY_STARLARK", dir.join("no-such-runtime"))
        .output()
        .expect("krusty runs");
    assert!(!out.status.success());
    assert!(out.stdout.is_empty());
    expect_stderr(&out, "cannot start the Starlark runtime");
    expect_stderr(&out, "no-such-runtime");

    write(
        &dir,
        "star.yaml",
        &config("def f(n):\n      for i in range(n):\n          for j in range(n):\n              pass\n  f(1000000)"),
    );
    let started = Instant::now();
    let out = build_with(&dir, &["--enable-star", "--function-timeout", "0.5"]);
    assert!(!out.status.success());
    assert!(out.stdout.is_empty());
    expect_stderr(&out, "ran longer than 0.5 s and was stopped");
    assert!(started.elapsed() < Duration::from_secs(20));
}

/// A Starlark program that allocates without end is stopped at
/// `--function-max-memory`, quickly, with an error naming the function and
/// the limit; sizes take Kubernetes' units.
#[test]
fn starlark_memory_is_limited() {
    let dir = scratch("starlark-memory");
    write(&dir, "resources.yaml", RESOURCES);
    write(
        &dir,
        "star.yaml",
        "apiVersion: fn.kpt.dev/v1alpha1\nkind: StarlarkRun\nmetadata:\n  name: hog\nruntime:\n  starlark: {}\nsource: |\n  s = \"x\" * 1000000\n  l = []\n  for i in range(1000000): l.append(s + str(i))\n",
    );
    write(
        &dir,
        "kustomization.yaml",
        "resources:\n- resources.yaml\ntransformers:\n- star.yaml\n",
    );
    for (flag, shown) in [("256Mi", "256 MiB"), ("1Gi", "1 GiB")] {
        let started = Instant::now();
        let out = build_with(&dir, &["--enable-star", "--function-max-memory", flag]);
        assert!(!out.status.success());
        assert!(out.stdout.is_empty());
        expect_stderr(
            &out,
            "StarlarkRun.v1alpha1.fn.kpt.dev/hog.[noNs] (starlark function)",
        );
        expect_stderr(
            &out,
            &format!("the Starlark program needed more memory than its limit of {shown} (--function-max-memory) and was stopped"),
        );
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "{:?}",
            started.elapsed()
        );
    }
    // The default limit (1 GiB) applies without the flag.
    let out = build_with(&dir, &["--enable-star"]);
    expect_stderr(&out, "its limit of 1 GiB");

    // A program within the limit runs.
    write(
        &dir,
        "star.yaml",
        "apiVersion: fn.kpt.dev/v1alpha1\nkind: StarlarkRun\nmetadata:\n  name: small\nruntime:\n  starlark: {}\nsource: |\n  l = [\"x\" * 1000 for i in range(1000)]\n",
    );
    let out = build_with(&dir, &["--enable-star", "--function-max-memory", "128Mi"]);
    assert!(out.status.success(), "{}", text(&out.stderr));

    let out = build_with(&dir, &["--enable-star", "--function-max-memory", "1GB"]);
    assert!(!out.status.success());
    expect_stderr(&out, "'1GB' is not a size");
}

/// The Starlark runtime does not outlive a krusty killed outright.
#[cfg(target_os = "linux")]
#[test]
fn starlark_runtime_dies_with_krusty() {
    let dir = scratch("starlark-orphan");
    write(&dir, "resources.yaml", RESOURCES);
    write(
        &dir,
        "star.yaml",
        "apiVersion: fn.kpt.dev/v1alpha1\nkind: StarlarkRun\nmetadata:\n  name: spin\nruntime:\n  starlark: {}\nsource: |\n  def f():\n      for i in range(1000000000):\n          pass\n  f()\n",
    );
    write(
        &dir,
        "kustomization.yaml",
        "resources:\n- resources.yaml\ntransformers:\n- star.yaml\n",
    );
    let mut child = support::krusty_command()
        .args(["build", "--enable-alpha-plugins", "--enable-star", "."])
        .current_dir(&dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("krusty starts");
    let runtime = wait_for_child(child.id(), "krusty-starlark");
    child.kill().expect("kill -9");
    child.wait().expect("reaped");
    assert!(
        ends_within(&runtime, Duration::from_secs(2)),
        "the Starlark runtime outlived krusty"
    );
}

/// Waits up to a minute for process `parent` to have a child running
/// `program`; its process id.
#[cfg(target_os = "linux")]
fn wait_for_child(parent: u32, program: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let tasks = std::fs::read_dir(format!("/proc/{parent}/task")).expect("/proc");
        for task in tasks.flatten() {
            let children =
                std::fs::read_to_string(task.path().join("children")).unwrap_or_default();
            for pid in children.split_whitespace() {
                let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
                if program.starts_with(comm.trim()) && !comm.trim().is_empty() {
                    return pid.to_string();
                }
            }
        }
        assert!(Instant::now() < deadline, "{program} never started");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A process killed when the test ends, however it ends.
struct Server(std::process::Child);

impl Server {
    /// Starts `cmd` and waits until it accepts connections on `port`.
    fn start(mut cmd: Command, port: u16) -> Server {
        let server = Server(
            cmd.stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("the server starts"),
        );
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "the server did not start");
            std::thread::sleep(Duration::from_millis(50));
        }
        server
    }
}

/// A port nothing listens on now.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn starlark_programs_by_url() {
    let dir = scratch("starlark-url");
    write(
        &dir,
        "www/annotate.star",
        "for r in ctx.resource_list[\"items\"]:\n    r[\"metadata\"].setdefault(\"annotations\", {})[\"fetched\"] = \"yes\"\n",
    );
    let port = free_port();
    let mut http = Command::new("python3");
    http.args([
        "-m",
        "http.server",
        &port.to_string(),
        "--bind",
        "127.0.0.1",
        "--directory",
    ])
    .arg(dir.join("www"));
    let server = Server::start(http, port);
    let k = dir.join("k");
    write(&k, "resources.yaml", RESOURCES);
    let config = |file: &str| {
        format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fetch\nruntime:\n  starlark:\n    url: http://127.0.0.1:{port}/{file}\n")
    };
    write(&k, "star.yaml", &config("annotate.star"));
    write(
        &k,
        "kustomization.yaml",
        "resources:\n- resources.yaml\ntransformers:\n- star.yaml\n",
    );
    let out = build_with(&k, &[]);
    expect_stderr(&out, "--enable-star");
    let out = build_with(&k, &["--enable-star"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout).matches("fetched: \"yes\"").count(),
        2,
        "{}",
        text(&out.stdout)
    );
    write(&k, "star.yaml", &config("missing.star"));
    let out = build_with(&k, &["--enable-star"]);
    expect_stderr(&out, "starlark program 'http://127.0.0.1:");
    expect_stderr(&out, "status code 404 (Not Found)");
    // The program comes through the fetch layer: krusty's cache, and
    // `--offline` makes no connection.
    write(&k, "star.yaml", &config("annotate.star"));
    let cache = dir.join("cache");
    let in_cache = |flags: &[&str]| {
        support::krusty_command()
            .args(["build", "--enable-alpha-plugins", "--enable-star"])
            .args(flags)
            .arg(".")
            .current_dir(&k)
            .env("KRUSTY_CACHE_DIR", &cache)
            .output()
            .expect("krusty runs")
    };
    let offline = in_cache(&["--offline"]);
    assert!(!offline.status.success());
    expect_stderr(&offline, "--offline");
    let online = in_cache(&[]);
    assert!(online.status.success(), "{}", text(&online.stderr));
    drop(server);
    let offline = in_cache(&["--offline"]);
    assert!(offline.status.success(), "{}", text(&offline.stderr));
    assert_eq!(offline.stdout, online.stdout);
    https_with_a_private_ca(&dir, &k);
}

/// HTTPS from a server whose certificate a throwaway CA signed: refused
/// until `SSL_CERT_FILE` names that CA.
fn https_with_a_private_ca(dir: &Path, k: &Path) {
    if !available("openssl", &["version"]) {
        return skip("openssl is not installed: no HTTPS check");
    }
    let tls = dir.join("tls");
    std::fs::create_dir_all(&tls).expect("mkdir");
    write(&tls, "server.ext", "subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n");
    for args in [
        "req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj /CN=krusty-test-ca -keyout ca.key -out ca.crt",
        "req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=localhost -keyout server.key -out server.csr",
        "x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 -extfile server.ext -out server.crt",
    ] {
        let ok = Command::new("openssl")
            .args(args.split(' '))
            .current_dir(&tls)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "openssl {args}");
    }
    let port = free_port();
    let serve = format!(
        "import http.server, ssl, functools\nctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)\nctx.load_cert_chain('server.crt', 'server.key')\nsrv = http.server.ThreadingHTTPServer(('127.0.0.1', {port}), functools.partial(http.server.SimpleHTTPRequestHandler, directory='{}'))\nsrv.socket = ctx.wrap_socket(srv.socket, server_side=True)\nsrv.serve_forever()\n",
        dir.join("www").display()
    );
    let mut https = Command::new("python3");
    https.args(["-c", &serve]).current_dir(&tls);
    let _server = Server::start(https, port);
    write(
        k,
        "star.yaml",
        &format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fetch\nruntime:\n  starlark:\n    url: https://127.0.0.1:{port}/annotate.star\n"),
    );
    let args = ["build", "--enable-alpha-plugins", "--enable-star", "."];
    let out = krusty(&args, k);
    expect_stderr(&out, "UnknownIssuer");
    let out = support::krusty_command()
        .args(args)
        .current_dir(k)
        .env("SSL_CERT_FILE", tls.join("ca.crt"))
        .output()
        .expect("krusty runs");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).matches("fetched: \"yes\"").count(), 2);
}

#[test]
fn same_function_same_input_as_kpt_fn_eval_exec() {
    if !available("kpt", &["version"]) {
        return skip("kpt is not installed: no wire-format cross-check");
    }
    for (function, config) in [
        (
            "krm-set-labels",
            "apiVersion: fn.krusty.dev/v1\nkind: SetLabels\nmetadata:\n  name: team\nlabels:\n  team: web\n",
        ),
        (
            "krm-configmap-generator",
            "apiVersion: fn.krusty.dev/v1\nkind: ConfigMapGenerator\nmetadata:\n  name: extra\nspec:\n  data: {A: b}\n",
        ),
    ] {
        let dir = scratch(&format!("kpt-{function}"));
        install_examples(&dir);
        write(&dir, "pkg/resources.yaml", RESOURCES);
        write(&dir, "fn-config.yaml", config);
        let kpt = Command::new("kpt")
            .args(["fn", "eval", "pkg", "--exec"])
            .arg(dir.join(function))
            .args(["--fn-config", "fn-config.yaml", "-o", "stdout"])
            .current_dir(&dir)
            .output()
            .expect("kpt runs");
        assert!(kpt.status.success(), "{}", text(&kpt.stderr));
        // krusty: the same config as a transformer over the same resources.
        let runtime = format!("runtime:\n  exec:\n    path: ./{function}\n");
        write(&dir, "k/fn.yaml", &format!("{config}{runtime}"));
        std::fs::copy(dir.join(function), dir.join("k").join(function)).expect("copy");
        write(&dir, "k/resources.yaml", RESOURCES);
        write(&dir, "k/kustomization.yaml", "resources:\n- resources.yaml\ntransformers:\n- fn.yaml\n");
        let out = krusty(&["build", "--enable-alpha-plugins", "--enable-exec", "k"], &dir);
        assert!(out.status.success(), "{}", text(&out.stderr));
        assert_eq!(
            normalized_items(&text(&kpt.stdout)),
            normalized_items(&text(&out.stdout)),
            "{function}: kpt and krusty disagree"
        );
    }
}

/// Podman is installed and answers.
fn podman_works() -> bool {
    available("podman", &["info"])
}

/// `krusty build --enable-alpha-plugins --container-cli podman EXTRA .` in
/// `tree`, with the podman settings.
fn podman_build(tree: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "build",
        "--enable-alpha-plugins",
        "--container-cli",
        "podman",
    ];
    args.extend_from_slice(extra);
    args.push(".");
    krusty_podman(&args, tree)
}

/// Makes `labels.yaml` in `tree` a container function running `image`
/// (with `more` appended to its `container:` mapping).
fn container_function(tree: &Path, image: &str, more: &str) {
    write(
        tree,
        "labels.yaml",
        &format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fn\nruntime:\n  container:\n    image: {image}\n{more}"),
    );
}

/// krusty with the podman settings.
fn krusty_podman(args: &[&str], cwd: &Path) -> Output {
    let mut cmd = with_podman_conf(support::krusty_command());
    cmd.args(args)
        .current_dir(cwd)
        .output()
        .expect("krusty runs")
}

/// Builds image `name` from an executable and the shared libraries it
/// needs, a passwd file and nothing else (no base image, no registry).
fn build_image(dir: &Path, name: &str, binary: &Path, entrypoint: &[&str]) {
    let rootfs = dir.join(format!("rootfs-{}", name.replace(['/', ':'], "-")));
    let _ = std::fs::remove_dir_all(&rootfs);
    std::fs::create_dir_all(rootfs.join("etc")).expect("mkdir");
    let target = rootfs.join(entrypoint[0].trim_start_matches('/'));
    std::fs::create_dir_all(target.parent().expect("parent")).expect("mkdir");
    std::fs::copy(binary, &target).expect("copy binary");
    let ldd = Command::new("ldd").arg(binary).output().expect("ldd runs");
    for lib in text(&ldd.stdout)
        .split_whitespace()
        .filter(|w| w.starts_with('/'))
    {
        let dest = rootfs.join(lib.trim_start_matches('/'));
        std::fs::create_dir_all(dest.parent().expect("parent")).expect("mkdir");
        std::fs::copy(lib, &dest).expect("copy library");
    }
    write(
        &rootfs,
        "etc/passwd",
        "root:x:0:0::/:/sbin/nologin\nnobody:x:65534:65534::/:/sbin/nologin\n",
    );
    write(&rootfs, "etc/group", "root:x:0:\nnogroup:x:65534:\n");
    let tar = dir.join(format!("{}.tar", rootfs.display()));
    assert!(Command::new("tar")
        .arg("-C")
        .arg(&rootfs)
        .arg("-cf")
        .arg(&tar)
        .arg(".")
        .status()
        .expect("tar runs")
        .success());
    let entry: Vec<String> = entrypoint.iter().map(|e| format!("\"{e}\"")).collect();
    let out = with_podman_conf(Command::new("podman"))
        .args(["import", "-q", "--change"])
        .arg(format!("ENTRYPOINT [{}]", entry.join(", ")))
        .args(["--change", "USER 65534:65534"])
        .arg(&tar)
        .arg(name)
        .output()
        .expect("podman import runs");
    assert!(out.status.success(), "podman import: {}", text(&out.stderr));
}

/// Starts `krusty build` on a container function in `tree` (with `extra`
/// flags) in the background, and returns once its container runs (or a
/// minute has passed).
fn krusty_until_its_container_runs(tree: &Path, extra: &[&str]) -> std::process::Child {
    let child = with_podman_conf(support::krusty_command())
        .args([
            "build",
            "--enable-alpha-plugins",
            "--container-cli",
            "podman",
        ])
        .args(extra)
        .arg(".")
        .current_dir(tree)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("krusty starts");
    wait_until(Duration::from_secs(60), Duration::from_millis(50), || {
        !running_containers().is_empty()
    });
    child
}

/// Kills (SIGKILL) the children of process `parent` running `program`.
#[cfg(target_os = "linux")]
fn kill_children_named(parent: u32, program: &str) {
    let tasks = std::fs::read_dir(format!("/proc/{parent}/task")).expect("/proc");
    for task in tasks.flatten() {
        let children = std::fs::read_to_string(task.path().join("children")).unwrap_or_default();
        for pid in children.split_whitespace() {
            let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
            if comm.trim() == program {
                let _ = Command::new("kill").args(["-KILL", pid]).status();
            }
        }
    }
}

/// Names of the containers krusty started from this test's images (the
/// label krusty gives them), in any state. Other tests on the machine may
/// run krusty on images of their own at the same time.
fn leftover_containers() -> String {
    containers(&["-a"])
}

/// Names of the running containers krusty started from this test's images.
fn running_containers() -> String {
    containers(&["--filter", "status=running"])
}

fn containers(filter: &[&str]) -> String {
    let out = with_podman_conf(Command::new("podman"))
        .arg("ps")
        .args(filter)
        .args([
            "--filter",
            "label=dev.krusty.owner",
            "--format",
            "{{.Names}} {{.Image}}",
        ])
        .output()
        .expect("podman ps");
    text(&out.stdout)
        .lines()
        .filter_map(|l| l.split_once(' '))
        .filter(|(_, image)| image.starts_with("localhost/krusty-test/"))
        .map(|(name, _)| name)
        .collect::<Vec<_>>()
        .join(",")
}

#[test]
fn container_functions_run_in_podman_like_kustomize() {
    if !podman_works() {
        return skip("podman cannot run containers here: no container-function tests");
    }
    let dir = scratch("containers");
    for name in [
        "krm-configmap-generator",
        "krm-set-labels",
        "krm-require-limits",
    ] {
        build_image(
            &dir,
            &format!("localhost/krusty-test/{name}:v1"),
            &example(name),
            &["/fn"],
        );
    }
    let tree = dir.join("k");
    example_tree(&tree, &|name| {
        format!("container:\n  image: localhost/krusty-test/{name}:v1\n")
    });
    let out = podman_build(&tree, &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("team: web"), "{stdout}");
    assert_eq!(leftover_containers(), "");

    if available("kubectl", &["version", "--client"]) {
        write_script(&dir, "shim/docker", "#!/bin/sh\nexec podman \"$@\"\n");
        let expected = kustomize_without_validator(&tree, &dir.join("shim"));
        assert_eq!(expected, stdout, "{}", support::diff(&expected, &stdout));
    } else {
        skip("kubectl is not installed: no side-by-side container check");
    }

    // A missing image, and a function that hangs: clear errors, and the
    // hung container is removed.
    write(
        &tree,
        "kustomization.yaml",
        "resources:\n- resources.yaml\ntransformers:\n- labels.yaml\n",
    );
    container_function(&tree, "localhost/krusty-test/no-such-image:v1", "");
    let out = podman_build(&tree, &[]);
    assert!(!out.status.success());
    expect_stderr(&out, "no-such-image");

    let sleep = Path::new("/bin/sleep");
    build_image(
        &dir,
        "localhost/krusty-test/hang:v1",
        sleep,
        &["/bin/sleep", "600"],
    );
    container_function(&tree, "localhost/krusty-test/hang:v1", "");
    // Stopped and removed without a stop's grace period (podman's is
    // 10 s): the build ends soon after the limit.
    let started = Instant::now();
    let out = podman_build(&tree, &["--function-timeout", "3"]);
    let took = started.elapsed();
    expect_stderr(&out, "timed out after 3 s");
    assert!(took < Duration::from_millis(5000), "{took:?}");
    assert_eq!(
        leftover_containers(),
        "",
        "the timed-out container was not removed"
    );

    // An interrupted build removes its container and exits as SIGINT would.
    let child = with_podman_conf(support::krusty_command())
        .args([
            "build",
            "--enable-alpha-plugins",
            "--container-cli",
            "podman",
            ".",
        ])
        .current_dir(&tree)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("krusty starts");
    wait_until(Duration::from_secs(60), Duration::from_millis(100), || {
        !leftover_containers().is_empty()
    });
    assert!(
        !leftover_containers().is_empty(),
        "the container never started"
    );
    assert!(Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill runs")
        .success());
    let out = child.wait_with_output().expect("krusty exits");
    assert_eq!(out.status.code(), Some(130), "{}", text(&out.stderr));
    expect_stderr(&out, "removing function container krusty-fn-");
    assert_eq!(
        leftover_containers(),
        "",
        "the interrupted container was not removed"
    );

    // krusty killed outright together with its watchdogs (its `sh`
    // children) leaves its container running; the next krusty that runs
    // a container function removes it.
    let mut child = krusty_until_its_container_runs(&tree, &[]);
    kill_children_named(child.id(), "sh");
    child.kill().expect("kill -9");
    child.wait().expect("reaped");
    let orphan = leftover_containers();
    assert!(orphan.starts_with("krusty-fn-"), "no orphan: {orphan:?}");
    container_function(
        &tree,
        "localhost/krusty-test/krm-set-labels:v1",
        "labels:\n  team: web\n",
    );
    let out = podman_build(&tree, &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(leftover_containers(), "", "the orphan was not removed");

    // A krusty that is still running keeps its container: another run
    // does not take it for an orphan.
    let tree2 = dir.join("k2");
    write(&tree2, "resources.yaml", RESOURCES);
    write(
        &tree2,
        "kustomization.yaml",
        "resources:\n- resources.yaml\ntransformers:\n- labels.yaml\n",
    );
    container_function(
        &tree2,
        "localhost/krusty-test/krm-set-labels:v1",
        "labels:\n  team: web\n",
    );
    container_function(&tree, "localhost/krusty-test/hang:v1", "");
    let mut child = krusty_until_its_container_runs(&tree, &[]);
    let running = running_containers();
    assert!(!running.is_empty(), "the container never started");
    let out = podman_build(&tree2, &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        running_containers(),
        running,
        "a live krusty's container was removed"
    );
    child.kill().expect("kill -9");
    child.wait().expect("reaped");
    // Now gone, it leaves an orphan that the next run removes.
    let out = podman_build(&tree2, &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(leftover_containers(), "", "the orphan was not removed");

    // And podman itself stops it at the time limit (`podman run --timeout`,
    // a second later than krusty's own), with no later krusty run.
    container_function(&tree, "localhost/krusty-test/hang:v1", "");
    let mut child = krusty_until_its_container_runs(&tree, &["--function-timeout", "2"]);
    child.kill().expect("kill -9");
    child.wait().expect("reaped");
    wait_until(Duration::from_secs(15), Duration::from_millis(200), || {
        leftover_containers().is_empty()
    });
    assert_eq!(
        leftover_containers(),
        "",
        "podman's time limit did not stop it"
    );

    // Memory: a container past --function-max-memory is killed (podman
    // enforces --memory here) and the error names the limit.
    build_image(
        &dir,
        "localhost/krusty-test/hog:v1",
        &std::fs::canonicalize("/usr/bin/awk").expect("awk"),
        &["/bin/awk", "BEGIN { s = 1; while (1) s = s s }"],
    );
    container_function(&tree, "localhost/krusty-test/hog:v1", "");
    let out = podman_build(&tree, &["--function-max-memory", "64Mi"]);
    assert!(!out.status.success());
    expect_stderr(
        &out,
        "most likely for using more than its memory limit of 64 MiB (--function-max-memory)",
    );
    assert_eq!(leftover_containers(), "");

    // Network is refused unless both the function and the user ask.
    container_function(
        &tree,
        "localhost/krusty-test/krm-set-labels:v1",
        "    network: true\n",
    );
    let out = podman_build(&tree, &[]);
    expect_stderr(&out, "run with --network");
}

/// A spec v1 container does not outlive a krusty killed outright, even
/// under a CLI with no time limit of its own (docker): krusty's watchdog
/// removes it. The CLI is a stand-in whose `run` hangs and whose `rm`
/// records the names it is given.
#[cfg(target_os = "linux")]
#[test]
fn a_spec_v1_container_is_removed_soon_after_krusty_is_killed_outright() {
    let dir = scratch("v1-container-sigkill");
    let removed = dir.join("removed.log");
    let running = dir.join("running");
    write_script(
        &dir,
        "bin/fake-docker",
        &format!(
            "#!/bin/sh\ncase \"$1\" in\n  --version) echo 'Docker version 0.0.0' ;;\n  run) touch '{running}'; exec sleep 600 ;;\n  rm) echo \"$*\" >> '{removed}' ;;\nesac\n",
            running = running.display(),
            removed = removed.display()
        ),
    );
    write(&dir, "resources.yaml", RESOURCES);
    write(
        &dir,
        "fn.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: hang\n  annotations:\n    config.kubernetes.io/function: |\n      container:\n        image: example.com/hang:v1\n",
    );
    write(
        &dir,
        "kustomization.yaml",
        "resources:\n- resources.yaml\ntransformers:\n- fn.yaml\n",
    );
    let mut child = support::krusty_command()
        .args(["build", "--enable-alpha-plugins", "."])
        .env("KRUSTY_CONTAINER_CLI", dir.join("bin/fake-docker"))
        .current_dir(&dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("krusty starts");
    wait_until(Duration::from_secs(60), Duration::from_millis(20), || {
        running.exists()
    });
    assert!(running.exists(), "the container never started");
    child.kill().expect("kill -9");
    child.wait().expect("reaped");
    wait_until(Duration::from_secs(10), Duration::from_millis(50), || {
        std::fs::read_to_string(&removed).is_ok_and(|r| r.contains("krusty-fn-"))
    });
    let log = std::fs::read_to_string(&removed).unwrap_or_default();
    assert!(
        log.lines()
            .any(|l| l.starts_with("rm -f -- krusty-fn-")
                || l.starts_with("rm -f -t 0 -- krusty-fn-")),
        "the container was not removed after krusty was killed: {log:?}"
    );
}
