//! Helm charts inflated by real helm binaries, checked against `kubectl
//! kustomize --enable-helm` (Kustomize v5.5.0) on the same input.
//!
//! helm v3 and v4 are looked for in `$KRUSTY_TEST_HELM3` and
//! `$KRUSTY_TEST_HELM4`, else in `target/helm3/helm` and `target/helm4/helm`
//! (`.ci/run` puts them there); without helm v3 the tests say so and pass.
//!
//! Each case in `tests/helm/cases/` holds `in/` (a kustomization tree);
//! `charts` (lines `DIR CHART…`: charts of `tests/helm/charts/` copied to
//! `in/DIR`); `args` (flags, one per line, added after `--enable-helm
//! --helm-command HELM3` unless they set those); `target` (the folder to
//! build, default `in`); and `expected.yaml`, kubectl's output
//! (`KRUSTY_BLESS=1` records it), or `expected_error.txt`, a part of
//! krusty's message in Kustomize's words, beside `kubectl_error.txt` (the
//! tests' one convention, `support::Case`).
//! Each case is built as each Kustomize release it has an expectation
//! for: where v5.5.0 and v5.8.1 differ, the case holds
//! `expected.VERSION.yaml` or `expected_error.VERSION.txt` for each (made
//! by kubectl v1.32 and v1.37), and a release with no file of its own nor
//! a shared one is not built. `{{HELM4}}` in `args` stands for helm v4.
//! Paths in messages read `{{DIR}}` (the copy built) and `{{HELM}}`.
//! `{{REPO}}` stands for a chart repository served over HTTPS on loopback
//! (a throwaway CA) holding the charts `kitchen` and `webapp`; `{{OCI}}`
//! for an OCI registry on loopback (docker-registry, plain HTTP) holding
//! the same charts under `charts/` (cases that name it are skipped, loudly,
//! when `docker-registry` is not installed). Each case is built with helm
//! v3, and with helm v4 unless it has a `helm4-differs` file saying why.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::OnceLock;

use support::oci::OciRegistry;
use support::{
    make_certificates, output_text, process_gone, run, scratch, serve, stable_message, write, Case,
    KUSTOMIZE_VERSIONS,
};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/helm")
}

/// The helm binary of major version `major`, if installed.
fn helm(major: u32) -> Option<PathBuf> {
    let path = std::env::var_os(format!("KRUSTY_TEST_HELM{major}"))
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../target")
                .join(format!("helm{major}/helm"))
        });
    path.is_file().then_some(path)
}

/// helm v3, or `None` after saying loudly that the tests are skipped.
fn helm3_or_skip(test: &str) -> Option<PathBuf> {
    let found = helm(3);
    if found.is_none() {
        eprintln!(
            "SKIPPED {test}: no helm v3 (set KRUSTY_TEST_HELM3 or run .ci/run, which installs target/helm3/helm)"
        );
    }
    found
}

/// The chart repository and OCI registry every case shares.
struct World {
    repo: String,
    ca: PathBuf,
    /// Serves until the tests end.
    _repo: ChartRepo,
    /// The OCI registry, when docker-registry is installed.
    oci: Option<Registry>,
}

/// A chart repository (an `index.yaml` and the packaged charts) served
/// over HTTPS on loopback, with a throwaway CA.
struct ChartRepo {
    /// `https://127.0.0.1:PORT`.
    url: String,
    /// The CA that signed the server's certificate.
    ca: PathBuf,
    /// The folder served.
    dir: PathBuf,
    /// helm's configuration for packaging.
    helm_home: PathBuf,
    /// Keeps the server's stdin open: it stops when dropped.
    server: Child,
}

impl ChartRepo {
    /// Packages the chart folders `charts` with `helm3` into `dir/repo`,
    /// indexes them and serves the folder.
    fn start(dir: &Path, helm3: &Path, charts: &[PathBuf]) -> ChartRepo {
        let repo = dir.join("repo");
        std::fs::create_dir_all(&repo).unwrap();
        let tls = make_certificates(&dir.join("tls"));
        let (crt, key) = (tls.join("server.crt"), tls.join("server.key"));
        let (server, port) = serve(&[
            "0".as_ref(),
            repo.as_os_str(),
            crt.as_os_str(),
            key.as_os_str(),
            "--static".as_ref(),
        ]);
        let served = ChartRepo {
            url: format!("https://127.0.0.1:{port}"),
            ca: tls.join("ca.crt"),
            dir: repo,
            helm_home: dir.join("helm"),
            server,
        };
        for chart in charts {
            served.publish(helm3, chart);
        }
        served
    }

    /// Packages the chart folder `chart` into the repository (over a
    /// package of the same name and version) and indexes it again.
    fn publish(&self, helm3: &Path, chart: &Path) -> PathBuf {
        let out = run(Command::new(helm3)
            .arg("package")
            .arg(chart)
            .arg("--destination")
            .arg(&self.dir)
            .env("HELM_CONFIG_HOME", &self.helm_home));
        run(Command::new(helm3)
            .args(["repo", "index"])
            .arg(&self.dir)
            .env("HELM_CONFIG_HOME", &self.helm_home));
        let package = out.trim().rsplit(": ").next().unwrap_or_default();
        PathBuf::from(package)
    }

    /// Stops serving: a build that connects fails.
    fn stop(&mut self) {
        let _ = self.server.kill();
        let _ = self.server.wait();
    }
}

impl Drop for ChartRepo {
    fn drop(&mut self) {
        self.stop();
    }
}

/// An OCI registry (docker-registry) on loopback over plain HTTP, holding
/// the packaged charts under `charts/`.
struct Registry {
    /// `oci://127.0.0.1:PORT/charts`.
    url: String,
    /// Serves until the tests end.
    _registry: OciRegistry,
}

fn world(helm3: &Path) -> &'static World {
    static WORLD: OnceLock<World> = OnceLock::new();
    WORLD.get_or_init(|| World::start(helm3))
}

impl World {
    fn start(helm3: &Path) -> World {
        let dir = scratch("helm", "world");
        let charts = ["kitchen", "webapp"].map(|c| fixtures().join("charts").join(c));
        let repo = ChartRepo::start(&dir, helm3, &charts);
        let oci = Registry::start(&dir, helm3, &repo.dir);
        World {
            repo: repo.url.clone(),
            ca: repo.ca.clone(),
            _repo: repo,
            oci,
        }
    }

    fn fill(&self, text: &str) -> String {
        let text = text.replace("{{REPO}}", &self.repo);
        match &self.oci {
            Some(oci) => text.replace("{{OCI}}", &oci.url),
            None => text,
        }
    }

