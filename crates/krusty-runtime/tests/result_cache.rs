//! The result cache of idempotent functions: a call whose runtime a digest
//! names is run once per input; a later call with the same digest, runtime
//! and input replays the kept output (results included) without running.

use std::path::{Path, PathBuf};

use krusty_fetch::Cache;
use krusty_resource::{Origin, ResMap, Resource};
use krusty_runtime::{FunctionCall, Host, Policy, Role, Runtime, Shown, Traits};

/// A fresh folder for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("result-cache")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// An exec function that counts its runs in `runs`, paints red things
/// blue and reports an info result.
fn painter(dir: &Path) -> PathBuf {
    let script = dir.join("paint");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\necho run >> '{}'\nsed 's/color: red/color: blue/'\nprintf 'results:\\n- message: painted\\n  severity: info\\n'\n",
            dir.join("runs").display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    script
}

fn runs(dir: &Path) -> usize {
    std::fs::read_to_string(dir.join("runs"))
        .map(|t| t.lines().count())
        .unwrap_or(0)
}

fn call(dir: &Path, digest: Option<&str>) -> FunctionCall {
    let config = krusty_yaml::parse_stream(
        "apiVersion: example.com/v1\nkind: Painter\nmetadata:\n  name: p\n",
    )
    .unwrap()
    .remove(0)
    .root
    .unwrap();
    FunctionCall {
        runtime: Runtime::Exec {
            path: painter(dir).display().to_string(),
            args: Vec::new(),
            envs: Vec::new(),
        },
        config,
        dir: dir.to_path_buf(),
        label: "painter".into(),
        traits: Traits {
            idempotent_digest: digest.map(str::to_string),
            ..Traits::default()
        },
    }
}

/// Runs `call` through `host` over one ConfigMap of `color`; the
/// resources printed and the notes.
fn run(host: &Host, call: &FunctionCall, color: &str) -> (String, Vec<String>) {
    let node = krusty_yaml::parse_stream(&format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  color: {color}\n"
    ))
    .unwrap()
    .remove(0)
    .root
    .unwrap();
    let mut resources = ResMap::from_vec(vec![Resource::from_node(node).unwrap()]).unwrap();
    let mut notes = Vec::new();
    let origin = Origin::File(PathBuf::from("fn.yaml"));
    host.run(
        call,
        Role::Transformer,
        &mut resources,
        &origin,
        &Shown::none(),
        &mut notes,
    )
    .unwrap();
    let text = resources
        .iter()
        .map(|r| krusty_yaml::to_kustomize_yaml(&r.node).unwrap())
        .collect();
    (text, notes)
}

fn host(cache: Option<Cache>) -> Host {
    Host::new(Policy {
        enable_alpha_plugins: true,
        enable_exec: true,
        ..Policy::default()
    })
    .with_result_cache(cache.map(Ok))
}

#[test]
fn an_idempotent_function_runs_once_per_input_and_digest() {
    let dir = scratch("idempotent");
    let cache = Cache::at(dir.join("cache"));
    let host = host(Some(cache.clone()));
    let first = call(&dir, Some("sha256:1111"));

    let ran = run(&host, &first, "red");
    assert!(ran.0.contains("color: blue"), "{}", ran.0);
    assert_eq!(ran.1, ["function painter: [info]: painted"]);
    assert_eq!(runs(&dir), 1);

    // The same digest, runtime and input: replayed, results too.
    assert_eq!(run(&host, &first, "red"), ran);
    assert_eq!(runs(&dir), 1);

    // A changed input runs again.
    run(&host, &first, "green");
    assert_eq!(runs(&dir), 2);

    // A changed digest runs again.
    run(&host, &call(&dir, Some("sha256:2222")), "red");
    assert_eq!(runs(&dir), 3);

    // A damaged entry is a miss, and is replaced.
    for entry in walk(&cache.root().join("functions")) {
        std::fs::write(entry, "garbage").unwrap();
    }
    assert_eq!(run(&host, &first, "red"), ran);
    assert_eq!(runs(&dir), 4);
    assert_eq!(run(&host, &first, "red"), ran);
    assert_eq!(runs(&dir), 4);
}

#[test]
fn without_a_digest_or_a_cache_functions_always_run() {
    let dir = scratch("always");
    let cache = Cache::at(dir.join("cache"));
    let cached = host(Some(cache.clone()));
    for _ in 0..2 {
        run(&cached, &call(&dir, None), "red");
    }
    assert_eq!(runs(&dir), 2);
    let uncached = host(None);
    for _ in 0..2 {
        run(&uncached, &call(&dir, Some("sha256:1111")), "red");
    }
    assert_eq!(runs(&dir), 4);
    assert!(!cache.root().join("functions").exists());
}

#[test]
fn a_replay_still_needs_the_enable_flags() {
    let dir = scratch("permit");
    let cache = Cache::at(dir.join("cache"));
    let first = call(&dir, Some("sha256:1111"));
    run(&host(Some(cache.clone())), &first, "red");
    let denied = Host::new(Policy::default()).with_result_cache(Some(Ok(cache)));
    let node = krusty_yaml::parse_stream(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  color: red\n",
    )
    .unwrap()
    .remove(0)
    .root
    .unwrap();
    let mut resources = ResMap::from_vec(vec![Resource::from_node(node).unwrap()]).unwrap();
    let err = denied
        .run(
            &first,
            Role::Transformer,
            &mut resources,
            &Origin::File(PathBuf::from("fn.yaml")),
            &Shown::none(),
            &mut Vec::new(),
        )
        .unwrap_err();
    assert!(err.to_string().contains("enable"), "{err}");
    assert_eq!(runs(&dir), 1);
}

/// The files under `dir`.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}
