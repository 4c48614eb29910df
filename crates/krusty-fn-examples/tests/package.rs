//! `crates/krusty-fn/scripts/package.sh --protocol v1|v2|both` on the
//! `krm-set-labels` example and its definition, with podman: the image's
//! label lists the chosen specification versions, its entrypoint is
//! `/fn` and its `KRUSTY_FN_PROTOCOL` the chosen protocol; run from stdin
//! (as kpt and Kustomize run it) it answers as the executable does, or,
//! packaged for v2, fails saying it is a server; started with
//! `--http-addr` it serves, or, packaged for v1, fails saying it does not.
//! Given `KRUSTY_BIN` (a built `krusty`), `krusty build` runs each image
//! in the mode its label says. podman reads `.ci/containers.conf` unless
//! `CONTAINERS_CONF` is set; without a working podman the test says so
//! and passes.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const PROGRAM: &str = env!("CARGO_BIN_EXE_krm-set-labels");

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn crate_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// `cli` with the podman settings this machine needs.
fn with_conf(cli: &str) -> Command {
    let mut cmd = Command::new(cli);
    if std::env::var_os("CONTAINERS_CONF").is_none() {
        cmd.env("CONTAINERS_CONF", workspace().join(".ci/containers.conf"));
    }
    cmd
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `podman ARGS`, which must succeed; its stdout.
fn podman(args: &[&str]) -> String {
    let out = with_conf("podman")
        .args(args)
        .output()
        .expect("podman runs");
    assert!(
        out.status.success(),
        "podman {args:?}: {}",
        text(&out.stderr)
    );
    text(&out.stdout)
}

/// `cmd` with `input` on its stdin.
fn fed(cmd: &mut Command, input: &str) -> Output {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("runs");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input.as_bytes())
        .expect("write stdin");
    child.wait_with_output().expect("ends")
}

/// The `with-selector` fixture as one ResourceList.
fn input() -> String {
    let case = crate_dir().join("tests/fixtures/set-labels/with-selector");
    let read = |f: &str| std::fs::read_to_string(case.join(f)).expect("fixture");
    let mut list =
        krusty_fn::ResourceList::new(krusty_fn::parse_objects(&read("input.yaml")).unwrap());
    list.function_config = Some(krusty_fn::parse_object(&read("fn-config.yaml")).unwrap());
    list.to_yaml().unwrap()
}

fn image(protocol: &str) -> String {
    format!("localhost/krusty-test/pkg-set-labels:{protocol}")
}

/// `package.sh ARGS`.
fn package(args: &[&str]) -> Output {
    with_conf(
        workspace()
            .join("crates/krusty-fn/scripts/package.sh")
            .to_str()
            .unwrap(),
    )
    .args(args)
    .output()
    .expect("package.sh runs")
}