    fn unfill(&self, text: &str) -> String {
        let text = text.replace(&self.repo, "{{REPO}}");
        match &self.oci {
            Some(oci) => text.replace(&oci.url, "{{OCI}}"),
            None => text,
        }
    }
}

impl Registry {
    /// Starts a registry in `dir` on a free loopback port and pushes the
    /// packaged charts (`*.tgz` of `packages`) to it; `None` when
    /// docker-registry is not installed.
    fn start(dir: &Path, helm3: &Path, packages: &Path) -> Option<Registry> {
        let registry = OciRegistry::start(&dir.join("oci"))?;
        let url = format!("oci://{}/charts", registry.host);
        let mut pushed: Vec<PathBuf> = std::fs::read_dir(packages)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "tgz"))
            .collect();
        pushed.sort();
        for package in pushed {
            run(Command::new(helm3)
                .arg("push")
                .arg(&package)
                .arg(&url)
                .arg("--plain-http")
                .env("HELM_CONFIG_HOME", dir.join("helm")));
        }
        Some(Registry {
            url,
            _registry: registry,
        })
    }
}

/// Whether a text file of the tree `dir` holds `text`.
fn mentions(dir: &Path, text: &str) -> bool {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .any(|entry| {
            let path = entry.path();
            if path.is_dir() {
                mentions(&path, text)
            } else {
                std::fs::read_to_string(&path).is_ok_and(|t| t.contains(text))
            }
        })
}

/// A fresh copy of the case's tree with its charts in place (a pull
/// writes into the chart home); returns the folder to build.
fn prepare(case: &Case, into: &Path, world: &World) -> PathBuf {
    let _ = std::fs::remove_dir_all(into);
    let fill = |text: &str| world.fill(text);
    support::copy_tree_filled(&case.path("in"), into, &fill);
    if let Some(list) = case.read("charts") {
        for line in list.lines() {
            let mut words = line.split_whitespace();
            let Some(dir) = words.next() else { continue };
            for chart in words {
                support::copy_tree_filled(
                    &fixtures().join("charts").join(chart),
                    &into.join(dir).join(chart),
                    &fill,
                );
            }
        }
    }
    match case.read("target") {
        Some(t) => into.join(t.trim()),
        None => into.to_path_buf(),
    }
}

/// The flags for a case built with `helm`; `{{HELM4}}` in its `args`
/// stands for helm v4.
fn flags(case: &Case, helm_command: &Path) -> Vec<String> {
    let helm4 = helm(4).map(|p| p.to_string_lossy().into_owned());
    let own: Vec<String> = case
        .read("args")
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.is_empty())
        .map(|l| match &helm4 {
            Some(h) => l.replace("{{HELM4}}", h),
            None => l.to_string(),
        })
        .collect();
    let mut args = Vec::new();
    if !own.iter().any(|a| a.starts_with("--enable-helm")) {
        args.push("--enable-helm".to_string());
    }
    if !own.iter().any(|a| a.starts_with("--helm-command")) {
        args.push("--helm-command".into());
        args.push(helm_command.to_string_lossy().into_owned());
    }
    args.extend(own);
    args
}

fn kubectl_available() -> bool {
    Command::new("kubectl")
        .args(["version", "--client"])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// What a build printed: its exit status, stdout and stderr, with the
/// copy built written `{{DIR}}` and helm `{{HELM}}`.
struct Printed {
    exit: Option<i32>,
    stdout: String,
    stderr: String,
}

/// Runs `program` (`krusty build` or `kubectl kustomize`) on a fresh copy
/// of the case.
fn build(
    mut program: Command,
    case: &Case,
    scratch_dir: &Path,
    helm: &Path,
    world: &World,
) -> Printed {
    let target = prepare(case, scratch_dir, world);
    let out = program
        .arg(&target)
        .args(flags(case, helm))
        .env("SSL_CERT_FILE", &world.ca)
        .env("KRUSTY_CACHE_DIR", scratch_dir.with_extension("cache"))
        .output()
        .unwrap();
    let (out_text, err_text) = output_text(&out);
    let unfill = |t: &str| {
        world
            .unfill(t)
            .replace(&scratch_dir.to_string_lossy().into_owned(), "{{DIR}}")
            .replace(&helm.to_string_lossy().into_owned(), "{{HELM}}")
    };
    Printed {
        exit: out.status.code(),
        stdout: unfill(&out_text),
        stderr: unfill(&err_text),
    }
}

/// `krusty build` as Kustomize release `version`.
fn krusty_build(version: &str) -> Command {
    let mut krusty = support::krusty_command();
    krusty.args(["--kustomize-version", version, "build"]);
    krusty
}

/// What is wrong with what krusty printed for the case built as Kustomize
/// release `version`, if anything (a build that works prints nothing on
/// stderr).
fn check(case: &Case, name: &str, version: &str, printed: &Printed) -> Option<String> {
    let Some(want) = case.expected_as(version) else {
        return Some(format!(
            "{name} ({version}): no expected output nor error; krusty says:\n{}{}",
            printed.stdout, printed.stderr
        ));
    };
    let got = want
        .quiet()
        .check_run(printed.exit, printed.stdout.as_bytes(), &printed.stderr);
    got.err().map(|why| format!("{name} ({version}): {why}"))
}

/// The releases a case has expectations for: those with a file of their
/// own, or both when it has one shared by both.
fn versions_of(case: &Case) -> Vec<&'static str> {
    KUSTOMIZE_VERSIONS
        .into_iter()
        .filter(|v| case.expected_as(v).is_some())
        .collect()
}

