//! Function catalogs (KEP-2906) end to end, against real servers on
//! loopback: catalogs read from local files, an HTTPS file server (a
//! throwaway CA), the smart-HTTP git server and a `docker-registry`;
//! functions run from them as exec programs (the SDK's example functions,
//! behind a script that counts its runs) and as podman containers.
//! docs/catalog.md states the rules these tests check.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output};
use std::sync::OnceLock;

use support::examples::example;
use support::podman::{import_labels_image, podman, podman_works};
use support::{
    bare_clone, definition_of, git_command, make_certificates, output_text, run, scratch, serve,
    write,
};

use support::KRUSTY;

/// The servers every test shares.
struct World {
    /// Holds `www/` (served over HTTPS), `srv/` (git) and `tls/`.
    dir: PathBuf,
    /// `https://127.0.0.1:PORT`, serving `www/`.
    files: String,
    /// `http://127.0.0.1:PORT`, serving the repositories of `srv/`.
    git: String,
    _servers: Vec<Child>,
}

fn world() -> &'static World {
    static WORLD: OnceLock<World> = OnceLock::new();
    WORLD.get_or_init(|| {
        let dir = scratch("catalogs", "world");
        let tls = make_certificates(&dir.join("tls"));
        let (crt, key) = (tls.join("server.crt"), tls.join("server.key"));
        std::fs::create_dir_all(dir.join("www")).unwrap();
        std::fs::create_dir_all(dir.join("srv")).unwrap();
        let (files, files_port) = serve(&[
            "0".as_ref(),
            dir.join("www").as_os_str(),
            crt.as_os_str(),
            key.as_os_str(),
            "--static".as_ref(),
        ]);
        let (git, git_port) = serve(&["0".as_ref(), dir.join("srv").as_os_str()]);
        World {
            dir,
            files: format!("https://127.0.0.1:{files_port}"),
            git: format!("http://127.0.0.1:{git_port}"),
            _servers: vec![files, git],
        }
    })
}

/// The sha256 of a file, in hex.
fn sha256(path: &Path) -> String {
    let out = run(Command::new("sha256sum").arg(path));
    out.split_whitespace().next().unwrap().to_string()
}

/// An exec function in `dir/name`: a script that appends its name to
/// `dir/runs.log` and runs the example function krm-set-labels, the label
/// `team: web` of its config made `team: TEAM` (so that functions can be
/// told apart by their output, and their hashes differ). Returns its path
/// and sha256.
fn counting_function(dir: &Path, name: &str, team: &str) -> (PathBuf, String) {
    let log = dir.join("runs.log");
    let script = format!(
        "#!/bin/sh\necho {name} >> '{}'\nsed 's/team: web/team: {team}/' | exec '{}'\n",
        log.display(),
        example("krm-set-labels").display()
    );
    write(dir, name, &script);
    let path = dir.join(name);
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    let hash = sha256(&path);
    (path, hash)
}

/// The names of the counting functions of `dir` that ran, a line each,
/// in the order they ran (empty when none ran).
fn runs_log(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("runs.log")).unwrap_or_default()
}

/// How many times the functions of `dir` ran.
fn runs(dir: &Path) -> usize {
    runs_log(dir).lines().count()
}

/// A catalog named `name` holding `functions` (from [`exec_function`] or
/// [`container_function`]).
fn catalog(name: &str, functions: &[String]) -> String {
    format!(
        "apiVersion: config.kubernetes.io/v1alpha1\nkind: Catalog\nmetadata:\n  name: {name}\nspec:\n  krmFunctions:\n{}",
        functions.concat()
    )
}

/// A catalog entry: `group`/`version` `kind` running the program at
/// `uri` with hash `sha256` on this machine (linux/amd64 or arm64).
fn exec_function(
    group: &str,
    version: &str,
    kind: &str,
    uri: &str,
    sha: &str,
    idempotent: bool,
) -> String {
    let arch = if cfg!(target_arch = "aarch64") {
        "arm64"
    } else {
        "amd64"
    };
    format!(
        "  - group: {group}\n    names:\n      kind: {kind}\n    publisher: {group}\n    versions:\n    - name: {version}\n      idempotent: {idempotent}\n      runtime:\n        exec:\n          platforms:\n          - bin: fn\n            os: linux\n            arch: {arch}\n            uri: {uri}\n            sha256: {sha}\n"
    )
}

/// The catalog entry of `example.com/v1` `kind` running the local
/// program `program` (by its `file://` uri) with hash `sha256`.
fn local_entry(kind: &str, program: &Path, sha256: &str, idempotent: bool) -> String {
    let uri = format!("file://{}", program.display());
    exec_function("example.com", "v1", kind, &uri, sha256, idempotent)
}

/// A counting function `file` in `dir` that sets `team`, as the catalog
/// entry of `example.com/v1 SetLabels` by its `file://` uri and sha256.
fn local_set_labels(dir: &Path, file: &str, team: &str, idempotent: bool) -> String {
    let (script, hash) = counting_function(dir, file, team);
    local_entry("SetLabels", &script, &hash, idempotent)
}

/// A catalog entry: `group`/`version` `kind` running the container
/// `image` (`more` appended to its `container:` mapping).
fn container_function(group: &str, version: &str, kind: &str, image: &str, more: &str) -> String {
    format!(
        "  - group: {group}\n    kind: {kind}\n    versions:\n    - name: {version}\n      runtime:\n        container:\n          image: {image}\n{more}"
    )
}

/// A config of `apiVersion` `kind` for krm-set-labels: `team: web`.
fn config(api_version: &str, kind: &str, name: &str) -> String {
    format!("apiVersion: {api_version}\nkind: {kind}\nmetadata:\n  name: {name}\nlabels:\n  team: web\n")
}

const CONFIG_MAP: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  k: v\n";

/// A kustomization in `dir` with `catalogs`, the transformer configs
/// `transformers` (file name, text) and a ConfigMap.
fn kustomization(dir: &Path, catalogs: &[&str], transformers: &[(&str, String)]) {
    let mut k = String::from("resources:\n- cm.yaml\n");
    if !catalogs.is_empty() {
        k.push_str("catalogs:\n");
        for c in catalogs {
            k.push_str(&format!("- {c}\n"));
        }
    }
    k.push_str("transformers:\n");
    for (name, text) in transformers {
        k.push_str(&format!("- {name}\n"));
        write(dir, name, text);
    }
    write(dir, "kustomization.yaml", &k);
    write(dir, "cm.yaml", CONFIG_MAP);
}

