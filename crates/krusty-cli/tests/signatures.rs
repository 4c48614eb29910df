//! Signed OCI artifacts (`--verify-key`) end to end, against a real
//! `docker-registry` on loopback: keys made with openssl in the test,
//! signatures in cosign's format (a simple-signing payload, its ECDSA
//! P-256 signature by `openssl dgst -sha256 -sign`, a signature manifest
//! at the tag `sha256-HEX.sig`) pushed by the test; catalogs, function
//! definitions, exec programs and container images checked before they
//! are trusted. docs/catalog.md ("Signatures") states the rules.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use support::examples::example;
use support::oci::{
    base64, shared_registry, OciRegistry, PushedArtifact, CATALOG_TYPE, DEFINITION_TYPE, EXEC_TYPE,
    OCI_EMPTY_MEDIA_TYPE, OCI_MANIFEST_MEDIA_TYPE,
};
use support::podman::{import_labels_image, podman, podman_works};
use support::{definition_of, output_text, run, scratch, write};

const SIMPLE_SIGNING: &str = "application/vnd.dev.cosign.simplesigning.v1+json";
const SIGNATURE_ANNOTATION: &str = "dev.cosignproject.cosign/signature";
const CONFIG_MAP: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  k: v\n";

/// The registry every test of this process shares, if docker-registry is
/// installed.
fn registry() -> Option<&'static OciRegistry> {
    shared_registry("signatures")
}

/// An ECDSA P-256 key pair made by openssl: the private key and the
/// public key (PEM `PUBLIC KEY`, as `--verify-key` reads it).
struct KeyPair {
    private: PathBuf,
    public: PathBuf,
}

fn key_pair(dir: &Path, name: &str) -> KeyPair {
    std::fs::create_dir_all(dir).unwrap();
    let private = dir.join(format!("{name}.key"));
    let public = dir.join(format!("{name}.pub"));
    run(Command::new("openssl")
        .args([
            "ecparam",
            "-genkey",
            "-name",
            "prime256v1",
            "-noout",
            "-out",
        ])
        .arg(&private));
    run(Command::new("openssl")
        .args(["ec", "-pubout", "-in"])
        .arg(&private)
        .arg("-out")
        .arg(&public));
    KeyPair { private, public }
}

/// The payload cosign signs for the manifest `digest` of `repository`.
fn payload(repository: &str, digest: &str) -> String {
    format!(
        r#"{{"critical":{{"identity":{{"docker-reference":"{repository}"}},"image":{{"docker-manifest-digest":"{digest}"}},"type":"cosign container image signature"}},"optional":null}}"#
    )
}

/// The base64 ASN.1 DER signature by `key` over `payload`, made by
/// `openssl dgst -sha256 -sign`.
fn sign(key: &KeyPair, payload: &[u8]) -> String {
    let dir = key.private.parent().unwrap();
    let (input, output) = (dir.join("payload.json"), dir.join("payload.sig"));
    std::fs::write(&input, payload).unwrap();
    run(Command::new("openssl")
        .args(["dgst", "-sha256", "-sign"])
        .arg(&key.private)
        .arg("-out")
        .arg(&output)
        .arg(&input));
    base64(&std::fs::read(&output).unwrap())
}

/// Pushes the signature manifest of `digest` in `repo` (at the tag
/// `sha256-HEX.sig`): one simple-signing layer per (payload, signature).
fn push_signatures(registry: &OciRegistry, repo: &str, digest: &str, layers: &[(&[u8], &str)]) {
    let config = registry.push_blob(repo, b"{}");
    let descriptors: Vec<String> = layers
        .iter()
        .map(|(payload, signature)| {
            let blob = registry.push_blob(repo, payload);
            format!(
                r#"{{"mediaType":"{SIMPLE_SIGNING}","digest":"{blob}","size":{},"annotations":{{"{SIGNATURE_ANNOTATION}":"{signature}"}}}}"#,
                payload.len()
            )
        })
        .collect();
    let manifest = format!(
        r#"{{"schemaVersion":2,"mediaType":"{OCI_MANIFEST_MEDIA_TYPE}","config":{{"mediaType":"{OCI_EMPTY_MEDIA_TYPE}","digest":"{config}","size":2}},"layers":[{}]}}"#,
        descriptors.join(",")
    );
    let tag = format!("{}.sig", digest.replacen(':', "-", 1));
    registry.push_manifest(repo, &tag, OCI_MANIFEST_MEDIA_TYPE, manifest.as_bytes());
}

