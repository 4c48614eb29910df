//! Composition (KEP-2299) corpus. No Kustomize release implements
//! Composition, so every output case is pinned through an equivalent:
//!
//! - `in/`: the composition tree krusty builds (`target`, optional: the
//!   folder to build relative to the case, default `in`; `args`, optional:
//!   extra `krusty build` flags, whitespace-separated);
//! - `equivalent/`: a hand-consolidated Kustomization tree saying the same
//!   thing to `kubectl kustomize` (the consolidated list as inline
//!   `transformers:`/`generators:` entries with explicit `fieldSpecs`,
//!   `resources:`, and nested kustomization layers where an inline
//!   Kustomization or the order needs one);
//! - `expected.yaml`: `kubectl kustomize equivalent` (Kustomize v5.5.0),
//!   recorded with `KRUSTY_BLESS=1`, never written by hand. krusty's
//!   output on the target must equal it byte for byte, and when kubectl is
//!   installed, kubectl on `equivalent/` must still print it;
//! - `consolidated.yaml` (optional): the stdout of
//!   `krusty composition consolidate` on the target;
//! - or, for failures, `expected_error.txt`: a part of krusty's stderr
//!   (the file, the line and the rule; the staged case folder's path
//!   written `$CASE`), the tests' one convention (`support::Case`).
//!
//! `args` spells a flag with a value as one word (`--load-restrictor=...`):
//! kubectl gets the case's flags but `--enable-exec`, and
//! `consolidate` its `--load-restrictor`. `consolidated.yaml` is recorded
//! from krusty with `KRUSTY_BLESS=1` (an empty file asks for it) and
//! reviewed.
//!
//! The example KRM functions (krusty-fn-examples) replace the KEP's
//! imaginary images. Each case is staged in a scratch folder with a `fns/`
//! folder beside `in/` linking them, so compositions name them as exec
//! functions (`../fns/krm-set-labels`). kubectl skips exec functions, so the
//! equivalents declare them as container functions with the image
//! `fake.invalid/<function>`, and kubectl runs with a fake `docker` first in
//! `PATH` that runs `fns/<function>` instead. krusty gets the same fake
//! docker as its container CLI, so `runtime: {container: ...}` works in
//! compositions too.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use support::{diff, Case};

/// The example functions linked into each staged case's `fns/`.
const FUNCTIONS: [&str; 3] = [
    "krm-configmap-generator",
    "krm-set-labels",
    "krm-require-limits",
];

/// The fake `docker`: `run` runs `$FNDIR/<last path element of the
/// image>` (the image is the last argument); anything else does nothing.
const FAKE_DOCKER: &str = "#!/bin/sh\n[ \"$1\" = run ] || exit 0\nfor a in \"$@\"; do img=$a; done\nexec \"$FNDIR/${img##*/}\"\n";

/// The corpus folder.
fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/compositions")
}

/// Stages `case` in a scratch folder: a copy of it, `fns/` linking the
/// example functions and `fake/docker`.
fn stage(case: &Case) -> Result<PathBuf, String> {
    use std::os::unix::fs::PermissionsExt;
    let dir = support::scratch("compositions", &case.name);
    support::copy_tree(&case.dir, &dir);
    let bin = Path::new(support::KRUSTY)
        .parent()
        .ok_or("no bin dir")?
        .to_path_buf();
    std::fs::create_dir_all(dir.join("fns")).map_err(|e| e.to_string())?;
    for f in FUNCTIONS {
        let exe = bin.join(f);
        if !exe.is_file() {
            return Err(format!(
                "{} is missing: run `cargo build -p krusty-fn-examples` first",
                exe.display()
            ));
        }
        std::os::unix::fs::symlink(&exe, dir.join("fns").join(f)).map_err(|e| e.to_string())?;
    }
    support::write(&dir, "fake/docker", FAKE_DOCKER);
    std::fs::set_permissions(
        dir.join("fake/docker"),
        std::fs::Permissions::from_mode(0o755),
    )
    .map_err(|e| e.to_string())?;
    Ok(dir)
}

/// The words of the case's `args` file.
fn args(case: &Case) -> Vec<String> {
    case.read("args")
        .map(|a| a.split_whitespace().map(str::to_string).collect())
        .unwrap_or_default()
}

