//! The `krusty` command line: flags, output files and error reporting.

use std::path::{Path, PathBuf};
use std::process::Output;

mod support;
use support::write;

/// A fresh directory for one test.
fn scratch(name: &str) -> PathBuf {
    support::scratch("cli", name)
}

fn krusty(args: &[&str], cwd: &Path) -> Output {
    support::krusty_output(cwd, args)
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The sorted names of the files krusty writes for `dir/k` with `-o out`
/// (a fresh `dir/out`).
fn directory_output(dir: &Path) -> Vec<String> {
    std::fs::create_dir_all(dir.join("out")).expect("out dir");
    let out = krusty(&["build", "k", "--output", "out"], dir);
    assert!(out.status.success(), "{}", stderr(&out));
    let mut names: Vec<String> = std::fs::read_dir(dir.join("out"))
        .expect("read out")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Asserts that a run failed and said `what` on stderr.
fn assert_fails_with(out: &Output, what: &str) {
    assert!(!out.status.success(), "succeeded, expected: {what}");
    assert!(stderr(out).contains(what), "{}", stderr(out));
}

const CM: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n";
const DEPLOY: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n";

#[test]
fn builds_current_directory_by_default_in_kind_order() {
    let dir = scratch("default-dir");
    write(
        &dir,
        "kustomization.yaml",
        "resources:\n- d.yaml\n- cm.yaml\n",
    );
    write(&dir, "d.yaml", DEPLOY);
    write(&dir, "cm.yaml", CM);
    let out = krusty(&["build"], &dir);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("{CM}---\n{DEPLOY}").replace("metadata:\n  name: cm\n", "metadata:\n  name: cm\n")
    );
}

#[test]
fn output_to_file_and_directory() {
    let dir = scratch("output");
    write(&dir, "k/kustomization.yaml", "resources:\n- r.yaml\n");
    write(&dir, "k/r.yaml", &format!("{CM}---\n{DEPLOY}"));
    let out = krusty(&["build", "k", "-o", "all.yaml"], &dir);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(out.stdout.is_empty());
    let all = std::fs::read_to_string(dir.join("all.yaml")).expect("output file");
    assert_eq!(all, format!("{CM}---\n{DEPLOY}"));

    assert_eq!(
        directory_output(&dir),
        ["apps_v1_deployment_web.yaml", "v1_configmap_cm.yaml"]
    );
}

/// Directory output names files as `kubectl kustomize -o DIR` (Kustomize
/// v5.5.0) does; the expected names were observed with it.
#[test]
fn directory_output_names_files_as_kustomize_does() {
    let cm = |name: &str, ns: &str| {
        let ns = if ns.is_empty() {
            String::new()
        } else {
            format!("  namespace: {ns}\n")
        };
        format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n{ns}")
    };
    let namespace = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team\n";
    let cluster_role =
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: cr\n";
    let widget = "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n";
    let cases: [(Vec<String>, &[&str]); 5] = [
        // Two namespaces ("default" for none): namespaced files get theirs.
        (
            vec![
                cm("cm", ""),
                cm("cm2", "team"),
                namespace.into(),
                cluster_role.into(),
            ],
            &[
                "default_v1_configmap_cm.yaml",
                "rbac.authorization.k8s.io_v1_clusterrole_cr.yaml",
                "team_v1_configmap_cm2.yaml",
                "v1_namespace_team.yaml",
            ],
        ),
        // None and `default` are one namespace: no prefixes.
        (
            vec![cm("cm", ""), cm("cm3", "default"), namespace.into()],
            &[
                "v1_configmap_cm.yaml",
                "v1_configmap_cm3.yaml",
                "v1_namespace_team.yaml",
            ],
        ),
        // Prefixes are lower-cased.
        (
            vec![cm("cm", ""), cm("cm3", "Team"), namespace.into()],
            &[
                "default_v1_configmap_cm.yaml",
                "team_v1_configmap_cm3.yaml",
                "v1_namespace_team.yaml",
            ],
        ),
        // Names are lower-cased; a group comes first.
        (
            vec![cm("CM", ""), widget.into()],
            &["example.com_v1_widget_w.yaml", "v1_configmap_cm.yaml"],
        ),
        (vec![namespace.into()], &["v1_namespace_team.yaml"]),
    ];
    for (i, (docs, want)) in cases.iter().enumerate() {
        let dir = scratch(&format!("dir-names-{i}"));
        write(&dir, "k/kustomization.yaml", "resources:\n- r.yaml\n");
        write(&dir, "k/r.yaml", &docs.join("---\n"));
        assert_eq!(directory_output(&dir), *want, "case {i}");
    }
}

#[test]
fn failed_build_leaves_output_file_untouched() {
    let dir = scratch("atomic");
    write(&dir, "kustomization.yaml", "resources:\n- missing.yaml\n");
    write(&dir, "out.yaml", "previous content\n");
    let out = krusty(&["build", ".", "-o", "out.yaml"], &dir);
    assert!(!out.status.success());
    assert_eq!(
        std::fs::read_to_string(dir.join("out.yaml")).expect("still there"),
        "previous content\n"
    );
}

#[test]
fn load_restrictor_guards_files_outside_the_root() {
    let dir = scratch("restrictor");
    write(&dir, "shared/cm.yaml", CM);
    write(
        &dir,
        "app/kustomization.yaml",
        "resources:\n- ../shared/cm.yaml\n",
    );
    let out = krusty(&["build", "app"], &dir);
    assert_fails_with(&out, "is not in or below");
    let out = krusty(
        &["build", "app", "--load-restrictor", "LoadRestrictionsNone"],
        &dir,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout), CM);
    let out = krusty(&["build", "app", "--load-restrictor", "Bogus"], &dir);
    assert!(!out.status.success());
}