/// A kustomization in `dir` with `catalogs` and one transformer,
/// `fn.yaml`: the config `name` of `api_version` `kind`.
fn one_config(dir: &Path, catalogs: &[&str], api_version: &str, kind: &str, name: &str) {
    kustomization(
        dir,
        catalogs,
        &[("fn.yaml", config(api_version, kind, name))],
    );
}

/// `krusty ARGS` in `dir`, with the test CA trusted and a cache of the
/// test's own (`dir/../cache`).
fn krusty(dir: &Path, args: &[&str]) -> Output {
    krusty_in(dir, args, &[])
}

/// [`krusty`] with `envs` set besides (after the defaults, so they win).
fn krusty_in(dir: &Path, args: &[&str], envs: &[(&str, &std::ffi::OsStr)]) -> Output {
    let world = world();
    let ca = world.dir.join("tls/ca.crt");
    support::krusty_command()
        .args(args)
        .current_dir(dir)
        .env("SSL_CERT_FILE", &ca)
        .env("GIT_SSL_CAINFO", &ca)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("KRUSTY_CACHE_DIR", dir.parent().unwrap().join("cache"))
        .env(
            "CONTAINERS_CONF",
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.ci/containers.conf"),
        )
        .envs(envs.iter().copied())
        .output()
        .expect("krusty runs")
}

/// The flags that trust each of `catalogs` (`--trusted-catalog NAME`).
fn trusting<'a>(catalogs: &[&'a str]) -> Vec<&'a str> {
    catalogs
        .iter()
        .flat_map(|&c| ["--trusted-catalog", c])
        .collect()
}

/// `krusty build ARGS .` in `dir`: whether it succeeded, its stdout and
/// its stderr.
fn build(dir: &Path, args: &[&str]) -> (bool, String, String) {
    build_in(dir, args, &[])
}

/// [`build`] with `envs` set (see [`krusty_in`]).
fn build_in(
    dir: &Path,
    args: &[&str],
    envs: &[(&str, &std::ffi::OsStr)],
) -> (bool, String, String) {
    let mut all = vec!["build"];
    all.extend_from_slice(args);
    all.push(".");
    let out = krusty_in(dir, &all, envs);
    let (stdout, stderr) = output_text(&out);
    (out.status.success(), stdout, stderr)
}

/// `krusty build .` in `dir` with `args`; its stdout, failing the test
/// when it fails.
fn build_ok(dir: &Path, args: &[&str]) -> String {
    let (ok, stdout, stderr) = build(dir, args);
    assert!(ok, "krusty build failed in {}:\n{stderr}", dir.display());
    stdout
}

/// `krusty build .` in `dir` with `args`; its stderr, failing the test
/// when it succeeds.
fn build_err(dir: &Path, args: &[&str]) -> String {
    let (ok, stdout, stderr) = build(dir, args);
    assert!(
        !ok,
        "krusty build succeeded in {}:\n{stdout}",
        dir.display()
    );
    stderr
}

fn assert_has(text: &str, want: &str) {
    assert!(text.contains(want), "want {want:?} in:\n{text}");
}

/// A test's folder: `case/` for its kustomization, beside its cache.
fn case(name: &str) -> PathBuf {
    let dir = scratch("catalogs", name).join("case");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A bare repository `srv/NAME.git` whose tag `v1` holds `files`.
fn git_repository(name: &str, files: &[(&str, String)]) {
    let world = world();
    let work = world.dir.join("work").join(name);
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).unwrap();
    let git = |args: &[&str]| run(git_command(&work).args(args));
    git(&["init", "-q", "-b", "main"]);
    for (file, text) in files {
        write(&work, file, text);
    }
    git(&["add", "-A"]);
    git(&["commit", "-qm", "catalog"]);
    git(&["tag", "v1"]);
    let bare = world.dir.join("srv").join(format!("{name}.git"));
    bare_clone(&work, &bare);
}

#[test]
fn every_source_kind_gives_the_function() {
    let world = world();
    let dir = case("sources");
    let text = catalog(
        "example-co",
        &[local_set_labels(&dir, "set-labels.sh", "web", false)],
    );
    write(&dir, "catalog.yaml", &text);
    write(&world.dir.join("www"), "sources/catalog.yaml", &text);
    git_repository("sources-catalogs", &[("team/catalog.yaml", text.clone())]);
    let https = format!("{}/sources/catalog.yaml", world.files);
    let git = format!(
        "{}/sources-catalogs.git//team/catalog.yaml?ref=v1",
        world.git
    );
    let git_folder = format!("{}/sources-catalogs.git//team?ref=v1", world.git);
    for reference in [
        "catalog.yaml",
        https.as_str(),
        git.as_str(),
        git_folder.as_str(),
    ] {
        one_config(&dir, &[reference], "example.com/v1", "SetLabels", "labels");
        let out = build_ok(&dir, &["--trusted-catalog", reference]);
        assert_has(&out, "team: web");
    }
    assert_eq!(runs(&dir), 4);
}

#[test]
fn the_first_catalog_defining_a_kind_wins_and_within_one_the_first_function() {
    let dir = case("order");
    let (labels, labels_hash) = counting_function(&dir, "labels.sh", "web");
    let (annotations, annotations_hash) = counting_function(&dir, "annotations.sh", "api");
    let entry = |path: &Path, hash: &str| local_entry("Tag", path, hash, false);
    write(
        &dir,
        "labels.yaml",
        &catalog(
            "labels",
            &[
                entry(&labels, &labels_hash),
                entry(&annotations, &annotations_hash),
            ],
        ),
    );
    write(
        &dir,
        "annotations.yaml",
        &catalog("annotations", &[entry(&annotations, &annotations_hash)]),
    );
    let fns = [("fn.yaml", config("example.com/v1", "Tag", "tag"))];
    let trust = trusting(&["labels.yaml", "annotations.yaml"]);
    kustomization(&dir, &["labels.yaml", "annotations.yaml"], &fns);
    let out = build_ok(&dir, &trust);
    assert_has(&out, "team: web");
    assert!(!out.contains("team: api"), "{out}");
    kustomization(&dir, &["annotations.yaml", "labels.yaml"], &fns);
    let out = build_ok(&dir, &trust);
    assert_has(&out, "team: api");
    assert!(!out.contains("team: web"), "{out}");
}

