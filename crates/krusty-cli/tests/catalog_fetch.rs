//! The fetch side of function catalogs against real servers on loopback:
//! OCI artifact layers from a docker-registry (by tag and by digest, media
//! types, missing manifests, moved tags, `--offline`, basic and token
//! auth with credentials from a docker configuration), and verified executables
//! (from OCI, HTTPS with a throwaway CA, loopback HTTP and `file://`:
//! sha256 checks before anything is kept or run, archives unpacked,
//! programs kept by digest so a second run fetches nothing).
//!
//! Tests that need an environment variable set (`DOCKER_CONFIG`,
//! `SSL_CERT_FILE`) run again in a child process that has it from the
//! start.

mod support;

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

use krusty_fetch::oci::sha256_hex;
use krusty_fetch::{
    FetchError, FetchOptions, Fetcher, CATALOG_MEDIA_TYPE, DEFINITION_MEDIA_TYPE, EXEC_MEDIA_TYPE,
};
use support::oci::{shared_registry, OciRegistry, CATALOG_TYPE, EXEC_TYPE, OCI_PASSWORD, OCI_USER};
use support::{make_certificates, run, scratch, serve, write};

const CATALOG: &str =
    "apiVersion: config.kubernetes.io/v1alpha1\nkind: Catalog\nmetadata:\n  name: example\n";
const DEFINITION: &str = "apiVersion: config.kubernetes.io/v1alpha1\nkind: KRMFunctionDefinition\nmetadata:\n  name: def\n";
const PROGRAM: &str = "#!/bin/sh\necho \"hello from the function\"\n";

/// The registry every test of this process shares, if docker-registry is
/// installed.
fn registry() -> Option<&'static OciRegistry> {
    shared_registry("catalog-fetch")
}

/// A fetcher on the cache in `cache`.
fn fetcher(cache: &Path, offline: bool) -> Fetcher {
    Fetcher::new(FetchOptions {
        offline,
        cache_dir: Some(cache.to_path_buf()),
        ..FetchOptions::default()
    })
}

