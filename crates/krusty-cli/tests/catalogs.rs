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
use support::{git_command, make_certificates, output_text, run, scratch, serve, write};

const KRUSTY: &str = env!("CARGO_BIN_EXE_krusty");

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
    let world = world();
    let ca = world.dir.join("tls/ca.crt");
    Command::new(KRUSTY)
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
    let mut all = vec!["build"];
    all.extend_from_slice(args);
    all.push(".");
    let out = krusty(dir, &all);
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
    let _ = std::fs::remove_dir_all(&bare);
    run(Command::new("git")
        .args(["clone", "-q", "--bare"])
        .arg(&work)
        .arg(&bare));
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
    let trust = trusting(&["labels", "annotations"]);
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
    let out = build_ok(&overlay, &trusting(&["base-fns", "overlay-fns"]));
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
    let err = build_err(&overlay, &["--trusted-catalog", "base-fns"]);
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
    args.extend(trusting(&["shared-fns", "app-fns"]));
    let out = build_ok(&app, &args);
    assert_has(&out, "team: api");
    let log = runs_log(&root);
    assert_eq!(
        log, "labels.sh\nannotations.sh\n",
        "Labels from the import's catalog, Owner from the composition's own"
    );
}

#[test]
fn trust_by_reference_or_by_name_and_an_untrusted_catalog_is_an_error() {
    let dir = case("trust");
    let entry = local_set_labels(&dir, "fn.sh", "web", false);
    write(&dir, "catalog.yaml", &catalog("example-co", &[entry]));
    one_config(&dir, &["catalog.yaml"], "example.com/v1", "SetLabels", "l");
    let err = build_err(&dir, &[]);
    assert_has(&err, "example.com/v1 SetLabels is defined by catalog 'catalog.yaml', which is not trusted: run with --trusted-catalog catalog.yaml (or --trusted-catalog example-co, its metadata.name)");
    // The enable flags are no trust in a catalog.
    let err = build_err(
        &dir,
        &[
            "--enable-alpha-plugins",
            "--enable-exec",
            "--trusted-catalog",
            "other",
        ],
    );
    assert_has(&err, "which is not trusted");
    assert_eq!(runs(&dir), 0);
    for trust in ["catalog.yaml", "example-co"] {
        assert_has(&build_ok(&dir, &["--trusted-catalog", trust]), "team: web");
    }
    assert_eq!(
        runs(&dir),
        2,
        "trusted functions run without --enable-alpha-plugins"
    );
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
    let err = build_err(&dir, &["--trusted-catalog", "c"]);
    assert_has(&err, "sha256");
    let no_hash = local_entry("SetLabels", &script, &hash, false)
        .replace(&format!("            sha256: {hash}\n"), "");
    write(&dir, "catalog.yaml", &catalog("c", &[no_hash]));
    let err = build_err(&dir, &["--trusted-catalog", "c"]);
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
    assert_has(&build_ok(&dir, &["--trusted-catalog", "c"]), "team: web");
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
    let err = build_err(&dir, &["--trusted-catalog", "c"]);
    assert_has(&err, &format!("catalog '{unreachable}'"));
    assert_has(&err, "kustomization.yaml, line 5, column 3");
    // No catalog defines it: the catalogs searched are listed.
    one_config(&dir, &["catalog.yaml"], "example.com/v2", "SetLabels", "l");
    let err = build_err(&dir, &["--trusted-catalog", "c"]);
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
    let err = build_err(&dir, &["--trusted-catalog", "c"]);
    assert_has(
        &err,
        "the function asks for network access: run with --network to allow it",
    );
    one_config(&dir, &["catalog.yaml"], "example.com/v1", "Disk", "d");
    let err = build_err(&dir, &["--trusted-catalog", "c"]);
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
    let err = build_err(&dir, &["--trusted-catalog", "c"]);
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
        "catalog: {url}\nread from: {url}\nkind: Catalog\nname: example-co\ntrust it with: --trusted-catalog {url}\n           or: --trusted-catalog example-co\nfunctions: 2\n\n- example.com SetLabels\n  publisher: example.com\n  version v1 (apiVersion example.com/v1):\n    idempotent: true\n    exec linux/{arch}: fn from https://example.com/fn.tar.gz sha256:{hash}\n\n- example.com Net\n  publisher: (none)\n  version v2 (apiVersion example.com/v2):\n    idempotent: false\n    container: example/net:v1 sha256:{hash}\n      requires network (--network)\n"
    );
    assert_eq!(stdout, want);
}

/// Podman is installed and answers.
fn podman_works() -> bool {
    Command::new("podman")
        .arg("info")
        .env("CONTAINERS_CONF", containers_conf())
        .output()
        .is_ok_and(|o| o.status.success())
}

fn containers_conf() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.ci/containers.conf")
}

/// The image `name` of the example function krm-set-labels (the program
/// and the libraries it needs, nothing else), imported into podman; its
/// digest (`sha256:` and hex).
fn labels_image(dir: &Path, name: &str) -> String {
    let rootfs = dir.join("rootfs");
    let _ = std::fs::remove_dir_all(&rootfs);
    let binary = example("krm-set-labels");
    let copy = |from: &Path, to: &str| {
        let dest = rootfs.join(to.trim_start_matches('/'));
        std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
        std::fs::copy(from, dest).unwrap();
    };
    copy(&binary, "/fn");
    let ldd = run(Command::new("ldd").arg(&binary));
    for lib in ldd.split_whitespace().filter(|w| w.starts_with('/')) {
        copy(Path::new(lib), lib);
    }
    write(
        &rootfs,
        "etc/passwd",
        "nobody:x:65534:65534::/:/sbin/nologin\n",
    );
    let tar = dir.join("rootfs.tar");
    run(Command::new("tar")
        .arg("-C")
        .arg(&rootfs)
        .arg("-cf")
        .arg(&tar)
        .arg("."));
    let podman = |args: &[&str]| {
        run(Command::new("podman")
            .env("CONTAINERS_CONF", containers_conf())
            .args(args))
    };
    podman(&[
        "import",
        "-q",
        "--change",
        "ENTRYPOINT [\"/fn\"]",
        tar.to_str().unwrap(),
        name,
    ]);
    let digest = podman(&["image", "inspect", "--format", "{{.Digest}}", name]);
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
    let out = build_ok(&app, &["--trusted-catalog", "example-co-functions"]);
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
    build_err(&app, &["--trusted-catalog", "example-co-functions"]);
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
    let spec = entry
        .trim_start_matches("  - ")
        .replace("\n    ", "\n  ")
        .replace("group:", "  group:");
    let definition = format!(
        "apiVersion: config.kubernetes.io/v1alpha1\nkind: KRMFunctionDefinition\nspec:\n{spec}"
    );
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
        &build_err(&dir, &["--trusted-catalog", "oci-fns"]),
        "sha256",
    );
    assert_eq!(runs(&dir), 3);
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
    let trust = ["--trusted-catalog", "c"];
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
    build_ok(&dir, &["--trusted-catalog", "c", "--no-function-cache"]);
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
    let out = build_ok(&root, &["--trusted-catalog", "component-fns"]);
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
    let out = build_ok(&dir, &["--trusted-catalog", "star"]);
    assert_has(&out, "from: starlark");
}
