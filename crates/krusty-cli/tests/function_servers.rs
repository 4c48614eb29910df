//! KRM function spec v2: functions run as servers, started once per
//! engine (one a krusty process) and reused (docs/function-servers.md, "Orchestrator side").
//!
//! The function here is `tests/fixtures/v2-python/fn.py`, a Python
//! function written without any SDK that serves spec v1 (stdin/stdout)
//! and spec v2 (HTTP on `--http-addr`): the same kustomization gives the
//! same output byte for byte whether it runs as v1 or v2, and under kpt
//! (`kpt fn eval --exec`, spec v1). Its server counts its starts in the
//! file `FN_STARTS` names, and misbehaves on request (`data.misbehave`),
//! so restarts, fallbacks, timeouts and malformed answers are tested on a
//! real process. No server process or folder is left after any test.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

mod support;
use support::examples::example;
use support::podman::with_podman_conf;
use support::{available, normalized_items, skip, text, wait_until, write};

/// How long a container server may outlive a krusty killed outright (the
/// watchdog's `podman rm`; a few seconds on this project's machines).
const CONTAINER_GRACE: Duration = Duration::from_secs(15);

fn scratch(name: &str) -> PathBuf {
    support::scratch("function-servers", name)
}

/// Python with PyYAML, which the fixture function needs.
fn python_ready() -> bool {
    available("python3", &["-c", "import yaml"])
}

/// A fresh folder `name` with the fixture function in `bin/fn.py` and
/// `resources` in `resources.yaml`; `None`, after a loud skip, when Python
/// with PyYAML is missing.
fn fixture_folder(name: &str, resources: &str) -> Option<PathBuf> {
    if !python_ready() {
        skip("python3 with PyYAML is missing");
        return None;
    }
    let dir = scratch(name);
    install_function(&dir);
    write(&dir, "resources.yaml", resources);
    Some(dir)
}

/// Copies the fixture function to `dir/bin/fn.py`; returns its path.
fn install_function(dir: &Path) -> PathBuf {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/v2-python/fn.py");
    let path = dir.join("bin/fn.py");
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::copy(&source, &path).expect("copy fn.py");
    path
}

/// A function config for the fixture: sets annotation `key` to `value`;
/// `server` adds the spec v2 opt-in; `extra` goes under `data:`.
fn config(name: &str, fn_path: &str, server: bool, key: &str, value: &str, extra: &str) -> String {
    let opt_in = if server {
        "    krusty.dev/function-server: http\n"
    } else {
        ""
    };
    format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  annotations:\n{opt_in}    config.kubernetes.io/function: |\n      exec:\n        path: {fn_path}\ndata:\n  key: {key}\n  value: \"{value}\"\n{extra}"
    )
}

/// A kustomization in `dir` over `resources` with `calls` transformer
/// calls of the function at `fn_path` (relative to `dir`).
fn kustomization(dir: &Path, fn_path: &str, calls: usize, server: bool, extra: &str) {
    let mut k = String::from("resources:\n- resources.yaml\ntransformers:\n");
    for i in 0..calls {
        let name = format!("fn-{i}.yaml");
        write(
            dir,
            &name,
            &config(
                &format!("fn-{i}"),
                fn_path,
                server,
                &format!("fn.example.com/step-{i}"),
                &i.to_string(),
                extra,
            ),
        );
        k.push_str(&format!("- {name}\n"));
    }
    write(dir, "kustomization.yaml", &k);
}

/// `count` ConfigMaps, each with `size` bytes of data.
fn resources(count: usize, size: usize) -> String {
    let mut out = String::new();
    let filler = "x".repeat(size);
    for i in 0..count {
        out.push_str(&format!(
            "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-{i}\n  labels:\n    app: demo\ndata:\n  blob: {filler}\n"
        ));
    }
    out
}

/// `krusty build ARGS` with exec functions allowed, the start log passed
/// to the function, in `cwd`, not started yet.
fn krusty_command(cwd: &Path, starts: &Path, args: &[&str]) -> Command {
    let mut cmd = support::krusty_command();
    cmd.args([
        "build",
        "--enable-alpha-plugins",
        "--enable-exec",
        "-e",
        "FN_STARTS",
    ])
    .args(args)
    .env("FN_STARTS", starts)
    .current_dir(cwd);
    cmd
}