/// `krusty ARGS` in the staged case, the fake docker its container CLI.
fn krusty(staged: &Path, args: &[String]) -> Result<Output, String> {
    support::krusty_command()
        .args(args)
        .current_dir(staged)
        .env("KRUSTY_CONTAINER_CLI", staged.join("fake/docker"))
        .env("FNDIR", staged.join("fns"))
        .output()
        .map_err(|e| format!("cannot run krusty: {e}"))
}

/// Whether kubectl can be run.
fn kubectl_installed() -> bool {
    Command::new("kubectl")
        .args(["version", "--client"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// `kubectl kustomize equivalent` in the staged case, with the case's flags
/// that kubectl knows (`--enable-exec` is krusty's: functions are
/// containers there) and the fake docker first in `PATH`.
fn kubectl_equivalent(staged: &Path, flags: &[String]) -> Result<Vec<u8>, String> {
    let path = format!(
        "{}:{}",
        staged.join("fake").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = Command::new("kubectl")
        .arg("kustomize")
        .args(flags.iter().filter(|f| *f != "--enable-exec"))
        .arg("equivalent")
        .current_dir(staged)
        .env("PATH", path)
        .env("FNDIR", staged.join("fns"))
        .output()
        .map_err(|e| format!("cannot run kubectl: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "kubectl kustomize equivalent failed: {}",
            String::from_utf8_lossy(&out.stderr).trim_end()
        ));
    }
    Ok(out.stdout)
}

/// Compares `got` with the case's file `name`, or records it there when
/// blessing.
fn compare(case: &Case, name: &str, got: &[u8], bless: bool) -> Result<(), String> {
    if bless {
        return std::fs::write(case.path(name), got).map_err(|e| e.to_string());
    }
    let want = std::fs::read(case.path(name)).map_err(|e| format!("{name}: {e}"))?;
    if got != want.as_slice() {
        return Err(format!(
            "{name} differs\n{}",
            diff(
                &String::from_utf8_lossy(&want),
                &String::from_utf8_lossy(got)
            )
        ));
    }
    Ok(())
}

/// Checks one case; `Err` describes the failure.
fn check(case: &Case, kubectl: bool, bless: bool) -> Result<(), String> {
    let staged = stage(case)?;
    let flags = args(case);
    let target = case.target();
    let mut build = vec!["build".to_string()];
    build.extend(flags.iter().cloned());
    build.push(target.clone());
    let out = krusty(&staged, &build)?;
    if let Some(want) = case.expected_error() {
        let stderr = support::portable(&support::text(&out.stderr), &[(&staged, "$CASE")]);
        return want.check(out.status.code(), &out.stdout, &stderr);
    }
    if case.path("equivalent").is_dir() && (kubectl || bless) {
        let oracle = kubectl_equivalent(&staged, &flags)?;
        compare(case, "expected.yaml", &oracle, bless)
            .map_err(|e| format!("kubectl on equivalent/: {e}"))?;
    }
    if !out.status.success() {
        return Err(format!(
            "krusty failed: {}",
            String::from_utf8_lossy(&out.stderr).trim_end()
        ));
    }
    compare(case, "expected.yaml", &out.stdout, false).map_err(|e| format!("krusty: {e}"))?;
    if case.path("consolidated.yaml").is_file() {
        let mut consolidate = vec!["composition".to_string(), "consolidate".to_string()];
        consolidate.extend(
            flags
                .iter()
                .filter(|f| f.starts_with("--load-restrictor"))
                .cloned(),
        );
        consolidate.push(target);
        let out = krusty(&staged, &consolidate)?;
        if !out.status.success() {
            return Err(format!(
                "consolidate failed: {}",
                String::from_utf8_lossy(&out.stderr).trim_end()
            ));
        }
        compare(case, "consolidated.yaml", &out.stdout, bless)?;
    }
    Ok(())
}

#[test]
fn compositions_match_their_kustomization_equivalents() {
    let kubectl = kubectl_installed();
    if !kubectl {
        eprintln!("\n!!!!!!!! kubectl is missing: equivalents not rebuilt !!!!!!!!\n");
    }
    let bless = std::env::var_os("KRUSTY_BLESS").is_some_and(|v| v == "1");
    let cases = support::cases(&corpus());
    let mut failures = 0;
    for case in &cases {
        if let Err(msg) = check(case, kubectl, bless) {
            failures += 1;
            eprintln!("FAIL {}: {msg}\n", case.name);
        }
    }
    let summary = format!(
        "compositions: {} of {} cases pass",
        cases.len() - failures,
        cases.len()
    );
    eprintln!("{summary}");
    assert_eq!(failures, 0, "{summary}");
}
