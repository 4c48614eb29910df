//! `krusty targets`, `krusty flux build`, `krusty argocd build` and
//! `krusty diff` on trimmed copies of real public GitOps repositories
//! (`tests/gitops/<kind>/<name>/tree`, with their provenance and
//! licence beside them).
//!
//! Each fixture lists its targets (`targets.txt`: the kustomization roots
//! no other kustomization reaches, found independently of krusty) and its
//! renderings (`cases.txt`: `flux FILE NAMESPACE/NAME EXPECTED` or
//! `argocd FILE EXPECTED`). The expected files were made with `kubectl
//! kustomize` (Kustomize v5.5.0; for Flux `--reorder none
//! --load-restrictor LoadRestrictionsNone`, as kustomize-controller
//! builds), on the folder itself or, under `expected/derived/`, on a copy
//! where the controller's documented step (Flux's generator and
//! substitution, Argo CD's edits) was made by a script; see each
//! fixture's TARGETS.md. Flux's owner labels and Argo CD's tracking
//! annotation are checked on their own.

use std::path::{Path, PathBuf};
use std::process::Output;

mod support;
use support::{copy_tree, git_command, krusty_output, run, scratch, text, write};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/gitops");

fn fixtures() -> Vec<PathBuf> {
    let mut all = Vec::new();
    for kind in ["flux", "argocd"] {
        let dir = Path::new(FIXTURES).join(kind);
        all.extend(support::cases(&dir).into_iter().map(|case| case.dir));
    }
    assert!(all.len() >= 5, "fixtures are missing");
    all
}

fn krusty(cwd: &Path, args: &[&str]) -> Output {
    let mut full = vec!["--kustomize-version", "v5.5.0"];
    full.extend_from_slice(args);
    krusty_output(cwd, &full)
}

fn ok(out: &Output, what: &str) -> String {
    assert!(
        out.status.success(),
        "{what} failed ({:?}):\n{}",
        out.status,
        text(&out.stderr)
    );
    text(&out.stdout)
}

/// The stream with Flux's two owner labels taken out of every object
/// (and the `labels:` line of an object that had no other label), after
/// checking each object carries them with the Kustomization's name.
fn without_owner_labels(stream: &str, namespace: &str, name: &str) -> String {
    let docs: Vec<&str> = stream.split("---\n").filter(|d| !d.is_empty()).collect();
    let mut out = Vec::new();
    for doc in docs {
        let name_label = format!("    kustomize.toolkit.fluxcd.io/name: {name}\n");
        let namespace_label = format!("    kustomize.toolkit.fluxcd.io/namespace: {namespace}\n");
        assert!(
            doc.contains(&name_label) && doc.contains(&namespace_label),
            "an object lacks Flux's owner labels:\n{doc}"
        );
        let kept = doc.replace(&name_label, "").replace(&namespace_label, "");
        out.push(kept);
    }
    strip_bare_labels(&out.join("---\n"))
}