#[test]
fn a_base_and_an_overlay_resolve_one_kind_each_with_its_own_catalogs() {
    let root = case("layers");
    let (labels, labels_hash) = counting_function(&root, "labels.sh", "web");
    let (annotations, annotations_hash) = counting_function(&root, "annotations.sh", "api");
    let base = root.join("base");
    let overlay = root.join("overlay");
    let entry = |path: &Path, hash: &str| local_entry("Tag", path, hash, false);
    write(
        &base,
        "catalog.yaml",
        &catalog("base-fns", &[entry(&labels, &labels_hash)]),
    );
    write(
        &overlay,
        "catalog.yaml",
        &catalog("overlay-fns", &[entry(&annotations, &annotations_hash)]),
    );
    one_config(&base, &["catalog.yaml"], "example.com/v1", "Tag", "base");
    write(
        &overlay,
        "kustomization.yaml",
        "resources:\n- ../base\ncatalogs:\n- catalog.yaml\ntransformers:\n- fn.yaml\n",
    );
    write(
        &overlay,
        "fn.yaml",
        &config("example.com/v1", "Tag", "overlay"),
    );
    let out = build_ok(
        &overlay,
        &trusting(&["../base/catalog.yaml", "catalog.yaml"]),
    );
    assert_has(&out, "team: api");
    let log = runs_log(&root);
    assert_eq!(
        log, "labels.sh\nannotations.sh\n",
        "the base's kind from its catalog, the overlay's from its own"
    );
    // The base's catalog is not the overlay's: a config of the overlay
    // that only the base's catalog defines is an error.
    write(
        &overlay,
        "kustomization.yaml",
        "resources:\n- ../base\ntransformers:\n- fn.yaml\n",
    );
    let err = build_err(&overlay, &["--trusted-catalog", "../base/catalog.yaml"]);
    assert_has(
        &err,
        "is not a builtin and declares no KRM function runtime",
    );
}

#[test]
fn a_composition_consolidates_the_catalogs_of_its_imports() {
    let root = case("composition");
    let (labels, labels_hash) = counting_function(&root, "labels.sh", "web");
    let (annotations, annotations_hash) = counting_function(&root, "annotations.sh", "api");
    let entry = |path: &Path, hash: &str, kind: &str| local_entry(kind, path, hash, false);
    // The import's catalog defines Labels and Owner (as set-labels); the
    // composition's own defines Owner (as set-annotations): its own wins.
    let shared = root.join("shared");
    write(
        &shared,
        "catalog.yaml",
        &catalog(
            "shared-fns",
            &[
                entry(&labels, &labels_hash, "Labels"),
                entry(&labels, &labels_hash, "Owner"),
            ],
        ),
    );
    write(
        &shared,
        "composition.yaml",
        &format!(
            "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Composition\ncatalogs:\n- catalog.yaml\ntransformers:\n- {}",
            config("example.com/v1", "Labels", "labels").replace('\n', "\n  ")
        ),
    );
    let app = root.join("app");
    write(
        &app,
        "catalog.yaml",
        &catalog(
            "app-fns",
            &[entry(&annotations, &annotations_hash, "Owner")],
        ),
    );
    write(&app, "cm.yaml", CONFIG_MAP);
    write(
        &app,
        "composition.yaml",
        &format!(
            "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Composition\ncatalogs:\n- catalog.yaml\ntransformersFrom:\n- path: ../shared\ntransformers:\n- apiVersion: builtin\n  kind: ResourceGenerator\n  files: [cm.yaml]\n- {}",
            config("example.com/v1", "Owner", "owner").replace('\n', "\n  ")
        ),
    );
    let mut args = vec!["--load-restrictor", "LoadRestrictionsNone"];
    args.extend(trusting(&["../shared/catalog.yaml", "catalog.yaml"]));
    let out = build_ok(&app, &args);
    assert_has(&out, "team: api");
    let log = runs_log(&root);
    assert_eq!(
        log, "labels.sh\nannotations.sh\n",
        "Labels from the import's catalog, Owner from the composition's own"
    );
}

#[test]
fn trust_names_the_catalogs_file_and_a_metadata_name_trusts_nothing() {
    let dir = case("trust");
    let entry = local_set_labels(&dir, "fn.sh", "web", false);
    write(&dir, "catalog.yaml", &catalog("example-co", &[entry]));
    one_config(&dir, &["catalog.yaml"], "example.com/v1", "SetLabels", "l");
    let err = build_err(&dir, &[]);
    assert_has(&err, "example.com/v1 SetLabels is defined by catalog 'catalog.yaml', which is not trusted: run with --trusted-catalog catalog.yaml to run its functions; `krusty view catalog catalog.yaml` shows what it holds");
    assert!(!err.contains("metadata.name"), "{err}");
    // The enable flags are no trust in a catalog.
    let err = build_err(&dir, &["--enable-alpha-plugins", "--enable-exec"]);
    assert_has(&err, "which is not trusted");
    // A name is a string any tree can copy: it names no catalog.
    let err = build_err(&dir, &["--trusted-catalog", "example-co"]);
    assert_has(&err, "--trusted-catalog 'example-co': no such file");
    assert_has(&err, "a metadata.name trusts nothing");
    assert_eq!(runs(&dir), 0);
    let absolute = std::fs::canonicalize(dir.join("catalog.yaml")).unwrap();
    for trust in [
        "catalog.yaml",
        "./catalog.yaml",
        "../case/catalog.yaml",
        absolute.to_str().unwrap(),
    ] {
        assert_has(&build_ok(&dir, &["--trusted-catalog", trust]), "team: web");
    }
    assert_eq!(
        runs(&dir),
        4,
        "trusted functions run without --enable-alpha-plugins"
    );
}

#[test]
fn a_catalog_of_the_same_relative_path_in_another_layer_is_not_trusted() {
    let root = case("same-path");
    let (base_fn, base_hash) = counting_function(&root, "base.sh", "base");
    let (overlay_fn, overlay_hash) = counting_function(&root, "overlay.sh", "overlay");
    let base = root.join("base");
    let overlay = root.join("overlay");
    // Both layers name a `catalog.yaml` of their own, of the same name.
    write(
        &base,
        "catalog.yaml",
        &catalog(
            "shared-name",
            &[local_entry("Tag", &base_fn, &base_hash, false)],
        ),
    );
    write(
        &overlay,
        "catalog.yaml",
        &catalog(
            "shared-name",
            &[local_entry("Owner", &overlay_fn, &overlay_hash, false)],
        ),
    );
    one_config(&base, &["catalog.yaml"], "example.com/v1", "Tag", "base");
    write(
        &overlay,
        "kustomization.yaml",
        "resources:\n- ../base\ncatalogs:\n- catalog.yaml\ntransformers:\n- fn.yaml\n",
    );
    write(&overlay, "fn.yaml", &config("example.com/v1", "Owner", "o"));
    // Trusting the overlay's catalog.yaml trusts that file only.
    let err = build_err(&overlay, &["--trusted-catalog", "catalog.yaml"]);
    let base_catalog = std::fs::canonicalize(base.join("catalog.yaml")).unwrap();
    assert_has(
        &err,
        &format!(
            "example.com/v1 Tag is defined by catalog 'catalog.yaml', which is not trusted: run with --trusted-catalog {}",
            base_catalog.display()
        ),
    );
    assert_eq!(runs(&root), 0, "{}", runs_log(&root));
    let out = build_ok(
        &overlay,
        &trusting(&["catalog.yaml", "../base/catalog.yaml"]),
    );
    assert_has(&out, "team: overlay");
    assert_eq!(runs_log(&root), "base.sh\noverlay.sh\n");
}