/// `krusty build` with exec functions allowed, the start log passed to
/// the function, in `cwd`.
fn krusty(cwd: &Path, starts: &Path, args: &[&str]) -> Output {
    krusty_command(cwd, starts, args)
        .output()
        .expect("krusty runs")
}

/// Starts `krusty build .` in the background on one call of the fixture
/// that hangs, in `dir`; returns the start log and krusty once the
/// function's server has started (or 20 s have passed).
fn krusty_on_a_hung_call(dir: &Path) -> (PathBuf, Child) {
    let log = dir.join("starts.log");
    kustomization(dir, "bin/fn.py", 1, true, "  misbehave: hang\n");
    let child = krusty_command(dir, &log, &["."])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("krusty runs");
    wait_until(Duration::from_secs(20), Duration::from_millis(50), || {
        starts(&log) > 0
    });
    (log, child)
}

/// How many times the function's server started.
fn starts(log: &Path) -> usize {
    std::fs::read_to_string(log).map_or(0, |t| t.lines().count())
}

/// The processes whose command line mentions `marker`.
fn processes_with(marker: &str) -> Vec<String> {
    let mut found = Vec::new();
    let me = std::process::id().to_string();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.bytes().all(|b| b.is_ascii_digit()) || name == me {
            continue;
        }
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let cmdline = text(&cmdline).replace('\0', " ");
        let zombie = std::fs::read_to_string(entry.path().join("stat")).is_ok_and(|s| {
            s.rsplit(')')
                .next()
                .unwrap_or("")
                .trim_start()
                .starts_with('Z')
        });
        if cmdline.contains(marker) && !zombie {
            found.push(format!("{name}: {cmdline}"));
        }
    }
    found
}

/// Nothing of the function's servers is left: no process running the
/// fixture under `dir`, no server folder of a krusty that is gone.
fn assert_nothing_left(dir: &Path) {
    let marker = dir.join("bin").to_string_lossy().into_owned();
    wait_until(Duration::from_secs(5), Duration::from_millis(50), || {
        processes_with(&marker).is_empty()
    });
    assert_eq!(
        processes_with(&marker),
        Vec::<String>::new(),
        "servers left running"
    );
}

/// Builds `dir` as v1 and as v2: the same output, byte for byte; v2
/// starts the server once.
fn same_as_v1(dir: &Path, fn_path: &str, calls: usize, extra: &str) -> String {
    let log = dir.join("starts.log");
    kustomization(dir, fn_path, calls, false, extra);
    let v1 = krusty(dir, &log, &["."]);
    assert!(v1.status.success(), "v1: {}", text(&v1.stderr));
    assert_eq!(starts(&log), 0, "v1 runs no server");
    kustomization(dir, fn_path, calls, true, extra);
    let v2 = krusty(dir, &log, &["."]);
    assert!(v2.status.success(), "v2: {}", text(&v2.stderr));
    assert_eq!(
        text(&v2.stdout),
        text(&v1.stdout),
        "v2's output differs from v1's"
    );
    assert_eq!(starts(&log), 1, "one server for {calls} calls");
    assert_nothing_left(dir);
    text(&v2.stdout)
}

