//! Remote bases and files against real servers on loopback: git over smart
//! HTTP, HTTPS (a throwaway CA), `file://` and SSH (a local `ssh` stand-in),
//! and a plain HTTPS file server.
//!
//! Each case in `tests/remote/cases/` is a kustomization whose URLs name
//! the servers through placeholders (`{{HTTP}}`, `{{HTTPS}}`, `{{FILES}}`,
//! `{{SRV}}`, `{{COMMIT_V1}}`); its `expected.yaml` is `kubectl kustomize`'s
//! output on the same servers, with the same placeholders
//! (`KRUSTY_BLESS=1` records it), or `expected_error.txt` a part of
//! krusty's message (the tests' one convention, `support::Case`). Where kubectl is installed, each case is also run
//! through it live. The repositories are made from `tests/remote/repos/`
//! with fixed dates, so their commits are the same on every run.
//!
//! The other tests check the cache: what a second build fetches, a branch
//! that moves, `--offline`, concurrent builds on an empty cache, a build
//! killed while fetching, parallel fetches and one fetch per remote.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use support::{
    bare_clone, diff, make_certificates, output_text, run, scratch, serve, stable_message, write,
    Case, Expected,
};

/// `args` as the server script takes them.
fn os<'a>(args: &'a [&'a str]) -> Vec<&'a std::ffi::OsStr> {
    args.iter().map(std::ffi::OsStr::new).collect()
}

/// The servers and repositories every test shares.
struct World {
    /// Holds `srv/` (bare repositories), `tls/`, `bin/` (the `git` log
    /// wrapper).
    dir: PathBuf,
    http: String,
    https: String,
    files: String,
    hang: String,
    commit_v1: String,
    /// Keeps the servers' stdin open: they stop when the tests end.
    _servers: Vec<Child>,
}

fn world() -> &'static World {
    static WORLD: OnceLock<World> = OnceLock::new();
    WORLD.get_or_init(World::start)
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/remote")
}

fn support_file(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/support")
        .join(name)
}

impl World {
    fn start() -> World {
        let dir = scratch("remote", "world");
        let srv = dir.join("srv");
        std::fs::create_dir_all(&srv).unwrap();
        let tls = make_certificates(&dir.join("tls"));
        let srv_s = srv.to_str().unwrap();
        let (crt, key) = (tls.join("server.crt"), tls.join("server.key"));
        let (crt, key) = (crt.to_str().unwrap(), key.to_str().unwrap());
        let files_dir = fixtures().join("repos/files");
        let (http, http_port) = serve(&os(&["0", srv_s]));
        let (https, https_port) = serve(&os(&["0", srv_s, crt, key]));
        let (files, files_port) = serve(&os(&[
            "0",
            files_dir.to_str().unwrap(),
            crt,
            key,
            "--static",
        ]));
        let (hang, hang_port) = serve(&os(&["0", srv_s, "--hang"]));
        let mut world = World {
            http: format!("http://127.0.0.1:{http_port}"),
            https: format!("https://127.0.0.1:{https_port}"),
            files: format!("https://127.0.0.1:{files_port}"),
            hang: format!("http://127.0.0.1:{hang_port}"),
            commit_v1: String::new(),
            _servers: vec![http, https, files, hang],
            dir,
        };
        world.make_repositories();
        world.make_git_log_wrapper();
        world
    }

    fn srv(&self) -> PathBuf {
        self.dir.join("srv")
    }

    /// `text` with the placeholders replaced.
    fn fill(&self, text: &str) -> String {
        text.replace("{{HTTPS}}", &self.https)
            .replace("{{HTTP}}", &self.http)
            .replace("{{FILES}}", &self.files)
            .replace("{{HANG}}", &self.hang)
            .replace("{{SRV}}", self.srv().to_str().unwrap())
            .replace("{{COMMIT_V1}}", &self.commit_v1)
    }

    /// `text` with the servers' addresses put back as placeholders.
    fn unfill(&self, text: &str) -> String {
        text.replace(&self.https, "{{HTTPS}}")
            .replace(&self.http, "{{HTTP}}")
            .replace(&self.files, "{{FILES}}")
            .replace(self.srv().to_str().unwrap(), "{{SRV}}")
            .replace(&self.commit_v1, "{{COMMIT_V1}}")
    }