#[test]
fn a_catalog_in_a_remote_base_is_trusted_by_its_git_reference_only() {
    let world = world();
    let root = case("remote-base");
    let (remote_fn, remote_hash) = counting_function(&root, "remote.sh", "remote");
    let (local_fn, local_hash) = counting_function(&root, "local.sh", "local");
    // The remote base's catalog copies the local one's path and name.
    let remote_catalog = catalog(
        "example-co",
        &[local_entry("Tag", &remote_fn, &remote_hash, false)],
    );
    git_repository(
        "remote-base",
        &[
            (
                "base/kustomization.yaml",
                "resources:\n- cm.yaml\ncatalogs:\n- catalog.yaml\ntransformers:\n- fn.yaml\n"
                    .into(),
            ),
            ("base/cm.yaml", CONFIG_MAP.into()),
            ("base/fn.yaml", config("example.com/v1", "Tag", "t")),
            ("base/catalog.yaml", remote_catalog),
        ],
    );
    let app = root.join("app");
    write(
        &app,
        "catalog.yaml",
        &catalog(
            "example-co",
            &[local_entry("Owner", &local_fn, &local_hash, false)],
        ),
    );
    let base_url = format!("{}/remote-base.git//base?ref=v1", world.git);
    write(
        &app,
        "kustomization.yaml",
        &format!("resources:\n- {base_url}\ncatalogs:\n- catalog.yaml\ntransformers:\n- fn.yaml\n"),
    );
    write(&app, "fn.yaml", &config("example.com/v1", "Owner", "o"));
    let git_reference = format!("{}/remote-base.git//base/catalog.yaml?ref=v1", world.git);
    let err = build_err(&app, &["--trusted-catalog", "catalog.yaml"]);
    assert_has(
        &err,
        &format!("example.com/v1 Tag is defined by catalog 'catalog.yaml', which is not trusted: run with --trusted-catalog '{git_reference}'"),
    );
    assert_eq!(runs(&root), 0);
    // Another ref of the same repository is another place.
    let other_ref = git_reference.replace("ref=v1", "ref=main");
    build_err(&app, &trusting(&["catalog.yaml", &other_ref]));
    assert_eq!(runs(&root), 0);
    // The folder's reference, written another way, names the same file.
    let folder = format!(
        "{}/remote-base.git//./base/?ref=v1",
        world.git.replace("http://", "HTTP://")
    );
    for trusted in [git_reference.as_str(), folder.as_str()] {
        let out = build_ok(&app, &trusting(&["catalog.yaml", trusted]));
        assert_has(&out, "team: local");
    }
    assert_eq!(runs_log(&root), "remote.sh\nlocal.sh\n".repeat(2));
}

#[test]
fn a_url_is_trusted_in_its_normal_form() {
    let world = world();
    let dir = case("normal-url");
    let text = catalog("c", &[local_set_labels(&dir, "fn.sh", "web", false)]);
    write(&world.dir.join("www"), "normal-url/catalog.yaml", &text);
    let url = format!("{}/normal-url/catalog.yaml", world.files);
    one_config(&dir, &[&url], "example.com/v1", "SetLabels", "l");
    let spelled = url
        .replace("https://", "HTTPS://")
        .replace("/normal-url/", "/x/../normal-url/./");
    assert_has(
        &build_ok(&dir, &["--trusted-catalog", &spelled]),
        "team: web",
    );
    let elsewhere = url.replace("/normal-url/", "/other/");
    assert_has(
        &build_err(&dir, &["--trusted-catalog", &elsewhere]),
        "which is not trusted",
    );
    assert_eq!(runs(&dir), 1);
}

#[test]
fn a_hash_mismatch_or_a_missing_hash_runs_nothing() {
    let dir = case("mismatch");
    let (script, hash) = counting_function(&dir, "fn.sh", "web");
    let wrong = hash.chars().rev().collect::<String>();
    write(
        &dir,
        "catalog.yaml",
        &catalog("c", &[local_entry("SetLabels", &script, &wrong, false)]),
    );
    one_config(&dir, &["catalog.yaml"], "example.com/v1", "SetLabels", "l");
    let err = build_err(&dir, &["--trusted-catalog", "catalog.yaml"]);
    assert_has(&err, "sha256");
    let no_hash = local_entry("SetLabels", &script, &hash, false)
        .replace(&format!("            sha256: {hash}\n"), "");
    write(&dir, "catalog.yaml", &catalog("c", &[no_hash]));
    let err = build_err(&dir, &["--trusted-catalog", "catalog.yaml"]);
    assert_has(
        &err,
        "gives no sha256: an executable runs only when its hash is known",
    );
    assert_eq!(runs(&dir), 0);
}

#[test]
fn a_catalog_is_fetched_only_when_a_lookup_needs_it() {
    let dir = case("lazy");
    let entry = local_set_labels(&dir, "fn.sh", "web", false);
    write(&dir, "catalog.yaml", &catalog("c", &[entry]));
    let unreachable = "https://127.0.0.1:9/nothing/catalog.yaml";
    // Found in the first catalog: the second is never fetched.
    one_config(
        &dir,
        &["catalog.yaml", unreachable],
        "example.com/v1",
        "SetLabels",
        "l",
    );
    assert_has(
        &build_ok(&dir, &["--trusted-catalog", "catalog.yaml"]),
        "team: web",
    );
    // No function at all: nothing is fetched.
    write(
        &dir,
        "kustomization.yaml",
        &format!("resources:\n- cm.yaml\ncatalogs:\n- {unreachable}\n- missing.yaml\n"),
    );
    build_ok(&dir, &[]);
    // Needed: the unreachable catalog is an error naming it and where.
    one_config(
        &dir,
        &["catalog.yaml", unreachable],
        "example.com/v2",
        "SetLabels",
        "l",
    );
    let err = build_err(&dir, &["--trusted-catalog", "catalog.yaml"]);
    assert_has(&err, &format!("catalog '{unreachable}'"));
    assert_has(&err, "kustomization.yaml, line 5, column 3");
    // No catalog defines it: the catalogs searched are listed.
    one_config(&dir, &["catalog.yaml"], "example.com/v2", "SetLabels", "l");
    let err = build_err(&dir, &["--trusted-catalog", "catalog.yaml"]);
    assert_has(&err, "no catalog defines apiVersion example.com/v2 kind SetLabels; catalogs searched: 'catalog.yaml'");
}

