//! The krusty-fn example functions under three orchestrators, on their
//! golden fixtures (`crates/krusty-fn-examples/tests/fixtures/<fn>/<case>`):
//! the items a fixture expects are the items `krusty build` (exec
//! functions), `kpt fn eval --exec` and `kubectl kustomize
//! --enable-alpha-plugins` (the function packaged as an image by
//! `crates/krusty-fn/scripts/package.sh`, run by podman through a docker
//! shim) produce from the fixture's input and config. Tests that need
//! kpt, kubectl or podman say so loudly and skip when it is missing.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod support;
use support::examples::{example, fixture, read};
use support::podman::{docker_shim, kubectl_kustomize, with_podman_conf};
use support::{available, normalized_items, skip, text, write};

/// What a function does in a kustomization.
#[derive(Clone, Copy, PartialEq)]
enum Role {
    Generator,
    Transformer,
    Validator,
}

/// Each example: its executable, the fixture case run everywhere, and its role.
const EXAMPLES: [(&str, &str, Role); 7] = [
    (
        "krm-configmap-generator",
        "configmap-generator/plain",
        Role::Generator,
    ),
    (
        "krm-set-labels",
        "set-labels/with-selector",
        Role::Transformer,
    ),
    (
        "krm-inject-sidecar",
        "inject-sidecar/basic",
        Role::Transformer,
    ),
    (
        "krm-render-template",
        "render-template/basic",
        Role::Generator,
    ),
    (
        "krm-render-template",
        "render-template/patch",
        Role::Transformer,
    ),
    ("krm-image-policy", "image-policy/clean", Role::Validator),
    (
        "krm-set-annotations",
        "set-annotations/basic",
        Role::Transformer,
    ),
];

fn scratch(name: &str) -> PathBuf {
    support::scratch("sdk-examples", name)
}

/// The fixture's config with `runtime` (YAML for the
/// `config.kubernetes.io/function` annotation) added to its metadata.
fn annotated_config(case: &str, runtime: &str) -> String {
    let config = read(&fixture(case).join("fn-config.yaml"));
    let runtime: String = runtime.lines().map(|l| format!("      {l}\n")).collect();
    let annotation = format!("  annotations:\n    config.kubernetes.io/function: |\n{runtime}");
    // Every fixture config has `metadata:` followed by `  name: …`.
    let (head, rest) = config.split_once("metadata:\n").expect("metadata");
    let (name_line, tail) = rest.split_once('\n').expect("name line");
    format!("{head}metadata:\n{name_line}\n{annotation}{tail}")
}

/// A kustomization in `dir` over the fixture's input, with the function
/// declared (with `runtime`) in its role; `validator_as` names the field
/// a validator is listed under.
fn kustomization(dir: &Path, case: &str, role: Role, runtime: &str, validator_as: &str) {
    write(
        dir,
        "resources.yaml",
        &read(&fixture(case).join("input.yaml")),
    );
    write(dir, "fn.yaml", &annotated_config(case, runtime));
    let field = match role {
        Role::Generator => "generators",
        Role::Transformer => "transformers",
        Role::Validator => validator_as,
    };
    write(
        dir,
        "kustomization.yaml",
        &format!("resources:\n- resources.yaml\n{field}:\n- fn.yaml\n"),
    );
}

fn expected_items(case: &str) -> Vec<String> {
    normalized_items(&read(&fixture(case).join("expected.yaml")))
}

fn krusty(args: &[&str], cwd: &Path) -> Output {
    with_podman_conf(support::krusty_command())
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("krusty runs")
}

/// `krusty build --enable-exec` in `dir` of the fixture `case` with the
/// example `bin`, copied into `dir`, as an exec function in `role`.
fn krusty_exec(dir: &Path, bin: &str, case: &str, role: Role) -> Output {
    std::fs::copy(example(bin), dir.join(bin)).expect("copy function");
    kustomization(
        dir,
        case,
        role,
        &format!("exec:\n  path: ./{bin}\n"),
        "validators",
    );
    krusty(
        &["build", "--enable-alpha-plugins", "--enable-exec", "."],
        dir,
    )
}

#[test]
fn examples_under_krusty_as_exec_functions_give_the_golden_items() {
    for (bin, case, role) in EXAMPLES {
        let dir = scratch(&format!("exec-{bin}"));
        let out = krusty_exec(&dir, bin, case, role);
        assert!(out.status.success(), "{bin}: {}", text(&out.stderr));
        assert_eq!(
            normalized_items(&text(&out.stdout)),
            expected_items(case),
            "{bin} ({case}): krusty's items differ from the fixture's"
        );
    }
}

#[test]
fn a_validator_error_names_the_field_under_krusty() {
    let (bin, case) = ("krm-image-policy", "image-policy/violations");
    let dir = scratch("exec-violations");
    let out = krusty_exec(&dir, bin, case, Role::Validator);
    let err = text(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("[error] apps/v1/StatefulSet/db field=spec.template.spec.containers[name=postgres].image: image 'postgres:latest' uses the latest tag"),
        "{err}"
    );
}

/// `kpt fn eval pkg --exec` in `dir` of the example `bin` with the
/// fixture's config, on the fixture's input (written to `dir/pkg`), the
/// items printed.
fn kpt_eval(dir: &Path, bin: &str, case: &str) -> Output {
    write(
        dir,
        "pkg/resources.yaml",
        &read(&fixture(case).join("input.yaml")),
    );
    Command::new("kpt")
        .args(["fn", "eval", "pkg", "--exec"])
        .arg(example(bin))
        .arg("--fn-config")
        .arg(fixture(case).join("fn-config.yaml"))
        .args(["-o", "stdout"])
        .current_dir(dir)
        .output()
        .expect("kpt runs")
}