#[test]
fn a_python_function_gives_the_same_output_as_v1_v2_and_under_kpt() {
    if !python_ready() {
        return skip("python3 with PyYAML is missing: the spec v2 tests do not run");
    }
    let dir = scratch("python");
    install_function(&dir);
    write(&dir, "resources.yaml", &resources(3, 10));
    let out = same_as_v1(&dir, "bin/fn.py", 2, "");
    assert!(out.contains("fn.example.com/step-1: \"1\""), "{out}");
    if Command::new("kpt").arg("version").output().is_err() {
        return skip("kpt is not installed: the fixture is not run under kpt");
    }
    // kpt runs the same binary as a spec v1 function: the same items.
    write(&dir, "pkg/resources.yaml", &resources(3, 10));
    let mut kpt_out = String::new();
    for i in 0..2 {
        let out = Command::new("kpt")
            .args(["fn", "eval", "pkg", "--exec"])
            .arg(dir.join("bin/fn.py"))
            .arg("--fn-config")
            .arg(dir.join(format!("fn-{i}.yaml")))
            .current_dir(&dir)
            .output()
            .expect("kpt runs");
        assert!(out.status.success(), "kpt: {}", text(&out.stderr));
        kpt_out = std::fs::read_to_string(dir.join("pkg/resources.yaml")).expect("read");
    }
    let without_ids = |t: &str| {
        normalized_items(t)
            .into_iter()
            .map(|i| {
                i.lines()
                    .filter(|l| !l.contains("config.k8s.io/id"))
                    .collect::<Vec<_>>()
                    .join("\n")
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(
        without_ids(&kpt_out),
        without_ids(&out),
        "kpt's items differ"
    );
}

/// Options for a library build that lets exec functions run and passes
/// them the start log.
fn library_options(log: &Path) -> krusty_api::Options {
    krusty_api::Options {
        functions: krusty_api::Policy {
            enable_alpha_plugins: true,
            enable_exec: true,
            envs: vec![format!("FN_STARTS={}", log.display())],
            ..krusty_api::Policy::default()
        },
        ..krusty_api::Options::default()
    }
}

#[test]
fn a_library_engine_reuses_its_servers_across_builds_and_stops_them_when_dropped() {
    let Some(dir) = fixture_folder("engine", &resources(3, 10)) else {
        return;
    };
    let log = dir.join("starts.log");
    let marker = dir.join("bin").to_string_lossy().into_owned();
    kustomization(&dir, "bin/fn.py", 2, true, "");
    let options = library_options(&log);
    let engine = krusty_api::Engine::new(options.clone());
    let build = |engine: &krusty_api::Engine| {
        engine
            .build(&dir)
            .and_then(|b| b.to_yaml())
            .unwrap_or_else(|e| panic!("build: {e}"))
    };
    let first = build(&engine);
    let second = build(&engine);
    assert_eq!(first, second);
    assert!(first.contains("fn.example.com/step-1: \"1\""), "{first}");
    assert_eq!(
        starts(&log),
        1,
        "the second build reuses the first's server"
    );
    assert_eq!(engine.servers_running(), 1);
    assert_eq!(processes_with(&marker).len(), 1, "one server runs");
    drop(engine);
    assert_eq!(
        processes_with(&marker),
        Vec::<String>::new(),
        "dropping the engine stops its server"
    );
    // Two engines in one process: each starts and stops its own.
    let (one, two) = (
        krusty_api::Engine::new(options.clone()),
        krusty_api::Engine::new(options.clone()),
    );
    assert_eq!(build(&one), first);
    assert_eq!(build(&two), first);
    assert_eq!(starts(&log), 3);
    drop(one);
    assert_eq!(two.servers_running(), 1, "another engine's drop leaves it");
    assert_eq!(processes_with(&marker).len(), 1);
    drop(two);
    // A build with an engine of its own leaves nothing once it returns.
    let alone = krusty_api::build_yaml(&dir, &options).expect("build");
    assert_eq!(alone, first);
    assert_eq!(starts(&log), 4);
    assert_eq!(processes_with(&marker), Vec::<String>::new());
    assert_nothing_left(&dir);
}

#[test]
fn fifty_calls_start_one_server() {
    let Some(dir) = fixture_folder("fifty", &resources(20, 10)) else {
        return;
    };
    let out = same_as_v1(&dir, "bin/fn.py", 50, "");
    assert!(out.contains("fn.example.com/step-49: \"49\""));
}

#[test]
fn a_four_megabyte_list_crosses_the_socket() {
    // 2,000 ConfigMaps of 2 KiB: about 4.4 MB on the wire.
    let Some(dir) = fixture_folder("large", &resources(2000, 2048)) else {
        return;
    };
    let out = same_as_v1(&dir, "bin/fn.py", 1, "");
    assert!(out.len() > 4_000_000, "{}", out.len());
}

#[test]
fn a_server_that_dies_is_started_again() {
    let Some(dir) = fixture_folder("dies", &resources(3, 10)) else {
        return;
    };
    let log = dir.join("starts.log");
    kustomization(&dir, "bin/fn.py", 3, false, "");
    let v1 = krusty(&dir, &log, &["."]);
    assert!(v1.status.success(), "{}", text(&v1.stderr));
    // The second call kills the server (once): krusty starts it again and
    // sends the call again.
    let marker = dir.join("died");
    let extra = format!("  misbehave: die-once\n  marker: {}\n", marker.display());
    kustomization(&dir, "bin/fn.py", 3, true, "");
    write(
        &dir,
        "fn-1.yaml",
        &config(
            "fn-1",
            "bin/fn.py",
            true,
            "fn.example.com/step-1",
            "1",
            &extra,
        ),
    );
    let v2 = krusty(&dir, &log, &["."]);
    assert!(v2.status.success(), "{}", text(&v2.stderr));
    assert!(marker.exists(), "the server died on purpose");
    assert_eq!(text(&v2.stdout), text(&v1.stdout));
    assert_eq!(starts(&log), 2, "started again once");
    assert_nothing_left(&dir);
}

#[test]
fn a_server_that_never_gets_ready_falls_back_to_v1_with_a_warning() {
    let Some(dir) = fixture_folder("never-ready", &resources(3, 10)) else {
        return;
    };
    let log = dir.join("starts.log");
    kustomization(&dir, "bin/fn.py", 3, false, "");
    let v1 = krusty(&dir, &log, &["."]);
    kustomization(&dir, "bin/fn.py", 3, true, "");
    let v2 = support::krusty_command()
        .args([
            "build",
            "--enable-alpha-plugins",
            "--enable-exec",
            "-e",
            "FN_NEVER_READY=1",
            ".",
        ])
        .current_dir(&dir)
        .output()
        .expect("krusty runs");
    assert!(v2.status.success(), "{}", text(&v2.stderr));
    assert_eq!(text(&v2.stdout), text(&v1.stdout));
    let stderr = text(&v2.stderr);
    assert_eq!(stderr.matches("Warning: function").count(), 1, "{stderr}");
    assert!(
        stderr.contains("runs as a spec v1 function for the rest of the run")
            && stderr.contains("told never to be ready"),
        "{stderr}"
    );
    assert_nothing_left(&dir);
}

#[test]
fn a_hung_request_times_out_and_stops_the_server() {
    let Some(dir) = fixture_folder("hung", &resources(3, 10)) else {
        return;
    };
    kustomization(&dir, "bin/fn.py", 1, true, "  misbehave: hang\n");
    let started = Instant::now();
    let out = krusty(
        &dir,
        &dir.join("starts.log"),
        &["--function-timeout", "2", "."],
    );
    assert!(!out.status.success());
    assert!(started.elapsed() < Duration::from_secs(20));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("timed out after 2 s"), "{stderr}");
    assert_nothing_left(&dir);
}

#[test]
fn malformed_answers_are_clear_errors() {
    let Some(dir) = fixture_folder("malformed", &resources(3, 10)) else {
        return;
    };
    for (misbehave, expected) in [
        ("malformed", "its server did not answer with a ResourceList"),
        ("status", "its server answered HTTP 500"),
    ] {
        kustomization(
            &dir,
            "bin/fn.py",
            1,
            true,
            &format!("  misbehave: {misbehave}\n"),
        );
        let out = krusty(&dir, &dir.join("starts.log"), &["."]);
        assert!(!out.status.success(), "{misbehave}");
        let stderr = text(&out.stderr);
        assert!(stderr.contains(expected), "{misbehave}: {stderr}");
        assert!(stderr.contains("fn-0"), "the function is named: {stderr}");
    }
    assert_nothing_left(&dir);
}

#[test]
fn several_targets_share_one_server_and_get_a_file_each() {
    if !python_ready() {
        return skip("python3 with PyYAML is missing");
    }
    let dir = scratch("targets");
    install_function(&dir);
    let log = dir.join("starts.log");
    write(&dir, "base/resources.yaml", &resources(3, 10));
    write(
        &dir,
        "base/kustomization.yaml",
        "resources:\n- resources.yaml\n",
    );
    let mut singles = Vec::new();
    for overlay in ["overlays/dev", "overlays/prod"] {
        let o = dir.join(overlay);
        write(&o, "resources.yaml", "");
        kustomization(&o, "../../bin/fn.py", 2, true, "");
        write(
            &o,
            "kustomization.yaml",
            "resources:\n- ../../base\ntransformers:\n- fn-0.yaml\n- fn-1.yaml\n",
        );
        let single = krusty(&dir, &log, &[overlay]);
        assert!(single.status.success(), "{}", text(&single.stderr));
        singles.push(text(&single.stdout));
    }
    std::fs::remove_file(&log).expect("reset the log");
    let out = krusty(
        &dir,
        &log,
        &["overlays/dev", "./overlays/prod/", "-o", "out"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(out.stdout, b"");
    assert_eq!(starts(&log), 1, "one server for both targets");
    let read = |name: &str| std::fs::read_to_string(dir.join("out").join(name)).expect(name);
    assert_eq!(read("overlays_dev.yaml"), singles[0]);
    assert_eq!(read("overlays_prod.yaml"), singles[1]);
    assert_nothing_left(&dir);

    // A planted link is replaced, not written through.
    let victim = dir.join("victim");
    std::fs::write(&victim, "keep\n").expect("write");
    std::fs::remove_file(dir.join("out/overlays_dev.yaml")).expect("rm");
    std::os::unix::fs::symlink(&victim, dir.join("out/overlays_dev.yaml")).expect("plant");
    let out = krusty(&dir, &log, &["overlays/dev", "overlays/prod", "-o", "out"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(std::fs::read_to_string(&victim).expect("read"), "keep\n");
    assert_eq!(read("overlays_dev.yaml"), singles[0]);

    // All or nothing: a failing target writes no file and is named.
    let out = krusty(
        &dir,
        &log,
        &["overlays/dev", "overlays/missing", "-o", "out2"],
    );
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("target 'overlays/missing'"),
        "{}",
        text(&out.stderr)
    );
    assert!(!dir.join("out2").exists());
    // Two targets with one file name fail before anything is built.
    let out = krusty(&dir, &log, &["overlays/dev", "overlays/dev/", "-o", "out3"]);
    assert!(text(&out.stderr).contains("would both be written to overlays_dev.yaml"));
    // Several targets need an output folder.
    let out = krusty(&dir, &log, &["overlays/dev", "overlays/prod"]);
    assert!(text(&out.stderr).contains("needs -o OUTDIR"));
    assert_nothing_left(&dir);
}

#[test]
fn an_interrupt_stops_the_servers() {
    let Some(dir) = fixture_folder("interrupt", &resources(3, 10)) else {
        return;
    };
    let (log, mut child) = krusty_on_a_hung_call(&dir);
    assert_eq!(starts(&log), 1, "the server started");
    std::thread::sleep(Duration::from_millis(300));
    // SAFETY: kill(2) on the child we started.
    unsafe {
        libc::kill(child.id() as libc::pid_t, libc::SIGTERM);
    }
    let status = child.wait().expect("wait");
    assert_eq!(status.code(), Some(128 + libc::SIGTERM));
    assert_nothing_left(&dir);
}

#[test]
fn a_python_http_function_from_another_author_serves_krusty() {
    // The SDK's own Python example (standard library only, server only):
    // krusty's client speaks its HTTP contract, JSON answers and 422 alike.
    let source =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../krusty-fn/tests/python/krm_v2_http.py");
    if !source.is_file() {
        return skip("crates/krusty-fn/tests/python/krm_v2_http.py is missing");
    }
    let dir = scratch("python-sdk-side");
    std::fs::create_dir_all(dir.join("bin")).expect("mkdir");
    std::fs::copy(&source, dir.join("bin/fn.py")).expect("copy");
    write(&dir, "resources.yaml", &resources(5, 10));
    let labels = |name: &str, data: &str| {
        format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  annotations:\n    krusty.dev/function-server: http\n    config.kubernetes.io/function: |\n      exec:\n        path: bin/fn.py\n{data}"
        )
    };
    write(&dir, "a.yaml", &labels("a", "data:\n  team: blue\n"));
    write(&dir, "b.yaml", &labels("b", "data:\n  tier: gold\n"));
    write(
        &dir,
        "kustomization.yaml",
        "resources:\n- resources.yaml\ntransformers:\n- a.yaml\n- b.yaml\n",
    );
    let out = krusty(&dir, &dir.join("starts.log"), &["."]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert_eq!(stdout.matches("team: blue").count(), 5, "{stdout}");
    assert_eq!(stdout.matches("tier: gold").count(), 5, "{stdout}");
    // No labels: an error result and status 422, reported as a failed run.
    write(&dir, "b.yaml", &labels("b", ""));
    let out = krusty(&dir, &dir.join("starts.log"), &["."]);
    assert!(!out.status.success());
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("the function reported errors (its server answered HTTP 422"),
        "{stderr}"
    );
    assert_nothing_left(&dir);
}

#[test]
fn a_krusty_killed_outright_leaves_nothing_for_long() {
    let Some(dir) = fixture_folder("sigkill", &resources(3, 10)) else {
        return;
    };
    let (log, mut child) = krusty_on_a_hung_call(&dir);
    let folder = std::env::temp_dir().join(format!("krusty-fn-server-{}-0", child.id()));
    assert!(
        folder.is_dir(),
        "{} exists while it serves",
        folder.display()
    );
    child.kill().expect("SIGKILL");
    child.wait().expect("wait");
    // The watchdog kills the server; the next krusty that starts one
    // removes the folder.
    assert_nothing_left(&dir);
    kustomization(&dir, "bin/fn.py", 1, true, "");
    let out = krusty(&dir, &log, &["."]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(!folder.exists(), "{} is left", folder.display());
    assert_nothing_left(&dir);
}

/// podman, or a loud skip.
fn podman_ready() -> bool {
    let ready = support::podman::podman_works();
    if !ready {
        skip("podman cannot run containers here: container servers are not tested");
    }
    ready
}

/// The containers (any state) of krusty process `pid`.
fn containers_of(pid: u32) -> String {
    support::run(
        with_podman_conf(Command::new("podman"))
            .args(["ps", "-a", "--format", "{{.Names}}", "--filter"])
            .arg(format!("name=^krusty-fn-{pid}-")),
    )
    .trim()
    .to_string()
}

/// An image `image` of the SDK's example `bin`, packaged by the SDK's
/// script (no label: the config's opt-in makes it a server).
fn package_example(bin: &str, image: &str) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../krusty-fn/scripts/package.sh");
    support::run(
        with_podman_conf(Command::new(script))
            .arg("--prebuilt")
            .arg(example(bin))
            .args(["--cli", "podman", bin, image]),
    );
}

/// An executable shell script `dir/rel` running `body`.
fn script(dir: &Path, rel: &str, body: &str) -> PathBuf {
    write(dir, rel, &format!("#!/bin/sh\n{body}\n"));
    let path = dir.join(rel);
    std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("chmod");
    path
}

#[test]
fn a_container_server_is_removed_soon_after_krusty_is_killed_outright() {
    if !podman_ready() {
        return;
    }
    let dir = scratch("container-sigkill");
    let image = "localhost/krusty-test/v2srv-sigkill:v1";
    package_example("krm-set-annotations", image);
    // The container server answers the first transformer and stays up
    // for the run; the second, a spec v1 exec function, hangs.
    let hanging = dir.join("hanging");
    script(
        &dir,
        "bin/hang",
        &format!("touch {}\nexec sleep 600", hanging.display()),
    );
    write(&dir, "resources.yaml", &resources(3, 10));
    write(
        &dir,
        "a.yaml",
        &format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: owners\n  annotations:\n    krusty.dev/function-server: http\n    config.kubernetes.io/function: |\n      container:\n        image: {image}\ndata:\n  example.com/owner: platform\n"),
    );
    write(
        &dir,
        "b.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: hang\n  annotations:\n    config.kubernetes.io/function: |\n      exec:\n        path: bin/hang\n",
    );
    write(
        &dir,
        "kustomization.yaml",
        "resources:\n- resources.yaml\ntransformers:\n- a.yaml\n- b.yaml\n",
    );
    let mut child = with_podman_conf(support::krusty_command())
        .args(["build", "--enable-alpha-plugins", "--enable-exec", "."])
        .current_dir(&dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("krusty runs");
    let pid = child.id();
    wait_until(Duration::from_secs(60), Duration::from_millis(100), || {
        hanging.exists()
    });
    assert!(hanging.exists(), "the build reached the hanging function");
    assert_ne!(containers_of(pid), "", "the server's container runs");
    child.kill().expect("SIGKILL");
    child.wait().expect("wait");
    let killed = Instant::now();
    wait_until(CONTAINER_GRACE, Duration::from_millis(100), || {
        containers_of(pid).is_empty()
    });
    assert_eq!(
        containers_of(pid),
        "",
        "the server's container outlived krusty by {CONTAINER_GRACE:?}"
    );
    assert!(killed.elapsed() < CONTAINER_GRACE);
    assert_nothing_left(&dir);
}

#[test]
fn a_server_whose_log_passes_its_bound_is_stopped_and_fails_the_build() {
    let Some(dir) = fixture_folder("log-bound", &resources(3, 10)) else {
        return;
    };
    let log = dir.join("starts.log");
    let fn_py = dir.join("bin/fn.py");
    // 17 MB before it serves; then, a server that writes without end
    // while it serves.
    for (name, noise) in [
        ("chatty-at-start", "yes chatty | head -c 17000000 >&2"),
        ("chatty-always", "yes chatty >&2 &"),
    ] {
        script(
            &dir,
            &format!("bin/{name}"),
            &format!("{noise}\nexec python3 {} \"$@\"", fn_py.display()),
        );
        kustomization(&dir, &format!("bin/{name}"), 2, true, "");
        let started = Instant::now();
        let out = krusty(&dir, &log, &["."]);
        assert!(!out.status.success(), "{name}");
        assert!(started.elapsed() < Duration::from_secs(60), "{name}");
        let stderr = text(&out.stderr);
        assert!(
            stderr.contains("/fn-0.")
                && stderr.contains("more than 16 MiB on stdout and stderr")
                && stderr.contains("and was stopped; its log starts with: chatty\nchatty"),
            "{name}: {stderr}"
        );
        assert!(!stderr.contains("Warning"), "no fallback: {stderr}");
        assert_nothing_left(&dir);
    }
}

#[test]
fn an_answer_over_the_output_bound_stops_its_server_and_fails_the_build() {
    let Some(dir) = fixture_folder("answer-bound", &resources(20, 100)) else {
        return;
    };
    kustomization(&dir, "bin/fn.py", 1, true, "");
    let out = krusty(
        &dir,
        &dir.join("starts.log"),
        &["--function-max-output", "4000", "."],
    );
    assert!(!out.status.success());
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("/fn-0.")
            && stderr.contains("larger than --function-max-output (4000 bytes)")
            && stderr.contains("its server was stopped"),
        "{stderr}"
    );
    assert_nothing_left(&dir);
    // The same bound over gRPC, on the SDK's example.
    let tree = dir.join("grpc");
    write(&tree, "resources.yaml", &resources(20, 100));
    write(
        &tree,
        "fn.yaml",
        &format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: owners\n  annotations:\n    krusty.dev/function-server: grpc\n    config.kubernetes.io/function: |\n      exec:\n        path: {}\ndata:\n  example.com/owner: platform\n", example("krm-set-annotations").display()),
    );
    write(
        &tree,
        "kustomization.yaml",
        "resources:\n- resources.yaml\ntransformers:\n- fn.yaml\n",
    );
    let out = krusty(
        &tree,
        &dir.join("starts.log"),
        &["--function-max-output", "4000", "."],
    );
    assert!(!out.status.success());
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("/owners.")
            && stderr.contains("larger than --function-max-output (4000 bytes)")
            && stderr.contains("its server was stopped"),
        "{stderr}"
    );
}

/// Two server functions, `dir/bin/a` and `dir/bin/b` (wrappers of the
/// fixture), called alternately four times by the kustomization in
/// `dir/base`; each start logs how many servers of the two were live then
/// in `dir/others.log`.
fn two_functions_alternately(dir: &Path) {
    let fn_py = dir.join("bin/fn.py");
    let live = dir.join("live");
    for name in ["a", "b"] {
        script(
            dir,
            &format!("bin/{name}"),
            &format!(
                "mkdir -p {live}\nn=0\nfor f in {live}/*; do [ -e \"$f\" ] && kill -0 \"${{f##*/}}\" 2>/dev/null && n=$((n+1)); done\necho $n >> {others}\ntouch {live}/$$\nexec python3 {fn_py} \"$@\"",
                live = live.display(),
                others = dir.join("others.log").display(),
                fn_py = fn_py.display()
            ),
        );
    }
    let base = dir.join("base");
    write(&base, "resources.yaml", &resources(3, 10));
    let mut k = String::from("resources:\n- resources.yaml\ntransformers:\n");
    for (i, name) in ["a", "b", "a", "b"].iter().enumerate() {
        write(
            &base,
            &format!("fn-{i}.yaml"),
            &config(
                &format!("fn-{i}"),
                &dir.join("bin").join(name).to_string_lossy(),
                true,
                &format!("fn.example.com/step-{i}"),
                &i.to_string(),
                "",
            ),
        );
        k.push_str(&format!("- fn-{i}.yaml\n"));
    }
    write(&base, "kustomization.yaml", &k);
}

/// The counts `dir/others.log` holds, emptied.
fn live_at_starts(dir: &Path) -> Vec<String> {
    let path = dir.join("others.log");
    let counts = std::fs::read_to_string(&path)
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect();
    let _ = std::fs::remove_file(path);
    counts
}

#[test]
fn the_number_of_live_servers_is_bounded_and_builds_stay_correct() {
    let Some(dir) = fixture_folder("max-servers", &resources(3, 10)) else {
        return;
    };
    let log = dir.join("starts.log");
    two_functions_alternately(&dir);
    let unbounded = krusty(&dir, &log, &["base"]);
    assert!(unbounded.status.success(), "{}", text(&unbounded.stderr));
    assert_eq!(starts(&log), 2, "one server each");
    assert_eq!(live_at_starts(&dir), ["0", "1"]);
    // One at a time: the idle one is stopped for the other, four times.
    std::fs::remove_file(&log).expect("reset");
    let one = krusty(&dir, &log, &["--max-function-servers", "1", "base"]);
    assert!(one.status.success(), "{}", text(&one.stderr));
    assert_eq!(text(&one.stdout), text(&unbounded.stdout));
    assert_eq!(starts(&log), 4, "{}", text(&one.stderr));
    assert_eq!(live_at_starts(&dir), ["0", "0", "0", "0"]);
    assert!(!text(&one.stderr).contains("Warning"), "no fallback");
    assert_nothing_left(&dir);
    // Several targets built at once, sharing one place: each gets its
    // own build's output.
    for t in ["t1", "t2", "t3"] {
        write(
            &dir,
            &format!("{t}/kustomization.yaml"),
            "resources:\n- ../base\n",
        );
    }
    let out = krusty(
        &dir,
        &log,
        &["--max-function-servers", "1", "t1", "t2", "t3", "-o", "out"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let counts = live_at_starts(&dir);
    assert!(counts.iter().all(|n| n == "0"), "{counts:?}");
    for t in ["t1", "t2", "t3"] {
        let single = krusty(&dir, &log, &[t]);
        let file = std::fs::read_to_string(dir.join(format!("out/{t}.yaml"))).expect("read");
        assert_eq!(file, text(&single.stdout), "{t}");
    }
    assert_nothing_left(&dir);
    let zero = krusty(&dir, &log, &["--max-function-servers", "0", "base"]);
    assert!(!zero.status.success());
    assert!(
        text(&zero.stderr).contains("--max-function-servers must be at least 1"),
        "{}",
        text(&zero.stderr)
    );
}
