//! The example functions on their golden fixtures
//! (`tests/fixtures/<function>/<case>/`): in process with the SDK's
//! golden runner, and as the built executables reading stdin and writing
//! stdout. `KRUSTY_FN_UPDATE=1` rewrites the expected files.

use std::path::{Path, PathBuf};

use krusty_fn::testing::{golden, golden_exec};
use krusty_fn::{FnError, ResourceList};
use krusty_fn_examples::{
    configmap_generator, image_policy, inject_sidecar, render_template, require_limits,
    set_annotations, set_labels,
};

type Function = fn(&mut ResourceList) -> Result<(), FnError>;

/// Each example: its fixtures directory, its function and its executable.
const EXAMPLES: [(&str, Function, &str); 7] = [
    (
        "configmap-generator",
        configmap_generator::generate,
        env!("CARGO_BIN_EXE_krm-configmap-generator"),
    ),
    (
        "set-labels",
        set_labels::transform,
        env!("CARGO_BIN_EXE_krm-set-labels"),
    ),
    (
        "require-limits",
        require_limits::validate,
        env!("CARGO_BIN_EXE_krm-require-limits"),
    ),
    (
        "inject-sidecar",
        inject_sidecar::inject,
        env!("CARGO_BIN_EXE_krm-inject-sidecar"),
    ),
    (
        "render-template",
        render_template::generate,
        env!("CARGO_BIN_EXE_krm-render-template"),
    ),
    (
        "image-policy",
        image_policy::validate,
        env!("CARGO_BIN_EXE_krm-image-policy"),
    ),
    (
        "set-annotations",
        set_annotations::transform,
        env!("CARGO_BIN_EXE_krm-set-annotations"),
    ),
];

fn fixtures(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

#[test]
fn every_example_matches_its_golden_fixtures_in_process() {
    let failures: Vec<String> = EXAMPLES
        .iter()
        .filter_map(|(dir, f, _)| golden(&fixtures(dir), f).err())
        .map(|e| e.to_string())
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The executables speak the wire format: the same output and exit code
/// as in process.
#[test]
fn every_executable_matches_the_same_golden_fixtures() {
    if std::env::var_os("KRUSTY_FN_UPDATE").is_some() {
        return; // the in-process run writes them
    }
    let failures: Vec<String> = EXAMPLES
        .iter()
        .filter_map(|(dir, _, bin)| golden_exec(&fixtures(dir), Path::new(bin)).err())
        .map(|e| e.to_string())
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn unreadable_input_is_exit_code_one_with_a_message() {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_krm-set-labels"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(b"kind: [").unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("reading the input ResourceList"));
}