#[test]
fn cases_match_kustomize() {
    let Some(helm3) = helm3_or_skip("cases_match_kustomize") else {
        return;
    };
    let helm4 = helm(4);
    if helm4.is_none() {
        eprintln!("helm v4 not found: cases run with helm v3 only");
    }
    let world = world(&helm3);
    let bless = std::env::var_os("KRUSTY_BLESS").is_some();
    let live = kubectl_available();
    let mut failures = Vec::new();
    for case in &support::cases(&fixtures().join("cases")) {
        let name = case.name.clone();
        if world.oci.is_none() && mentions(&case.path("in"), "{{OCI}}") {
            eprintln!("SKIPPED case {name}: it needs the OCI registry");
            continue;
        }
        if helm4.is_none() && mentions(&case.dir, "{{HELM4}}") {
            eprintln!("SKIPPED case {name}: it needs helm v4");
            continue;
        }
        let dir = scratch("helm", &name);
        if live && bless {
            let mut kubectl = Command::new("kubectl");
            kubectl.arg("kustomize");
            let kubectl = build(kubectl, case, &dir.join("kubectl"), &helm3, world);
            if kubectl.stderr.is_empty() {
                std::fs::write(case.path("expected.yaml"), &kubectl.stdout).unwrap();
            } else {
                std::fs::write(
                    case.path("kubectl_error.txt"),
                    stable_message(&kubectl.stderr, "/tmp/kustomize-helm-"),
                )
                .unwrap();
            }
        }
        for version in versions_of(case) {
            let out = build(
                krusty_build(version),
                case,
                &dir.join("krusty"),
                &helm3,
                world,
            );
            failures.extend(check(case, &name, version, &out));
            if let Some(helm4) = helm4
                .as_deref()
                .filter(|_| !case.path("helm4-differs").exists())
            {
                let dir4 = dir.join("krusty4");
                let out4 = build(krusty_build(version), case, &dir4, helm4, world);
                failures.extend(check(case, &format!("{name} (helm v4)"), version, &out4));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// A helm that hangs is stopped at `--helm-timeout` (krusty's own limit;
/// Kustomize waits forever), with what it printed on stderr.
#[test]
fn a_hanging_helm_meets_the_time_limit() {
    let dir = scratch("helm", "timeout");
    let fake = fake_helm(&dir, "echo 'rendering forever' >&2\nexec sleep 60\n");
    let started = std::time::Instant::now();
    let out = support::krusty_command()
        .args([
            "build",
            "--enable-helm",
            "--helm-timeout",
            "1",
            "--helm-command",
        ])
        .arg(&fake)
        .arg(dir.join("app"))
        .output()
        .unwrap();
    let (stdout, stderr) = output_text(&out);
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
    assert!(!out.status.success() && stdout.is_empty(), "{stdout}");
    assert!(
        stderr.contains("rendering forever") && stderr.contains("killed after 1s (the time limit)"),
        "{stderr}"
    );
}

/// A fake helm in `dir` that answers `version` as helm v3 does and runs
/// `script` (sh) for any other command, with a kustomization `app/` of
/// one local chart `c` beside it; returns the fake's path.
fn fake_helm(dir: &Path, script: &str) -> PathBuf {
    write(
        dir,
        "fake-helm",
        &format!("#!/bin/sh\ncase \"$1\" in version) echo v3.17.2+gdead; exit 0;; esac\n{script}"),
    );
    let fake = dir.join("fake-helm");
    std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    write(dir, "app/kustomization.yaml", "helmCharts:\n- name: c\n");
    write(
        dir,
        "app/charts/c/Chart.yaml",
        "apiVersion: v2\nname: c\nversion: 0.1.0\n",
    );
    write(dir, "app/charts/c/values.yaml", "{}\n");
    fake
}

/// A helm that leaves a process behind holding its stdout (a plugin or
/// post-renderer that starts a daemon) neither loses the chart's
/// resources nor holds krusty: what it started in its process group is
/// stopped as soon as helm ends.
#[test]
fn a_process_helm_leaves_behind_neither_hides_the_chart_nor_outlives_it() {
    let dir = scratch("helm", "left-behind");
    let pidfile = dir.join("sleeper.pid");
    let fake = fake_helm(
        &dir,
        &format!(
            "printf 'apiVersion: v1\\nkind: ConfigMap\\nmetadata:\\n  name: left-behind\\n'\nsleep 60 &\necho $! > '{}'\n",
            pidfile.display()
        ),
    );
    let started = std::time::Instant::now();
    let out = support::krusty_command()
        .args([
            "build",
            "--enable-helm",
            "--no-helm-cache",
            "--helm-command",
        ])
        .arg(&fake)
        .arg(dir.join("app"))
        .output()
        .unwrap();
    let (stdout, stderr) = output_text(&out);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stdout.contains("name: left-behind"),
        "resources lost: {stdout:?}"
    );
    assert!(
        started.elapsed() < std::time::Duration::from_secs(4),
        "krusty waited for the process helm left behind"
    );
    let pid = std::fs::read_to_string(&pidfile).unwrap();
    support::wait_until(
        std::time::Duration::from_secs(3),
        std::time::Duration::from_millis(20),
        || process_gone(&pid),
    );
    assert!(
        process_gone(&pid),
        "the process helm left behind still runs"
    );
}

/// A process that leaves helm's process group (`setsid`) and keeps its
/// stdout cannot be stopped with helm; krusty waits a few seconds for it,
/// then reads what helm printed: the chart's resources are all there.
#[test]
fn a_process_that_escapes_helm_does_not_hide_the_chart() {
    let dir = scratch("helm", "escaped");
    let pidfile = dir.join("sleeper.pid");
    let fake = fake_helm(
        &dir,
        &format!(
            "printf 'apiVersion: v1\\nkind: ConfigMap\\nmetadata:\\n  name: escaped\\n'\nsetsid sh -c 'echo $$ > \"{}\"; exec sleep 60' &\nwhile [ ! -s '{}' ]; do sleep 0.05; done\n",
            pidfile.display(),
            pidfile.display()
        ),
    );
    let out = support::krusty_command()
        .args([
            "build",
            "--enable-helm",
            "--no-helm-cache",
            "--helm-command",
        ])
        .arg(&fake)
        .arg(dir.join("app"))
        .output()
        .unwrap();
    let pid = std::fs::read_to_string(&pidfile).unwrap_or_default();
    if let Ok(pid) = pid.trim().parse::<i32>() {
        let _ = Command::new("kill").arg(pid.to_string()).status();
    }
    let (stdout, stderr) = output_text(&out);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stdout.contains("name: escaped"),
        "resources lost: {stdout:?}"
    );
}

/// A helm that logs each command it runs to `log`, then runs `helm`.
fn logging_helm(dir: &Path, helm: &Path, log: &Path) -> PathBuf {
    let path = dir.join("logging-helm");
    write(
        dir,
        "logging-helm",
        &format!(
            "#!/bin/sh\necho \"$1\" >> '{}'\nexec '{}' \"$@\"\n",
            log.display(),
            helm.display()
        ),
    );
    std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    path
}

/// The helm commands logged since the last call.
fn drain(log: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let _ = std::fs::remove_file(log);
    text.lines().map(str::to_string).collect()
}

/// A rebuild with nothing changed runs no helm; a changed values file,
/// a changed chart, or `--no-helm-cache` runs it again; the output is the
/// same either way.
#[test]
fn unchanged_charts_are_not_inflated_again() {
    let Some(helm3) = helm3_or_skip("unchanged_charts_are_not_inflated_again") else {
        return;
    };
    let dir = scratch("helm", "cache");
    let log = dir.join("helm.log");
    let helm = logging_helm(&dir, &helm3, &log);
    let app = dir.join("app");
    copy_chart("kitchen", &app.join("charts"));
    write(
        &app,
        "kustomization.yaml",
        "helmCharts:\n- name: kitchen\n  releaseName: c\n  valuesFile: v.yaml\n  kubeVersion: 1.31.2\n",
    );
    write(&app, "v.yaml", "replicas: 2\n");
    let build = |extra: &[&str]| {
        let (ok, stdout, stderr) = krusty_helm(&app, &helm, &dir.join("cache"), extra);
        assert!(ok, "{stderr}");
        stdout
    };
    let first = build(&[]);
    assert_eq!(drain(&log), ["version", "template"]);
    assert_eq!(build(&[]), first);
    assert!(drain(&log).is_empty(), "helm ran on an unchanged chart");
    write(&app, "v.yaml", "replicas: 3\n");
    let changed = build(&[]);
    assert_eq!(drain(&log), ["version", "template"]);
    assert_ne!(changed, first);
    write(
        &app,
        "charts/kitchen/templates/extra.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra\n",
    );
    assert!(build(&[]).contains("name: extra"));
    assert_eq!(drain(&log), ["version", "template"]);
    assert_eq!(build(&["--no-helm-cache"]), build(&[]));
    assert_eq!(drain(&log), ["version", "template"]);
}

/// Copies the fixture chart `name` into `dir`.
fn copy_chart(name: &str, dir: &Path) {
    support::copy_tree(&fixtures().join("charts").join(name), &dir.join(name));
}

/// A chart with `repo` that is not in the chart home is pulled once into
/// krusty's cache, not into the chart home; later builds (another copy of
/// the tree, new values) inflate it from there without pulling again.
/// `--no-helm-cache` pulls into the chart home with helm, as Kustomize
/// does.
#[test]
fn pulled_charts_are_kept_in_the_cache() {
    let Some(helm3) = helm3_or_skip("pulled_charts_are_kept_in_the_cache") else {
        return;
    };
    let world = world(&helm3);
    let mut repos = vec![("https", world.repo.clone())];
    match &world.oci {
        Some(oci) => repos.push(("oci", oci.url.clone())),
        None => eprintln!("SKIPPED the OCI part of pulled_charts_are_kept_in_the_cache"),
    }
    for (kind, repo) in repos {
        let dir = scratch("helm", &format!("pull-cache-{kind}"));
        let log = dir.join("helm.log");
        let helm = logging_helm(&dir, &helm3, &log);
        let build = |app: &Path, extra: &[&str]| {
            let (ok, stdout, stderr) =
                krusty_helm_trusting(&world.ca, app, &helm, &dir.join("cache"), extra);
            assert!(ok, "{kind}: {stderr}");
            stdout
        };
        let tree = |name: &str, replicas: u32| {
            let app = dir.join(name);
            write(
                &app,
                "kustomization.yaml",
                &format!("helmCharts:\n- name: kitchen\n  repo: {repo}\n  version: 1.2.3\n  releaseName: c\n  kubeVersion: 1.31.2\n  valuesInline:\n    replicas: {replicas}\n"),
            );
            app
        };
        // At an exact version, krusty fetches the chart itself.
        let first = build(&tree("a", 2), &[]);
        assert_eq!(drain(&log), ["version", "template"], "{kind}");
        assert!(
            !dir.join("a/charts").exists(),
            "{kind}: pulled into the chart home"
        );
        assert_eq!(build(&tree("b", 2), &[]), first);
        assert!(drain(&log).is_empty(), "{kind}: helm ran again");
        assert!(build(&tree("c", 5), &[]).contains("replicas: 5"));
        assert_eq!(drain(&log), ["version", "template"], "{kind}: pulled again");
        let kustomize_way = build(&tree("d", 2), &["--no-helm-cache"]);
        assert_eq!(kustomize_way, first);
        assert_eq!(drain(&log), ["version", "pull", "template"], "{kind}");
        assert!(dir
            .join("d/charts/kitchen-1.2.3/kitchen/Chart.yaml")
            .is_file());
    }
}

/// Runs `krusty build APP --enable-helm --helm-command HELM EXTRA…` with
/// krusty's cache in `cache`; returns the exit status's success, stdout
/// and stderr.
fn krusty_helm(app: &Path, helm: &Path, cache: &Path, extra: &[&str]) -> (bool, String, String) {
    outcome(&mut helm_build(app, helm, cache, extra))
}

/// [`krusty_helm`], trusting the certificates in `ca` (`SSL_CERT_FILE`).
fn krusty_helm_trusting(
    ca: &Path,
    app: &Path,
    helm: &Path,
    cache: &Path,
    extra: &[&str],
) -> (bool, String, String) {
    outcome(helm_build(app, helm, cache, extra).env("SSL_CERT_FILE", ca))
}

/// `krusty build APP --enable-helm --helm-command HELM EXTRA` with its
/// cache in `cache`.
fn helm_build(app: &Path, helm: &Path, cache: &Path, extra: &[&str]) -> Command {
    let mut cmd = support::krusty_command();
    cmd.arg("build")
        .arg(app)
        .args(["--enable-helm", "--helm-command"])
        .arg(helm)
        .args(extra)
        .env("KRUSTY_CACHE_DIR", cache);
    cmd
}

/// Runs `cmd`: whether it succeeded, its stdout and stderr.
fn outcome(cmd: &mut Command) -> (bool, String, String) {
    let out = cmd.output().unwrap();
    let (stdout, stderr) = output_text(&out);
    (out.status.success(), stdout, stderr)
}

/// No field of a chart reaches helm as an option: a value such as
/// `--post-renderer=PROGRAM` (which would run PROGRAM) is refused with
/// an error naming the field, or given to helm as a value.
#[test]
fn chart_fields_never_become_helm_options() {
    let Some(helm3) = helm3_or_skip("chart_fields_never_become_helm_options") else {
        return;
    };
    let dir = scratch("helm", "options");
    let marker = dir.join("post-renderer-ran");
    write(
        &dir,
        "evil.sh",
        &format!("#!/bin/sh\ntouch '{}'\ncat\n", marker.display()),
    );
    let evil = dir.join("evil.sh");
    std::fs::set_permissions(&evil, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let option = format!("--post-renderer={}", evil.display());
    let app = dir.join("app");
    copy_chart("kitchen", &app.join("charts"));
    let cases = [
        (
            "releaseName",
            format!("  releaseName: '{option}'\n"),
            Some("releaseName \"--post-renderer="),
        ),
        (
            "namespace",
            format!("  namespace: '{option}'\n"),
            Some("namespace \"--post-renderer="),
        ),
        (
            "nameTemplate",
            format!("  nameTemplate: '{option}'\n"),
            None,
        ),
        (
            "kubeVersion",
            format!("  kubeVersion: '{option}'\n"),
            Some("kubeVersion \"--post-renderer="),
        ),
        (
            "apiVersions",
            format!("  apiVersions: ['{option}']\n"),
            None,
        ),
        (
            "additionalValuesFiles",
            format!("  additionalValuesFiles: ['{option}']\n"),
            Some("could not load additionalValuesFile"),
        ),
    ];
    for (field, line, refused) in cases {
        let _ = std::fs::remove_file(&marker);
        write(
            &app,
            "kustomization.yaml",
            &format!("helmCharts:\n- name: kitchen\n  kubeVersion: 1.31.2\n{line}"),
        );
        let (ok, stdout, stderr) =
            krusty_helm(&app, &helm3, &dir.join("cache"), &["--no-helm-cache"]);
        assert!(!marker.exists(), "{field}: helm ran the post-renderer");
        match refused {
            Some(message) => {
                assert!(!ok && stdout.is_empty(), "{field}: {stdout}");
                assert!(stderr.contains(message), "{field}: {stderr}");
            }
            // helm takes it as the value it is (and fails on it, or not).
            None => assert!(!stderr.contains("unknown flag"), "{field}: {stderr}"),
        }
    }
}

/// A chart folder must lie in the kustomization's root, symlinks
/// resolved, and so must every file of it (`.Files`, templates): a link
/// out of the root is refused unless `--load-restrictor
/// LoadRestrictionsNone`, even when no values file is read from there.
#[test]
fn chart_files_stay_in_the_root() {
    let Some(helm3) = helm3_or_skip("chart_files_stay_in_the_root") else {
        return;
    };
    let dir = scratch("helm", "confined");
    write(&dir, "outside/secret.txt", "s3cr3t\n");
    let chart = |home: &Path| {
        write(
            home,
            "peek/Chart.yaml",
            "apiVersion: v2\nname: peek\nversion: 0.1.0\n",
        );
        write(
            home,
            "peek/templates/cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: peek\ndata:\n  secret: {{ .Files.Get \"files/secret.txt\" | quote }}\n",
        );
    };
    let kustomization =
        "helmCharts:\n- name: peek\n  valuesMerge: replace\n  valuesInline:\n    a: 1\n";
    let none = [
        "--no-helm-cache",
        "--load-restrictor",
        "LoadRestrictionsNone",
    ];

    // A file of the chart that links out of the root.
    let app = dir.join("link-in-chart");
    chart(&app.join("charts"));
    std::fs::create_dir_all(app.join("charts/peek/files")).unwrap();
    std::os::unix::fs::symlink(
        dir.join("outside/secret.txt"),
        app.join("charts/peek/files/secret.txt"),
    )
    .unwrap();
    write(&app, "kustomization.yaml", kustomization);
    let (ok, stdout, stderr) = krusty_helm(&app, &helm3, &dir.join("cache"), &["--no-helm-cache"]);
    assert!(!ok && !stdout.contains("s3cr3t"), "{stdout}");
    assert!(
        stderr.contains("files/secret.txt' leads to") && stderr.contains("is not in or below"),
        "{stderr}"
    );
    let (ok, stdout, stderr) = krusty_helm(&app, &helm3, &dir.join("cache"), &none);
    assert!(ok && stdout.contains("s3cr3t"), "{stderr}");

    // A chart home that links out of the root.
    let app = dir.join("linked-home");
    chart(&dir.join("outside/charts"));
    write(&dir, "outside/charts/peek/files/secret.txt", "s3cr3t\n");
    std::fs::create_dir_all(&app).unwrap();
    std::os::unix::fs::symlink(dir.join("outside/charts"), app.join("charts")).unwrap();
    write(&app, "kustomization.yaml", kustomization);
    let (ok, stdout, stderr) = krusty_helm(&app, &helm3, &dir.join("cache"), &["--no-helm-cache"]);
    assert!(!ok && stdout.is_empty(), "{stdout}");
    assert!(
        stderr.contains("security; chart folder '")
            && stderr.contains("outside/charts/peek' is not in or below"),
        "{stderr}"
    );
    let (ok, stdout, stderr) = krusty_helm(&app, &helm3, &dir.join("cache"), &none);
    assert!(ok && stdout.contains("s3cr3t"), "{stderr}");

    // A chart name or chart home that climbs out of the root.
    let app = dir.join("climbing");
    write(&app, "kustomization.yaml", "helmGlobals:\n  chartHome: ../outside/charts\nhelmCharts:\n- name: peek\n  valuesMerge: replace\n  valuesInline:\n    a: 1\n");
    let (ok, _, stderr) = krusty_helm(&app, &helm3, &dir.join("cache"), &["--no-helm-cache"]);
    assert!(
        !ok && stderr.contains("security; chart folder '"),
        "{stderr}"
    );
    write(&app, "kustomization.yaml", "helmCharts:\n- name: ../../outside/charts/peek\n  valuesMerge: replace\n  valuesInline:\n    a: 1\n");
    let (ok, _, stderr) = krusty_helm(&app, &helm3, &dir.join("cache"), &["--no-helm-cache"]);
    assert!(
        !ok && stderr.contains("name \"../../outside/charts/peek\": a chart name is"),
        "{stderr}"
    );

    // helm's configuration home, where it reads credentials and writes.
    write(
        &app,
        "kustomization.yaml",
        &format!(
            "helmGlobals:\n  configHome: {}\nhelmCharts:\n- name: peek\n",
            dir.join("outside").display()
        ),
    );
    let (ok, _, stderr) = krusty_helm(&app, &helm3, &dir.join("cache"), &["--no-helm-cache"]);
    assert!(!ok && stderr.contains("security; configHome '"), "{stderr}");
}

/// Pushes the packaged chart `package` to `url` (`oci://HOST/PATH`).
fn helm_push(helm3: &Path, package: &Path, url: &str, dir: &Path) {
    run(Command::new(helm3)
        .arg("push")
        .arg(package)
        .arg(url)
        .arg("--plain-http")
        .env("HELM_CONFIG_HOME", dir.join("helm")));
}

/// Packages the chart folder `chart` into `dest`; the package's path.
fn helm_package(helm3: &Path, chart: &Path, dest: &Path, dir: &Path) -> PathBuf {
    let out = run(Command::new(helm3)
        .arg("package")
        .arg(chart)
        .arg("--destination")
        .arg(dest)
        .env("HELM_CONFIG_HOME", dir.join("helm")));
    PathBuf::from(out.trim().rsplit(": ").next().unwrap_or_default())
}

/// A kustomization `dir/name` of one chart `chart` of `repo`, with
/// `more` lines of its entry and `replicas` inline.
fn pulling_tree(
    dir: &Path,
    name: &str,
    chart: &str,
    repo: &str,
    more: &str,
    replicas: u32,
) -> PathBuf {
    let app = dir.join(name);
    write(
        &app,
        "kustomization.yaml",
        &format!("helmCharts:\n- name: {chart}\n  repo: {repo}\n  releaseName: c\n  kubeVersion: 1.31.2\n{more}  valuesInline:\n    replicas: {replicas}\n"),
    );
    app
}

/// A chart pulled at an exact version follows its repository: a version
/// published again under the same number (a new archive in a chart
/// repository's index, a moved tag in an OCI registry) is noticed on the
/// next build, fetched and used; `--offline` then uses the copy last
/// pulled.
#[test]
fn charts_at_a_version_follow_their_repository() {
    let Some(helm3) = helm3_or_skip("charts_at_a_version_follow_their_repository") else {
        return;
    };
    let dir = scratch("helm", "republish");
    copy_chart("kitchen", &dir.join("v1"));
    copy_chart("kitchen", &dir.join("v2"));
    write(
        &dir.join("v2/kitchen"),
        "templates/republished.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: republished\n",
    );
    let repo = ChartRepo::start(&dir.join("https"), &helm3, &[dir.join("v1/kitchen")]);
    let mut sources = vec![("https", repo.url.clone())];
    // The shared registry, in a repository of this test's own.
    match &world(&helm3).oci {
        Some(oci) => {
            let url = oci.url.replace("/charts", "/republish");
            let v1 = helm_package(&helm3, &dir.join("v1/kitchen"), &dir.join("pkg1"), &dir);
            helm_push(&helm3, &v1, &url, &dir);
            sources.push(("oci", url));
        }
        None => eprintln!("SKIPPED the OCI part of charts_at_a_version_follow_their_repository"),
    }
    let log = dir.join("helm.log");
    let helm = logging_helm(&dir, &helm3, &log);
    for (kind, url) in sources {
        let cache = dir.join(format!("cache-{kind}"));
        let build = |app: &Path, extra: &[&str]| {
            let (ok, stdout, stderr) = krusty_helm_trusting(&repo.ca, app, &helm, &cache, extra);
            assert!(ok, "{kind}: {stderr}");
            stdout
        };
        let version = "  version: 1.2.3\n";
        let first = build(
            &pulling_tree(&dir, &format!("{kind}-a"), "kitchen", &url, version, 2),
            &[],
        );
        assert!(!first.contains("name: republished"), "{kind}");
        match kind {
            "https" => {
                repo.publish(&helm3, &dir.join("v2/kitchen"));
            }
            _ => {
                let v2 = helm_package(&helm3, &dir.join("v2/kitchen"), &dir.join("pkg2"), &dir);
                helm_push(&helm3, &v2, &url, &dir);
            }
        }
        drain(&log);
        let again = build(
            &pulling_tree(&dir, &format!("{kind}-b"), "kitchen", &url, version, 2),
            &[],
        );
        assert!(
            again.contains("name: republished"),
            "{kind}: the old chart was used"
        );
        assert_eq!(drain(&log), ["version", "template"], "{kind}");
        let offline = build(
            &pulling_tree(&dir, &format!("{kind}-c"), "kitchen", &url, version, 3),
            &["--offline"],
        );
        assert!(
            offline.contains("name: republished") && offline.contains("replicas: 3"),
            "{kind}"
        );
    }
}

/// `--offline` reaches Helm: no `helm pull` runs and nothing connects; a
/// chart pulled before (at an exact version, a range or the latest) comes
/// from krusty's cache, even with `--no-helm-cache`, and one never pulled
/// is an error saying so.
#[test]
fn offline_builds_pull_no_chart() {
    let Some(helm3) = helm3_or_skip("offline_builds_pull_no_chart") else {
        return;
    };
    let dir = scratch("helm", "offline");
    let charts = ["kitchen", "webapp"].map(|c| fixtures().join("charts").join(c));
    let mut repo = ChartRepo::start(&dir.join("https"), &helm3, &charts);
    let ca = repo.ca.clone();
    let log = dir.join("helm.log");
    let helm = logging_helm(&dir, &helm3, &log);
    // All state is in the cache folder: the home, XDG and temporary
    // folders stay empty.
    let (home, tmp) = (dir.join("home"), dir.join("tmp"));
    for folder in [&home, &tmp] {
        std::fs::create_dir_all(folder).unwrap();
    }
    let build = |app: &Path, extra: &[&str]| {
        outcome(
            helm_build(app, &helm, &dir.join("cache"), extra)
                .env("SSL_CERT_FILE", &ca)
                .env("HOME", &home)
                .env("TMPDIR", &tmp)
                .env("XDG_CACHE_HOME", home.join(".cache"))
                .env("XDG_CONFIG_HOME", home.join(".config"))
                .env("XDG_DATA_HOME", home.join(".local/share")),
        )
    };
    let empty = |what: &str| {
        for folder in [&home, &tmp] {
            let left: Vec<_> = std::fs::read_dir(folder)
                .unwrap()
                .flatten()
                .map(|e| e.path())
                .collect();
            assert!(
                left.is_empty(),
                "{what}: left in {}: {left:?}",
                folder.display()
            );
        }
    };
    let url = repo.url.clone();
    let kinds = [
        ("exact", "kitchen", "  version: 1.2.3\n"),
        ("range", "kitchen", "  version: ~1.2.0\n"),
        ("latest", "webapp", ""),
    ];
    for (name, chart, more) in kinds {
        let (ok, _, stderr) = build(
            &pulling_tree(&dir, &format!("{name}-online"), chart, &url, more, 2),
            &[],
        );
        assert!(ok, "{name}: {stderr}");
    }
    empty("online");
    drain(&log);
    repo.stop();
    for (name, chart, more) in kinds {
        for extra in [&["--offline"][..], &["--offline", "--no-helm-cache"]] {
            let app = pulling_tree(&dir, &format!("{name}-offline"), chart, &url, more, 4);
            let (ok, stdout, stderr) = build(&app, extra);
            // webapp has no `replicas` value: its output is the same.
            let want = if chart == "kitchen" {
                "replicas: 4"
            } else {
                "kind: Deployment"
            };
            assert!(ok && stdout.contains(want), "{name} {extra:?}: {stderr}");
            assert!(
                !app.join("charts").exists(),
                "{name} {extra:?}: pulled into the chart home"
            );
        }
    }
    for (name, more) in [
        ("exact", "  version: 1.2.4\n"),
        ("range", "  version: ~2.0.0\n"),
    ] {
        let app = pulling_tree(&dir, &format!("{name}-missing"), "kitchen", &url, more, 2);
        let (ok, stdout, stderr) = build(&app, &["--offline"]);
        assert!(!ok && stdout.is_empty(), "{name}");
        assert!(
            stderr.contains("--offline: the chart kitchen") && stderr.contains("is not in"),
            "{name}: {stderr}"
        );
    }
    empty("offline");
    assert!(
        !drain(&log).iter().any(|c| c == "pull"),
        "helm pull ran offline"
    );
}

/// `--helm-timeout` bounds `helm pull` too: a repository that never
/// answers fails the build at the limit.
#[test]
fn helm_pulls_meet_the_time_limit() {
    let Some(helm3) = helm3_or_skip("helm_pulls_meet_the_time_limit") else {
        return;
    };
    let dir = scratch("helm", "pull-timeout");
    std::fs::create_dir_all(dir.join("served")).unwrap();
    let (_server, port) = serve(&[
        "0".as_ref(),
        dir.join("served").as_os_str(),
        "--hang".as_ref(),
    ]);
    let app = pulling_tree(
        &dir,
        "app",
        "kitchen",
        &format!("http://127.0.0.1:{port}"),
        "  version: ~1.2.0\n",
        2,
    );
    let started = std::time::Instant::now();
    let (ok, stdout, stderr) =
        krusty_helm(&app, &helm3, &dir.join("cache"), &["--helm-timeout", "2"]);
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
    assert!(!ok && stdout.is_empty(), "{stdout}");
    assert!(
        stderr.contains(" pull ") && stderr.contains("killed after 2s (the time limit)"),
        "{stderr}"
    );
}

/// `--helm-max-output` bounds what helm may print.
#[test]
fn helm_output_is_bounded() {
    let dir = scratch("helm", "max-output");
    let fake = fake_helm(&dir, "head -c 3000000 /dev/zero | tr '\\0' 'x'\n");
    let (ok, stdout, stderr) = krusty_helm(
        &dir.join("app"),
        &fake,
        &dir.join("cache"),
        &["--helm-max-output", "1Mi"],
    );
    assert!(!ok && stdout.is_empty(), "{stdout}");
    assert!(
        stderr.contains("killed after printing more than 1048576 bytes (the output limit)"),
        "{stderr}"
    );
}

/// A chart may sit in a folder of the chart home (`name: team/c`).
#[test]
fn a_chart_in_a_folder_of_the_chart_home() {
    let dir = scratch("helm", "nested-name");
    let fake = fake_helm(
        &dir,
        "printf 'apiVersion: v1\\nkind: ConfigMap\\nmetadata:\\n  name: nested\\n'\n",
    );
    std::fs::create_dir_all(dir.join("app/charts/team")).unwrap();
    std::fs::rename(dir.join("app/charts/c"), dir.join("app/charts/team/c")).unwrap();
    write(
        &dir,
        "app/kustomization.yaml",
        "helmCharts:\n- name: team/c\n",
    );
    let (ok, stdout, stderr) = krusty_helm(&dir.join("app"), &fake, &dir.join("cache"), &[]);
    assert!(ok && stdout.contains("name: nested"), "{stderr}");
}

/// A document planted in a cache entry: seen in the output, the entry
/// was used as it was changed.
const PLANTED: &str = "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: planted\n";

/// Every file under `dir`.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if entry.file_type().unwrap().is_dir() {
            found.extend(files_under(&path));
        } else {
            found.push(path);
        }
    }
    found
}