/// `text` without the lines that say `  labels:` at the metadata level
/// and nothing else (the expected files' objects without labels).
fn strip_bare_labels(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = String::new();
    for (i, line) in lines.iter().enumerate() {
        let next_is_child = lines.get(i + 1).is_some_and(|n| n.starts_with("    "));
        if *line == "  labels:" && !next_is_child {
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

#[test]
fn every_fixture_lists_its_targets() {
    for fixture in fixtures() {
        let want = std::fs::read_to_string(fixture.join("targets.txt")).expect("targets.txt");
        let got = ok(
            &krusty(&fixture.join("tree"), &["targets"]),
            "krusty targets",
        );
        assert_eq!(got, want, "{}", fixture.display());
        let json = ok(
            &krusty(&fixture.join("tree"), &["targets", "--json"]),
            "krusty targets --json",
        );
        let listed: Vec<String> = serde_json::from_str(&json).expect("a JSON array");
        assert_eq!(listed, want.lines().collect::<Vec<_>>());
    }
}

#[test]
fn every_flux_kustomization_renders_as_kustomize_controller_renders_it() {
    let mut cases = 0;
    for fixture in fixtures() {
        let tree = fixture.join("tree");
        let list = std::fs::read_to_string(fixture.join("cases.txt")).expect("cases.txt");
        for line in list.lines().filter(|l| l.starts_with("flux ")) {
            let [_, file, name, expected] = line.split(' ').collect::<Vec<_>>()[..] else {
                panic!("bad case line: {line}");
            };
            let (namespace, short) = name.split_once('/').expect("NAMESPACE/NAME");
            let out = krusty(
                &tree,
                &["flux", "build", "--source-root", ".", file, "-k", name],
            );
            let got = without_owner_labels(&ok(&out, line), namespace, short);
            let want = strip_bare_labels(
                &std::fs::read_to_string(fixture.join(expected)).expect("expected"),
            );
            assert!(got == want, "{line}:\n{}", support::diff(&want, &got));
            cases += 1;
        }
    }
    assert!(cases >= 20, "only {cases} Flux cases ran");
}

#[test]
fn every_argocd_application_renders_as_the_repo_server_renders_it() {
    let mut cases = 0;
    for fixture in fixtures() {
        let tree = fixture.join("tree");
        let list = std::fs::read_to_string(fixture.join("cases.txt")).expect("cases.txt");
        for line in list.lines().filter(|l| l.starts_with("argocd ")) {
            let [_, file, expected] = line.split(' ').collect::<Vec<_>>()[..] else {
                panic!("bad case line: {line}");
            };
            let args = [
                "argocd",
                "build",
                "--repo-root",
                ".",
                "--argocd-tracking",
                "none",
                file,
            ];
            let got = ok(&krusty(&tree, &args), line);
            let want = std::fs::read_to_string(fixture.join(expected)).expect("expected");
            assert!(got == want, "{line}:\n{}", support::diff(&want, &got));
            // With Argo CD's default tracking, every object carries its id.
            let tracked = ok(
                &krusty(&tree, &["argocd", "build", "--repo-root", ".", file]),
                line,
            );
            let objects = tracked.split("---\n").count();
            let ids = tracked.matches("argocd.argoproj.io/tracking-id: ").count();
            assert_eq!(
                objects, ids,
                "{line}: an object without its tracking id:\n{tracked}"
            );
            cases += 1;
        }
    }
    assert!(cases >= 7, "only {cases} Argo CD cases ran");
}

#[test]
fn a_tracking_id_names_the_application_kind_and_destination_namespace() {
    let tree = Path::new(FIXTURES).join("argocd/image-updater-examples/tree");
    let out = ok(
        &krusty(
            &tree,
            &[
                "argocd",
                "build",
                "--repo-root",
                ".",
                "app-of-apps/apps/app1.yaml",
            ],
        ),
        "argocd build",
    );
    // The Deployment has no namespace: the destination's is used.
    assert!(
        out.contains("argocd.argoproj.io/tracking-id: app1:apps/Deployment:argocd/"),
        "{out}"
    );
}

#[test]
fn pi_cluster_substitutes_from_the_config_map_in_the_repository() {
    let tree = Path::new(FIXTURES).join("flux/pi-cluster/tree");
    let file = "kubernetes/clusters/dev/infra/envoy-gateway-app.yaml";
    // kustomize-controller's default: strict; one variable is defined
    // nowhere in the repository.
    let build = [
        "flux",
        "build",
        "--source-root",
        ".",
        file,
        "-k",
        "envoy-gateway-config",
    ];
    let strict = krusty(&tree, &build);
    assert!(!strict.status.success());
    let message = text(&strict.stderr);
    assert!(
        message.contains("variable not set (strict mode): \"TRUSTED_INTERNAL_POD_CIDR\"")
            && message.contains(file)
            && message.contains("flux-system/envoy-gateway-config"),
        "{message}"
    );
    let lenient = ok(
        &krusty(
            &tree,
            &[&build[..], &["--strict-substitute=false"]].concat(),
        ),
        "flux build",
    );
    // The values of ConfigMap flux-system/cluster-settings.
    assert!(
        lenient.contains("- '*.dev.homelab.ricsanfre.com'"),
        "{lenient}"
    );
    assert!(
        lenient.contains("io.cilium/lb-ipam-ips: 172.30.200.1"),
        "{lenient}"
    );
    assert!(!lenient.contains("${"), "{lenient}");
}

#[test]
fn a_flux_kustomization_with_an_unknown_field_is_refused_naming_file_and_line() {
    let dir = scratch("gitops", "unknown-field");
    write(
        &dir,
        "app/cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n",
    );
    write(
        &dir,
        "ks.yaml",
        "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: app\n  namespace: flux-system\nspec:\n  path: ./app\n  prue: true\n",
    );
    let out = krusty(&dir, &["flux", "build", "--source-root", ".", "ks.yaml"]);
    assert!(!out.status.success());
    let message = text(&out.stderr);
    assert!(
        message.contains(
            "Kustomization 'flux-system/app' in ks.yaml: line 8: spec.prue: unknown field"
        ),
        "{message}"
    );
}

/// A git repository holding a copy of `fixture`'s tree, committed.
fn repository(fixture: &str, name: &str) -> PathBuf {
    let dir = scratch("gitops-repos", name);
    copy_tree(&Path::new(FIXTURES).join(fixture).join("tree"), &dir);
    run(git_command(&dir).args(["init", "-q", "-b", "main"]));
    run(git_command(&dir).args(["add", "-A"]));
    run(git_command(&dir).args(["commit", "-q", "-m", "base"]));
    dir
}

/// Makes `dir` a git repository whose first commit holds what it holds.
fn init(dir: &Path) {
    run(git_command(dir).args(["init", "-q", "-b", "main"]));
    commit(dir, "one");
}

fn commit(dir: &Path, message: &str) {
    run(git_command(dir).args(["add", "-A"]));
    run(git_command(dir).args(["commit", "-q", "-m", message]));
}

fn lines(out: &Output) -> Vec<String> {
    ok(out, "krusty").lines().map(str::to_string).collect()
}

#[test]
fn affected_targets_are_those_whose_inputs_changed() {
    let dir = repository("flux/flux2-kustomize-helm-example", "affected");
    let affected = |args: &[&str]| {
        let mut full = vec!["targets", "--affected-by"];
        full.extend_from_slice(args);
        lines(&krusty(&dir, &full))
    };
    assert!(affected(&["HEAD"]).is_empty());
    // A file of the shared base: both overlays that reach it.
    let release = dir.join("apps/base/podinfo/release.yaml");
    let text = std::fs::read_to_string(&release).unwrap();
    std::fs::write(&release, text.replace("interval: 50m", "interval: 40m")).unwrap();
    assert_eq!(affected(&["HEAD"]), ["apps/production", "apps/staging"]);
    // A file beside the base's files that no kustomization names: none.
    run(git_command(&dir).args(["checkout", "-q", "--", "."]));
    write(&dir, "apps/base/podinfo/notes.yaml", "kind: ConfigMap\n");
    assert!(
        affected(&["HEAD"]).is_empty(),
        "an unread file touched a target"
    );
    // A file one overlay names: that overlay alone.
    std::fs::remove_file(dir.join("apps/base/podinfo/notes.yaml")).unwrap();
    let values = dir.join("apps/staging/podinfo-values.yaml");
    std::fs::write(
        &values,
        std::fs::read_to_string(&values).unwrap() + "# changed\n",
    )
    .unwrap();
    assert_eq!(affected(&["HEAD"]), ["apps/staging"]);
    // Between two commits, the work tree left aside.
    commit(&dir, "staging values");
    assert_eq!(affected(&["HEAD~1..HEAD"]), ["apps/staging"]);
    assert!(affected(&["HEAD"]).is_empty());
    // A kustomization file created where another name was looked for
    // changes the build (it now fails): the target is touched.
    write(&dir, "apps/staging/kustomization.yml", "resources: []\n");
    assert_eq!(affected(&["HEAD"]), ["apps/staging"]);
}

#[test]
fn diff_prints_what_changed_in_every_touched_target_and_exits_1() {
    let dir = repository("flux/flux2-kustomize-helm-example", "diff");
    let status_before = run(git_command(&dir).args(["status", "--porcelain"]));
    let same = krusty(&dir, &["diff", "HEAD"]);
    assert_eq!(same.status.code(), Some(0), "{}", text(&same.stderr));
    assert!(
        text(&same.stdout)
            .ends_with("0 of 12 targets changed: 0 objects added, 0 removed, 0 changed\n"),
        "{}",
        text(&same.stdout)
    );

    let release = dir.join("apps/base/podinfo/release.yaml");
    let before = std::fs::read_to_string(&release).unwrap();
    std::fs::write(&release, before.replace("interval: 50m", "interval: 40m")).unwrap();
    let out = krusty(&dir, &["diff", "HEAD"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let shown = text(&out.stdout);
    for target in [
        "=== apps/production (kustomization)",
        "=== apps/staging (kustomization)",
        "=== flux-system/apps (clusters/production/apps.yaml) (flux)",
        "=== flux-system/apps (clusters/staging/apps.yaml) (flux)",
    ] {
        assert!(shown.contains(target), "{target} missing:\n{shown}");
    }
    assert!(
        !shown.contains("infrastructure"),
        "an untouched target is listed:\n{shown}"
    );
    assert!(
        shown.contains("-  interval: 50m\n+  interval: 40m\n"),
        "{shown}"
    );
    assert!(
        shown.ends_with("4 of 12 targets changed: 0 objects added, 0 removed, 4 changed\n"),
        "{shown}"
    );

    let json = ok_or_1(&krusty(&dir, &["diff", "HEAD", "--output", "json"]));
    let doc: serde_json::Value = serde_json::from_str(&json).expect("JSON");
    assert_eq!(doc["summary"]["changed_targets"], 4);
    assert_eq!(doc["targets"][0]["objects"][0]["change"], "changed");
    let markdown = ok_or_1(&krusty(&dir, &["diff", "HEAD", "--output", "markdown"]));
    assert!(
        markdown.starts_with("## krusty diff\n\n4 of 12 targets changed"),
        "{markdown}"
    );
    assert!(markdown.contains("<details><summary><code>~ helm.toolkit.fluxcd.io/v2 HelmRelease podinfo/podinfo</code></summary>"), "{markdown}");

    // Both sides were read from git objects: the work tree is as it was.
    std::fs::write(&release, &before).unwrap();
    assert_eq!(
        run(git_command(&dir).args(["status", "--porcelain"])),
        status_before
    );
    assert!(run(git_command(&dir).args(["stash", "list"])).is_empty());
}

/// The stdout of a diff that found changes.
fn ok_or_1(out: &Output) -> String {
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    text(&out.stdout)
}

#[test]
fn diff_between_two_commits_shows_added_and_removed_objects_and_targets() {
    let dir = scratch("gitops-repos", "two-commits");
    write(&dir, "base/kustomization.yaml", "resources:\n- cm.yaml\n");
    write(
        &dir,
        "base/cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  mode: slow\n",
    );
    write(
        &dir,
        "dev/kustomization.yaml",
        "namePrefix: dev-\nresources:\n- ../base\n",
    );
    write(&dir, "old/kustomization.yaml", "resources:\n- cm.yaml\n");
    write(
        &dir,
        "old/cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: old\n",
    );
    init(&dir);
    write(
        &dir,
        "base/kustomization.yaml",
        "resources:\n- cm.yaml\n- extra.yaml\n",
    );
    write(
        &dir,
        "base/extra.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra\n",
    );
    std::fs::remove_dir_all(dir.join("old")).unwrap();
    commit(&dir, "two");
    let shown = ok_or_1(&krusty(&dir, &["diff", "HEAD~1", "HEAD"]));
    assert!(
        shown.contains("=== dev (kustomization)\n+ v1 ConfigMap dev-extra\n"),
        "{shown}"
    );
    assert!(
        shown.contains("=== old (kustomization)\n- v1 ConfigMap old\n"),
        "{shown}"
    );
    assert!(
        shown.contains("+++ b/dev v1 ConfigMap dev-extra\n"),
        "{shown}"
    );
    assert!(
        shown.ends_with("2 of 2 targets changed: 1 object added, 1 removed, 0 changed\n"),
        "{shown}"
    );
}

#[test]
fn diff_masks_secret_values_unless_asked() {
    let dir = scratch("gitops-repos", "secrets");
    write(&dir, "app/kustomization.yaml", "secretGenerator:\n- name: db\n  literals:\n  - password=old-value\n  - user=admin\ngeneratorOptions:\n  disableNameSuffixHash: true\n");
    init(&dir);
    write(&dir, "app/kustomization.yaml", "secretGenerator:\n- name: db\n  literals:\n  - password=new-value\n  - user=admin\ngeneratorOptions:\n  disableNameSuffixHash: true\n");
    let masked = ok_or_1(&krusty(&dir, &["diff", "HEAD"]));
    assert!(
        masked.contains("-  password: '*** (before)'\n+  password: '*** (after)'\n"),
        "{masked}"
    );
    // base64 of the values
    for value in ["b2xkLXZhbHVl", "bmV3LXZhbHVl", "YWRtaW4="] {
        assert!(!masked.contains(value), "{value} shown:\n{masked}");
    }
    let shown = ok_or_1(&krusty(&dir, &["diff", "HEAD", "--show-secrets"]));
    assert!(
        shown.contains("-  password: b2xkLXZhbHVl\n+  password: bmV3LXZhbHVl\n"),
        "{shown}"
    );
}

#[test]
fn diff_renders_argocd_applications_found_in_the_repository() {
    let dir = repository("argocd/image-updater-examples", "argocd-diff");
    let file = dir.join("image-list-kustomize/source/.argocd-source-image-list-kustomize.yaml");
    let before = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, before.replace("nginx:latest@", "nginx:1.27@")).unwrap();
    let shown = ok_or_1(&krusty(&dir, &["diff", "HEAD"]));
    assert!(
        shown.contains("=== argocd/image-list-kustomize (image-list-kustomize/app/image-list-kustomize.yaml) (argocd)"),
        "{shown}"
    );
    assert!(
        shown.contains("+      - image: nginx:1.27@sha256:"),
        "{shown}"
    );
    assert!(
        shown.ends_with("1 of 14 targets changed: 0 objects added, 0 removed, 2 changed\n"),
        "{shown}"
    );
}

#[test]
fn a_revision_that_reads_as_an_option_is_refused() {
    let dir = repository("flux/flux2-kustomize-helm-example", "option-revision");
    let out = krusty(&dir, &["diff", "--", "--output=/tmp/x"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("a revision may not be empty or start with '-'"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn every_kind_of_file_a_build_reads_is_one_of_its_inputs() {
    let dir = scratch("gitops-repos", "inputs");
    let deploy = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n      containers:\n      - name: web\n        image: nginx\n";
    write(
        &dir,
        "base/kustomization.yaml",
        "resources:\n- deploy.yaml\n",
    );
    write(&dir, "base/deploy.yaml", deploy);
    write(&dir, "base/unused.yaml", "kind: ConfigMap\n");
    write(&dir, "comp/kustomization.yaml", "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\ncommonAnnotations:\n  c: d\n");
    write(
        &dir,
        "app/kustomization.yaml",
        "resources:\n- ../base\ncomponents:\n- ../comp\npatches:\n- path: patch.yaml\nconfigMapGenerator:\n- name: cfg\n  files:\n  - app.properties\n  envs:\n  - app.env\ncrds:\n- crd.yaml\nopenapi:\n  path: schema.json\ntransformers:\n- labels.yaml\nconfigurations:\n- config.yaml\n",
    );
    write(
        &dir,
        "app/patch.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 2\n",
    );
    write(&dir, "app/app.properties", "a=b\n");
    write(&dir, "app/app.env", "C=D\n");
    write(&dir, "app/crd.yaml", "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: widgets.example.com\nspec:\n  group: example.com\n  names:\n    kind: Widget\n    plural: widgets\n  scope: Namespaced\n  versions: []\n");
    write(&dir, "app/schema.json", "{\"definitions\": {}}\n");
    write(&dir, "app/labels.yaml", "apiVersion: builtin\nkind: LabelTransformer\nmetadata:\n  name: l\nlabels:\n  team: a\nfieldSpecs:\n- path: metadata/labels\n  create: true\n");
    write(&dir, "app/config.yaml", "nameReference: []\n");
    write(&dir, "other/kustomization.yaml", "resources:\n- cm.yaml\n");
    write(
        &dir,
        "other/cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: other\n",
    );
    init(&dir);
    let built = krusty(&dir, &["build", "app"]);
    ok(&built, "the tree builds");
    for file in [
        "app/kustomization.yaml",
        "base/kustomization.yaml",
        "base/deploy.yaml",
        "comp/kustomization.yaml",
        "app/patch.yaml",
        "app/app.properties",
        "app/app.env",
        "app/crd.yaml",
        "app/schema.json",
        "app/labels.yaml",
        "app/config.yaml",
    ] {
        let path = dir.join(file);
        let before = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, format!("{before}\n")).unwrap();
        let listed = lines(&krusty(&dir, &["targets", "--affected-by", "HEAD"]));
        assert_eq!(listed, ["app"], "a change to {file}");
        std::fs::write(&path, before).unwrap();
    }
    std::fs::write(dir.join("base/unused.yaml"), "kind: Secret\n").unwrap();
    assert!(lines(&krusty(&dir, &["targets", "--affected-by", "HEAD"])).is_empty());
}

/// A commit whose tree names `x` twice: first a symlink to `victim`,
/// then a file (`git mktree` writes what it is given; git's checks only
/// run in `fsck`).
fn crafted_commit(dir: &Path, victim: &Path) -> String {
    let hash = |text: &str| {
        let mut git = git_command(dir);
        git.args(["hash-object", "-w", "--stdin"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped());
        let mut child = git.spawn().unwrap();
        std::io::Write::write_all(&mut child.stdin.take().unwrap(), text.as_bytes()).unwrap();
        String::from_utf8(child.wait_with_output().unwrap().stdout)
            .unwrap()
            .trim()
            .to_string()
    };
    let link = hash(&victim.display().to_string());
    let blob = hash("planted\n");
    let app = run(git_command(dir).args(["rev-parse", "HEAD:app"]))
        .trim()
        .to_string();
    let listing = format!("040000 tree {app}\tapp\n120000 blob {link}\tx\n100644 blob {blob}\tx\n");
    let mut mktree = git_command(dir);
    mktree
        .arg("mktree")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped());
    let mut child = mktree.spawn().unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), listing.as_bytes()).unwrap();
    let tree = String::from_utf8(child.wait_with_output().unwrap().stdout)
        .unwrap()
        .trim()
        .to_string();
    run(git_command(dir).args(["commit-tree", &tree, "-p", "HEAD", "-m", "crafted"]))
        .trim()
        .to_string()
}

#[test]
fn a_revision_that_would_write_through_its_own_link_is_refused() {
    let dir = scratch("gitops-repos", "crafted-tree");
    let outside = scratch("gitops-repos", "crafted-outside");
    write(&dir, "app/kustomization.yaml", "resources:\n- cm.yaml\n");
    write(
        &dir,
        "app/cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n",
    );
    init(&dir);
    let victim = outside.join("victim");
    let evil = crafted_commit(&dir, &victim);
    let out = krusty(&dir, &["diff", "HEAD", &evil]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stdout));
    assert!(
        text(&out.stderr).contains("names one path twice"),
        "{}",
        text(&out.stderr)
    );
    assert!(!victim.exists(), "krusty wrote outside its folder");
}

#[test]
fn flux_and_argocd_never_read_through_a_link_out_of_the_repository() {
    let dir = scratch("gitops-repos", "escaping-links");
    let outside = scratch("gitops-repos", "escaping-outside");
    write(
        &outside,
        "kustomization.yaml",
        "configMapGenerator:\n- name: leak\n  literals:\n  - k=OUTSIDE\n",
    );
    std::fs::create_dir_all(dir.join("app")).unwrap();
    std::os::unix::fs::symlink(
        outside.join("kustomization.yaml"),
        dir.join("app/kustomization.yaml"),
    )
    .unwrap();
    write(
        &dir,
        "ks.yaml",
        "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: app\n  namespace: flux-system\nspec:\n  path: ./app\n",
    );
    write(
        &dir,
        "app.yaml",
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: app\nspec:\n  source:\n    path: app\n    kustomize:\n      namePrefix: x-\n",
    );
    let flux = krusty(&dir, &["flux", "build", "--source-root", ".", "ks.yaml"]);
    assert!(!flux.status.success() && !text(&flux.stdout).contains("OUTSIDE"));
    assert!(
        text(&flux.stderr).contains("fs-security-constraint read"),
        "{}",
        text(&flux.stderr)
    );
    let argo = krusty(&dir, &["argocd", "build", "--repo-root", ".", "app.yaml"]);
    assert!(!argo.status.success() && !text(&argo.stdout).contains("OUTSIDE"));
    assert!(
        text(&argo.stderr)
            .contains("repository contains out-of-bounds symlinks. file: app/kustomization.yaml"),
        "{}",
        text(&argo.stderr)
    );
    // A name that would lead `.argocd-source-NAME.yaml` elsewhere.
    write(
        &dir,
        "bad.yaml",
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: ../../x\nspec:\n  source:\n    path: app\n",
    );
    let bad = krusty(&dir, &["argocd", "build", "--repo-root", ".", "bad.yaml"]);
    assert!(
        text(&bad.stderr)
            .contains("metadata.name '../../x': must be a lowercase RFC 1123 subdomain"),
        "{}",
        text(&bad.stderr)
    );
}

#[test]
fn a_secret_in_a_list_of_a_directory_application_is_masked() {
    let dir = scratch("gitops-repos", "list-secret");
    let list = |v: &str| {
        format!("apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Secret\n  metadata:\n    name: s\n  stringData:\n    k: {v}\n")
    };
    write(&dir, "dir/list.yaml", &list("OLDSECRET"));
    write(&dir, "app.yaml", "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: d\nspec:\n  destination:\n    namespace: ns\n  source:\n    path: dir\n");
    init(&dir);
    write(&dir, "dir/list.yaml", &list("NEWSECRET"));
    for format in ["text", "markdown", "json"] {
        let out = ok_or_1(&krusty(&dir, &["diff", "HEAD", "--output", format]));
        assert!(
            !out.contains("OLDSECRET") && !out.contains("NEWSECRET"),
            "{format}:\n{out}"
        );
        assert!(out.contains("v1 Secret s"), "{format}:\n{out}");
    }
}

#[test]
fn an_unreadable_flux_file_is_an_error_naming_it() {
    let dir = scratch("gitops-repos", "unreadable-flux");
    write(
        &dir,
        "app/cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n",
    );
    write(&dir, "ks.yaml", "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: k\nspec:\n  path: ./app\n  bad: [\n");
    let out = krusty(&dir, &["flux", "build", "--source-root", "."]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("ks.yaml"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn a_target_that_became_a_base_is_compared_with_what_it_builds_now() {
    let dir = scratch("gitops-repos", "became-base");
    write(&dir, "app/kustomization.yaml", "resources:\n- cm.yaml\n");
    write(
        &dir,
        "app/cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n",
    );
    init(&dir);
    write(
        &dir,
        "env/kustomization.yaml",
        "namePrefix: env-\nresources:\n- ../app\n",
    );
    commit(&dir, "two");
    let shown = ok_or_1(&krusty(&dir, &["diff", "HEAD~1", "HEAD"]));
    assert!(!shown.contains("=== app"), "{shown}");
    assert!(
        shown.contains("=== env (kustomization)\n+ v1 ConfigMap env-a\n"),
        "{shown}"
    );
    // The same change as a range, and from a merge base.
    assert_eq!(ok_or_1(&krusty(&dir, &["diff", "HEAD~1..HEAD"])), shown);
    run(git_command(&dir).args(["checkout", "-q", "-b", "topic", "HEAD~1"]));
    write(
        &dir,
        "app/cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n",
    );
    commit(&dir, "topic");
    let from_merge_base = ok_or_1(&krusty(&dir, &["diff", "main...topic"]));
    assert!(
        from_merge_base.contains("=== app (kustomization)\n- v1 ConfigMap a\n+ v1 ConfigMap b\n"),
        "{from_merge_base}"
    );
    assert_eq!(
        lines(&krusty(&dir, &["targets", "--affected-by", "main...topic"])),
        ["app"]
    );
}

#[test]
fn an_ignored_file_a_build_reads_is_seen_as_changed() {
    let dir = scratch("gitops-repos", "ignored-input");
    write(&dir, ".gitignore", "local.env\nsecrets/\n");
    write(
        &dir,
        "app/kustomization.yaml",
        "configMapGenerator:\n- name: c\n  envs:\n  - local.env\n",
    );
    write(&dir, "app/local.env", "A=1\n");
    write(
        &dir,
        "other/kustomization.yaml",
        "configMapGenerator:\n- name: s\n  files:\n  - ../secrets/token\n",
    );
    write(&dir, "secrets/token", "t\n");
    init(&dir);
    let listed = lines(&krusty(&dir, &["targets", "--affected-by", "HEAD"]));
    assert_eq!(listed, ["app", "other"]);
}