#[test]
fn a_function_requiring_network_or_storage_needs_the_flags() {
    let dir = case("network");
    let functions = [
        container_function(
            "example.com",
            "v1",
            "Net",
            "localhost/krusty-catalog-net:v1",
            "          requireNetwork: true\n",
        ),
        container_function(
            "example.com",
            "v1",
            "Disk",
            "localhost/krusty-catalog-disk:v1",
            "          requireStorageMount: true\n",
        ),
    ];
    write(&dir, "catalog.yaml", &catalog("c", &functions));
    one_config(&dir, &["catalog.yaml"], "example.com/v1", "Net", "n");
    let err = build_err(&dir, &["--trusted-catalog", "catalog.yaml"]);
    assert_has(
        &err,
        "the function asks for network access: run with --network to allow it",
    );
    one_config(&dir, &["catalog.yaml"], "example.com/v1", "Disk", "d");
    let err = build_err(&dir, &["--trusted-catalog", "catalog.yaml"]);
    assert_has(
        &err,
        "the function requires a storage mount: run with --mount",
    );
}

#[test]
fn a_catalog_that_does_not_read_is_an_error_naming_file_line_and_field() {
    let dir = case("schema");
    write(
        &dir,
        "catalog.yaml",
        "apiVersion: config.kubernetes.io/v1alpha1\nkind: Catalog\nspec:\n  krmFunctions:\n  - group: example.com\n    names: {kind: K}\n    versions:\n    - name: v1\n      runtime: {container: {image: i, requireNetwork: yes please}}\n",
    );
    one_config(&dir, &["catalog.yaml"], "example.com/v1", "K", "k");
    let err = build_err(&dir, &["--trusted-catalog", "catalog.yaml"]);
    assert_has(
        &err,
        &format!(
            "{}:9:55: field 'spec.krmFunctions[0].versions[0].runtime.container.requireNetwork': must be true or false",
            std::fs::canonicalize(&dir).unwrap().join("catalog.yaml").display()
        ),
    );
}

#[test]
fn view_catalog_prints_functions_versions_runtimes_and_hashes() {
    let world = world();
    let dir = case("view");
    let hash = "a".repeat(64);
    let text = catalog(
        "example-co",
        &[
            exec_function(
                "example.com",
                "v1",
                "SetLabels",
                "https://example.com/fn.tar.gz",
                &hash,
                true,
            ),
            container_function(
                "example.com",
                "v2",
                "Net",
                "example/net:v1",
                &format!("          sha256: {hash}\n          requireNetwork: true\n"),
            ),
        ],
    );
    write(&world.dir.join("www"), "view/catalog.yaml", &text);
    let url = format!("{}/view/catalog.yaml", world.files);
    let out = krusty(&dir, &["view", "catalog", &url]);
    let (stdout, stderr) = output_text(&out);
    assert!(out.status.success(), "{stderr}");
    let arch = if cfg!(target_arch = "aarch64") {
        "arm64"
    } else {
        "amd64"
    };
    let want = format!(
        "catalog: {url}\nread from: {url}\nkind: Catalog\nname: example-co\ntrust it with: --trusted-catalog {url}\nfunctions: 2\n\n- example.com SetLabels\n  publisher: example.com\n  version v1 (apiVersion example.com/v1):\n    idempotent: true\n    exec linux/{arch}: fn from https://example.com/fn.tar.gz sha256:{hash}\n\n- example.com Net\n  publisher: (none)\n  version v2 (apiVersion example.com/v2):\n    idempotent: false\n    container: example/net:v1 sha256:{hash}\n      requires network (--network)\n"
    );
    assert_eq!(stdout, want);
}

/// The image `name` of the example function krm-set-labels (the program
/// and the libraries it needs, nothing else), imported into podman; its
/// digest (`sha256:` and hex).
fn labels_image(dir: &Path, name: &str) -> String {
    import_labels_image(dir, name);
    let digest = run(podman().args(["image", "inspect", "--format", "{{.Digest}}", name]));
    digest.trim().to_string()
}

#[test]
fn the_keps_user_stories_run() {
    if !podman_works() {
        eprintln!("SKIPPED: podman cannot run containers here: no container catalog functions");
        return;
    }
    let root = case("stories");
    let digest = labels_image(&root, "localhost/krusty-catalog-java:v1.0.0");
    let hex = digest.trim_start_matches("sha256:");
    let (secrets, secrets_hash) = counting_function(&root, "secrets.sh", "secrets");
    // Story 1: a platform developer publishes a catalog (here over HTTPS):
    // JavaApplication as a container (by digest), SecretSidecar as an
    // exec program.
    let published = catalog(
        "example-co-functions",
        &[
            container_function(
                "example.com",
                "v1",
                "JavaApplication",
                "localhost/krusty-catalog-java:v1.0.0",
                &format!("          sha256: {hex}\n"),
            ),
            exec_function(
                "example.com",
                "v1",
                "SecretSidecar",
                &format!("file://{}", secrets.display()),
                &secrets_hash,
                false,
            ),
        ],
    );
    let world = world();
    write(&world.dir.join("www"), "stories/catalog.yaml", &published);
    let url = format!("{}/stories/catalog.yaml", world.files);
    // Story 2: an application developer copies it beside the
    // Kustomization and names the kinds only.
    let app = root.join("app");
    write(&app, "catalog.yaml", &published);
    let java = config("example.com/v1", "JavaApplication", "java")
        .replace("team: web", "team: web\n  app: my-app");
    kustomization(
        &app,
        &["catalog.yaml"],
        &[
            ("java.yaml", java.clone()),
            (
                "secrets.yaml",
                config("example.com/v1", "SecretSidecar", "secrets"),
            ),
        ],
    );
    let out = build_ok(&app, &["--trusted-catalog", "catalog.yaml"]);
    assert_has(&out, "app: my-app");
    assert_has(&out, "team: secrets");
    // Story 3: a Composition names the published catalog by URL and pins
    // SecretSidecar to a runtime of its own, which runs under the usual
    // flags.
    let composition = root.join("composition");
    write(&composition, "cm.yaml", CONFIG_MAP);
    let (pinned, _) = counting_function(&composition, "secrets-v0.9.sh", "pinned");
    let pinned_config = format!(
        "{}runtime:\n  exec:\n    path: {}\n",
        config("example.com/v1", "SecretSidecar", "my-secrets"),
        pinned.display()
    );
    write(
        &composition,
        "composition.yaml",
        &format!(
            "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Composition\ncatalogs:\n- {url}\ntransformers:\n- apiVersion: builtin\n  kind: ResourceGenerator\n  files: [cm.yaml]\n- {}- {}",
            java.replace('\n', "\n  ").trim_end_matches(' '),
            pinned_config.replace('\n', "\n  ").trim_end_matches(' ')
        ),
    );
    let err = build_err(&composition, &["--trusted-catalog", &url]);
    assert_has(&err, "run with --enable-alpha-plugins");
    let out = build_ok(
        &composition,
        &[
            "--trusted-catalog",
            &url,
            "--enable-alpha-plugins",
            "--enable-exec",
        ],
    );
    assert_has(&out, "app: my-app");
    assert_has(&out, "team: pinned");
    // A digest that is not the image's runs nothing.
    let wrong = published.replace(hex, &"0".repeat(64));
    write(&app, "catalog.yaml", &wrong);
    build_err(&app, &["--trusted-catalog", "catalog.yaml"]);
}