#[test]
fn cycles_and_kustomization_file_problems_are_errors() {
    let dir = scratch("cycle");
    write(&dir, "a/kustomization.yaml", "resources:\n- ../b\n");
    write(&dir, "b/kustomization.yaml", "resources:\n- ../a\n");
    let out = krusty(&["build", "a"], &dir);
    assert!(stderr(&out).contains("cycle detected"), "{}", stderr(&out));

    write(&dir, "two/kustomization.yaml", "resources: []\n");
    write(&dir, "two/kustomization.yml", "resources: []\n");
    let out = krusty(&["build", "two"], &dir);
    assert!(
        stderr(&out).contains("Found multiple kustomization files"),
        "{}",
        stderr(&out)
    );

    std::fs::create_dir_all(dir.join("none")).expect("mkdir");
    let out = krusty(&["build", "none"], &dir);
    assert!(
        stderr(&out).contains("unable to find one of"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn duplicate_ids_are_rejected() {
    let dir = scratch("dup");
    write(
        &dir,
        "kustomization.yaml",
        "resources:\n- a.yaml\n- b.yaml\n",
    );
    write(&dir, "a.yaml", CM);
    write(&dir, "b.yaml", CM);
    let out = krusty(&["build"], &dir);
    assert_fails_with(
        &out,
        "may not add resource with an already registered id: ConfigMap.v1.[noGrp]/cm.[noNs]",
    );
    assert!(out.stdout.is_empty(), "no partial output");
}

#[test]
fn bad_yaml_names_file_line_and_column() {
    let dir = scratch("bad-yaml");
    write(&dir, "kustomization.yaml", "resources:\n- r.yaml\n");
    write(
        &dir,
        "r.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n\tname: x\n",
    );
    let out = krusty(&["build"], &dir);
    let err = stderr(&out);
    assert!(err.contains("r.yaml:4:1:") && err.contains("tab"), "{err}");

    std::fs::write(dir.join("r.yaml"), b"apiVersion: v1\nkind: \xff\n").expect("write");
    let out = krusty(&["build"], &dir);
    let err = stderr(&out);
    assert!(err.contains("r.yaml:2:7: invalid UTF-8"), "{err}");
}

#[test]
fn unsupported_and_unknown_fields_fail_clearly() {
    let dir = scratch("fields");
    write(&dir, "r.yaml", CM);
    write(
        &dir,
        "kustomization.yaml",
        "resources:\n- r.yaml\nfoo: bar\n",
    );
    let out = krusty(&["build"], &dir);
    assert!(
        stderr(&out).contains("unknown field \"foo\""),
        "{}",
        stderr(&out)
    );
}

#[test]
fn version_and_help() {
    let dir = scratch("version");
    let out = krusty(&["version"], &dir);
    let line = String::from_utf8_lossy(&out.stdout);
    assert!(
        line.starts_with("v5.8.1 ") && line.contains("krusty"),
        "{line}"
    );
    let out = krusty(&["--kustomize-version", "v5.5.0", "version"], &dir);
    let line = String::from_utf8_lossy(&out.stdout);
    assert!(line.starts_with("v5.5.0 "), "{line}");
    let out = krusty(&["version", "--kustomize-version", "5.5.0"], &dir);
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("v5.5.0 "));
    // The flag wins over the environment.
    let out = support::krusty_command()
        .args(["--kustomize-version", "v5.8.1", "version"])
        .env("KRUSTY_KUSTOMIZE_VERSION", "v5.5.0")
        .current_dir(&dir)
        .output()
        .expect("krusty runs");
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("v5.8.1 "));
    let out = krusty(&["--kustomize-version", "v5.8.0", "version"], &dir);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("krusty reproduces v5.5.0 and v5.8.1"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = krusty(&["build", "--help"], &dir);
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(
        help.contains("--load-restrictor") && help.contains("--output"),
        "{help}"
    );
}

/// Kustomize's Helm flags are accepted (Argo CD passes them to every
/// build); Helm charts fail with Kustomize's error when `--enable-helm` is
/// missing; `helmGlobals` alone is ignored, as Kustomize ignores it
/// (charts themselves: tests/helm.rs).
#[test]
fn helm_flags_are_accepted_and_charts_fail_clearly() {
    let dir = scratch("helm");
    write(
        &dir,
        "plain/kustomization.yaml",
        "resources:\n- cm.yaml\nhelmGlobals:\n  chartHome: charts\n",
    );
    write(&dir, "plain/cm.yaml", CM);
    let flags = [
        "--enable-helm",
        "--helm-command",
        "/usr/bin/helm",
        "--helm-api-versions",
        "a/v1,b/v2",
        "--helm-kube-version",
        "1.30",
        "--helm-debug",
        "--network-name",
        "bridge",
    ];
    for args in [
        &["build", "plain"][..],
        &[&["build", "plain"][..], &flags[..]].concat(),
    ] {
        let out = krusty(args, &dir);
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        assert_eq!(String::from_utf8_lossy(&out.stdout), CM);
    }
    write(
        &dir,
        "charts/kustomization.yaml",
        "helmCharts:\n- name: minecraft\n  repo: https://example.com/charts\n  version: 3.1.3\n",
    );
    let out = krusty(&["build", "charts"], &dir);
    assert_fails_with(&out, "must specify --enable-helm");
    // Boolean flags take an optional value, as Go's flags do.
    let out = krusty(&["build", "charts", "--enable-helm=false"], &dir);
    assert!(
        stderr(&out).contains("must specify --enable-helm"),
        "{}",
        stderr(&out)
    );
    // With the flag, helm is run (here a command that does not exist).
    for on in [&["--enable-helm"][..], &["--enable-helm=true"][..]] {
        let args = [
            &["build", "charts", "--helm-command", "/nonexistent/helm"][..],
            on,
        ]
        .concat();
        let out = krusty(&args, &dir);
        assert_fails_with(
            &out,
            "fork/exec /nonexistent/helm: no such file or directory",
        );
    }
    let out = krusty(
        &[
            "build",
            "plain",
            "--enable-alpha-plugins=false",
            "--network=true",
            "--enable-managedby-label=false",
        ],
        &dir,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout), CM);
}

#[test]
fn thread_placement_never_changes_the_output() {
    // Several bases, so entries are built in parallel and resources
    // transformed in parallel passes.
    let dir = scratch("placement");
    let mut resources = String::new();
    for i in 0..6 {
        write(
            &dir,
            &format!("base{i}/kustomization.yaml"),
            &format!(
                "namePrefix: b{i}-\nresources:\n- cm.yaml\nconfigMapGenerator:\n- name: gen\n  literals:\n  - K={i}\n"
            ),
        );
        write(
            &dir,
            &format!("base{i}/cm.yaml"),
            &format!(
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: plain\ndata:\n  n: \"{i}\"\n"
            ),
        );
        resources.push_str(&format!("- base{i}\n"));
    }
    write(
        &dir,
        "kustomization.yaml",
        &format!("namespace: ns\ncommonLabels:\n  app: x\nresources:\n{resources}"),
    );
    let run = |env: &[(&str, &str)]| {
        let out = support::krusty_command()
            .args(["build", "."])
            .envs(env.iter().copied())
            .current_dir(&dir)
            .output()
            .expect("krusty runs");
        assert!(out.status.success(), "{}", stderr(&out));
        out.stdout
    };
    let default = run(&[]);
    assert_eq!(
        String::from_utf8_lossy(&default)
            .matches("kind: ConfigMap")
            .count(),
        12
    );
    assert_eq!(run(&[("KRUSTY_PIN_THREADS", "1")]), default);
    assert_eq!(run(&[("RAYON_NUM_THREADS", "1")]), default);
    assert_eq!(
        run(&[("RAYON_NUM_THREADS", "3"), ("KRUSTY_PIN_THREADS", "1")]),
        default
    );
}

/// Asks the kernel to drop every file below `dir` from the page cache
/// (written back first), so the next reads come from disk. File systems
/// that keep files only in memory ignore it.
fn drop_from_page_cache(dir: &Path) {
    use std::os::fd::AsRawFd;
    for entry in std::fs::read_dir(dir).expect("read scratch dir") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            drop_from_page_cache(&path);
            continue;
        }
        let file = std::fs::File::open(&path).expect("open scratch file");
        file.sync_all().expect("sync scratch file");
        // SAFETY: `posix_fadvise` reads no memory of ours; the file is open.
        unsafe {
            libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED);
        }
    }
}