/// Runs test `name` again in a child process with `envs` set; `true` in
/// the parent (whose work is then done), `false` in the child, which runs
/// the test's body.
fn in_child(name: &str, envs: &[(&str, &OsStr)]) -> bool {
    const CHILD: &str = "KRUSTY_CATALOG_FETCH_CHILD";
    if std::env::var_os(CHILD).is_some() {
        return false;
    }
    let exe = std::env::current_exe().expect("the test program");
    run(Command::new(exe)
        .args([name, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .envs(envs.iter().copied()));
    true
}

/// A tar.gz in `dir` holding `bin/fn` (the program) and a README.
fn program_archive(dir: &Path) -> PathBuf {
    let tree = dir.join("tree");
    write(&tree, "bin/fn", PROGRAM);
    write(&tree, "README", "a function\n");
    let archive = dir.join("fn.tar.gz");
    run(Command::new("tar")
        .arg("-czf")
        .arg(&archive)
        .arg("-C")
        .arg(&tree)
        .args(["bin/fn", "README"]));
    archive
}

/// The program's output.
fn run_program(path: &Path) -> String {
    run(&mut Command::new(path))
}

#[test]
fn oci_layers_are_pulled_by_tag_and_by_digest() {
    let Some(registry) = registry() else { return };
    let pushed = registry.push_artifact(
        "krm/catalog",
        "v1",
        CATALOG_TYPE,
        &[
            ("text/plain", b"notes".as_slice()),
            (CATALOG_MEDIA_TYPE, CATALOG.as_bytes()),
        ],
        &[("org.opencontainers.image.title", "catalog.yaml")],
    );
    let cache = scratch("catalog-fetch", "by-tag").join("cache");
    let by_tag = fetcher(&cache, false)
        .oci_layer(
            &pushed.reference,
            &[CATALOG_MEDIA_TYPE, DEFINITION_MEDIA_TYPE],
        )
        .unwrap();
    assert_eq!(&*by_tag.bytes, CATALOG.as_bytes());
    assert_eq!(by_tag.media_type, CATALOG_MEDIA_TYPE);
    assert_eq!(by_tag.digest, pushed.layer_digests[1]);

    // By digest, on a fresh cache and on the warm one (which needs no
    // registry at all: offline works).
    let fresh = scratch("catalog-fetch", "by-digest").join("cache");
    let by_digest = fetcher(&fresh, false)
        .oci_layer(&pushed.by_digest, &[CATALOG_MEDIA_TYPE])
        .unwrap();
    assert_eq!(by_digest, by_tag);
    let offline = fetcher(&cache, true)
        .oci_layer(&pushed.by_digest, &[CATALOG_MEDIA_TYPE])
        .unwrap();
    assert_eq!(offline, by_tag);
}

#[test]
fn a_layer_of_no_accepted_media_type_is_an_error_naming_those_found() {
    let Some(registry) = registry() else { return };
    let pushed = registry.push_artifact(
        "krm/definition",
        "v1",
        "application/vnd.cncf.kubernetes.krm-func-definition.v1",
        &[(DEFINITION_MEDIA_TYPE, DEFINITION.as_bytes())],
        &[],
    );
    let cache = scratch("catalog-fetch", "media-type").join("cache");
    let err = fetcher(&cache, false)
        .oci_layer(&pushed.reference, &[CATALOG_MEDIA_TYPE])
        .unwrap_err();
    assert!(matches!(err, FetchError::Oci(_)), "{err:?}");
    let text = err.to_string();
    assert!(
        text.contains(&pushed.reference)
            && text.contains(&format!("no layer of media type {CATALOG_MEDIA_TYPE}"))
            && text.contains(DEFINITION_MEDIA_TYPE),
        "{text}"
    );
    let found = fetcher(&cache, false)
        .oci_layer(&pushed.reference, &[DEFINITION_MEDIA_TYPE])
        .unwrap();
    assert_eq!(&*found.bytes, DEFINITION.as_bytes());
}

#[test]
fn a_missing_manifest_is_an_error() {
    let Some(registry) = registry() else { return };
    let cache = scratch("catalog-fetch", "missing").join("cache");
    for reference in [
        format!("oci://{}/krm/nothing-here:v1", registry.host),
        format!(
            "oci://{}/krm/nothing-here@sha256:{}",
            registry.host,
            "0".repeat(64)
        ),
    ] {
        let err = fetcher(&cache, false)
            .oci_layer(&reference, &[CATALOG_MEDIA_TYPE])
            .unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains(&reference) && text.contains("reading the manifest"),
            "{text}"
        );
    }
    assert!(!cache.join("oci").join("tags").exists());
}

#[test]
fn a_layer_longer_than_its_manifest_says_is_refused() {
    let Some(registry) = registry() else { return };
    let repo = "krm/lying";
    let config = registry.push_blob(repo, b"{}");
    let layer = registry.push_blob(repo, CATALOG.as_bytes());
    let manifest = format!(
        r#"{{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{{"mediaType":"application/vnd.oci.empty.v1+json","digest":"{config}","size":2}},"layers":[{{"mediaType":"{CATALOG_MEDIA_TYPE}","digest":"{layer}","size":10}}]}}"#
    );
    registry.push_manifest(
        repo,
        "v1",
        "application/vnd.oci.image.manifest.v1+json",
        manifest.as_bytes(),
    );
    let cache = scratch("catalog-fetch", "lying").join("cache");
    let err = fetcher(&cache, false)
        .oci_layer(
            &format!("oci://{}/{repo}:v1", registry.host),
            &[CATALOG_MEDIA_TYPE],
        )
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("pulling the layer") && err.contains("more than the 10 bytes"),
        "{err}"
    );
    assert!(!cache
        .join("oci/blobs/sha256")
        .join(&layer["sha256:".len()..])
        .exists());
}

#[test]
fn a_moved_tag_is_seen_by_the_next_build_and_offline_builds_use_the_last_seen() {
    let Some(registry) = registry() else { return };
    let cache = scratch("catalog-fetch", "moved").join("cache");
    let push = |text: &str| {
        registry.push_artifact(
            "krm/moving",
            "stable",
            CATALOG_TYPE,
            &[(CATALOG_MEDIA_TYPE, text.as_bytes())],
            &[],
        )
    };
    let pull = |offline: bool| {
        fetcher(&cache, offline)
            .oci_layer(
                &format!("oci://{}/krm/moving:stable", registry.host),
                &[CATALOG_MEDIA_TYPE],
            )
            .map(|b| String::from_utf8_lossy(&b.bytes).into_owned())
    };
    push("first: 1\n");
    assert_eq!(pull(false).unwrap(), "first: 1\n");
    push("second: 2\n");
    assert_eq!(pull(true).unwrap(), "first: 1\n");
    assert_eq!(pull(false).unwrap(), "second: 2\n");
    assert_eq!(pull(true).unwrap(), "second: 2\n");
}

