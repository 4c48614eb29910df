//! Golden output tests: each folder of `crates/krusty-yaml/tests/golden` holds
//! an `input.yaml` and the exact output `kubectl kustomize` printed for it
//! (`expected.yaml`), or its error (`expected_error.txt`: krusty must fail too).
//! A case with a `known-difference` file documents output krusty does not
//! reproduce yet; it is listed on stderr, not compared.

mod support;

use std::path::{Path, PathBuf};

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../krusty-yaml/tests/golden")
}

#[test]
fn output_matches_kubectl_kustomize_golden_files() {
    let mut cases: Vec<PathBuf> = std::fs::read_dir(golden_dir())
        .expect("golden dir exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("input.yaml").is_file())
        .collect();
    cases.sort();
    assert!(!cases.is_empty(), "no golden cases found");
    let work = Path::new(env!("CARGO_TARGET_TMPDIR")).join("golden");
    let mut failures = Vec::new();
    for case in &cases {
        let name = case
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        if case.join("known-difference").is_file() {
            eprintln!("KNOWN DIFFERENCE, not compared: {name} (see its known-difference file)");
            continue;
        }
        let dir = work.join(&name);
        std::fs::create_dir_all(&dir).expect("work dir");
        std::fs::copy(case.join("input.yaml"), dir.join("input.yaml")).expect("copy input");
        std::fs::write(dir.join("kustomization.yaml"), "resources:\n- input.yaml\n")
            .expect("write kustomization");
        let out = support::krusty_command()
            .arg("build")
            .arg(&dir)
            .output()
            .expect("krusty runs");
        let expected = case.join("expected.yaml");
        if expected.is_file() {
            let want = std::fs::read(&expected).expect("read expected");
            if !out.status.success() {
                failures.push(format!(
                    "{name}: failed: {}",
                    String::from_utf8_lossy(&out.stderr).trim()
                ));
            } else if out.stdout != want {
                failures.push(format!(
                    "{name}: output differs\n--- expected\n{}\n--- actual\n{}",
                    String::from_utf8_lossy(&want),
                    String::from_utf8_lossy(&out.stdout)
                ));
            }
        } else if out.status.success() {
            failures.push(format!("{name}: expected an error, got success"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} golden cases fail:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n\n")
    );
}