#[test]
fn examples_under_kpt_fn_eval_exec_give_the_golden_items() {
    if !available("kpt", &["version"]) {
        return skip("kpt is not installed: the examples do not run under kpt");
    }
    for (bin, case, _) in EXAMPLES {
        let dir = scratch(&format!("kpt-{bin}"));
        let out = kpt_eval(&dir, bin, case);
        assert!(out.status.success(), "{bin}: {}", text(&out.stderr));
        assert_eq!(
            normalized_items(&text(&out.stdout)),
            expected_items(case),
            "{bin} ({case}): kpt's items differ from the fixture's"
        );
    }
    // A validator's error result fails kpt too.
    let dir = scratch("kpt-violations");
    let case = "image-policy/violations";
    let out = kpt_eval(&dir, "krm-image-policy", case);
    assert!(!out.status.success(), "{}", text(&out.stdout));
    assert!(
        text(&out.stderr).contains("uses the latest tag"),
        "{}",
        text(&out.stderr)
    );
}

/// Packages `bin` as `image` with the SDK's packaging script.
fn package(bin: &str, image: &str, definition: Option<&Path>) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../krusty-fn/scripts/package.sh");
    let mut cmd = with_podman_conf(Command::new(script));
    cmd.arg("--prebuilt")
        .arg(example(bin))
        .args(["--cli", "podman"]);
    if let Some(d) = definition {
        cmd.arg("--definition").arg(d);
    }
    let out = cmd.arg(bin).arg(image).output().expect("package.sh runs");
    assert!(
        out.status.success(),
        "package.sh {bin}: {}",
        text(&out.stderr)
    );
}

fn image_of(bin: &str) -> String {
    format!("localhost/krusty-test/sdk-{bin}:v1")
}

fn container_runtime(bin: &str) -> String {
    format!("container:\n  image: {}\n", image_of(bin))
}

#[test]
fn examples_as_images_under_kubectl_kustomize_and_krusty_give_the_golden_items() {
    if !available("podman", &["info"]) {
        return skip("podman cannot run containers here: the example images are not tested");
    }
    let dir = scratch("images");
    let definition = dir.join("definition.yaml");
    write(
        &dir,
        "definition.yaml",
        "apiVersion: config.kubernetes.io/v1alpha1\nkind: KRMFunctionDefinition\nmetadata:\n  name: sidecarinjectors.fn.krusty.dev\nspec:\n  group: fn.krusty.dev\n  names: {kind: SidecarInjector}\n  description: Injects a sidecar container into selected workloads.\n",
    );
    for (bin, _, _) in EXAMPLES {
        let with_definition = (bin == "krm-inject-sidecar").then_some(definition.as_path());
        package(bin, &image_of(bin), with_definition);
    }
    // The definition is the image's label, as one line of JSON.
    let inspect = with_podman_conf(Command::new("podman"))
        .args([
            "image",
            "inspect",
            "--format",
            "{{index .Labels \"config.kubernetes.io/function-definition\"}}",
        ])
        .arg(image_of("krm-inject-sidecar"))
        .output()
        .expect("podman inspect");
    assert_eq!(
        text(&inspect.stdout).trim(),
        r#"{"apiVersion":"config.kubernetes.io/v1alpha1","kind":"KRMFunctionDefinition","metadata":{"name":"sidecarinjectors.fn.krusty.dev"},"spec":{"description":"Injects a sidecar container into selected workloads.","group":"fn.krusty.dev","names":{"kind":"SidecarInjector"}}}"#
    );

    let kubectl = available("kubectl", &["version", "--client"]);
    if !kubectl {
        skip("kubectl is not installed: the example images run under krusty only");
    }
    let shim = docker_shim(&dir);
    for (bin, case, role) in EXAMPLES {
        let expected = expected_items(case);
        let tree = dir.join(bin);
        // krusty runs the image as a container function.
        kustomization(&tree, case, role, &container_runtime(bin), "validators");
        let out = krusty(
            &[
                "build",
                "--enable-alpha-plugins",
                "--container-cli",
                "podman",
                ".",
            ],
            &tree,
        );
        assert!(out.status.success(), "{bin}: {}", text(&out.stderr));
        assert_eq!(
            normalized_items(&text(&out.stdout)),
            expected,
            "{bin} ({case}) under krusty"
        );
        if !kubectl {
            continue;
        }
        // Kustomize v5.5.0 rejects every function validator ("nodes
        // unequal"), so a validator runs there as a transformer.
        kustomization(&tree, case, role, &container_runtime(bin), "transformers");
        let out = kubectl_kustomize(&tree, &shim);
        assert!(out.status.success(), "{bin}: {}", text(&out.stderr));
        assert_eq!(
            normalized_items(&text(&out.stdout)),
            expected,
            "{bin} ({case}) under kubectl kustomize"
        );
    }
    if kubectl {
        // An error result fails Kustomize's build through the exit code.
        let tree = dir.join("violations");
        let case = "image-policy/violations";
        kustomization(
            &tree,
            case,
            Role::Validator,
            &container_runtime("krm-image-policy"),
            "transformers",
        );
        let out = kubectl_kustomize(&tree, &shim);
        assert!(!out.status.success(), "{}", text(&out.stdout));
    }
}