    /// `apps.git` (v1 tagged v1.0.0 and branch `release`, v2 on `main`, a
    /// symlink out of the repository), `lib.git` (tag v1),
    /// and `withsub.git` (`lib.git` as a submodule).
    fn make_repositories(&mut self) {
        let repos = fixtures().join("repos");
        let work = self.dir.join("work");
        let apps = work.join("apps");
        self.commit_tree(&apps, &repos.join("apps/v1"), "v1", true);
        git(&apps, &["tag", "-a", "-m", "v1.0.0", "v1.0.0"]);
        git(&apps, &["branch", "release"]);
        self.commit_v1 = git(&apps, &["rev-parse", "HEAD"]).trim().to_string();
        self.commit_tree(&apps, &repos.join("apps/v2"), "v2", false);
        let lib = work.join("lib");
        self.commit_tree(&lib, &repos.join("lib/v1"), "v1", true);
        git(&lib, &["tag", "v1"]);
        for name in ["apps", "lib"] {
            let bare = self.srv().join(format!("{name}.git"));
            bare_clone(&work.join(name), &bare);
        }
        // withsub: lib.git as a submodule (by its HTTP URL) under lib/.
        let withsub = work.join("withsub");
        std::fs::create_dir_all(&withsub).unwrap();
        git(&withsub, &["init", "-q", "-b", "main"]);
        let lib_url = format!("{}/lib.git", self.http);
        git(&withsub, &["submodule", "add", "-q", &lib_url, "lib"]);
        write(&withsub, "kustomization.yaml", "resources:\n- lib/quota\n");
        git(&withsub, &["add", "-A"]);
        git(&withsub, &["commit", "-qm", "with a submodule"]);
        let bare = self.srv().join("withsub.git");
        bare_clone(&withsub, &bare);
    }

    /// Commits the tree `from` (placeholders filled) as the whole content
    /// of the repository in `repo`.
    fn commit_tree(&self, repo: &Path, from: &Path, message: &str, init: bool) {
        if init {
            std::fs::create_dir_all(repo).unwrap();
            git(repo, &["init", "-q", "-b", "main"]);
        }
        git(repo, &["rm", "-rq", "--ignore-unmatch", "."]);
        support::copy_tree_filled(from, repo, &|text| self.fill(text));
        if message == "v2" {
            std::os::unix::fs::symlink("/tmp", repo.join("escape")).unwrap();
        }
        git(repo, &["add", "-A"]);
        git(repo, &["commit", "-qm", message]);
    }

