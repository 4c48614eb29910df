//! The habits of the command line: every subcommand's `--help` ends with
//! examples that parse, shell completion scripts and manual pages made
//! from the same definitions, `krusty install`, `build --timings`, and
//! the progress line that only a terminal sees.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

mod support;
use support::{available, skip, text, write};

fn scratch(name: &str) -> PathBuf {
    support::scratch("usability", name)
}

fn krusty(args: &[&str], cwd: &Path) -> Output {
    support::krusty_output(cwd, args)
}

fn ok(out: &Output) -> String {
    assert!(out.status.success(), "{}", text(&out.stderr));
    text(&out.stdout)
}

/// The subcommand paths below `krusty` (`["edit", "set", "image"]`), read
/// from the commands `--help` lists, recursively.
fn subcommands(path: &[String], cwd: &Path) -> Vec<Vec<String>> {
    let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
    args.push("--help");
    let help = ok(&krusty(&args, cwd));
    let mut found = Vec::new();
    let Some(start) = help.find("\nCommands:\n") else {
        return found;
    };
    for line in help[start + "\nCommands:\n".len()..].lines() {
        if !line.starts_with("  ") {
            break;
        }
        let name = line.split_whitespace().next().unwrap_or_default();
        if name.is_empty() || name == "help" {
            continue;
        }
        let mut sub = path.to_vec();
        sub.push(name.trim_end_matches(',').to_string());
        found.push(sub.clone());
        found.extend(subcommands(&sub, cwd));
    }
    found
}

/// Splits an example line as a shell would, up to a redirection or pipe
/// (quotes group words; `$VAR` and `~` are left as they are).
fn words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quote = None;
    let mut started = false;
    for c in line.chars() {
        match (quote, c) {
            (None, '\'' | '"') => {
                quote = Some(c);
                started = true;
            }
            (Some(q), c) if c == q => quote = None,
            (None, ' ') => {
                if started {
                    words.push(std::mem::take(&mut word));
                    started = false;
                }
            }
            (None, '>' | '|') => break,
            (_, c) => {
                word.push(c);
                started = true;
            }
        }
    }
    if started {
        words.push(word);
    }
    words
}

#[test]
fn every_subcommand_has_examples_and_each_example_parses() {
    let dir = scratch("examples");
    let all = subcommands(&[], &dir);
    assert!(all.len() > 50, "too few subcommands found: {all:?}");
    for path in &all {
        let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
        args.push("--help");
        let help = ok(&krusty(&args, &dir));
        let examples = help
            .split_once("\nExamples:\n")
            .map(|(_, e)| e)
            .unwrap_or_else(|| panic!("`krusty {}` has no examples:\n{help}", path.join(" ")));
        let lines: Vec<&str> = examples
            .lines()
            .take_while(|l| l.starts_with("  "))
            .collect();
        assert!(
            !lines.is_empty(),
            "`krusty {}`: empty examples",
            path.join(" ")
        );
        for line in lines {
            let line = line.trim();
            let words = words(line);
            assert_eq!(words[0], "krusty", "{line}");
            for (i, word) in path.iter().enumerate() {
                assert_eq!(
                    &words[i + 1],
                    word,
                    "`{line}` is not an example of `{}`",
                    path.join(" ")
                );
            }
            // The example's flags and arguments parse: clap's usage errors
            // exit with 2 and say "error:"; a run may fail otherwise
            // (there is no such folder here), never on its syntax.
            // `--help` goes before a `--`, after which all is values.
            let mut check: Vec<String> = words[1..].to_vec();
            let at = check.iter().position(|w| w == "--").unwrap_or(check.len());
            check.insert(at, "--help".to_string());
            let argv: Vec<&str> = check.iter().map(String::as_str).collect();
            let out = krusty(&argv, &dir);
            assert!(
                out.status.success(),
                "`{line}` does not parse:\n{}",
                text(&out.stderr)
            );
        }
    }
}

#[test]
fn completion_scripts_name_the_subcommands_and_their_flags() {
    let dir = scratch("completion");
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let script = ok(&krusty(&["completion", shell], &dir));
        // fish writes a long flag without its dashes (`-l timings`).
        for word in [
            "build",
            "edit",
            "nameprefix",
            "enable-helm",
            "timings",
            "diff",
        ] {
            assert!(script.contains(word), "{shell} script lacks {word}");
        }
    }
    if available("bash", &["--version"]) {
        let script = ok(&krusty(&["completion", "bash"], &dir));
        write(&dir, "krusty.bash", &script);
        // Loads, and completes a subcommand's flag as bash would.
        let out = Command::new("bash")
            .arg("-c")
            .arg(
                "source ./krusty.bash && COMP_WORDS=(krusty build --enable-he) COMP_CWORD=2 \
                 && _krusty krusty --enable-he build && printf '%s\\n' \"${COMPREPLY[@]}\"",
            )
            .current_dir(&dir)
            .output()
            .expect("bash runs");
        assert!(
            text(&out.stdout).lines().any(|l| l == "--enable-helm"),
            "{}{}",
            text(&out.stdout),
            text(&out.stderr)
        );
    }
    let out = krusty(&["completion", "tcsh"], &dir);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
}