#[test]
fn offline_without_the_artifact_in_the_cache_is_an_error() {
    let Some(registry) = registry() else { return };
    let pushed = registry.push_artifact(
        "krm/offline",
        "v1",
        CATALOG_TYPE,
        &[(CATALOG_MEDIA_TYPE, CATALOG.as_bytes())],
        &[],
    );
    let cache = scratch("catalog-fetch", "offline").join("cache");
    for reference in [&pushed.reference, &pushed.by_digest] {
        let err = fetcher(&cache, true)
            .oci_layer(reference, &[CATALOG_MEDIA_TYPE])
            .unwrap_err();
        assert!(matches!(err, FetchError::Offline(_)), "{err:?}");
        assert!(err.to_string().contains("--offline"), "{err}");
    }
}

#[test]
fn basic_auth_credentials_come_from_the_docker_config() {
    let docker = scratch("catalog-fetch", "docker-config-basic");
    if in_child(
        "basic_auth_credentials_come_from_the_docker_config",
        &[("DOCKER_CONFIG", docker.as_os_str())],
    ) {
        return;
    }
    let dir = scratch("catalog-fetch", "basic-registry");
    if let Some(registry) = OciRegistry::start_with_auth(&dir) {
        pull_with_credentials(&registry, &dir, &docker);
    }
}

#[test]
fn token_auth_credentials_come_from_the_docker_config() {
    let docker = scratch("catalog-fetch", "docker-config-token");
    if in_child(
        "token_auth_credentials_come_from_the_docker_config",
        &[("DOCKER_CONFIG", docker.as_os_str())],
    ) {
        return;
    }
    let dir = scratch("catalog-fetch", "token-registry");
    if let Some(registry) = OciRegistry::start_with_token_auth(&dir) {
        pull_with_credentials(&registry, &dir, &docker);
    }
}

/// A private artifact of `registry` is refused without credentials and
/// with a wrong password, and pulled with the right ones, all given in
/// the docker configuration folder `docker` (`DOCKER_CONFIG`).
fn pull_with_credentials(registry: &OciRegistry, dir: &Path, docker: &Path) {
    let pushed = registry.push_artifact(
        "krm/private",
        "v1",
        CATALOG_TYPE,
        &[(CATALOG_MEDIA_TYPE, CATALOG.as_bytes())],
        &[],
    );
    let pull = |name: &str| {
        fetcher(&dir.join(name), false).oci_layer(&pushed.reference, &[CATALOG_MEDIA_TYPE])
    };
    // No docker configuration: anonymous, refused.
    let err = pull("anonymous").unwrap_err().to_string();
    assert!(err.contains(&pushed.reference), "{err}");
    // A wrong password: refused.
    registry.docker_config(docker, Some((OCI_USER, "wrong")));
    assert!(pull("wrong").is_err());
    // The right ones.
    registry.docker_config(docker, Some((OCI_USER, OCI_PASSWORD)));
    assert_eq!(&*pull("right").unwrap().bytes, CATALOG.as_bytes());
}

#[test]
fn exec_programs_from_oci_are_verified_unpacked_and_kept_by_digest() {
    let Some(registry) = registry() else { return };
    let dir = scratch("catalog-fetch", "exec-oci");
    let archive = std::fs::read(program_archive(&dir)).unwrap();
    let pushed = registry.push_artifact(
        "krm/fn",
        "v1",
        EXEC_TYPE,
        &[(EXEC_MEDIA_TYPE, archive.as_slice())],
        &[],
    );
    let sha = sha256_hex(&archive);
    let cache = dir.join("cache");
    let path = fetcher(&cache, false)
        .verified_executable(&pushed.reference, &sha, "bin/fn", &dir)
        .unwrap();
    assert!(
        path.starts_with(cache.join("exec").join(&sha)),
        "{}",
        path.display()
    );
    assert_eq!(run_program(&path), "hello from the function\n");
    // Kept by digest: offline, and even with a tag that no longer exists.
    let gone = format!("oci://{}/krm/fn:deleted", registry.host);
    let again = fetcher(&cache, true)
        .verified_executable(&gone, &format!("sha256:{sha}"), "bin/fn", &dir)
        .unwrap();
    assert_eq!(again, path);
}