/// helm's output kept in the cache is used only whole and unchanged: an
/// entry with a document added or one cut off is rendered again (online
/// or offline, which needs no connection for it) and kept again.
#[test]
fn changed_helm_output_in_the_cache_is_rendered_again() {
    let Some(helm3) = helm3_or_skip("changed_helm_output_in_the_cache_is_rendered_again") else {
        return;
    };
    let dir = scratch("helm", "changed-output");
    let log = dir.join("helm.log");
    let helm = logging_helm(&dir, &helm3, &log);
    let app = dir.join("app");
    copy_chart("kitchen", &app.join("charts"));
    write(
        &app,
        "kustomization.yaml",
        "helmCharts:\n- name: kitchen\n  releaseName: c\n  kubeVersion: 1.31.2\n",
    );
    let cache = dir.join("cache");
    let build = |extra: &[&str]| {
        let (ok, stdout, stderr) = krusty_helm(&app, &helm, &cache, extra);
        assert!(ok, "{stderr}");
        stdout
    };
    let first = build(&[]);
    assert_eq!(drain(&log), ["version", "template"]);
    let entries = files_under(&cache.join("helm"));
    assert_eq!(entries.len(), 1, "{entries:?}");
    let entry = &entries[0];
    let kept = std::fs::read_to_string(entry).unwrap();
    let cut = kept.rfind("\n---\n").expect("several documents");
    for extra in [&[][..], &["--offline"]] {
        for damage in [format!("{kept}{PLANTED}"), kept[..cut + 1].to_string()] {
            std::fs::write(entry, damage).unwrap();
            assert_eq!(build(extra), first, "{extra:?}");
            assert_eq!(drain(&log), ["version", "template"], "{extra:?}");
            assert_eq!(std::fs::read_to_string(entry).unwrap(), kept, "kept again");
            assert_eq!(build(extra), first);
            assert!(drain(&log).is_empty(), "{extra:?}: not kept again");
        }
    }
}

