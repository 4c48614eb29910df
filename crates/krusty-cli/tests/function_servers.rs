//! KRM function spec v2: functions run as servers, started once per krusty
//! process and reused (docs/function-servers.md, "Orchestrator side").
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
use support::{available, normalized_items, skip, text, wait_until, write};

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
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_krusty"));
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
    let v2 = Command::new(env!("CARGO_BIN_EXE_krusty"))
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