/// Signs `digest` of `repo` with `key`, as `cosign sign --key` does.
fn sign_digest(registry: &OciRegistry, repo: &str, digest: &str, key: &KeyPair) {
    let text = payload(&format!("{}/{repo}", registry.host), digest);
    let signature = sign(key, text.as_bytes());
    push_signatures(registry, repo, digest, &[(text.as_bytes(), &signature)]);
}

/// A test's folders: `root/app` (the kustomization) and `root/cache`.
fn case(name: &str) -> PathBuf {
    let root = scratch("signatures", name);
    std::fs::create_dir_all(root.join("app")).unwrap();
    root
}

/// An exec function in `dir/name`: a script that appends its name to
/// `dir/runs.log` and runs the example function krm-set-labels with the
/// label `team: TEAM`. Its bytes and sha256.
fn counting_function(dir: &Path, name: &str, team: &str) -> (Vec<u8>, String) {
    let script = format!(
        "#!/bin/sh\necho {name} >> '{}'\nsed 's/team: web/team: {team}/' | exec '{}'\n",
        dir.join("runs.log").display(),
        example("krm-set-labels").display()
    );
    let hash = krusty_fetch::oci::sha256_hex(script.as_bytes());
    (script.into_bytes(), hash)
}

/// How many times the counting functions of `dir` ran.
fn runs(dir: &Path) -> usize {
    std::fs::read_to_string(dir.join("runs.log"))
        .unwrap_or_default()
        .lines()
        .count()
}

/// The catalog entry of `example.com/v1 SetLabels` with `runtime`.
fn entry(runtime: &str) -> String {
    format!("  - group: example.com\n    names:\n      kind: SetLabels\n    versions:\n    - name: v1\n      runtime:\n{runtime}")
}

/// The runtime of the program at `uri` with hash `sha256` on this
/// machine (linux/amd64 or arm64).
fn exec_runtime(uri: &str, sha256: &str) -> String {
    let arch = if cfg!(target_arch = "aarch64") {
        "arm64"
    } else {
        "amd64"
    };
    format!("        exec:\n          platforms:\n          - bin: fn\n            os: linux\n            arch: {arch}\n            uri: {uri}\n            sha256: {sha256}\n")
}

/// A catalog holding `entries`.
fn catalog(entries: &[String]) -> String {
    format!(
        "apiVersion: config.kubernetes.io/v1alpha1\nkind: Catalog\nmetadata:\n  name: signed\nspec:\n  krmFunctions:\n{}",
        entries.concat()
    )
}

/// A kustomization in `dir` naming `catalog`, with a ConfigMap and the
/// SetLabels config `fn.yaml`.
fn kustomization(dir: &Path, catalog: &str) {
    write(
        dir,
        "kustomization.yaml",
        &format!("resources:\n- cm.yaml\ncatalogs:\n- {catalog}\ntransformers:\n- fn.yaml\n"),
    );
    write(dir, "cm.yaml", CONFIG_MAP);
    write(
        dir,
        "fn.yaml",
        "apiVersion: example.com/v1\nkind: SetLabels\nmetadata:\n  name: l\nlabels:\n  team: web\n",
    );
}

/// What a test publishes: an exec program (`NAME/fn:v1`) and a catalog
/// naming it by tag (`NAME/catalog:v1`), neither signed yet.
struct Published {
    program: PushedArtifact,
    catalog: PushedArtifact,
}