#[test]
fn manual_pages_cover_every_subcommand_with_its_examples() {
    let dir = scratch("man");
    let page = ok(&krusty(&["man"], &dir));
    assert!(
        page.starts_with(".ie") || page.contains(".TH krusty 1"),
        "{page}"
    );
    assert!(page.contains("build") && page.contains("targets"), "{page}");
    std::fs::create_dir_all(dir.join("man1")).expect("mkdir");
    ok(&krusty(&["man", "--dir", "man1"], &dir));
    let names: Vec<String> = std::fs::read_dir(dir.join("man1"))
        .expect("read man1")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    let all = subcommands(&[], &dir);
    assert_eq!(names.len(), all.len() + 1, "{names:?}");
    for path in &all {
        let name = format!("krusty-{}.1", path.join("-"));
        assert!(names.contains(&name), "{name} missing from {names:?}");
    }
    let image = std::fs::read_to_string(dir.join("man1/krusty-edit-set-image.1")).expect("page");
    assert!(image.contains(".TH krusty-edit-set-image 1"), "{image}");
    assert!(image.contains("\\fBkrusty edit set image\\fR"), "{image}");
    assert!(
        image.contains("nginx=nginx:1.27"),
        "the page lacks the examples:\n{image}"
    );
    if available("man", &["--version"]) {
        let out = Command::new("man")
            .args(["-l", "man1/krusty-build.1"])
            .env("MANPAGER", "cat")
            .env("MANWIDTH", "100")
            .current_dir(&dir)
            .output()
            .expect("man runs");
        assert!(
            text(&out.stdout).contains("--enable-helm"),
            "{}",
            text(&out.stderr)
        );
    }
    let out = krusty(&["man", "--dir", "missing"], &dir);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("missing/krusty.1"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn install_copies_the_programs_and_replaces_a_link_without_following_it() {
    let dir = scratch("install");
    let tools = dir.join("tools");
    std::fs::create_dir_all(&tools).expect("mkdir");
    // A link already where the copy goes is replaced; its target is untouched.
    write(&dir, "victim", "keep me\n");
    std::os::unix::fs::symlink(dir.join("victim"), tools.join("kustomize")).expect("link");
    let out = krusty(&["install", "--name", "kustomize", "tools"], &dir);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        std::fs::read_to_string(dir.join("victim")).expect("victim"),
        "keep me\n"
    );
    let copy = tools.join("kustomize");
    assert!(!copy.is_symlink());
    assert_eq!(
        std::fs::read(&copy).expect("copy"),
        std::fs::read(support::KRUSTY).expect("krusty")
    );
    let beside = Path::new(support::KRUSTY).with_file_name("krusty-starlark");
    assert_eq!(tools.join("krusty-starlark").is_file(), beside.is_file());
    // The copy answers as kustomize.
    let version = Command::new(&copy).arg("version").output().expect("runs");
    assert!(
        text(&version.stdout).starts_with("v5.8.1"),
        "{}",
        text(&version.stdout)
    );
    for bad in ["", "a/b", ".."] {
        let out = krusty(&["install", "--name", bad, "tools"], &dir);
        assert!(!out.status.success(), "--name {bad:?} was taken");
    }
    let out = krusty(&["install", "nowhere"], &dir);
    assert!(
        text(&out.stderr).contains("nowhere is not a directory"),
        "{}",
        text(&out.stderr)
    );
}

/// A tree with a base, an overlay, a generator and a patch.
fn timed_tree(dir: &Path) {
    write(
        dir,
        "base/kustomization.yaml",
        "resources:\n- deploy.yaml\nconfigMapGenerator:\n- name: settings\n  literals: [a=b]\n",
    );
    write(
        dir,
        "base/deploy.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n      containers:\n      - name: web\n        image: nginx\n        envFrom:\n        - configMapRef:\n            name: settings\n",
    );
    write(
        dir,
        "overlay/kustomization.yaml",
        "resources:\n- ../base\nnamePrefix: prod-\npatches:\n- target: {kind: Deployment}\n  patch: |\n    - op: add\n      path: /spec/replicas\n      value: 3\n",
    );
}

#[test]
fn timings_name_every_stage_and_target_without_changing_the_output() {
    let dir = scratch("timings");
    timed_tree(&dir);
    let plain = krusty(&["build", "overlay"], &dir);
    let timed = krusty(&["build", "--timings", "overlay"], &dir);
    assert_eq!(ok(&plain), ok(&timed));
    assert!(text(&plain.stderr).is_empty(), "{}", text(&plain.stderr));
    let report = text(&timed.stderr);
    assert!(
        report.starts_with("build: ") && report.contains(" ms wall time\n"),
        "{report}"
    );
    let row = |table: &str, name: &str| {
        let start = report
            .find(&format!("\n{table} "))
            .unwrap_or_else(|| panic!("no {table} table:\n{report}"));
        report[start + 1..]
            .lines()
            .skip(1)
            .take_while(|l| !l.starts_with("target ") || table == "target")
            .find(|l| l.starts_with(&format!("{name} ")))
            .map(str::to_string)
            .unwrap_or_else(|| panic!("no {name} row in the {table} table:\n{report}"))
    };
    for stage in [
        "read kustomization",
        "read resources",
        "generator ConfigMapGenerator",
        "transformer PatchTransformer",
        "transformer PrefixTransformer",
        "finish: hash suffixes",
        "finish: name references",
        "write output",
    ] {
        let line = row("stage", stage);
        assert!(line.contains(" ms ") && line.contains('%'), "{line}");
    }
    // Two kustomizations read: the count says so.
    assert!(
        row("stage", "read kustomization")
            .trim_end()
            .ends_with(" 2"),
        "{report}"
    );
    row("target", ".");
    row("target", "../base");
    // Several targets: the folders are shown from the current directory.
    std::fs::create_dir_all(dir.join("out")).expect("mkdir");
    let both = krusty(
        &["build", "--timings", "base", "overlay", "-o", "out"],
        &dir,
    );
    assert!(both.status.success(), "{}", text(&both.stderr));
    assert!(
        text(&both.stderr).contains("\nbase "),
        "{}",
        text(&both.stderr)
    );
    assert!(
        text(&both.stderr).contains("\noverlay "),
        "{}",
        text(&both.stderr)
    );
    let out = krusty(
        &[
            "build",
            "--timings",
            "--compare-versions",
            "v5.5.0,v5.8.1",
            "overlay",
        ],
        &dir,
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
}

/// Serves one file over HTTP on loopback, slowly: its length first, then
/// its bytes in pieces a while apart; returns the URL.
fn slow_server(body: String, pieces: usize, pause: Duration) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut request = [0u8; 4096];
            let _ = stream.read(&mut request);
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = stream.write_all(head.as_bytes());
            let bytes = body.as_bytes();
            let size = bytes.len().div_ceil(pieces);
            for piece in bytes.chunks(size) {
                let _ = stream.write_all(piece);
                let _ = stream.flush();
                std::thread::sleep(pause);
            }
        }
    });
    format!("http://127.0.0.1:{port}/remote.yaml")
}