    /// `bin/git`: logs each invocation (time, arguments) to `$GIT_LOG`
    /// and runs the real git; with `$GIT_SLOW_FETCH`, sleeps that many
    /// seconds before a fetch.
    fn make_git_log_wrapper(&self) {
        let real = run(Command::new("sh").args(["-c", "command -v git"]));
        let script = format!(
            "#!/bin/sh\n\
             [ -n \"$GIT_LOG\" ] && echo \"start $(date +%s.%N) $*\" >> \"$GIT_LOG\"\n\
             if [ \"$1\" = fetch ] && [ -n \"$GIT_SLOW_FETCH\" ]; then sleep \"$GIT_SLOW_FETCH\"; fi\n\
             {} \"$@\"\n\
             status=$?\n\
             [ -n \"$GIT_LOG\" ] && echo \"end $(date +%s.%N) $*\" >> \"$GIT_LOG\"\n\
             exit $status\n",
            real.trim()
        );
        write(&self.dir, "bin/git", &script);
        let path = self.dir.join("bin/git");
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    /// The environment the tools run in: the CA trusted, SSH through the
    /// stand-in, a cache of the test's own.
    fn env(&self, cmd: &mut Command, cache: &Path) {
        let ca = self.dir.join("tls/ca.crt");
        cmd.env("SSL_CERT_FILE", &ca)
            .env("GIT_SSL_CAINFO", &ca)
            .env("GIT_SSH_COMMAND", support_file("fake-ssh"))
            .env("KRUSTY_TEST_SRV", self.srv())
            .env("KRUSTY_CACHE_DIR", cache)
            .env_remove("GIT_LOG")
            .env_remove("GIT_SLOW_FETCH");
    }

    /// `krusty build target` with `args`, on `cache`; `git` logged to
    /// `log` when given.
    fn krusty(&self, target: &str, cache: &Path, log: Option<&Path>, args: &[&str]) -> Command {
        let mut cmd = support::krusty_command();
        cmd.arg("build").arg(target).args(args);
        self.env(&mut cmd, cache);
        if let Some(log) = log {
            let path = std::env::var_os("PATH").unwrap_or_default();
            let mut dirs = vec![self.dir.join("bin")];
            dirs.extend(std::env::split_paths(&path));
            cmd.env("PATH", std::env::join_paths(dirs).unwrap())
                .env("GIT_LOG", log);
        }
        cmd
    }
}

/// Runs git in `dir` with fixed names and dates (the same commits on every
/// run).
fn git(dir: &Path, args: &[&str]) -> String {
    run(Command::new("git")
        .current_dir(dir)
        .args(args)
        .env("GIT_AUTHOR_NAME", "krusty")
        .env("GIT_AUTHOR_EMAIL", "krusty@example.invalid")
        .env("GIT_COMMITTER_NAME", "krusty")
        .env("GIT_COMMITTER_EMAIL", "krusty@example.invalid")
        .env("GIT_AUTHOR_DATE", "2026-01-01T00:00:00Z")
        .env("GIT_COMMITTER_DATE", "2026-01-01T00:00:00Z")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1"))
}

fn kubectl_available() -> bool {
    Command::new("kubectl")
        .arg("version")
        .arg("--client")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// One case: its tree written with the placeholders filled; the target to
/// build.
fn prepare(world: &World, case: &Case, into: &Path) -> String {
    support::copy_tree_filled(&case.dir, into, &|text| world.fill(text));
    for name in [
        "expected.yaml",
        "expected_error.txt",
        "kubectl_error.txt",
        "target",
    ] {
        let _ = std::fs::remove_file(into.join(name));
    }
    match case.read("target") {
        Some(t) => world.fill(t.trim()),
        None => into.to_str().unwrap().to_string(),
    }
}

#[test]
fn cases_match_kustomize() {
    let world = world();
    let bless = std::env::var_os("KRUSTY_BLESS").is_some();
    let live = kubectl_available();
    let mut failures = Vec::new();
    for case in &support::cases(&fixtures().join("cases")) {
        let name = &case.name;
        let dir = scratch("remote", name);
        let input = dir.join("in");
        std::fs::create_dir_all(&input).unwrap();
        let target = prepare(world, case, &input);
        let cache = dir.join("cache");
        let out = world.krusty(&target, &cache, None, &[]).output().unwrap();
        let (stdout, stderr) = output_text(&out);
        let kubectl = live.then(|| {
            let mut cmd = Command::new("kubectl");
            cmd.arg("kustomize").arg(&target);
            world.env(&mut cmd, &cache);
            output_text(&cmd.output().unwrap())
        });
        if bless {
            if let Some((k_out, k_err)) = &kubectl {
                if k_err.is_empty() || !k_out.is_empty() {
                    std::fs::write(case.path("expected.yaml"), world.unfill(k_out)).unwrap();
                } else {
                    std::fs::write(
                        case.path("kubectl_error.txt"),
                        stable_message(&world.unfill(k_err), "/tmp/kustomize-"),
                    )
                    .unwrap();
                }
            }
        }
        let Some(want) = case.expected() else {
            failures.push(format!(
                "{name}: no expected.yaml nor expected_error.txt; krusty says:\n{}",
                world.unfill(&stderr)
            ));
            continue;
        };
        let want = want.filled(|text| world.fill(text)).quiet();
        if let Err(why) = want.check(&out) {
            failures.push(format!("{name}: krusty differs from the golden one: {why}"));
        }
        match (&want, &kubectl) {
            (Expected::Output { .. }, Some((k_out, _))) if *k_out != stdout => {
                failures.push(format!(
                    "{name}: krusty differs from kubectl kustomize\n{}",
                    diff(k_out, &stdout)
                ));
            }
            (Expected::Error(_), Some((k_out, k_err))) if !k_out.is_empty() || k_err.is_empty() => {
                failures.push(format!("{name}: kubectl kustomize does not fail:\n{k_out}"));
            }
            _ => {}
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The `git` subcommands of a log, in order.
fn git_calls(log: &Path) -> Vec<String> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.strip_prefix("start "))
        .map(|l| l.split_whitespace().nth(1).unwrap_or("").to_string())
        .collect()
}

/// A tree with five remote bases: five distinct repository URLs and refs
/// (one by commit), and a sixth reference (inside `nested`) to the same
/// repository and ref as the second.
fn five_remotes(world: &World, dir: &Path) -> String {
    let urls = [
        // localhost: a URL of its own for the same repository.
        world
            .fill("{{HTTP}}/apps.git//base?ref=v1.0.0")
            .replace("127.0.0.1", "localhost"),
        world.fill("{{HTTP}}/lib.git//quota?ref=v1"),
        world.fill("{{HTTPS}}/apps.git//overlay?ref=release"),
        world.fill("file://{{SRV}}/apps.git//nested?ref=main"),
        world.fill("{{HTTP}}/apps.git//base?ref={{COMMIT_V1}}"),
    ];
    write(
        dir,
        "in/kustomization.yaml",
        "resources:\n- a\n- b\n- c\n- d\n- e\n",
    );
    for (sub, url) in ["a", "b", "c", "d", "e"].iter().zip(&urls) {
        write(
            dir,
            &format!("in/{sub}/kustomization.yaml"),
            &format!("namePrefix: {sub}-\nresources:\n- {url}\n"),
        );
    }
    dir.join("in").to_str().unwrap().to_string()
}

#[test]
fn a_second_build_fetches_nothing_and_refs_are_resolved_each_time() {
    let world = world();
    let dir = scratch("remote", "second-build");
    let target = five_remotes(world, &dir);
    let cache = dir.join("cache");
    let first_log = dir.join("first.log");
    let first = run(&mut world.krusty(&target, &cache, Some(&first_log), &[]));
    let fetches = git_calls(&first_log)
        .iter()
        .filter(|c| *c == "fetch")
        .count();
    assert_eq!(
        fetches,
        5,
        "one fetch per distinct repository and ref: {:?}",
        git_calls(&first_log)
    );
    let second_log = dir.join("second.log");
    let second = run(&mut world.krusty(&target, &cache, Some(&second_log), &[]));
    assert_eq!(first, second);
    let calls = git_calls(&second_log);
    assert!(calls.iter().all(|c| c == "ls-remote"), "{calls:?}");
    assert_eq!(
        calls.len(),
        4,
        "the commit-pinned base needs no git at all: {calls:?}"
    );
}

#[test]
fn several_targets_in_one_run_fetch_each_remote_once() {
    let world = world();
    let dir = scratch("remote", "several-targets");
    let first = five_remotes(world, &dir.join("one"));
    let second = five_remotes(world, &dir.join("two"));
    let (cache, log, out) = (dir.join("cache"), dir.join("git.log"), dir.join("out"));
    let out_arg = out.to_str().unwrap();
    run(&mut world.krusty(&first, &cache, Some(&log), &[&second, "-o", out_arg]));
    let calls = git_calls(&log);
    let count = |what: &str| calls.iter().filter(|c| *c == what).count();
    // A build of its own resolves the four refs and fetches the five
    // bases; a second target that did not share its fetcher would resolve
    // the refs again.
    assert_eq!(
        (count("fetch"), count("ls-remote")),
        (5, 4),
        "the two targets share their fetches: {calls:?}"
    );
    let alone = run(&mut world.krusty(&first, &dir.join("cache-alone"), None, &[]));
    let written = std::fs::read_to_string(out.join(support::output_name(&first))).unwrap();
    assert_eq!(written, alone, "the same output as a build of its own");
}

#[test]
fn offline_builds_use_the_cache_only() {
    let world = world();
    let dir = scratch("remote", "offline");
    let target = five_remotes(world, &dir);
    let cache = dir.join("cache");
    let empty = world
        .krusty(&target, &cache, None, &["--offline"])
        .output()
        .unwrap();
    let (out, err) = output_text(&empty);
    assert!(!empty.status.success() && out.is_empty(), "{out}");
    assert!(
        err.contains("--offline") && err.contains("is not in the cache"),
        "{err}"
    );
    let online = run(&mut world.krusty(&target, &cache, None, &[]));
    let log = dir.join("offline.log");
    let offline = run(&mut world.krusty(&target, &cache, Some(&log), &["--offline"]));
    assert_eq!(online, offline);
    assert_eq!(git_calls(&log), Vec::<String>::new());
}

#[test]
fn a_moved_branch_is_seen_on_the_next_build() {
    let world = world();
    let dir = scratch("remote", "moved-branch");
    let work = dir.join("work");
    std::fs::create_dir_all(&work).unwrap();
    git(&work, &["init", "-q", "-b", "main"]);
    let cm = |v: &str| {
        format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: moving\ndata:\n  v: \"{v}\"\n")
    };
    write(&work, "kustomization.yaml", "resources:\n- cm.yaml\n");
    write(&work, "cm.yaml", &cm("1"));
    git(&work, &["add", "-A"]);
    git(&work, &["commit", "-qm", "one"]);
    let bare = world.srv().join("moving.git");
    bare_clone(&work, &bare);
    write(
        &dir,
        "in/kustomization.yaml",
        &world.fill("resources:\n- {{HTTP}}/moving.git?ref=main\n"),
    );
    let target = dir.join("in");
    let target = target.to_str().unwrap();
    let cache = dir.join("cache");
    let before = run(&mut world.krusty(target, &cache, None, &[]));
    assert!(before.contains("v: \"1\""), "{before}");
    write(&work, "cm.yaml", &cm("2"));
    git(&work, &["commit", "-qam", "two"]);
    git(&work, &["push", "-q", bare.to_str().unwrap(), "main"]);
    let after = run(&mut world.krusty(target, &cache, None, &[]));
    assert!(after.contains("v: \"2\""), "{after}");
    let offline = run(&mut world.krusty(target, &cache, None, &["--offline"]));
    assert_eq!(offline, after, "offline builds use the commit last seen");
}

#[test]
fn concurrent_builds_on_an_empty_cache_agree() {
    let world = world();
    let dir = scratch("remote", "concurrent");
    let target = five_remotes(world, &dir);
    let cache = dir.join("cache");
    let expected = run(&mut world.krusty(&target, &dir.join("reference-cache"), None, &[]));
    let children: Vec<Child> = (0..20)
        .map(|_| {
            world
                .krusty(&target, &cache, None, &[])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        let (stdout, stderr) = output_text(&out);
        assert!(out.status.success(), "{stderr}");
        assert_eq!(stdout, expected);
    }
    let staging: Vec<_> = std::fs::read_dir(cache.join("tmp")).unwrap().collect();
    assert!(staging.is_empty(), "staging folders left: {staging:?}");
}

#[test]
fn a_build_killed_while_fetching_leaves_a_usable_cache() {
    let world = world();
    let dir = scratch("remote", "killed");
    let target = five_remotes(world, &dir);
    let cache = dir.join("cache");
    let log = dir.join("git.log");
    let mut slow = world.krusty(&target, &cache, Some(&log), &[]);
    slow.env("GIT_SLOW_FETCH", "30")
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut child = slow.spawn().unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while !git_calls(&log).iter().any(|c| c == "fetch") {
        assert!(Instant::now() < deadline, "no fetch started");
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let left: Vec<_> = std::fs::read_dir(cache.join("tmp")).unwrap().collect();
    assert!(!left.is_empty(), "the killed build was staging a checkout");
    let expected = run(&mut world.krusty(&target, &dir.join("reference-cache"), None, &[]));
    let again = run(&mut world.krusty(&target, &cache, None, &[]));
    assert_eq!(again, expected);
    // The next build removed what the killed one left (its lock is free).
    let left: Vec<_> = std::fs::read_dir(cache.join("tmp")).unwrap().collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn distinct_remotes_are_fetched_in_parallel_and_each_once() {
    let world = world();
    let dir = scratch("remote", "parallel");
    let target = five_remotes(world, &dir);
    let cache = dir.join("cache");
    let log = dir.join("git.log");
    let mut cmd = world.krusty(&target, &cache, Some(&log), &[]);
    cmd.env("GIT_SLOW_FETCH", "1");
    run(&mut cmd);
    let text = std::fs::read_to_string(&log).unwrap();
    let stamps = |kind: &str| -> Vec<f64> {
        text.lines()
            .filter(|l| l.starts_with(kind) && l.split_whitespace().nth(2) == Some("fetch"))
            .map(|l| l.split_whitespace().nth(1).unwrap().parse().unwrap())
            .collect()
    };
    let (starts, ends) = (stamps("start"), stamps("end"));
    assert_eq!(starts.len(), 5, "{text}");
    let first_end = ends.iter().cloned().fold(f64::MAX, f64::min);
    let overlapping = starts.iter().filter(|s| **s < first_end).count();
    assert!(overlapping >= 2, "fetches ran one after another:\n{text}");

    // One repository and ref named by three entries: fetched once.
    let dir = scratch("remote", "once");
    write(
        &dir,
        "in/kustomization.yaml",
        &world.fill(
            "resources:\n- {{HTTP}}/apps.git//base?ref=v1.0.0\n- other\ncomponents:\n- {{HTTP}}/apps.git//comp?ref=v1.0.0\n",
        ),
    );
    write(
        &dir,
        "in/other/kustomization.yaml",
        &world.fill("namePrefix: other-\nresources:\n- {{HTTP}}/apps.git//base?ref=v1.0.0\n"),
    );
    let log = dir.join("git.log");
    run(&mut world.krusty(
        dir.join("in").to_str().unwrap(),
        &dir.join("cache"),
        Some(&log),
        &[],
    ));
    let fetches = git_calls(&log).iter().filter(|c| *c == "fetch").count();
    assert_eq!(fetches, 1, "{:?}", git_calls(&log));
}

#[test]
fn a_server_that_hangs_meets_the_timeout() {
    let world = world();
    let dir = scratch("remote", "hang");
    let cache = dir.join("cache");
    for (url, command) in [
        (
            "{{HANG}}/org/repo//base?timeout=1",
            "fetch --depth=1 {{HANG}}/org/repo HEAD",
        ),
        (
            "git@127.0.0.1:hang.git//base?timeout=1s",
            "fetch --depth=1 git@127.0.0.1:hang.git HEAD",
        ),
    ] {
        write(
            &dir,
            "in/kustomization.yaml",
            &world.fill(&format!("resources:\n- {url}\n")),
        );
        let started = Instant::now();
        let out = world
            .krusty(dir.join("in").to_str().unwrap(), &cache, None, &[])
            .output()
            .unwrap();
        let (stdout, stderr) = output_text(&out);
        assert!(!out.status.success() && stdout.is_empty());
        assert!(
            stderr.contains("hit 1s timeout running '") && stderr.contains(&world.fill(command)),
            "{stderr}"
        );
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{:?}",
            started.elapsed()
        );
    }
}

#[test]
fn cache_dir_and_clean() {
    let world = world();
    let dir = scratch("remote", "cache-command");
    let cache = dir.join("cache");
    let mut show = support::krusty_command();
    show.args(["cache", "dir"]);
    world.env(&mut show, &cache);
    assert_eq!(run(&mut show).trim(), cache.to_str().unwrap());
    write(
        &dir,
        "in/kustomization.yaml",
        &world.fill("resources:\n- {{HTTP}}/lib.git//quota?ref=v1\n"),
    );
    run(&mut world.krusty(dir.join("in").to_str().unwrap(), &cache, None, &[]));
    assert!(cache.join("git").is_dir());
    let mut clean = support::krusty_command();
    clean.args(["cache", "clean"]);
    world.env(&mut clean, &cache);
    run(&mut clean);
    assert!(!cache.exists());
}

#[test]
fn a_base_fetched_from_a_remote_may_not_name_a_local_repository() {
    let world = world();
    let dir = scratch("remote", "file-from-remote");
    // A repository served over HTTP whose kustomization names a
    // repository on the build machine's disk.
    let work = dir.join("work");
    std::fs::create_dir_all(&work).unwrap();
    git(&work, &["init", "-q", "-b", "main"]);
    let local = world.fill("file://{{SRV}}/apps.git//base?ref=v1.0.0");
    write(
        &work,
        "kustomization.yaml",
        &format!("resources:\n- {local}\n"),
    );
    git(&work, &["add", "-A"]);
    git(&work, &["commit", "-qm", "names a local repository"]);
    let bare = world.srv().join("names-local.git");
    bare_clone(&work, &bare);
    let tree = dir.join("tree");
    let remote = format!("{}/names-local.git?ref=main", world.http);
    write(
        &tree,
        "kustomization.yaml",
        &format!("resources:\n- {remote}\n"),
    );
    let out = world
        .krusty(tree.to_str().unwrap(), &dir.join("cache"), None, &[])
        .output()
        .unwrap();
    let (stdout, stderr) = output_text(&out);
    assert!(!out.status.success() && stdout.is_empty(), "{stdout}");
    assert!(
        stderr.contains("may not name a local repository (file://)"),
        "{stderr}"
    );
    // The user's own tree may still name it.
    write(
        &tree,
        "kustomization.yaml",
        &format!("resources:\n- {local}\n"),
    );
    run(&mut world.krusty(tree.to_str().unwrap(), &dir.join("cache"), None, &[]));
}
