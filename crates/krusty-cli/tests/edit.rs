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
//! - or, with `expected_error.txt` (the tests' one convention for
//!   failures, `support::Case`), that the last command fails saying it
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
use support::{copy_tree, Case};

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

fn read(path: &Path) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

fn krusty(args: &[String], cwd: &Path, server: Option<&GitServer>) -> Output {
    let mut cmd = support::krusty_command();
    cmd.args(args).current_dir(cwd);
    if let Some(s) = server {
        cmd.env("KRUSTY_CACHE_DIR", &s.cache);
    }
    cmd.output().expect("krusty runs")
}

/// Records `kubectl kustomize`'s build of the tree with `after` in place
/// of the edited file as the case's `expected.yaml`.
fn bless(case: &Case, tree: &Path, dir: &Path, build: &str, after: &str, server: &GitServer) {
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
    std::fs::write(case.path("expected.yaml"), printed).expect("write expected.yaml");
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
fn run_case(case: &Case) -> Result<(), String> {
    let tree = support::scratch("edit", &case.name);
    let app = case.path("app");
    let app = if app.is_dir() {
        app
    } else {
        Path::new(CASES).join("_app")
    };
    copy_tree(&app, &tree);
    let dir_name = case.read("dir").unwrap_or_else(|| "overlays/prod".into());
    let dir = tree.join(dir_name.trim());
    let commands = case.read("commands").ok_or("no commands file")?;
    let server = commands.contains("{{HTTP}}").then(git_server);
    let commands = fill(&commands, server);
    let lines: Vec<&str> = commands.lines().filter(|l| !l.trim().is_empty()).collect();
    let expected_error = case.expected_error().map(|e| support::ExpectedError {
        text: fill(&e.text, server),
        ..e
    });
    let expected_stdout = case.read("stdout.txt");
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
                want.check(out.status.code(), &out.stdout, &stderr)
                    .map_err(|why| format!("`{line}`: {why}"))?;
            }
            _ => {
                if !out.status.success() {
                    return Err(format!("`{line}` failed:\n{stderr}"));
                }
            }
        }
    }
    let written = read(&dir.join("kustomization.yaml")).unwrap_or_default();
    let after = case.read("after.yaml").map(|a| fill(&a, server));
    if let Some(after) = &after {
        if written != *after {
            return Err(format!(
                "kustomization.yaml differs from after.yaml:\n{}",
                support::diff(after, &written)
            ));
        }
    }
    let after_files = case.path("after-files");
    compare_after_files(&after_files, &after_files, &tree)?;
    let build = case.read("build").unwrap_or(dir_name);
    if let (Some(server), Some(after), None, true) = (
        server,
        &after,
        &expected_error,
        std::env::var_os("KRUSTY_BLESS").is_some(),
    ) {
        bless(case, &tree, &dir, build.trim(), after, server);
    }
    let Some(expected) = case.read("expected.yaml").map(|e| fill(&e, server)) else {
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
    if case.path("original").exists() {
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
    let cases = support::cases(Path::new(CASES));
    let failures: Vec<String> = cases
        .iter()
        .filter_map(|case| {
            run_case(case)
                .err()
                .map(|why| format!("== {}: {why}", case.dir.display()))
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

/// A Deployment with two containers, `web` (nginx) and `db` (postgres).
const DEPLOYMENT: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    spec:
      containers:
      - image: nginx
        name: web
      - image: postgres
        name: db
";

/// A ConfigMap `a`.
const CONFIG_MAP: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n";

/// A fresh tree for one test: `files` (path, text) under a scratch folder.
fn tree(name: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = support::scratch("edit-fidelity", name);
    for (path, text) in files {
        support::write(&dir, path, text);
    }
    dir
}

/// Runs each command line in `dir` (each must succeed) and returns the
/// kustomization file it leaves.
fn edited(dir: &Path, commands: &[&str]) -> String {
    for line in commands {
        let out = krusty(&shell_words(line), dir, None);
        assert!(
            out.status.success(),
            "`{line}` failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    read(&dir.join("kustomization.yaml")).expect("kustomization.yaml")
}

/// krusty's build of `dir`; where kubectl is installed, `kubectl
/// kustomize` must print the same.
fn built_alike(dir: &Path) -> String {
    let out = krusty(&["build".to_string(), ".".to_string()], dir, None);
    assert!(
        out.status.success(),
        "build: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let printed = String::from_utf8_lossy(&out.stdout).into_owned();
    match Command::new("kubectl")
        .args(["kustomize", "."])
        .current_dir(dir)
        .output()
    {
        Ok(theirs) => {
            let theirs_printed = String::from_utf8_lossy(&theirs.stdout);
            assert!(
                theirs.status.success() && theirs_printed == printed,
                "kubectl builds the edited file differently:\n{}\n{}",
                support::diff(&theirs_printed, &printed),
                String::from_utf8_lossy(&theirs.stderr)
            );
        }
        Err(_) => {
            support::skip("kubectl is not installed: the edited file is built by krusty only")
        }
    }
    printed
}

/// Kustomize's edit reads the first document only (`Kustomization.Unmarshal`
/// in api/types/kustomization.go: go-yaml v2's `Unmarshal` through
/// sigs.k8s.io/yaml) and writes the file line by line from its fields
/// (`parseCommentedFields` and `marshal` in
/// kustomize/commands/internal/kustfile/kustomizationfile.go): a `---` or
/// `...` line is neither a comment nor a field, so it is not written, nor
/// are the comments after the last field; fields it adds come after those
/// of the file, `apiVersion` and `kind` first. One document, the edit in it.
#[test]
fn a_closing_marker_or_an_empty_document_gets_no_fields() {
    let want = "resources:\n- cm.yaml\napiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamePrefix: p-\n";
    for (i, (text, want)) in [
        ("resources:\n- cm.yaml\n---\n", want),
        ("resources:\n- cm.yaml\n...\n", want),
        ("resources:\n- cm.yaml\n---\n---\n# nothing here\n", want),
        ("resources:\n- cm.yaml\n--- # end\n...\n", want),
        (
            "namePrefix: q-\nresources:\n- cm.yaml\n---\n",
            "namePrefix: p-\nresources:\n- cm.yaml\napiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n",
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let dir = tree(
            &format!("markers-{i}"),
            &[("kustomization.yaml", text), ("cm.yaml", CONFIG_MAP)],
        );
        let written = edited(&dir, &["edit set nameprefix -- p-"]);
        assert_eq!(written, want, "{text:?}");
        assert!(built_alike(&dir).contains("name: p-a\n"), "{text:?}");
    }
}

/// Kustomize's edit folds the deprecated fields on every read
/// (`kustomizationFile.Read` in
/// kustomize/commands/internal/kustfile/kustomizationfile.go calls
/// `FixKustomization` in api/types/kustomization.go): `bases` are
/// appended to `resources`, `imageTags` to `images`, a generator's `env`
/// to its `envs`; the command then works on the folded lists (`set image`
/// in kustomize/commands/edit/set/setimage.go replaces the `nginx` entry
/// that came from `imageTags` and sorts the list by name), and the writer
/// marshals each field with sorted keys (`envs` before `name`), leaving
/// the emptied fields out and their comments in. Argo CD's `set image`
/// then wins over the old `imageTags` entry in both tools' builds.
#[test]
fn every_edit_folds_deprecated_fields_as_kustomize_reads_them() {
    let dir = tree(
        "fold",
        &[
            (
                "kustomization.yaml",
                "resources:\n- deploy.yaml\n# The shared config.\nbases:\n- base\nconfigMapGenerator:\n- name: settings\n  env: settings.env\nimageTags:\n- name: nginx\n  newTag: \"1.0\"\nimages:\n- name: postgres\n  newTag: \"15\"\n",
            ),
            ("deploy.yaml", DEPLOYMENT),
            ("settings.env", "MODE=fast\n"),
            ("base/kustomization.yaml", "resources:\n- cm.yaml\n"),
            ("base/cm.yaml", CONFIG_MAP),
        ],
    );
    let written = edited(&dir, &["edit set image nginx:2.0"]);
    assert_eq!(
        written,
        "resources:\n- deploy.yaml\n- base\n# The shared config.\nconfigMapGenerator:\n- envs:\n  - settings.env\n  name: settings\nimages:\n- name: nginx\n  newTag: \"2.0\"\n- name: postgres\n  newTag: \"15\"\napiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
    );
    let built = built_alike(&dir);
    assert!(built.contains("image: nginx:2.0\n"), "{built}");
    assert!(built.contains("image: postgres:15\n"), "{built}");
}

/// Kustomize's edit keeps labels and annotations in Go maps and marshals
/// them through sigs.k8s.io/yaml, whose go-yaml v2 step sorts a mapping's
/// keys (digits as numbers: `b9` before `b10`), whatever order the
/// arguments came in (`writeToMap` in
/// kustomize/commands/edit/add/addmetadata.go); the same for the `pairs`
/// of a `--without-selector` entry. Each command reads the file again, so
/// a field added by one is among the file's fields for the next
/// (`marshal` in kustomize/commands/internal/kustfile/kustomizationfile.go
/// writes those first). Argo CD passes labels in any order: the file must
/// not change with it.
#[test]
fn new_labels_and_annotations_are_written_sorted_whatever_the_argument_order() {
    let kustomization = "commonLabels:\n  env: production\nresources:\n- deploy.yaml\n";
    let runs = [
        [
            "edit add label tier:frontend app:shop",
            "edit add annotation z-note:one b10:ten a-note:two b9:nine",
            "edit add label --without-selector owner:pay cost:c1",
        ],
        [
            "edit add label app:shop tier:frontend",
            "edit add annotation b9:nine a-note:two b10:ten z-note:one",
            "edit add label --without-selector cost:c1 owner:pay",
        ],
    ];
    for (i, commands) in runs.iter().enumerate() {
        let dir = tree(
            &format!("sorted-{i}"),
            &[
                ("kustomization.yaml", kustomization),
                ("deploy.yaml", DEPLOYMENT),
            ],
        );
        assert_eq!(
            edited(&dir, commands),
            "commonLabels:\n  app: shop\n  env: production\n  tier: frontend\nresources:\n- deploy.yaml\napiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\ncommonAnnotations:\n  a-note: two\n  b9: nine\n  b10: ten\n  z-note: one\nlabels:\n- pairs:\n    cost: c1\n    owner: pay\n",
            "{commands:?}"
        );
        built_alike(&dir);
    }
}

/// A file written with CR LF keeps CR LF on every line an edit writes:
/// new fields, changed fields and the lines they replace. (Kustomize's
/// writer copies the comment lines it read, and marshals fields with LF:
/// krusty ends the lines it makes as the file's first line ends.)
#[test]
fn a_crlf_file_keeps_crlf_on_every_line_it_writes() {
    let dir = tree(
        "crlf",
        &[
            (
                "kustomization.yaml",
                "# The app.\r\nresources:\r\n- deploy.yaml\r\n\r\ncommonLabels:\r\n  env: production\r\nimages:\r\n- name: postgres\r\n  newTag: \"15\"",
            ),
            ("deploy.yaml", DEPLOYMENT),
        ],
    );
    let written = edited(
        &dir,
        &[
            "edit set namespace shop",
            "edit add label app:shop",
            "edit set image nginx:2.0",
        ],
    );
    assert_eq!(
        written,
        "# The app.\r\nresources:\r\n- deploy.yaml\r\n\r\ncommonLabels:\r\n  app: shop\r\n  env: production\r\nimages:\r\n- name: nginx\r\n  newTag: \"2.0\"\r\n- name: postgres\r\n  newTag: \"15\"\r\napiVersion: kustomize.config.k8s.io/v1beta1\r\nkind: Kustomization\r\nnamespace: shop\r\n"
    );
    let built = built_alike(&dir);
    assert!(built.contains("namespace: shop\n") && built.contains("image: nginx:2.0\n"));
}