#[test]
fn a_sha256_mismatch_keeps_and_runs_nothing() {
    let dir = scratch("catalog-fetch", "mismatch");
    let archive = program_archive(&dir);
    let actual = sha256_hex(&std::fs::read(&archive).unwrap());
    let expected = "ab".repeat(32);
    let cache = dir.join("cache");
    let err = fetcher(&cache, false)
        .verified_executable("file://fn.tar.gz", &expected, "bin/fn", &dir)
        .unwrap_err();
    assert!(matches!(err, FetchError::Verify(_)), "{err:?}");
    let text = err.to_string();
    assert!(text.contains(&expected) && text.contains(&actual), "{text}");
    assert!(!cache.join("exec").exists());
    for missing in ["", "sha256:", "1234"] {
        let err = fetcher(&cache, false)
            .verified_executable("file://fn.tar.gz", missing, "bin/fn", &dir)
            .unwrap_err();
        assert!(matches!(err, FetchError::Artifact(_)), "{err:?}");
    }
    assert!(!cache.join("exec").exists());
}

#[test]
fn file_uris_are_relative_to_the_catalog_folder_and_a_second_run_reads_nothing() {
    let dir = scratch("catalog-fetch", "file");
    let catalogs = dir.join("catalogs");
    std::fs::create_dir_all(&catalogs).unwrap();
    let archive = program_archive(&catalogs);
    let sha = sha256_hex(&std::fs::read(&archive).unwrap());
    let cache = dir.join("cache");
    let path = fetcher(&cache, false)
        .verified_executable("file://fn.tar.gz", &sha, "./bin/fn", &catalogs)
        .unwrap();
    assert_eq!(run_program(&path), "hello from the function\n");
    let absolute = format!("file://{}", archive.display());
    assert_eq!(
        fetcher(&cache, false)
            .verified_executable(&absolute, &sha, "bin/fn", Path::new("/"))
            .unwrap(),
        path
    );
    // The source gone, offline: the kept program serves.
    std::fs::remove_file(&archive).unwrap();
    assert_eq!(
        fetcher(&cache, true)
            .verified_executable("file://fn.tar.gz", &sha, "bin/fn", &catalogs)
            .unwrap(),
        path
    );
    // A plain program (no archive) is taken as it is.
    write(&catalogs, "plain-fn", PROGRAM);
    let plain = fetcher(&cache, false)
        .verified_executable(
            "file://plain-fn",
            &sha256_hex(PROGRAM.as_bytes()),
            "plain-fn",
            &catalogs,
        )
        .unwrap();
    assert_eq!(run_program(&plain), "hello from the function\n");
}

#[test]
fn exec_programs_over_https_and_loopback_http() {
    let tls = scratch("catalog-fetch", "tls");
    if in_child(
        "exec_programs_over_https_and_loopback_http",
        &[("SSL_CERT_FILE", tls.join("ca.crt").as_os_str())],
    ) {
        return;
    }
    make_certificates(&tls);
    let files = scratch("catalog-fetch", "served");
    let archive = program_archive(&files);
    let sha = sha256_hex(&std::fs::read(&archive).unwrap());
    let s = |p: &Path| p.to_str().unwrap().to_string();
    let (crt, key) = (s(&tls.join("server.crt")), s(&tls.join("server.key")));
    let root = s(&files);
    let (_https, https_port) = serve(&[
        OsStr::new("0"),
        OsStr::new(&root),
        OsStr::new(&crt),
        OsStr::new(&key),
        OsStr::new("--static"),
    ]);
    let (_http, http_port) = serve(&[OsStr::new("0"), OsStr::new(&root), OsStr::new("--static")]);
    for (name, url) in [
        ("https", format!("https://127.0.0.1:{https_port}/fn.tar.gz")),
        ("http", format!("http://127.0.0.1:{http_port}/fn.tar.gz")),
    ] {
        let cache = files.join(format!("cache-{name}"));
        let path = fetcher(&cache, false)
            .verified_executable(&url, &sha, "bin/fn", &files)
            .unwrap();
        assert_eq!(run_program(&path), "hello from the function\n");
        let offline = fetcher(&cache, true)
            .verified_executable(&url, &sha, "bin/fn", &files)
            .unwrap();
        assert_eq!(offline, path);
        let err = fetcher(&cache, false)
            .verified_executable(&url, &"cd".repeat(32), "bin/fn", &files)
            .unwrap_err();
        assert!(matches!(err, FetchError::Verify(_)), "{err:?}");
        assert!(!cache.join("exec").join("cd".repeat(32)).exists());
    }
}