/// Publishes the program (setting `team`) and its catalog under `name`.
fn publish(registry: &OciRegistry, app: &Path, name: &str, team: &str) -> Published {
    let (program, hash) = counting_function(app, "fn.sh", team);
    let program = registry.push_artifact(
        &format!("{name}/fn"),
        "v1",
        EXEC_TYPE,
        &[(krusty_fetch::EXEC_MEDIA_TYPE, &program)],
        &[],
    );
    let text = catalog(&[entry(&exec_runtime(&program.reference, &hash))]);
    let catalog = registry.push_artifact(
        &format!("{name}/catalog"),
        "v1",
        CATALOG_TYPE,
        &[(krusty_fetch::CATALOG_MEDIA_TYPE, text.as_bytes())],
        &[],
    );
    Published { program, catalog }
}

/// `krusty build ARGS .` in `dir` with the cache `cache`: whether it
/// succeeded, its stdout and stderr.
fn build(dir: &Path, cache: &Path, args: &[&str]) -> (bool, String, String) {
    let out: Output = support::krusty_command()
        .arg("build")
        .args(args)
        .arg(".")
        .current_dir(dir)
        .env("KRUSTY_CACHE_DIR", cache)
        .env(
            "CONTAINERS_CONF",
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.ci/containers.conf"),
        )
        .output()
        .expect("krusty runs");
    let (stdout, stderr) = output_text(&out);
    (out.status.success(), stdout, stderr)
}

fn build_ok(dir: &Path, cache: &Path, args: &[&str]) -> String {
    let (ok, stdout, stderr) = build(dir, cache, args);
    assert!(ok, "krusty build failed in {}:\n{stderr}", dir.display());
    stdout
}

fn build_err(dir: &Path, cache: &Path, args: &[&str]) -> String {
    let (ok, stdout, stderr) = build(dir, cache, args);
    assert!(
        !ok,
        "krusty build succeeded in {}:\n{stdout}",
        dir.display()
    );
    assert_eq!(stdout, "", "a failed build prints nothing");
    stderr
}

fn assert_has(text: &str, want: &str) {
    assert!(text.contains(want), "want {want:?} in:\n{text}");
}

/// `--verify-key` for each key, then `--trusted-catalog catalog`.
fn flags<'a>(keys: &[&'a KeyPair], catalog: &'a str) -> Vec<&'a str> {
    let mut flags = Vec::new();
    for key in keys {
        flags.push("--verify-key");
        flags.push(key.public.to_str().unwrap());
    }
    flags.extend(["--trusted-catalog", catalog]);
    flags
}

/// The error krusty gives for `artifact` (its reference and digest).
fn names(err: &str, artifact: &PushedArtifact) {
    assert_has(
        err,
        &format!(
            "{} ({}): no valid signature: ",
            artifact.reference, artifact.digest
        ),
    );
}

#[test]
fn a_signed_catalog_and_program_verify_and_the_function_runs() {
    let Some(registry) = registry() else { return };
    let root = case("signed");
    let (app, cache) = (root.join("app"), root.join("cache"));
    let (good, other) = (key_pair(&root, "good"), key_pair(&root, "other"));
    let published = publish(registry, &app, "signed", "signed");
    sign_digest(registry, "signed/catalog", &published.catalog.digest, &good);
    sign_digest(registry, "signed/fn", &published.program.digest, &good);
    kustomization(&app, &published.catalog.reference);
    let out = build_ok(
        &app,
        &cache,
        &flags(&[&other, &good], &published.catalog.reference),
    );
    assert_has(&out, "team: signed");
    assert_eq!(runs(&app), 1);
    // Without the flag nothing is checked, as before.
    build_ok(
        &app,
        &cache,
        &["--trusted-catalog", &published.catalog.reference],
    );
    // A definition is an artifact of its own, signed the same way.
    let (_, hash) = counting_function(&app, "fn.sh", "signed");
    let definition = definition_of(&entry(&exec_runtime(&published.program.reference, &hash)));
    let def = registry.push_artifact(
        "signed/definition",
        "v1",
        DEFINITION_TYPE,
        &[(krusty_fetch::DEFINITION_MEDIA_TYPE, definition.as_bytes())],
        &[],
    );
    kustomization(&app, &def.reference);
    let err = build_err(&app, &cache, &flags(&[&good], &def.reference));
    names(&err, &def);
    sign_digest(registry, "signed/definition", &def.digest, &good);
    assert_has(
        &build_ok(&app, &cache, &flags(&[&good], &def.reference)),
        "team: signed",
    );
    assert_eq!(runs(&app), 3);
}

