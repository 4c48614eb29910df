//! The examples' KRMFunctionDefinitions (`definitions/*.yaml`): each one
//! parses, its schema reads, its kind is the kind of its fixtures'
//! configs, and the executables built with one print the `--help` and
//! `--doc` in `tests/definitions/` (`KRUSTY_FN_UPDATE=1` rewrites them).

use std::path::{Path, PathBuf};
use std::process::Command;

use krusty_fn::definition::Definition;
use krusty_fn::Schema;

/// Each definition and the executable compiled with it.
const DEFINED: [(&str, &str); 2] = [
    ("set-labels", env!("CARGO_BIN_EXE_krm-set-labels")),
    ("image-policy", env!("CARGO_BIN_EXE_krm-image-policy")),
];

fn crate_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn definition_text(name: &str) -> String {
    let path = crate_dir().join("definitions").join(format!("{name}.yaml"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn every_definition_parses_and_names_its_fixtures_kind() {
    let dir = crate_dir().join("definitions");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("definitions/")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter_map(|n| n.strip_suffix(".yaml").map(str::to_string))
        .collect();
    names.sort();
    assert_eq!(
        names,
        {
            let mut d: Vec<String> = DEFINED.iter().map(|(n, _)| n.to_string()).collect();
            d.sort();
            d
        },
        "every definition is compiled into its executable and tested here"
    );
    for name in names {
        let text = definition_text(&name);
        let def = Definition::parse(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        for v in &def.versions {
            Schema::from_definition(&text, &v.name).unwrap_or_else(|e| panic!("{name}: {e}"));
        }
        // The fixtures' configs are of the kind and apiVersion defined.
        let fixtures = crate_dir().join("tests/fixtures").join(&name);
        for case in std::fs::read_dir(&fixtures).expect("fixtures") {
            let config = case.expect("case").path().join("fn-config.yaml");
            let Ok(config) = std::fs::read_to_string(&config) else {
                continue;
            };
            let config = krusty_fn::parse_object(&config).expect("config");
            let field = |k: &str| config.get(k).and_then(krusty_fn::Node::as_str);
            assert_eq!(field("kind"), Some(def.kind.as_str()), "{name}");
            let api = field("apiVersion").unwrap_or_default().to_string();
            assert!(def.api_versions().contains(&api), "{name}: {api}");
        }
    }
}

/// `program ARGS`: its stdout, stderr and exit code.
fn output(program: &str, args: &[&str]) -> (String, String, i32) {
    let out = Command::new(program)
        .args(args)
        .env_remove("KRM_FUNCTION_HTTP_ADDRESS")
        .env_remove("KRM_FUNCTION_GRPC_ADDRESS")
        .env_remove("KRUSTY_FN_PROTOCOL")
        .output()
        .unwrap_or_else(|e| panic!("{program}: {e}"));
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.code().unwrap_or(-1),
    )
}

/// Compares `actual` with the golden file `tests/definitions/FILE`, or
/// writes it with `KRUSTY_FN_UPDATE=1`.
fn golden(file: &str, actual: &str) {
    let path: PathBuf = crate_dir().join("tests/definitions").join(file);
    if std::env::var("KRUSTY_FN_UPDATE").is_ok_and(|v| v != "0" && !v.is_empty()) {
        std::fs::write(&path, actual).expect("write golden");
        return;
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (KRUSTY_FN_UPDATE=1 writes it)", path.display()));
    assert!(
        expected == actual,
        "{} differs (KRUSTY_FN_UPDATE=1 rewrites it):\n--- expected\n{expected}\n--- actual\n{actual}",
        path.display()
    );
}

#[test]
fn help_and_doc_of_the_defined_executables() {
    for (name, program) in DEFINED {
        let (help, stderr, code) = output(program, &["--help"]);
        assert_eq!((code, stderr.as_str()), (0, ""), "{name} --help");
        golden(&format!("{name}.help.txt"), &help);
        let (doc, stderr, code) = output(program, &["--doc"]);
        assert_eq!((code, stderr.as_str()), (0, ""), "{name} --doc");
        golden(&format!("{name}.doc.txt"), &doc);
        // -h is --help.
        assert_eq!(output(program, &["-h"]).0, help, "{name} -h");
    }
}

#[test]
fn an_executable_without_a_definition_says_so() {
    let program = env!("CARGO_BIN_EXE_krm-require-limits");
    let (help, _, code) = output(program, &["--help"]);
    assert_eq!(code, 0);
    assert!(
        help.starts_with("A KRM function: reads a ResourceList on stdin"),
        "{help}"
    );
    assert!(
        help.contains("krm-require-limits --help | --doc\n"),
        "{help}"
    );
    let (doc, stderr, code) = output(program, &["--doc"]);
    assert_eq!((code, doc.as_str()), (2, ""));
    assert!(
        stderr.starts_with("krm-require-limits: this function has no KRMFunctionDefinition"),
        "{stderr}"
    );
}