#[test]
fn a_terminal_sees_how_far_a_download_is_and_a_pipe_sees_nothing() {
    let dir = scratch("progress");
    let padding = "x".repeat(64 << 10);
    let body = format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: remote\ndata:\n  pad: {padding}\n"
    );
    let url = slow_server(body, 5, Duration::from_millis(300));
    write(
        &dir,
        "k/kustomization.yaml",
        &format!("resources:\n- {url}\n"),
    );
    let cache = dir.join("cache");
    // Through a pipe: the output alone, nothing on stderr.
    let piped = support::krusty_command()
        .args(["build", "k"])
        .env("KRUSTY_CACHE_DIR", &cache)
        .current_dir(&dir)
        .output()
        .expect("krusty runs");
    assert!(piped.status.success(), "{}", text(&piped.stderr));
    assert!(text(&piped.stderr).is_empty(), "{:?}", text(&piped.stderr));
    if !available("script", &["--version"]) {
        return skip("script (util-linux) is missing: the terminal's progress line is not tested");
    }
    // On a terminal (script gives krusty one): the line names the URL and
    // how much of it has arrived, then is erased.
    let command = format!(
        "{} build k > out.yaml",
        Path::new(support::KRUSTY).display()
    );
    let tty = Command::new("script")
        .args(["-qfec", &command, "/dev/null"])
        .env("KRUSTY_CACHE_DIR", &cache)
        .current_dir(&dir)
        .output()
        .expect("script runs");
    assert!(tty.status.success(), "{}", text(&tty.stderr));
    let seen = text(&tty.stdout);
    assert!(seen.contains(&format!("Fetching {url}")), "{seen:?}");
    assert!(
        seen.contains(" KiB of ") && seen.contains("(100%)"),
        "{seen:?}"
    );
    assert!(
        seen.ends_with("\r\x1b[2K"),
        "the line is not erased: {seen:?}"
    );
    assert_eq!(
        std::fs::read(dir.join("out.yaml")).expect("output"),
        piped.stdout,
        "the output differs on a terminal"
    );
}