#[test]
fn an_unsigned_catalog_fails_naming_it_and_runs_nothing() {
    let Some(registry) = registry() else { return };
    let root = case("unsigned");
    let (app, cache) = (root.join("app"), root.join("cache"));
    let good = key_pair(&root, "good");
    let published = publish(registry, &app, "unsigned", "unsigned");
    sign_digest(registry, "unsigned/fn", &published.program.digest, &good);
    kustomization(&app, &published.catalog.reference);
    let err = build_err(&app, &cache, &flags(&[&good], &published.catalog.reference));
    names(&err, &published.catalog);
    assert_has(
        &err,
        &format!(
            "its signatures ({}:{}.sig) cannot be read",
            published.catalog.reference.trim_end_matches(":v1"),
            published.catalog.digest.replacen(':', "-", 1)
        ),
    );
    assert_has(
        &err,
        &format!("with --verify-key ({})", good.public.display()),
    );
    assert_eq!(runs(&app), 0);
    // The same catalog named by digest is the same artifact.
    kustomization(&app, &published.catalog.by_digest);
    let err = build_err(&app, &cache, &flags(&[&good], &published.catalog.by_digest));
    assert_has(
        &err,
        &format!("{}: no valid signature", published.catalog.by_digest),
    );
    assert_eq!(runs(&app), 0);
}

#[test]
fn a_signature_by_another_key_fails() {
    let Some(registry) = registry() else { return };
    let root = case("other-key");
    let (app, cache) = (root.join("app"), root.join("cache"));
    let (good, other) = (key_pair(&root, "good"), key_pair(&root, "other"));
    let published = publish(registry, &app, "other-key", "other");
    sign_digest(
        registry,
        "other-key/catalog",
        &published.catalog.digest,
        &other,
    );
    sign_digest(registry, "other-key/fn", &published.program.digest, &good);
    kustomization(&app, &published.catalog.reference);
    let err = build_err(&app, &cache, &flags(&[&good], &published.catalog.reference));
    names(&err, &published.catalog);
    assert_has(&err, "it is not made by any of the keys over this payload");
    assert_eq!(runs(&app), 0);
    assert_has(
        &build_ok(
            &app,
            &cache,
            &flags(&[&good, &other], &published.catalog.reference),
        ),
        "team: other",
    );
}

#[test]
fn a_signature_whose_payload_names_another_digest_fails() {
    let Some(registry) = registry() else { return };
    let root = case("another-digest");
    let (app, cache) = (root.join("app"), root.join("cache"));
    let good = key_pair(&root, "good");
    let published = publish(registry, &app, "another-digest", "x");
    sign_digest(
        registry,
        "another-digest/fn",
        &published.program.digest,
        &good,
    );
    // A genuine signature of the program, copied to the catalog's
    // signature tag.
    let text = payload(
        &format!("{}/another-digest/fn", registry.host),
        &published.program.digest,
    );
    let signature = sign(&good, text.as_bytes());
    push_signatures(
        registry,
        "another-digest/catalog",
        &published.catalog.digest,
        &[(text.as_bytes(), &signature)],
    );
    kustomization(&app, &published.catalog.reference);
    let err = build_err(&app, &cache, &flags(&[&good], &published.catalog.reference));
    names(&err, &published.catalog);
    assert_has(
        &err,
        &format!(
            "the signed payload is for {}, not for this artifact ({})",
            published.program.digest, published.catalog.digest
        ),
    );
    assert_eq!(runs(&app), 0);
}

