//! A base taken from a `BaseCache` is what building it again gives: every
//! case of the corpora (and the GitOps fixtures' targets) builds with one
//! cache shared by the whole corpus, twice (the second time from the
//! cache), and must print the same bytes and warnings, or fail with the
//! same error, as a build without a cache; so must the shared conformance
//! cases (`../shared/conformance`) when they are beside the repository.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use krusty_api::{BaseCache, BuildRequest, Engine, KustomizeVersion, Options};

mod support;

/// What a build gives: its output and warnings, or its error.
fn outcome(
    built: Result<krusty_api::Build, krusty_api::Error>,
) -> Result<(String, Vec<String>), String> {
    match built {
        Ok(build) => {
            let yaml = build.to_yaml().map_err(|e| e.to_string())?;
            Ok((yaml, build.warnings().to_vec()))
        }
        Err(e) => Err(e.to_string()),
    }
}

/// The targets of a corpus: each case's `in` folder (or the folder its
/// `target` file names).
fn targets(corpus: &Path) -> Vec<PathBuf> {
    support::cases(corpus)
        .into_iter()
        .map(|case| (case.path(&case.target()), case.path("target").is_file()))
        .filter(|(target, named)| *named || target.is_dir())
        .map(|(target, _)| target)
        .collect()
}

fn check_corpus(name: &str, dirs: &[PathBuf]) -> usize {
    let engine = Engine::new(Options {
        kustomize_version: KustomizeVersion::V5_8_1,
        ..Options::default()
    });
    let cache = Arc::new(BaseCache::default());
    let cached = BuildRequest {
        base_cache: Some(Arc::clone(&cache)),
        ..BuildRequest::default()
    };
    let mut failures = Vec::new();
    for round in 0..2 {
        for dir in dirs {
            let plain = outcome(engine.build(dir));
            let shared = outcome(engine.build_with(dir, &cached).0);
            if plain != shared {
                failures.push(format!(
                    "{} (round {round}):\n{}",
                    dir.display(),
                    describe(&plain, &shared)
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{name}: a cached base changed a build:\n{}",
        failures.join("\n")
    );
    cache.len()
}

fn describe(
    plain: &Result<(String, Vec<String>), String>,
    shared: &Result<(String, Vec<String>), String>,
) -> String {
    match (plain, shared) {
        (Ok((a, wa)), Ok((b, wb))) if a == b => format!("warnings {wa:?} != {wb:?}"),
        (Ok((a, _)), Ok((b, _))) => support::diff(a, b),
        (a, b) => format!("{a:?}\n!=\n{b:?}"),
    }
}

#[test]
fn cached_bases_build_as_fresh_ones_in_every_corpus() {
    let tests = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let mut kept = 0;
    for corpus in [
        "builtins",
        "patches",
        "replacements",
        "components",
        "compositions",
        "bad-input",
    ] {
        kept += check_corpus(corpus, &targets(&tests.join(corpus)));
    }
    let mut gitops = Vec::new();
    for kind in ["flux", "argocd"] {
        for fixture in support::cases(&tests.join("gitops").join(kind)) {
            let tree = fixture.path("tree");
            for line in std::fs::read_to_string(tree.parent().unwrap().join("targets.txt"))
                .unwrap()
                .lines()
            {
                gitops.push(tree.join(line));
            }
        }
    }
    kept += check_corpus("gitops", &gitops);
    assert!(
        kept > 50,
        "only {kept} bases were cached: the cache is not exercised"
    );
    let cases = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/conformance/cases");
    if cases.is_dir() {
        check_corpus("conformance", &targets(&cases));
    } else {
        support::skip("the shared conformance cases are not beside the repository");
    }
}
