//! The example functions on fixtures: in-process with the SDK's fixture
//! helper, and as real executables reading stdin and writing stdout.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use krusty_fn::testing::{check_fixture, run_fixture};
use krusty_fn::ResourceList;
use krusty_fn_examples::{configmap_generator, require_limits, set_labels};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

#[test]
fn set_labels_keeps_comments_and_order() {
    check_fixture(&fixture("set-labels"), set_labels::transform).unwrap();
}

#[test]
fn configmap_generator_appends_with_hash_request() {
    check_fixture(
        &fixture("configmap-generator"),
        configmap_generator::generate,
    )
    .unwrap();
}

#[test]
fn require_limits_reports_each_missing_limit() {
    check_fixture(&fixture("require-limits"), require_limits::validate).unwrap();
    let outcome = run_fixture(&fixture("require-limits"), require_limits::validate).unwrap();
    assert_eq!(outcome.exit_code, 1, "error results mean exit code 1");
}

/// The executables speak the wire format: same output as in-process.
#[test]
fn executables_match_in_process_runs() {
    for (bin, dir, f) in [
        (
            env!("CARGO_BIN_EXE_krm-set-labels"),
            "set-labels",
            set_labels::transform as fn(&mut ResourceList) -> Result<(), krusty_fn::FnError>,
        ),
        (
            env!("CARGO_BIN_EXE_krm-configmap-generator"),
            "configmap-generator",
            configmap_generator::generate,
        ),
        (
            env!("CARGO_BIN_EXE_krm-require-limits"),
            "require-limits",
            require_limits::validate,
        ),
    ] {
        let dir = fixture(dir);
        let expected = std::fs::read_to_string(dir.join("expected.yaml")).unwrap();
        let in_process = run_fixture(&dir, f).unwrap();
        assert_eq!(in_process.stdout, expected);
        // Feed the executable the same input list the fixture helper built.
        let input = {
            let text = std::fs::read_to_string(dir.join("input.yaml")).unwrap();
            let docs = krusty_yaml::parse_stream(&text).unwrap();
            let mut list = ResourceList::new(docs.into_iter().filter_map(|d| d.root).collect());
            let config = std::fs::read_to_string(dir.join("fn-config.yaml")).ok();
            list.function_config = config
                .and_then(|c| krusty_yaml::parse_stream(&c).ok())
                .and_then(|d| d.into_iter().find_map(|d| d.root));
            list.to_yaml().unwrap()
        };
        let mut child = Command::new(bin)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert_eq!(String::from_utf8(out.stdout).unwrap(), expected, "{bin}");
        assert_eq!(
            out.status.code(),
            Some(in_process.exit_code.into()),
            "{bin}"
        );
    }
}

#[test]
fn unreadable_input_is_exit_code_one_with_a_message() {
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