#[test]
fn the_protocol_flag_is_checked_before_anything_is_built() {
    let out = package(&["--protocol", "v3", "krm-set-labels", "x"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stderr),
        "package.sh: unknown --protocol 'v3' (expected v1, v2 or both)\n"
    );
    let out = package(&["--protocol=both", "krm-set-labels", "x"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("--protocol both needs --definition"),
        "{}",
        text(&out.stderr)
    );
    let out = package(&["krm-set-labels", "x", "--protocol"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn images_packaged_for_each_protocol_answer_in_that_protocol() {
    if !with_conf("podman")
        .arg("info")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        eprintln!(
            "SKIPPED: podman cannot run containers here: package.sh --protocol is not tested"
        );
        return;
    }
    let definition = crate_dir().join("definitions/set-labels.yaml");
    let input = input();
    let local = fed(&mut Command::new(PROGRAM), &input);
    assert!(local.status.success(), "{}", text(&local.stderr));
    let scratch = std::env::temp_dir().join(format!("krusty-fn-package-{}", std::process::id()));
    for (protocol, specs) in [
        ("v1", vec!["v1"]),
        ("v2", vec!["v2"]),
        ("both", vec!["v2", "v1"]),
    ] {
        let image = image(protocol);
        let out = package(&[
            "--cli",
            "podman",
            "--prebuilt",
            PROGRAM,
            "--definition",
            definition.to_str().unwrap(),
            "--protocol",
            protocol,
            "krm-set-labels",
            &image,
        ]);
        assert!(
            out.status.success(),
            "package.sh --protocol {protocol}: {}",
            text(&out.stderr)
        );

        // The label, the entrypoint and the environment.
        let inspect = podman(&[
            "image",
            "inspect",
            "--format",
            "{{json .Config.Entrypoint}}\n{{json .Config.Env}}\n{{index .Config.Labels \"config.kubernetes.io/function-definition\"}}",
            &image,
        ]);
        let lines: Vec<&str> = inspect.lines().collect();
        assert_eq!(lines[0], r#"["/fn"]"#, "{protocol}");
        let env: Vec<String> = serde_json::from_str(lines[1]).expect("env");
        assert!(
            env.contains(&format!("KRUSTY_FN_PROTOCOL={protocol}")),
            "{protocol}: {env:?}"
        );
        let label: serde_json::Value = serde_json::from_str(lines[2]).expect("label JSON");
        assert_eq!(label["spec"]["names"]["kind"], "SetLabels");
        for version in label["spec"]["versions"].as_array().expect("versions") {
            assert_eq!(
                version["conformWithSpecVersions"],
                serde_json::json!(specs),
                "{protocol}"
            );
        }

        // From stdin, as kpt and Kustomize run it.
        let run = fed(
            with_conf("podman").args([
                "run",
                "--rm",
                "-i",
                "--network",
                "none",
                "--user",
                "nobody",
                &image,
            ]),
            &input,
        );
        if protocol == "v2" {
            assert_eq!(run.status.code(), Some(1), "{protocol} from stdin");
            assert!(
                text(&run.stderr).contains("packaged for KRM function specification v2 only"),
                "{}",
                text(&run.stderr)
            );
        } else {
            assert!(run.status.success(), "{protocol}: {}", text(&run.stderr));
            assert_eq!(text(&run.stdout), text(&local.stdout), "{protocol}");
        }

        // As a server, as krusty starts it.
        let sockets = scratch.join(protocol);
        std::fs::create_dir_all(&sockets).unwrap();
        std::fs::set_permissions(
            &sockets,
            std::os::unix::fs::PermissionsExt::from_mode(0o777),
        )
        .unwrap();
        let name = format!("krusty-test-pkg-{}-{protocol}", std::process::id());
        let mount = format!("{}:/krm-function", sockets.display());
        let serve = [
            "run",
            "--rm",
            "--name",
            &name,
            "--network",
            "none",
            "--user",
            "nobody",
            "-v",
            &mount,
            &image,
            "--http-addr",
            "unix:///krm-function/fn.sock",
        ];
        if protocol == "v1" {
            let out = with_conf("podman").args(serve).output().expect("podman");
            assert_eq!(out.status.code(), Some(1), "v1 as a server");
            assert!(
                text(&out.stderr).contains("packaged for KRM function specification v1 only"),
                "{}",
                text(&out.stderr)
            );
        } else {
            let mut child = with_conf("podman")
                .args(serve)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("podman");
            let socket = sockets.join("fn.sock");
            let started = Instant::now();
            while !socket.exists() && started.elapsed() < Duration::from_secs(60) {
                if let Ok(Some(status)) = child.try_wait() {
                    panic!("{protocol}: the server ended: {status}");
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            let ready = socket.exists();
            let _ = with_conf("podman")
                .args(["rm", "-f", "-t", "0", &name])
                .output();
            let _ = child.wait();
            assert!(ready, "{protocol}: the server made no socket in 60 s");
        }
    }
    match std::env::var("KRUSTY_BIN") {
        Ok(krusty) if !krusty.is_empty() => under_krusty(Path::new(&krusty), &scratch, &local),
        _ => eprintln!("SKIPPED: KRUSTY_BIN is not set: the images are not run by krusty build"),
    }
    let _ = std::fs::remove_dir_all(&scratch);
}

/// `krusty build` of the fixture with each image: it succeeds with the
/// executable's items, so the v2 image (which refuses stdin) ran as a
/// server and the v1 image (which refuses to serve) from stdin, without
/// a fallback warning; `both` ran as a server (its stdin mode refused by
/// `-e KRUSTY_FN_PROTOCOL=v2`).
fn under_krusty(krusty: &Path, scratch: &Path, local: &Output) {
    let case = crate_dir().join("tests/fixtures/set-labels/with-selector");
    let expected = krusty_fn::ResourceList::parse(&text(&local.stdout)).expect("list");
    for (protocol, extra) in [
        ("v1", &[][..]),
        ("v2", &[][..]),
        ("both", &["-e", "KRUSTY_FN_PROTOCOL=v2"][..]),
    ] {
        let dir = scratch.join(format!("tree-{protocol}"));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::copy(case.join("input.yaml"), dir.join("resources.yaml")).unwrap();
        let config = std::fs::read_to_string(case.join("fn-config.yaml")).unwrap();
        let annotation = format!(
            "  annotations:\n    config.kubernetes.io/function: |\n      container:\n        image: {}\n",
            image(protocol)
        );
        let config = config.replacen("metadata:\n", &format!("metadata:\n{annotation}"), 1);
        std::fs::write(dir.join("fn.yaml"), config).unwrap();
        std::fs::write(
            dir.join("kustomization.yaml"),
            "resources:\n- resources.yaml\ntransformers:\n- fn.yaml\n",
        )
        .unwrap();
        let out = with_conf(krusty.to_str().unwrap())
            .args([
                "build",
                "--enable-alpha-plugins",
                "--container-cli",
                "podman",
            ])
            .args(extra)
            .arg(".")
            .current_dir(&dir)
            .output()
            .expect("krusty runs");
        let stderr = text(&out.stderr);
        assert!(out.status.success(), "krusty build, {protocol}: {stderr}");
        assert!(!stderr.contains("Warning"), "{protocol}: {stderr}");
        let built = krusty_fn::parse_objects(&text(&out.stdout)).expect("output");
        let names = |items: &[krusty_fn::Node]| -> Vec<String> {
            items
                .iter()
                .map(|i| {
                    format!(
                        "{}/{} team={:?}",
                        krusty_fn::KubeObject::kind(i),
                        krusty_fn::KubeObject::name(i),
                        krusty_fn::KubeObject::label(i, "team")
                    )
                })
                .collect()
        };
        let mut got = names(&built);
        let mut want = names(&expected.items);
        got.sort();
        want.sort();
        assert_eq!(got, want, "krusty build, {protocol}");
    }
}