/// A chart pulled into krusty's cache (by krusty at an exact version, by
/// `helm pull` for a range) is used only while it matches what was
/// pulled: a file added or changed in it makes it pulled again online,
/// and an error offline naming the file.
#[test]
fn a_changed_pulled_chart_is_pulled_again_online_and_refused_offline() {
    let Some(helm3) =
        helm3_or_skip("a_changed_pulled_chart_is_pulled_again_online_and_refused_offline")
    else {
        return;
    };
    let world = world(&helm3);
    let dir = scratch("helm", "changed-chart");
    let log = dir.join("helm.log");
    let helm = logging_helm(&dir, &helm3, &log);
    for (kind, version, pull) in [
        ("exact", "  version: 1.2.3\n", &["version", "template"][..]),
        (
            "range",
            "  version: ~1.2.0\n",
            &["version", "pull", "template"],
        ),
    ] {
        let cache = dir.join(format!("cache-{kind}"));
        let build = |extra: &[&str]| {
            let app = pulling_tree(&dir, kind, "kitchen", &world.repo, version, 2);
            krusty_helm_trusting(&world.ca, &app, &helm, &cache, extra)
        };
        let (ok, first, stderr) = build(&[]);
        assert!(ok, "{kind}: {stderr}");
        assert_eq!(drain(&log), pull, "{kind}");
        let charts = files_under(&cache.join("helm-charts"));
        let deployment = charts
            .iter()
            .find(|p| p.ends_with("kitchen/templates/deployment.yaml"))
            .unwrap_or_else(|| panic!("{kind}: no chart in the cache: {charts:?}"));
        let templates = deployment.parent().unwrap();
        let original = std::fs::read_to_string(deployment).unwrap();
        for (file, damage) in [
            ("planted.yaml", PLANTED.to_string()),
            ("deployment.yaml", format!("{original}{PLANTED}")),
        ] {
            write(templates, file, &damage);
            let (ok, stdout, stderr) = build(&["--offline"]);
            assert!(!ok && stdout.is_empty(), "{kind} {file}: {stdout}");
            assert!(
                stderr.contains("--offline: the cached chart kitchen")
                    && stderr.contains("damaged")
                    && stderr.contains(&format!("templates/{file}"))
                    && stderr.contains("without --offline"),
                "{kind} {file}: {stderr}"
            );
            let (ok, again, stderr) = build(&[]);
            assert!(ok, "{kind} {file}: {stderr}");
            assert_eq!(again, first, "{kind} {file}");
            let pulled = drain(&log).contains(&"pull".to_string());
            assert_eq!(
                pulled,
                kind == "range",
                "{kind} {file}: helm pull ran again"
            );
            let (ok, offline, stderr) = build(&["--offline"]);
            assert!(ok && offline == first, "{kind} {file}: {stderr}");
            assert!(!templates.join("planted.yaml").exists(), "{kind}: kept");
        }
    }
}