#[test]
fn catalogs_definitions_and_exec_programs_come_from_an_oci_registry() {
    let root = case("oci");
    let Some(registry) = support::oci::OciRegistry::start(&root.join("registry")) else {
        return;
    };
    let dir = root.join("app");
    std::fs::create_dir_all(&dir).unwrap();
    // The exec program is an artifact of its own; the catalog names it by
    // tag, with its sha256.
    let (script, hash) = counting_function(&dir, "fn.sh", "oci");
    let program = std::fs::read(&script).unwrap();
    let exec = registry.push_artifact(
        "krm/set-labels",
        "v1",
        "application/vnd.cncf.kubernetes.krm-func-runtime-exec.v1",
        &[(krusty_fetch::EXEC_MEDIA_TYPE, &program)],
        &[],
    );
    std::fs::remove_file(&script).unwrap();
    let entry = exec_function(
        "example.com",
        "v1",
        "SetLabels",
        &exec.reference,
        &hash,
        false,
    );
    let text = catalog("oci-fns", std::slice::from_ref(&entry));
    let pushed = registry.push_artifact(
        "krm/catalog",
        "v1",
        "application/vnd.cncf.kubernetes.krm-func-catalog.v1",
        &[(krusty_fetch::CATALOG_MEDIA_TYPE, text.as_bytes())],
        &[],
    );
    // A definition: one function, its spec at the top.
    let definition = definition_of(&entry);
    let def = registry.push_artifact(
        "krm/set-labels-definition",
        "v1",
        "application/vnd.cncf.kubernetes.krm-func-definition.v1",
        &[(krusty_fetch::DEFINITION_MEDIA_TYPE, definition.as_bytes())],
        &[],
    );
    let fns = [("fn.yaml", config("example.com/v1", "SetLabels", "l"))];
    for reference in [&pushed.reference, &pushed.by_digest, &def.reference] {
        kustomization(&dir, &[reference], &fns);
        assert_has(
            &build_ok(&dir, &["--trusted-catalog", reference]),
            "team: oci",
        );
    }
    assert_eq!(runs(&dir), 3);
    // A catalog named by digest is trusted by that digest, with or without
    // the tag; the tag alone names what it points to when the build runs,
    // not this digest.
    let digest = pushed.by_digest.rsplit_once('@').unwrap().1;
    kustomization(&dir, &[&pushed.by_digest], &fns);
    let tag_and_digest = format!("{}@{digest}", pushed.reference);
    assert_has(
        &build_ok(&dir, &["--trusted-catalog", &tag_and_digest]),
        "team: oci",
    );
    assert_has(
        &build_err(&dir, &["--trusted-catalog", &pushed.reference]),
        "which is not trusted",
    );
    assert_eq!(runs(&dir), 4);
    // `view catalog` reads it from the registry too.
    let out = krusty(&dir, &["view", "catalog", &pushed.reference]);
    let (stdout, stderr) = output_text(&out);
    assert!(out.status.success(), "{stderr}");
    assert_has(&stdout, &format!("from {} sha256:{hash}", exec.reference));
    // A program whose hash is not the catalog's runs nothing.
    let wrong = catalog("oci-fns", &[entry.replace(&hash, &"1".repeat(64))]);
    let bad = registry.push_artifact(
        "krm/catalog",
        "bad",
        "application/vnd.cncf.kubernetes.krm-func-catalog.v1",
        &[(krusty_fetch::CATALOG_MEDIA_TYPE, wrong.as_bytes())],
        &[],
    );
    kustomization(&dir, &[&bad.reference], &fns);
    assert_has(
        &build_err(&dir, &["--trusted-catalog", &bad.reference]),
        "sha256",
    );
    assert_eq!(runs(&dir), 4);
}

#[test]
fn an_idempotent_functions_results_are_reused_until_its_input_or_digest_changes() {
    let dir = case("idempotent");
    let catalog_with = |team: &str| {
        let entry = local_set_labels(&dir, &format!("{team}.sh"), team, true);
        write(&dir, "catalog.yaml", &catalog("c", &[entry]));
    };
    catalog_with("one");
    one_config(&dir, &["catalog.yaml"], "example.com/v1", "SetLabels", "l");
    let trust = ["--trusted-catalog", "catalog.yaml"];
    let first = build_ok(&dir, &trust);
    assert_has(&first, "team: one");
    assert_eq!(runs(&dir), 1);
    assert_eq!(build_ok(&dir, &trust), first, "a hit replays the output");
    assert_eq!(
        runs(&dir),
        1,
        "the same runtime, config and input: not run again"
    );
    write(&dir, "cm.yaml", &CONFIG_MAP.replace("k: v", "k: changed"));
    assert_has(&build_ok(&dir, &trust), "k: changed");
    assert_eq!(runs(&dir), 2, "another input: run");
    catalog_with("two");
    assert_has(&build_ok(&dir, &trust), "team: two");
    assert_eq!(runs(&dir), 3, "another digest: run");
    build_ok(
        &dir,
        &["--trusted-catalog", "catalog.yaml", "--no-function-cache"],
    );
    assert_eq!(runs(&dir), 4, "--no-function-cache: run");
}

#[test]
fn a_component_looks_its_configs_up_in_its_own_catalogs() {
    let root = case("component");
    let entry = local_set_labels(&root, "fn.sh", "component", false);
    let comp = root.join("comp");
    write(&comp, "catalog.yaml", &catalog("component-fns", &[entry]));
    write(
        &comp,
        "kustomization.yaml",
        "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\ncatalogs:\n- catalog.yaml\ntransformers:\n- fn.yaml\n",
    );
    write(
        &comp,
        "fn.yaml",
        &config("example.com/v1", "SetLabels", "l"),
    );
    write(
        &root,
        "kustomization.yaml",
        "resources:\n- cm.yaml\ncomponents:\n- comp\n",
    );
    write(&root, "cm.yaml", CONFIG_MAP);
    let out = build_ok(&root, &["--trusted-catalog", "comp/catalog.yaml"]);
    assert_has(&out, "team: component");
    assert_eq!(runs(&root), 1);
}