#[test]
fn files_read_from_disk_build_the_same_output() {
    // Enough files that most reads of a cold tree wait for the disk, so the
    // build reads ahead (bases, resources, patches, generator files).
    let dir = scratch("cold");
    let mut groups = String::new();
    for g in 0..4 {
        let mut apps = String::new();
        for a in 0..6 {
            let app = format!("g{g}/app{a}");
            write(
                &dir,
                &format!("{app}/kustomization.yaml"),
                &format!(
                    "resources:\n- deploy.yaml\n- svc.yaml\npatches:\n- path: patch.yaml\n\
                     configMapGenerator:\n- name: conf{a}\n  files:\n  - config/app.properties\n"
                ),
            );
            write(
                &dir,
                &format!("{app}/deploy.yaml"),
                &format!(
                    "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app{a}\n\
                     spec:\n  template:\n    spec:\n      containers:\n      - name: app\n        image: app:{g}.{a}\n"
                ),
            );
            write(
                &dir,
                &format!("{app}/svc.yaml"),
                &format!("apiVersion: v1\nkind: Service\nmetadata:\n  name: app{a}\n"),
            );
            write(
                &dir,
                &format!("{app}/patch.yaml"),
                &format!(
                    "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app{a}\nspec:\n  replicas: {a}\n"
                ),
            );
            write(
                &dir,
                &format!("{app}/config/app.properties"),
                &format!("group={g}\napp={a}\n"),
            );
            apps.push_str(&format!("- app{a}\n"));
        }
        write(
            &dir,
            &format!("g{g}/kustomization.yaml"),
            &format!("namePrefix: g{g}-\nresources:\n{apps}"),
        );
        groups.push_str(&format!("- g{g}\n"));
    }
    write(
        &dir,
        "kustomization.yaml",
        &format!("namespace: cold\nresources:\n{groups}"),
    );
    let warm = krusty(&["build", "."], &dir);
    assert!(warm.status.success(), "{}", stderr(&warm));
    let text = String::from_utf8_lossy(&warm.stdout);
    assert_eq!(text.matches("kind: Deployment").count(), 24);
    assert!(text.contains("    group=3\n    app=5\n"), "{text}");
    for _ in 0..2 {
        drop_from_page_cache(&dir);
        let cold = krusty(&["build", "."], &dir);
        assert!(cold.status.success(), "{}", stderr(&cold));
        assert_eq!(String::from_utf8_lossy(&cold.stdout), text);
    }
}

#[test]
fn a_missing_target_is_not_a_valid_directory_as_in_kustomize() {
    let dir = scratch("missing-target");
    let out = krusty(&["build", "no-such-folder"], &dir);
    assert_fails_with(
        &out,
        "must build at directory: not a valid directory: evalsymlink failure on",
    );
}
