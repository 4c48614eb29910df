//! The embeddable library (`krusty-api`): builds of different trees run
//! at once on threads of one process give what separate `krusty build`
//! runs print (and what `kubectl kustomize` printed for them).

mod support;

use std::path::{Path, PathBuf};

const TESTS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests");

/// Eight corpus cases that build, spread over the corpora, as
/// (directory to build, kubectl's output).
fn eight_trees() -> Vec<(PathBuf, String)> {
    let mut cases: Vec<PathBuf> = ["builtins", "patches", "replacements", "components"]
        .iter()
        .flat_map(|corpus| support::cases(&Path::new(TESTS).join(corpus)))
        .map(|case| case.dir)
        .filter(|p| p.join("expected.yaml").is_file() && !p.join("target").exists())
        .collect();
    cases.sort();
    let step = cases.len() / 8;
    assert!(step > 0, "too few cases");
    cases
        .iter()
        .step_by(step)
        .take(8)
        .map(|case| {
            let expected = std::fs::read_to_string(case.join("expected.yaml")).expect("expected");
            (case.join("in"), expected)
        })
        .collect()
}

/// What a separate `krusty build` run prints.
fn separate_run(dir: &Path) -> String {
    let out = support::krusty_command()
        .arg("build")
        .arg(dir)
        .output()
        .expect("krusty runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8")
}

#[test]
fn eight_builds_in_parallel_in_one_process_match_eight_separate_runs() {
    let trees = eight_trees();
    let separate: Vec<String> = trees.iter().map(|(dir, _)| separate_run(dir)).collect();
    for ((dir, expected), printed) in trees.iter().zip(&separate) {
        assert_eq!(printed, expected, "{}", dir.display());
    }
    // Several rounds, each with all eight builds started together.
    for _ in 0..4 {
        let barrier = std::sync::Barrier::new(trees.len());
        let together: Vec<String> = std::thread::scope(|s| {
            let handles: Vec<_> = trees
                .iter()
                .map(|(dir, _)| {
                    let barrier = &barrier;
                    s.spawn(move || {
                        barrier.wait();
                        krusty_api::build_yaml(dir, &krusty_api::Options::default())
                            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("no panic"))
                .collect()
        });
        assert_eq!(together, separate);
    }
}

#[test]
fn resources_and_warnings_come_back_as_values() {
    let dir = Path::new(TESTS).join("edit/_app/overlays/prod");
    let build = krusty_api::build(&dir, &krusty_api::Options::default()).expect("builds");
    let names: Vec<String> = build
        .resources()
        .iter()
        .map(|r| r.id().name.to_string())
        .collect();
    assert_eq!(names, ["prod-web", "prod-web", "prod-db"]);
    assert!(
        build.warnings().iter().any(|w| w.contains("commonLabels")),
        "{:?}",
        build.warnings()
    );
    let err = krusty_api::build(
        Path::new(TESTS).join("edit/_app/components"),
        &krusty_api::Options::default(),
    )
    .expect_err("no kustomization");
    assert!(err.to_string().contains("unable to find one of"), "{err}");
}