#[test]
fn a_starlark_program_by_url_runs_from_a_trusted_catalog() {
    let world = world();
    let dir = case("starlark");
    write(
        &world.dir.join("www"),
        "starlark/labels.star",
        "for r in ctx.resource_list[\"items\"]:\n    r[\"metadata\"].setdefault(\"labels\", {})[\"from\"] = \"starlark\"\n",
    );
    let url = format!("{}/starlark/labels.star", world.files);
    // The KEP's example form: the runtime beside the versions.
    write(
        &dir,
        "catalog.yaml",
        &catalog(
            "star",
            &[format!(
                "  - group: example.com\n    names:\n      kind: GroovyApplication\n    versions:\n    - name: v1\n    runtime:\n      starlark: {url}\n"
            )],
        ),
    );
    kustomization(
        &dir,
        &["catalog.yaml"],
        &[(
            "fn.yaml",
            config("example.com/v1", "GroovyApplication", "g"),
        )],
    );
    let out = build_ok(&dir, &["--trusted-catalog", "catalog.yaml"]);
    assert_has(&out, "from: starlark");
}

/// A plain-HTTP server on `ip` (any free port) answering every request
/// with its current body, one request a connection, counting the
/// connections it accepts: a build that must not connect is seen not to.
struct CountingServer {
    addr: std::net::SocketAddr,
    connections: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    body: std::sync::Arc<std::sync::Mutex<String>>,
}

