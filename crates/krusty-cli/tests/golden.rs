//! Golden output tests: each folder of `crates/krusty-yaml/tests/golden` holds
//! an `input.yaml` and the exact output `kubectl kustomize` printed for it
//! (`expected.yaml`), or, where kubectl refused it, kubectl's message
//! (`kubectl_error.txt`, for reference): krusty must fail too.
//! A case with a `known-difference` file documents output krusty does not
//! reproduce yet; it is listed on stderr, not compared.

mod support;

use std::path::Path;

use support::Expected;

#[test]
fn output_matches_kubectl_kustomize_golden_files() {
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("../krusty-yaml/tests/golden");
    let cases = support::cases(&golden);
    let work = Path::new(env!("CARGO_TARGET_TMPDIR")).join("golden");
    let mut failures = Vec::new();
    for case in &cases {
        let name = &case.name;
        if case.path("known-difference").is_file() {
            eprintln!("KNOWN DIFFERENCE, not compared: {name} (see its known-difference file)");
            continue;
        }
        let want = match case.expected() {
            Some(want) => want,
            None if case.path("kubectl_error.txt").is_file() => {
                // kubectl's message is not krusty's: any failure will do.
                Expected::Error(support::ExpectedError::parse(""))
            }
            None => {
                failures.push(format!("{name}: no expected.yaml nor kubectl_error.txt"));
                continue;
            }
        };
        let dir = work.join(name);
        std::fs::create_dir_all(&dir).expect("work dir");
        std::fs::copy(case.path("input.yaml"), dir.join("input.yaml")).expect("copy input");
        std::fs::write(dir.join("kustomization.yaml"), "resources:\n- input.yaml\n")
            .expect("write kustomization");
        let out = support::krusty_command()
            .arg("build")
            .arg(&dir)
            .output()
            .expect("krusty runs");
        if let Err(why) = want.check(&out) {
            failures.push(format!("{name}: {why}"));
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