#[test]
fn a_tampered_payload_fails() {
    let Some(registry) = registry() else { return };
    let root = case("tampered");
    let (app, cache) = (root.join("app"), root.join("cache"));
    let good = key_pair(&root, "good");
    let published = publish(registry, &app, "tampered", "x");
    sign_digest(registry, "tampered/fn", &published.program.digest, &good);
    let text = payload(
        &format!("{}/tampered/catalog", registry.host),
        &published.catalog.digest,
    );
    let signature = sign(&good, text.as_bytes());
    let changed = text.replace(r#""optional":null"#, r#""optional":{"by":"mallory"}"#);
    push_signatures(
        registry,
        "tampered/catalog",
        &published.catalog.digest,
        &[(changed.as_bytes(), &signature)],
    );
    kustomization(&app, &published.catalog.reference);
    let err = build_err(&app, &cache, &flags(&[&good], &published.catalog.reference));
    names(&err, &published.catalog);
    assert_has(&err, "it is not made by any of the keys over this payload");
    assert_eq!(runs(&app), 0);
}

#[test]
fn an_unsigned_exec_program_fails_even_when_its_bytes_are_cached() {
    let Some(registry) = registry() else { return };
    let root = case("program");
    let (app, cache) = (root.join("app"), root.join("cache"));
    let good = key_pair(&root, "good");
    let published = publish(registry, &app, "program", "program");
    sign_digest(
        registry,
        "program/catalog",
        &published.catalog.digest,
        &good,
    );
    kustomization(&app, &published.catalog.reference);
    // Unchecked, the program is fetched, kept and run.
    build_ok(
        &app,
        &cache,
        &["--trusted-catalog", &published.catalog.reference],
    );
    assert_eq!(runs(&app), 1);
    let err = build_err(&app, &cache, &flags(&[&good], &published.catalog.reference));
    names(&err, &published.program);
    assert_eq!(runs(&app), 1, "the cached program does not run");
    sign_digest(registry, "program/fn", &published.program.digest, &good);
    assert_has(
        &build_ok(&app, &cache, &flags(&[&good], &published.catalog.reference)),
        "team: program",
    );
    assert_eq!(runs(&app), 2);
}

#[test]
fn offline_builds_check_signatures_from_the_cache() {
    let Some(registry) = registry() else { return };
    let root = case("offline");
    let (app, cache) = (root.join("app"), root.join("cache"));
    let good = key_pair(&root, "good");
    let published = publish(registry, &app, "offline", "offline");
    kustomization(&app, &published.catalog.reference);
    let trusted = ["--trusted-catalog", published.catalog.reference.as_str()];
    // Fetched without the flag: the artifacts are cached, no signature is.
    build_ok(&app, &cache, &trusted);
    let mut offline = flags(&[&good], &published.catalog.reference);
    offline.push("--offline");
    let err = build_err(&app, &cache, &offline);
    names(&err, &published.catalog);
    assert_has(&err, "--offline: '");
    assert_has(&err, "is not in the cache");
    sign_digest(
        registry,
        "offline/catalog",
        &published.catalog.digest,
        &good,
    );
    sign_digest(registry, "offline/fn", &published.program.digest, &good);
    build_ok(&app, &cache, &flags(&[&good], &published.catalog.reference));
    assert_has(&build_ok(&app, &cache, &offline), "team: offline");
    assert_eq!(runs(&app), 3);
}

#[test]
fn key_files_that_hold_no_public_key_are_errors_naming_them() {
    let root = case("bad-keys");
    let app = root.join("app");
    write(&app, "kustomization.yaml", "resources:\n- cm.yaml\n");
    write(&app, "cm.yaml", CONFIG_MAP);
    let private = key_pair(&root, "key").private;
    for (path, why) in [
        (root.join("missing.pub"), "No such file"),
        (
            private,
            "it holds no PEM public key (-----BEGIN PUBLIC KEY-----) of an ECDSA P-256 key",
        ),
    ] {
        let (ok, stdout, stderr) = build(
            &app,
            &root.join("cache"),
            &["--verify-key", path.to_str().unwrap()],
        );
        assert!(!ok && stdout.is_empty(), "{stdout}");
        assert_has(&stderr, &format!("--verify-key '{}': ", path.display()));
        assert_has(&stderr, why);
    }
}

/// An image of the example function krm-set-labels (the program and the
/// libraries it needs) pushed to `registry` as `repo:v1`, and pulled back
/// into podman by digest; that digest.
fn push_labels_image(registry: &OciRegistry, dir: &Path, repo: &str) -> String {
    let local = format!("localhost/krusty-signatures-{}:v1", repo.replace('/', "-"));
    import_labels_image(dir, &local);
    let digest_file = dir.join("digest");
    let remote = format!("{}/{repo}", registry.host);
    run(podman()
        .args(["push", "-q", "--tls-verify=false", "--digestfile"])
        .arg(&digest_file)
        .arg(&local)
        .arg(format!("docker://{remote}:v1")));
    let digest = std::fs::read_to_string(&digest_file)
        .unwrap()
        .trim()
        .to_string();
    run(podman()
        .args(["pull", "-q", "--tls-verify=false"])
        .arg(format!("{remote}@{digest}")));
    let _ = podman().args(["rmi", "-f", &local]).output();
    digest
}

#[test]
fn container_images_are_checked_by_digest_before_they_run() {
    let Some(registry) = registry() else { return };
    let root = case("images");
    let (app, cache) = (root.join("app"), root.join("cache"));
    let good = key_pair(&root, "good");
    let image = format!("{}/images/fn", registry.host);
    let trusted = |catalog: &str| {
        write(&app, "catalog.yaml", catalog);
        kustomization(&app, "catalog.yaml");
    };
    let container = |image: &str, sha256: &str| {
        let sha = if sha256.is_empty() {
            String::new()
        } else {
            format!("          sha256: {sha256}\n")
        };
        catalog(&[entry(&format!(
            "        container:\n          image: {image}\n{sha}"
        ))])
    };
    let flags = [
        "--verify-key",
        good.public.to_str().unwrap(),
        "--trusted-catalog",
        "catalog.yaml",
    ];
    // An image by tag alone cannot be checked.
    trusted(&container(&format!("{image}:v1"), ""));
    let err = build_err(&app, &cache, &flags);
    assert_has(
        &err,
        &format!(
            "container image '{image}:v1': with --verify-key an image runs only by its digest"
        ),
    );
    // An unsigned digest is refused before anything runs.
    let unsigned = "0123456789abcdef".repeat(4);
    trusted(&container(&image, &unsigned));
    let err = build_err(&app, &cache, &flags);
    assert_has(
        &err,
        &format!("container image '{image}@sha256:{unsigned}': no valid signature: its signatures (oci://{image}:sha256-{unsigned}.sig) cannot be read"),
    );
    if !podman_works() {
        support::skip("podman cannot run containers here: no signed container image runs");
        return;
    }
    let digest = push_labels_image(registry, &root, "images/fn");
    let hex = digest.trim_start_matches("sha256:");
    trusted(&container(&format!("{image}:v1"), hex));
    let err = build_err(&app, &cache, &flags);
    assert_has(
        &err,
        &format!("container image '{image}@{digest}': no valid signature"),
    );
    sign_digest(registry, "images/fn", &digest, &good);
    let out = build_ok(&app, &cache, &flags);
    assert_has(&out, "team: web");
    let _ = podman()
        .args(["rmi", "-f", &format!("{image}@{digest}")])
        .output();
}