/// A cache krusty refuses (others may write it) is an error for a build
/// that keeps charts' output in it, naming the folder; with
/// `--no-helm-cache` it is not needed and the chart is inflated.
#[test]
fn a_refused_cache_is_an_error_for_the_helm_cache() {
    let dir = scratch("helm", "refused-cache");
    let fake = fake_helm(
        &dir,
        "printf 'apiVersion: v1\\nkind: ConfigMap\\nmetadata:\\n  name: inflated\\n'\n",
    );
    let cache = dir.join("cache");
    std::fs::create_dir_all(&cache).unwrap();
    std::fs::set_permissions(&cache, std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
    let (ok, stdout, stderr) = krusty_helm(&dir.join("app"), &fake, &cache, &[]);
    assert!(!ok && stdout.is_empty(), "{stdout}");
    assert!(
        stderr.contains(&cache.display().to_string())
            && stderr.contains("writable by others")
            && stderr.contains("--no-helm-cache"),
        "{stderr}"
    );
    let (ok, stdout, stderr) = krusty_helm(&dir.join("app"), &fake, &cache, &["--no-helm-cache"]);
    assert!(ok && stdout.contains("name: inflated"), "{stderr}");
    assert!(!cache.join("helm").exists());
}

/// A Composition's `HelmChartInflationGenerator` inflates its chart as the
/// same config under a Kustomization's `generators:` does: both are
/// resolved by the one resolver, and need `--enable-helm` alike.
#[test]
fn a_composition_inflates_a_chart_as_a_kustomization_does() {
    let Some(helm3) = helm3_or_skip("a_composition_inflates_a_chart_as_a_kustomization_does")
    else {
        return;
    };
    let dir = scratch("helm", "composition");
    let config = "apiVersion: builtin\nkind: HelmChartInflationGenerator\nmetadata:\n  name: web\nname: webapp\nreleaseName: shop\nvaluesInline:\n  replicaCount: 3\n";
    let labels = "apiVersion: builtin\nkind: LabelTransformer\nmetadata:\n  name: team\nlabels:\n  team: shop\nfieldSpecs:\n- path: metadata/labels\n  create: true\n";
    let kustomization = dir.join("kustomization");
    copy_chart("webapp", &kustomization.join("charts"));
    write(&kustomization, "helm.yaml", config);
    write(&kustomization, "labels.yaml", labels);
    write(
        &kustomization,
        "kustomization.yaml",
        "generators:\n- helm.yaml\ntransformers:\n- labels.yaml\n",
    );
    let composition = dir.join("composition");
    copy_chart("webapp", &composition.join("charts"));
    let item = |config: &str| -> String {
        config
            .lines()
            .enumerate()
            .map(|(i, line)| match i {
                0 => format!("- {line}\n"),
                _ => format!("  {line}\n"),
            })
            .collect()
    };
    write(
        &composition,
        "composition.yaml",
        &format!(
            "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Composition\ntransformers:\n{}{}",
            item(config),
            item(labels)
        ),
    );
    let cache = dir.join("cache");
    let (ok, from_kustomization, stderr) = krusty_helm(&kustomization, &helm3, &cache, &[]);
    assert!(ok, "kustomization: {stderr}");
    assert!(
        from_kustomization.contains("replicas: 3"),
        "{from_kustomization}"
    );
    assert!(
        from_kustomization.contains("team: shop"),
        "{from_kustomization}"
    );
    // The composition's next transformer sees the chart's resources.
    let (ok, from_composition, stderr) = krusty_helm(&composition, &helm3, &cache, &[]);
    assert!(ok, "composition: {stderr}");
    assert_eq!(from_composition, from_kustomization);
    let (ok, _, stderr) = outcome(support::krusty_command().arg("build").arg(&composition));
    assert!(!ok);
    assert!(stderr.contains("must specify --enable-helm"), "{stderr}");
}
