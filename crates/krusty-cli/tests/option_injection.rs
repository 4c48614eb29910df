//! Values a tree writes never reach another program as options: a git ref
//! or URL that starts with `-` (`?ref=--upload-pack=CMD` would run CMD),
//! in remote resources, remote targets, `catalogs:`, `krusty view catalog`
//! and `krusty edit add resource`; a container function's image likewise.
//! Each case checks that the command fails with a clear error and that the
//! planted command never ran.

mod support;

use std::path::{Path, PathBuf};
use std::process::Output;

use support::{git_command, run, scratch, text, write};

/// A bare repository `repo.git` in `dir` holding one ConfigMap, and the
/// `upload-pack` value that would create `dir/pwned` if git ran it.
struct Planted {
    dir: PathBuf,
    repo: PathBuf,
}

impl Planted {
    fn new(name: &str) -> Planted {
        let dir = scratch("option_injection", name);
        let work = dir.join("work");
        write(&work, "kustomization.yaml", "resources:\n- cm.yaml\n");
        write(
            &work,
            "cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-repo\n",
        );
        run(git_command(&work).args(["init", "-q", "-b", "main"]));
        run(git_command(&work).args(["add", "."]));
        run(git_command(&work).args(["commit", "-qm", "one"]));
        let repo = dir.join("repo.git");
        run(git_command(&dir).args(["clone", "-q", "--bare", "work", "repo.git"]));
        Planted { dir, repo }
    }

    fn marker(&self) -> PathBuf {
        self.dir.join("pwned")
    }

    /// `--upload-pack=touch MARKER;false`, query-escaped.
    fn option(&self) -> String {
        format!("--upload-pack=touch%20{}%3Bfalse", self.marker().display())
    }

    /// The repository as a `file://` URL with `query`.
    fn url(&self, query: &str) -> String {
        format!("file://{}?{query}", self.repo.display())
    }

    /// Checks that `out` failed, naming the refused value, and that the
    /// planted command did not run.
    fn assert_refused(&self, out: &Output) {
        let stderr = text(&out.stderr);
        assert!(
            !self.marker().exists(),
            "the planted command ran: {}",
            self.marker().display()
        );
        assert!(!out.status.success(), "accepted:\n{}", text(&out.stdout));
        assert!(
            stderr.contains("invalid git ref") && stderr.contains("may not start with '-'"),
            "{stderr}"
        );
        assert!(
            out.stdout.is_empty(),
            "partial output: {}",
            text(&out.stdout)
        );
    }
}

fn krusty(dir: &Path, args: &[&str]) -> Output {
    support::krusty_command()
        .args(args)
        .current_dir(dir)
        .env("KRUSTY_CACHE_DIR", dir.join("cache"))
        .output()
        .expect("krusty runs")
}

#[test]
fn a_well_formed_ref_still_builds() {
    let planted = Planted::new("control");
    let tree = planted.dir.join("tree");
    write(
        &tree,
        "kustomization.yaml",
        &format!("resources:\n- {}\n", planted.url("ref=main")),
    );
    let out = krusty(&planted.dir, &["build", tree.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("name: from-repo"));
}

#[test]
fn a_ref_option_in_a_remote_resource_never_reaches_git() {
    for key in ["ref", "version"] {
        let planted = Planted::new(&format!("resource-{key}"));
        let tree = planted.dir.join("tree");
        let url = planted.url(&format!("{key}={}", planted.option()));
        write(
            &tree,
            "kustomization.yaml",
            &format!("resources:\n- {url}\n"),
        );
        let out = krusty(&planted.dir, &["build", tree.to_str().unwrap()]);
        planted.assert_refused(&out);
    }
}

#[test]
fn a_ref_option_in_a_remote_target_or_component_never_reaches_git() {
    let planted = Planted::new("target");
    let url = planted.url(&format!("ref={}", planted.option()));
    planted.assert_refused(&krusty(&planted.dir, &["build", &url]));

    let tree = planted.dir.join("tree");
    write(
        &tree,
        "kustomization.yaml",
        &format!("components:\n- {url}\n"),
    );
    planted.assert_refused(&krusty(&planted.dir, &["build", tree.to_str().unwrap()]));
}

#[test]
fn a_ref_option_in_catalogs_or_view_catalog_never_reaches_git() {
    let planted = Planted::new("catalog");
    let url = format!(
        "file://{}//catalog.yaml?ref={}",
        planted.repo.display(),
        planted.option()
    );
    planted.assert_refused(&krusty(&planted.dir, &["view", "catalog", &url]));

    let tree = planted.dir.join("tree");
    write(
        &tree,
        "kustomization.yaml",
        &format!("catalogs:\n- {url}\ntransformers:\n- fn.yaml\n"),
    );
    write(
        &tree,
        "fn.yaml",
        "apiVersion: example.com/v1\nkind: SetThing\nmetadata:\n  name: f\n",
    );
    let out = krusty(
        &planted.dir,
        &["build", tree.to_str().unwrap(), "--trusted-catalog", &url],
    );
    planted.assert_refused(&out);
}

#[test]
fn a_ref_option_in_edit_add_resource_never_reaches_git() {
    let planted = Planted::new("edit");
    let tree = planted.dir.join("tree");
    write(&tree, "kustomization.yaml", "resources: []\n");
    let url = planted.url(&format!("ref={}", planted.option()));
    let out = krusty(&tree, &["edit", "add", "resource", &url]);
    assert!(!planted.marker().exists(), "the planted command ran");
    assert!(!out.status.success(), "accepted");
    let stderr = text(&out.stderr);
    assert!(stderr.contains("invalid git ref"), "{stderr}");
    assert_eq!(
        std::fs::read_to_string(tree.join("kustomization.yaml")).unwrap(),
        "resources: []\n"
    );
}