impl CountingServer {
    fn start(ip: std::net::IpAddr, body: &str) -> CountingServer {
        use std::io::{BufRead, BufReader, Write};
        use std::sync::atomic::Ordering;
        let listener = std::net::TcpListener::bind((ip, 0)).expect("a free port");
        let addr = listener.local_addr().unwrap();
        let server = CountingServer {
            addr,
            connections: Default::default(),
            body: std::sync::Arc::new(std::sync::Mutex::new(body.to_string())),
        };
        let (connections, body) = (server.connections.clone(), server.body.clone());
        std::thread::spawn(move || {
            for mut stream in listener.incoming().flatten() {
                connections.fetch_add(1, Ordering::SeqCst);
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut line = String::new();
                while reader.read_line(&mut line).is_ok_and(|n| n > 0) && line != "\r\n" {
                    line.clear();
                }
                let body = body.lock().unwrap().clone();
                let _ = write!(
                    stream,
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            }
        });
        server
    }

    /// `http://ADDR/path`, with `host` for the address's IP.
    fn url(&self, host: &str, path: &str) -> String {
        format!("http://{host}:{}/{path}", self.addr.port())
    }

    fn connections(&self) -> usize {
        self.connections.load(std::sync::atomic::Ordering::SeqCst)
    }

    fn serve(&self, body: &str) {
        *self.body.lock().unwrap() = body.to_string();
    }
}

/// This machine's address on the network (not loopback), if it has one.
fn network_address() -> Option<std::net::IpAddr> {
    let socket = std::net::UdpSocket::bind("0.0.0.0:0").ok()?;
    socket.connect("192.0.2.1:9").ok()?;
    let ip = socket.local_addr().ok()?.ip();
    (!ip.is_loopback() && !ip.is_unspecified()).then_some(ip)
}

#[test]
fn a_catalog_over_plain_http_is_read_only_from_loopback() {
    let dir = case("plain-http");
    let text = catalog("c", &[local_set_labels(&dir, "fn.sh", "web", false)]);
    let server = CountingServer::start("0.0.0.0".parse().unwrap(), &text);
    let loopback = server.url("127.0.0.1", "catalog.yaml");
    let other_loopback = server.url("127.1.2.3", "catalog.yaml");
    for url in [&loopback, &other_loopback] {
        one_config(&dir, &[url], "example.com/v1", "SetLabels", "l");
        assert_has(&build_ok(&dir, &["--trusted-catalog", url]), "team: web");
    }
    let served = server.connections();
    assert_eq!(served, 2);
    // The same server by its network address: refused before connecting.
    let Some(ip) = network_address() else {
        eprintln!("SKIPPED: no network address: plain http off loopback not tried");
        return;
    };
    let remote = server.url(&ip.to_string(), "catalog.yaml");
    one_config(&dir, &[&remote], "example.com/v1", "SetLabels", "l");
    let err = build_err(&dir, &["--trusted-catalog", &remote]);
    assert_has(
        &err,
        &format!("catalog '{remote}': '{remote}': plain http:// is refused for a host that is not loopback"),
    );
    let out = krusty(&dir, &["view", "catalog", &remote]);
    assert!(!out.status.success());
    assert_has(&output_text(&out).1, "plain http:// is refused");
    assert_eq!(server.connections(), served, "no connection was made");
    assert_eq!(runs(&dir), 2);
}

#[test]
fn a_semver_tagged_image_without_a_sha256_never_runs() {
    let dir = case("semver");
    let functions = [
        container_function(
            "example.com",
            "v1",
            "Release",
            "localhost/krusty-catalog-release:v1.2.3",
            "",
        ),
        container_function(
            "example.com",
            "v1",
            "Candidate",
            "localhost:5000/team/krusty-catalog-release:1.3.0-rc.1",
            "",
        ),
    ];
    write(&dir, "catalog.yaml", &catalog("c", &functions));
    for (kind, image, tag) in [
        (
            "Release",
            "localhost/krusty-catalog-release:v1.2.3",
            "v1.2.3",
        ),
        (
            "Candidate",
            "localhost:5000/team/krusty-catalog-release:1.3.0-rc.1",
            "1.3.0-rc.1",
        ),
    ] {
        one_config(&dir, &["catalog.yaml"], "example.com/v1", kind, "r");
        let err = build_err(&dir, &["--trusted-catalog", "catalog.yaml"]);
        assert_has(
            &err,
            &format!("image '{image}' has the semantic-version tag '{tag}' and the catalog gives no sha256: a versioned image runs only by its digest (KEP-2906)"),
        );
    }
}

#[test]
fn view_catalog_escapes_what_could_forge_or_hide_a_line() {
    let dir = case("view-escapes");
    let arch = if cfg!(target_arch = "aarch64") {
        "arm64"
    } else {
        "amd64"
    };
    let hash = "b".repeat(64);
    write(
        &dir,
        "catalog.yaml",
        &format!(
            r#"apiVersion: config.kubernetes.io/v1alpha1
kind: Catalog
metadata:
  name: "honest\rtrusted-name"
spec:
  krmFunctions:
  - group: example.com
    names:
      kind: "SetLabels\e[8m"
    description: "Sets labels\e[2K\r\n- example.com Forged\n  publisher: trusted.example\n"
    publisher: "\u202Eelpmaxe\x7f"
    home: "(none)"
    maintainers: ["a@example.com, b@example.com", "c\0d", " padded"]
    tags: [plain, "two words"]
    versions:
    - name: v1
      usage: "line one\u2028line two\x85"
      runtime:
        exec:
          platforms:
          - bin: "fn\nexec linux/{arch}: fn from https://trusted.example/fn sha256:{hash}"
            os: linux
            arch: {arch}
            uri: "https://example.com/fn\u200B"
            sha256: {hash}
"#
        ),
    );
    let out = krusty(&dir, &["view", "catalog", "catalog.yaml"]);
    let (stdout, stderr) = output_text(&out);
    assert!(out.status.success(), "{stderr}");
    let from = std::fs::canonicalize(dir.join("catalog.yaml")).unwrap();
    let want = format!(
        r#"catalog: catalog.yaml
read from: {}
kind: Catalog
name: "honest\rtrusted-name"
trust it with: --trusted-catalog catalog.yaml
functions: 1

- example.com "SetLabels\u{{1b}}[8m"
  publisher: "\u{{202e}}elpmaxe\u{{7f}}"
  description: "Sets labels\u{{1b}}[2K\r\n- example.com Forged\n  publisher: trusted.example\n"
  home: "(none)"
  maintainers: "a@example.com, b@example.com", "c\0d", " padded"
  tags: plain, two words
  version v1 (apiVersion example.com/v1):
    idempotent: false
    usage: "line one\u{{2028}}line two\u{{85}}"
    exec linux/{arch}: "fn\nexec linux/{arch}: fn from https://trusted.example/fn sha256:{hash}" from "https://example.com/fn\u{{200b}}" sha256:{hash}
"#,
        from.display()
    );
    assert_eq!(stdout, want);
    assert!(
        !stdout.contains([
            '\r', '\u{1b}', '\0', '\u{7f}', '\u{85}', '\u{202e}', '\u{200b}', '\u{2028}'
        ]),
        "{stdout:?}"
    );
}

/// A Starlark program setting the label `from: VALUE` on every item.
fn starlark_labels(value: &str) -> String {
    format!("for r in ctx.resource_list[\"items\"]:\n    r[\"metadata\"].setdefault(\"labels\", {{}})[\"from\"] = \"{value}\"\n")
}

/// A catalog whose `example.com/v1 Star` runs the Starlark program at
/// `url`.
fn starlark_catalog(url: &str, idempotent: bool) -> String {
    catalog(
        "star",
        &[format!(
            "  - group: example.com\n    names:\n      kind: Star\n    versions:\n    - name: v1\n      idempotent: {idempotent}\n      runtime:\n        starlark: {url}\n"
        )],
    )
}

#[test]
fn a_catalogs_starlark_program_comes_through_the_fetch_layer_and_offline_connects_to_nothing() {
    let root = scratch("catalogs", "starlark-offline");
    let dir = root.join("case");
    let server = CountingServer::start("127.0.0.1".parse().unwrap(), &starlark_labels("fetched"));
    let url = server.url("127.0.0.1", "labels.star");
    write(&dir, "catalog.yaml", &starlark_catalog(&url, false));
    kustomization(
        &dir,
        &["catalog.yaml"],
        &[
            ("one.yaml", config("example.com/v1", "Star", "one")),
            ("two.yaml", config("example.com/v1", "Star", "two")),
        ],
    );
    let trust = ["--trusted-catalog", "catalog.yaml"];
    let out = build_ok(&dir, &trust);
    assert_has(&out, "from: fetched");
    assert_eq!(server.connections(), 1, "fetched once for the build");
    let offline = build_ok(&dir, &["--offline", "--trusted-catalog", "catalog.yaml"]);
    assert_eq!(offline, out, "--offline runs the program kept in the cache");
    assert_eq!(server.connections(), 1, "--offline connects to nothing");
    // Another cache, offline: an error, and still no connection.
    let fresh = root.join("fresh");
    write(&fresh, "catalog.yaml", &starlark_catalog(&url, false));
    one_config(&fresh, &["catalog.yaml"], "example.com/v1", "Star", "s");
    let (ok, _, err) = build_in(
        &fresh,
        &["--offline", "--trusted-catalog", "catalog.yaml"],
        &[("KRUSTY_CACHE_DIR", root.join("fresh-cache").as_os_str())],
    );
    assert!(!ok);
    assert_has(&err, &format!("starlark program '{url}'"));
    assert_has(&err, "--offline");
    assert_eq!(server.connections(), 1);
    // Plain http off loopback is refused for programs too.
    if let Some(ip) = network_address() {
        let remote = url.replace("127.0.0.1", &ip.to_string());
        write(&dir, "catalog.yaml", &starlark_catalog(&remote, false));
        assert_has(&build_err(&dir, &trust), "plain http:// is refused");
        assert_eq!(server.connections(), 1);
    }
}

#[test]
fn an_idempotent_starlark_functions_results_are_kept_by_its_programs_digest() {
    let dir = case("starlark-idempotent");
    // The Starlark runtime, behind a script that counts its runs.
    let runtime = Path::new(KRUSTY).with_file_name("krusty-starlark");
    let log = dir.join("runs.log");
    write(
        &dir,
        "counting-starlark",
        &format!(
            "#!/bin/sh\necho run >> '{}'\nexec '{}' \"$@\"\n",
            log.display(),
            runtime.display()
        ),
    );
    let wrapper = dir.join("counting-starlark");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    let server = CountingServer::start("127.0.0.1".parse().unwrap(), &starlark_labels("one"));
    let url = server.url("127.0.0.1", "labels.star");
    write(&dir, "catalog.yaml", &starlark_catalog(&url, true));
    one_config(&dir, &["catalog.yaml"], "example.com/v1", "Star", "s");
    let env = [("KRUSTY_STARLARK", wrapper.as_os_str())];
    let trust = ["--trusted-catalog", "catalog.yaml"];
    let build = || {
        let (ok, stdout, stderr) = build_in(&dir, &trust, &env);
        assert!(ok, "{stderr}");
        stdout
    };
    let first = build();
    assert_has(&first, "from: one");
    assert_eq!(build(), first);
    assert_eq!(
        runs(&dir),
        1,
        "the same program, config and input: run once"
    );
    server.serve(&starlark_labels("two"));
    assert_has(&build(), "from: two");
    assert_eq!(runs(&dir), 2, "another program: run");
}
