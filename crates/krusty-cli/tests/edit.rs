//! `krusty edit`: each case under `tests/edit/` copies an app (the shared
//! `_app/`, or the case's own `app/`), runs the case's `commands` (one
//! command line a line, shell quoting) in its `dir` (default
//! `overlays/prod`), and checks:
//! - the kustomization file krusty wrote is `after.yaml`, the file edited
//!   by hand to the intended result (comments, order and quoting of the
//!   untouched fields kept);
//! - the build of the edited tree is `expected.yaml`, what `kubectl
//!   kustomize` printed for the tree with `after.yaml` (the oracle has no
//!   `edit`; `make-expected.py` records it);
//! - or, with `expected_error.txt`, that the last command fails saying it
//!   (and the file is left as `after.yaml` if the case has one);
//! - each file under the case's `after-files/` (other files the commands
//!   rewrite, by their path in the app) equals the app's file;
//! - with `stdout.txt`, that the last command printed it.
//!
//! A case with an `original` file records as `expected.yaml` the build of
//! the app as it was before the commands (for `edit fix`, whose build must
//! not change); where kubectl is installed, its build of the edited tree
//! is checked against it too.
//!
//! `{{HTTP}}` in a case's files stands for a loopback git server (smart
//! HTTP) serving `addons.git`, made from `_remote/addons`; such a case's
//! `expected.yaml` is recorded by running the test with `KRUSTY_BLESS=1`
//! (kubectl builds the tree with the filled `after.yaml`).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output};
use std::sync::OnceLock;

mod support;

const CASES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/edit");

/// The git server of the cases that name `{{HTTP}}`.
struct GitServer {
    /// `http://127.0.0.1:PORT`.
    url: String,
    /// The cache krusty fetches into.
    cache: PathBuf,
    /// Keeps the server's stdin open: it stops when the tests end.
    _child: Child,
}

/// `git ARGS` in `dir`, failing the test when it fails.
fn git(dir: &Path, args: &[&str]) {
    support::run(support::git_command(dir).args(args));
}

/// Starts the server on first use, with `addons.git` made from
/// `_remote/addons`.
fn git_server() -> &'static GitServer {
    static SERVER: OnceLock<GitServer> = OnceLock::new();
    SERVER.get_or_init(|| {
        let dir = support::scratch("edit", "_remote");
        let work = dir.join("addons");
        copy_tree(&Path::new(CASES).join("_remote/addons"), &work);
        git(&work, &["init", "-q", "-b", "main"]);
        git(&work, &["add", "-A"]);
        git(&work, &["commit", "-qm", "add-ons"]);
        let srv = dir.join("srv");
        std::fs::create_dir_all(&srv).expect("mkdir srv");
        git(&dir, &["clone", "-q", "--bare", "addons", "srv/addons.git"]);
        let (child, port) = support::serve(&["0".as_ref(), srv.as_os_str()]);
        GitServer {
            url: format!("http://127.0.0.1:{port}"),
            cache: dir.join("cache"),
            _child: child,
        }
    })
}

/// `text` with `{{HTTP}}` filled, when the case uses the server.
fn fill(text: &str, server: Option<&GitServer>) -> String {
    match server {
        Some(s) => text.replace("{{HTTP}}", &s.url),
        None => text.to_string(),
    }
}

/// Splits a command line as a POSIX shell would (quotes, backslashes).
pub fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' => {
                if let Some(w) = word.take() {
                    words.push(w);
                }
            }
            '\'' => {
                let w = word.get_or_insert_with(String::new);
                for q in chars.by_ref() {
                    if q == '\'' {
                        break;
                    }
                    w.push(q);
                }
            }
            '"' => {
                let w = word.get_or_insert_with(String::new);
                while let Some(q) = chars.next() {
                    match q {
                        '"' => break,
                        '\\' => w.extend(chars.next()),
                        _ => w.push(q),
                    }
                }
            }
            '\\' => word.get_or_insert_with(String::new).extend(chars.next()),
            _ => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    words
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read app") {
        let entry = entry.expect("entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("type").is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).expect("copy");
        }
    }
}

fn read(path: &Path) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

fn krusty(args: &[String], cwd: &Path, server: Option<&GitServer>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_krusty"));
    cmd.args(args).current_dir(cwd);
    if let Some(s) = server {
        cmd.env("KRUSTY_CACHE_DIR", &s.cache);
    }
    cmd.output().expect("krusty runs")
}

/// Records `kubectl kustomize`'s build of the tree with `after` in place
/// of the edited file as the case's `expected.yaml`.
fn bless(case: &Path, tree: &Path, dir: &Path, build: &str, after: &str, server: &GitServer) {
    std::fs::write(dir.join("kustomization.yaml"), after).expect("write after.yaml");
    let out = Command::new("kubectl")
        .args(["kustomize", build])
        .current_dir(tree)
        .output()
        .expect("kubectl runs");
    assert!(
        out.status.success(),
        "kubectl: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let printed = String::from_utf8_lossy(&out.stdout).replace(&server.url, "{{HTTP}}");
    std::fs::write(case.join("expected.yaml"), printed).expect("write expected.yaml");
}

/// Compares each file under `dir` (a folder of `root`) with the file of
/// the same path in `tree`.
fn compare_after_files(root: &Path, dir: &Path, tree: &Path) -> Result<(), String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(());
    };
    for entry in entries {
        let path = entry.map_err(|e| e.to_string())?.path();
        if path.is_dir() {
            compare_after_files(root, &path, tree)?;
            continue;
        }
        let rel = path.strip_prefix(root).map_err(|e| e.to_string())?;
        let want = read(&path).unwrap_or_default();
        let got = read(&tree.join(rel)).unwrap_or_default();
        if want != got {
            return Err(format!(
                "{} differs from after-files:\n{}",
                rel.display(),
                support::diff(&want, &got)
            ));
        }
    }
    Ok(())
}

/// Runs one case; the reason it failed, if it did.
fn run_case(case: &Path) -> Result<(), String> {
    let name = case
        .file_name()
        .expect("name")
        .to_string_lossy()
        .into_owned();
    let tree = support::scratch("edit", &name);
    let app = case.join("app");
    let app = if app.is_dir() {
        app
    } else {
        Path::new(CASES).join("_app")
    };
    copy_tree(&app, &tree);
    let dir_name = read(&case.join("dir")).unwrap_or_else(|| "overlays/prod".into());
    let dir = tree.join(dir_name.trim());
    let commands = read(&case.join("commands")).ok_or("no commands file")?;
    let server = commands.contains("{{HTTP}}").then(git_server);
    let commands = fill(&commands, server);
    let lines: Vec<&str> = commands.lines().filter(|l| !l.trim().is_empty()).collect();
    let expected_error = read(&case.join("expected_error.txt")).map(|e| fill(&e, server));
    let expected_stdout = read(&case.join("stdout.txt"));
    for (i, line) in lines.iter().enumerate() {
        let out = krusty(&shell_words(line), &dir, server);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let last = i + 1 == lines.len();
        if let (Some(want), true) = (&expected_stdout, last) {
            let printed = String::from_utf8_lossy(&out.stdout);
            if printed != *want {
                return Err(format!(
                    "`{line}` printed:\n{}",
                    support::diff(want, &printed)
                ));
            }
        }
        match (&expected_error, last) {
            (Some(want), true) => {
                if out.status.success() {
                    return Err(format!("`{line}` succeeded, expected: {}", want.trim()));
                }
                if !stderr.contains(want.trim()) {
                    return Err(format!(
                        "`{line}` said:\n{stderr}\nexpected: {}",
                        want.trim()
                    ));
                }
            }
            _ => {
                if !out.status.success() {
                    return Err(format!("`{line}` failed:\n{stderr}"));
                }
            }
        }
    }
    let written = read(&dir.join("kustomization.yaml")).unwrap_or_default();
    let after = read(&case.join("after.yaml")).map(|a| fill(&a, server));
    if let Some(after) = &after {
        if written != *after {
            return Err(format!(
                "kustomization.yaml differs from after.yaml:\n{}",
                support::diff(after, &written)
            ));
        }
    }
    compare_after_files(&case.join("after-files"), &case.join("after-files"), &tree)?;
    let build = read(&case.join("build")).unwrap_or(dir_name);
    if let (Some(server), Some(after), None, true) = (
        server,
        &after,
        &expected_error,
        std::env::var_os("KRUSTY_BLESS").is_some(),
    ) {
        bless(case, &tree, &dir, build.trim(), after, server);
    }
    let Some(expected) = read(&case.join("expected.yaml")).map(|e| fill(&e, server)) else {
        return Ok(());
    };
    let out = krusty(
        &["build".to_string(), build.trim().to_string()],
        &tree,
        server,
    );
    let printed = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() || printed != expected {
        return Err(format!(
            "build differs from kubectl's:\n{}\n{}",
            support::diff(&expected, &printed),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    if case.join("original").exists() {
        kubectl_agrees(&tree, build.trim(), &expected)?;
    }
    Ok(())
}

/// Where kubectl is installed: its build of the edited tree is `expected`
/// (the build of the tree before the edit).
fn kubectl_agrees(tree: &Path, build: &str, expected: &str) -> Result<(), String> {
    let Ok(out) = Command::new("kubectl")
        .args(["kustomize", build])
        .current_dir(tree)
        .output()
    else {
        return Ok(());
    };
    let printed = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() || printed != expected {
        return Err(format!(
            "kubectl's build of the edited tree differs from its build before:\n{}\n{}",
            support::diff(expected, &printed),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(())
}

#[test]
fn edit_cases_match_kubectl_on_the_hand_edited_files() {
    let mut cases: Vec<PathBuf> = std::fs::read_dir(CASES)
        .expect("cases")
        .map(|e| e.expect("entry").path())
        .filter(|p| {
            p.is_dir()
                && !p
                    .file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with('_'))
        })
        .collect();
    cases.sort();
    assert!(!cases.is_empty());
    let failures: Vec<String> = cases
        .iter()
        .filter_map(|case| {
            run_case(case)
                .err()
                .map(|why| format!("== {}: {why}", case.display()))
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

#[test]
fn shell_words_split_as_a_shell_does() {
    assert_eq!(
        shell_words(r#"edit add annotation note:"hello world" 'a b' c\ d"#),
        [
            "edit",
            "add",
            "annotation",
            "note:hello world",
            "a b",
            "c d"
        ]
    );
}
