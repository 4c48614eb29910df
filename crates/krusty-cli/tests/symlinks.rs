//! Symlinks and the load restrictor, for every kind of file a
//! kustomization names. Each test builds its trees (symlinks must be made
//! at run time) under Cargo's temporary directory: a `root` to build and an
//! `outside` beside it. Under the default `LoadRestrictionsRootOnly`, a
//! symlink in the root to a file outside it is refused, as is a path through
//! a symlinked directory that leads outside; a symlink to another place in
//! the root is followed. Directories (bases, components, generator
//! kustomizations) may be anywhere. `LoadRestrictionsNone` allows it all.
//!
//! Where `kubectl` is on `PATH`, every tree is also built by `kubectl
//! kustomize` (Kustomize v5.5.0), which must take the same decision (and,
//! when both succeed, print the same output); without it that part is
//! skipped with a message.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod support;

const NONE: &[&str] = &["--load-restrictor", "LoadRestrictionsNone"];

/// A tree for one case: `root` (what is built) and `outside` beside it.
struct Tree {
    base: PathBuf,
}

impl Tree {
    /// A fresh tree, its path with symlinks resolved (as messages name it).
    fn new(name: &str) -> Tree {
        let dir = support::scratch("symlinks", name);
        let base = std::fs::canonicalize(dir).expect("scratch dir");
        std::fs::create_dir_all(base.join("root")).expect("root");
        std::fs::create_dir_all(base.join("outside")).expect("outside");
        Tree { base }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.base.join(rel)
    }

    fn root(&self) -> PathBuf {
        self.path("root")
    }

    fn write(&self, rel: &str, text: &str) {
        support::write(&self.base, rel, text);
    }

    /// Makes `rel` a symlink to `target` (relative to `rel`'s directory).
    fn link(&self, rel: &str, target: &str) {
        let path = self.path(rel);
        std::fs::create_dir_all(path.parent().expect("has parent")).expect("mkdir");
        std::os::unix::fs::symlink(target, &path).expect("symlink");
    }

    /// Krusty's message for a file outside the root it is built at.
    fn refusal(&self, outside: &str) -> String {
        self.refusal_in(outside, "root")
    }

    /// Krusty's message for `file` not in or below the directory `dir`.
    fn refusal_in(&self, file: &str, dir: &str) -> String {
        format!(
            "security; file '{}' is not in or below '{}'",
            self.path(file).display(),
            self.path(dir).display()
        )
    }
}

/// What a build must do.
enum Decision {
    /// Succeed.
    Accept,
    /// Fail, saying each of these on stderr.
    Reject(Vec<String>),
}

fn run(program: &str, args: &[&str]) -> Output {
    Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("running {program}: {e}"))
}

fn krusty(dir: &Path, flags: &[&str]) -> Output {
    let dir = dir.to_str().expect("UTF-8 path");
    support::krusty_command()
        .args(["build", dir])
        .args(flags)
        .output()
        .expect("krusty runs")
}

/// `kubectl kustomize DIR FLAGS`, or `None` (with a message) when kubectl
/// is not on `PATH`.
fn kubectl(dir: &Path, flags: &[&str]) -> Option<Output> {
    let found = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|p| p.join("kubectl"))
            .find(|p| p.is_file())
    });
    let Some(kubectl) = found else {
        eprintln!(
            "SKIPPED: kubectl not found on PATH; {} not checked against kubectl kustomize",
            dir.display()
        );
        return None;
    };
    let dir = dir.to_str().expect("UTF-8 path");
    let args: Vec<&str> = ["kustomize", dir].iter().chain(flags).copied().collect();
    Some(run(kubectl.to_str().expect("UTF-8 path"), &args))
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Builds `dir` with `flags`; asserts krusty's decision and that kubectl
/// (when present) takes the same one and prints the same output. Returns
/// krusty's stderr.
fn check_at(dir: &Path, flags: &[&str], expected: &Decision) -> String {
    let out = krusty(dir, flags);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    let what = format!("krusty build {} {}", dir.display(), flags.join(" "));
    match expected {
        Decision::Accept => assert!(out.status.success(), "{what} failed:\n{stderr}"),
        Decision::Reject(messages) => {
            assert!(!out.status.success(), "{what} succeeded:\n{stdout}");
            for m in messages {
                assert!(
                    stderr.contains(m.as_str()),
                    "{what}: expected {m:?} in:\n{stderr}"
                );
            }
        }
    }
    if let Some(k) = kubectl(dir, flags) {
        assert_eq!(
            k.status.success(),
            out.status.success(),
            "{what}: kubectl kustomize decides otherwise:\n{}",
            text(&k.stderr)
        );
        if out.status.success() {
            assert_eq!(
                text(&k.stdout),
                stdout,
                "{what}: output differs from kubectl"
            );
        }
    }
    stderr
}

/// [`check_at`] for the tree's root.
fn check(tree: &Tree, flags: &[&str], expected: &Decision) -> String {
    check_at(&tree.root(), flags, expected)
}

fn reject(messages: &[&str]) -> Decision {
    Decision::Reject(messages.iter().map(|m| m.to_string()).collect())
}

const CM: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: base\ndata:\n  k: v\n";

/// A kind of file named in a kustomization: the file's name and content,
/// and the kustomization, `@P@` standing for the path to the file. The
/// root also holds `base.yaml` (a ConfigMap named `base`).
struct FileKind<'a> {
    case: &'a str,
    file: &'a str,
    content: &'a str,
    kustomization: &'a str,
}

impl FileKind<'_> {
    /// A tree whose kustomization names the file as `path`.
    fn tree(&self, variant: &str, path: &str) -> Tree {
        let tree = Tree::new(&format!("{}-{variant}", self.case));
        tree.write(&format!("outside/{}", self.file), self.content);
        tree.write(&format!("root/inner/{}", self.file), self.content);
        tree.write("root/base.yaml", CM);
        tree.write(
            "root/kustomization.yaml",
            &self.kustomization.replace("@P@", path),
        );
        tree
    }

    /// Checks the three ways of reaching the file through a symlink: a
    /// symlinked file leading outside the root and a path through a
    /// symlinked directory leading outside (refused, allowed with
    /// `LoadRestrictionsNone`), and a symlink to a file in the root.
    /// `inside` is what building with the file in the root does.
    fn check(&self, inside: Decision) {
        let link = format!("link-{}", self.file);
        let out = self.tree("file-out", &link);
        out.link(
            &format!("root/{link}"),
            &format!("../outside/{}", self.file),
        );
        let refused = reject(&[&out.refusal(&format!("outside/{}", self.file))]);
        check(&out, &[], &refused);
        check(&out, NONE, &inside);

        let dir = self.tree("dir-out", &format!("ext/{}", self.file));
        dir.link("root/ext", "../outside");
        let refused = reject(&[&dir.refusal(&format!("outside/{}", self.file))]);
        check(&dir, &[], &refused);
        check(&dir, NONE, &inside);

        let within = self.tree("file-in", &link);
        within.link(&format!("root/{link}"), &format!("inner/{}", self.file));
        check(&within, &[], &inside);
    }
}

#[test]
fn kustomization_file_symlinked_out_of_the_root_is_not_found() {
    for name in ["kustomization.yaml", "kustomization.yml", "Kustomization"] {
        let tree = Tree::new(&format!("kustomization-file-out-{name}"));
        tree.write("outside/k.yaml", "resources:\n- cm.yaml\n");
        tree.write("root/cm.yaml", CM);
        tree.link(&format!("root/{name}"), "../outside/k.yaml");
        let missing = format!(
            "unable to find one of 'kustomization.yaml', 'kustomization.yml' or 'Kustomization' in directory '{}'",
            tree.root().display()
        );
        let why = format!("{name}: {}", tree.refusal("outside/k.yaml"));
        check(&tree, &[], &reject(&[&missing, &why]));
        check(&tree, NONE, &Decision::Accept);
    }
}

#[test]
fn kustomization_file_symlinked_within_the_root_is_read() {
    let tree = Tree::new("kustomization-file-in");
    tree.write("root/sub/k.yaml", "resources:\n- cm.yaml\n");
    tree.write("root/cm.yaml", CM);
    tree.link("root/kustomization.yaml", "sub/k.yaml");
    check(&tree, &[], &Decision::Accept);
}

#[test]
fn file_outside_the_root_is_never_quoted_as_a_kustomization() {
    for (case, secret) in [
        ("not-a-kustomization", "password: hunter2\n"),
        ("not-yaml", "password hunter2: [\n"),
    ] {
        let tree = Tree::new(&format!("kustomization-file-{case}"));
        tree.write("outside/secret.txt", secret);
        tree.link("root/kustomization.yaml", "../outside/secret.txt");
        let why = format!("kustomization.yaml: {}", tree.refusal("outside/secret.txt"));
        let stderr = check(&tree, &[], &reject(&["unable to find one of", &why]));
        assert!(!stderr.contains("password"), "{stderr}");
        assert!(!stderr.contains("hunter2"), "{stderr}");
    }
}

#[test]
fn refused_kustomization_file_leaves_the_other_name() {
    // Kustomize counts a refused name as missing, so the other one is the
    // only kustomization file; with no restriction there are two.
    let tree = Tree::new("kustomization-file-out-beside-yml");
    tree.write("outside/k.yaml", "resources:\n- cm.yaml\n");
    tree.write("root/cm.yaml", CM);
    tree.write(
        "root/kustomization.yml",
        "resources:\n- cm.yaml\nnamePrefix: yml-\n",
    );
    tree.link("root/kustomization.yaml", "../outside/k.yaml");
    check(&tree, &[], &Decision::Accept);
    let out = krusty(&tree.root(), &[]);
    assert!(text(&out.stdout).contains("name: yml-base"));
    check(
        &tree,
        NONE,
        &reject(&["Found multiple kustomization files under"]),
    );
}

#[test]
fn dangling_or_directory_kustomization_symlink_is_not_found() {
    let dangling = Tree::new("kustomization-file-dangling");
    dangling.link("root/kustomization.yaml", "../outside/nothing");
    for flags in [&[][..], NONE] {
        check(&dangling, flags, &reject(&["unable to find one of"]));
    }
    let dir = Tree::new("kustomization-file-directory");
    std::fs::create_dir_all(dir.path("outside/kdir")).expect("mkdir");
    dir.link("root/kustomization.yaml", "../outside/kdir");
    for flags in [&[][..], NONE] {
        check(&dir, flags, &reject(&["unable to find one of"]));
    }
}

#[test]
fn kustomization_file_of_a_base_is_restricted_to_the_base() {
    // The link stays inside the top root, but leaves the base's own root.
    let tree = Tree::new("kustomization-file-base-up");
    tree.write("root/base/cm.yaml", CM);
    tree.write("root/basek.yaml", "resources:\n- cm.yaml\n");
    tree.link("root/base/kustomization.yaml", "../basek.yaml");
    tree.write("root/kustomization.yaml", "resources:\n- base\n");
    let why = format!(
        "kustomization.yaml: {}",
        tree.refusal_in("root/basek.yaml", "root/base")
    );
    check(&tree, &[], &reject(&["unable to find one of", &why]));
    check(&tree, NONE, &Decision::Accept);
}

#[test]
fn kustomization_file_of_a_component_is_restricted_to_the_component() {
    let tree = Tree::new("kustomization-file-component-out");
    tree.write(
        "outside/ck.yaml",
        "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\nnamePrefix: c-\n",
    );
    tree.link("root/comp/kustomization.yaml", "../../outside/ck.yaml");
    tree.write("root/cm.yaml", CM);
    tree.write(
        "root/kustomization.yaml",
        "resources:\n- cm.yaml\ncomponents:\n- comp\n",
    );
    let why = format!(
        "kustomization.yaml: {}",
        tree.refusal_in("outside/ck.yaml", "root/comp")
    );
    check(&tree, &[], &reject(&["unable to find one of", &why]));
    check(&tree, NONE, &Decision::Accept);
}

#[test]
fn root_that_is_a_symlink_is_built_where_it_leads() {
    let tree = Tree::new("root-symlink");
    std::fs::remove_dir(tree.root()).expect("empty root");
    tree.write("real/cm.yaml", CM);
    tree.write("real/kustomization.yaml", "resources:\n- cm.yaml\n");
    tree.link("root", "real");
    check(&tree, &[], &Decision::Accept);
    // Its kustomization file is restricted to where it leads.
    let out = Tree::new("root-symlink-kustomization-out");
    std::fs::remove_dir(out.root()).expect("empty root");
    out.write("k.yaml", "resources:\n- cm.yaml\n");
    out.write("real/cm.yaml", CM);
    out.link("real/kustomization.yaml", "../k.yaml");
    out.link("root", "real");
    let why = format!("kustomization.yaml: {}", out.refusal_in("k.yaml", "real"));
    check(&out, &[], &reject(&["unable to find one of", &why]));
}

#[test]
fn resource_files() {
    FileKind {
        case: "resource-file",
        file: "cm.yaml",
        content: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: res\n",
        kustomization: "resources:\n- @P@\n",
    }
    .check(Decision::Accept);
}

#[test]
fn bases_files() {
    FileKind {
        case: "bases-file",
        file: "cm.yaml",
        content: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: res\n",
        kustomization: "bases:\n- @P@\n",
    }
    .check(Decision::Accept);
}

/// A directory holding a kustomization of one ConfigMap (or other files).
fn kustomization_dir(tree: &Tree, dir: &str, files: &[(&str, &str)]) {
    for (name, content) in files {
        tree.write(&format!("{dir}/{name}"), content);
    }
    let names: Vec<&str> = files.iter().map(|(n, _)| *n).collect();
    tree.write(
        &format!("{dir}/kustomization.yaml"),
        &format!("resources:\n- {}\n", names.join("\n- ")),
    );
}

/// A symlinked directory leading outside the root and one leading to
/// another place in it, named in `field` of the root's kustomization:
/// both are followed, with or without restriction.
fn check_directory(case: &str, field: &str, files: &[(&str, &str)]) {
    for (variant, target, real) in [
        ("out", "../outside/dir", "outside/dir"),
        ("in", "real", "root/real"),
    ] {
        let tree = Tree::new(&format!("{case}-{variant}"));
        kustomization_dir(&tree, real, files);
        tree.link("root/dir", target);
        tree.write("root/kustomization.yaml", &format!("{field}:\n- dir\n"));
        check(&tree, &[], &Decision::Accept);
        check(&tree, NONE, &Decision::Accept);
    }
}

#[test]
fn resource_directories() {
    let cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: res\n";
    check_directory("resource-directory", "resources", &[("cm.yaml", cm)]);
    check_directory("bases-directory", "bases", &[("cm.yaml", cm)]);
    // A file of a directory reached through a symlink is restricted to
    // where the directory leads.
    let tree = Tree::new("resource-directory-file-up");
    tree.write("root/cm.yaml", CM);
    tree.link("root/base/link.yaml", "../cm.yaml");
    tree.write("root/base/kustomization.yaml", "resources:\n- link.yaml\n");
    tree.write("root/kustomization.yaml", "resources:\n- base\n");
    let refused = reject(&[&tree.refusal_in("root/cm.yaml", "root/base")]);
    check(&tree, &[], &refused);
    check(&tree, NONE, &Decision::Accept);
}

const PATCH: &str =
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: base\ndata:\n  patched: \"yes\"\n";

#[test]
fn patches_paths() {
    FileKind {
        case: "patches-path",
        file: "patch.yaml",
        content: PATCH,
        kustomization: "resources:\n- base.yaml\npatches:\n- path: @P@\n",
    }
    .check(Decision::Accept);
}

#[test]
fn patches_strategic_merge_paths() {
    FileKind {
        case: "patches-strategic-merge",
        file: "patch.yaml",
        content: PATCH,
        kustomization: "resources:\n- base.yaml\npatchesStrategicMerge:\n- @P@\n",
    }
    .check(Decision::Accept);
}

#[test]
fn patches_json6902_paths() {
    FileKind {
        case: "patches-json6902",
        file: "patch.yaml",
        content: "- op: add\n  path: /data/patched\n  value: \"yes\"\n",
        kustomization: "resources:\n- base.yaml\npatchesJson6902:\n- target:\n    version: v1\n    kind: ConfigMap\n    name: base\n  path: @P@\n",
    }
    .check(Decision::Accept);
}

/// Each source field of a generator (`files:`, `envs:`, `env:`).
fn check_generator(generator: &str) {
    let cases = [
        ("files", "data.txt", "hello\n", "  files:\n  - @P@\n"),
        ("envs", "data.env", "A=1\n", "  envs:\n  - @P@\n"),
        ("env", "data.env", "A=1\n", "  env: @P@\n"),
    ];
    for (field, file, content, source) in cases {
        let case = format!("{generator}-{field}");
        let kustomization = format!("{generator}:\n- name: gen\n{source}");
        FileKind {
            case: &case,
            file,
            content,
            kustomization: &kustomization,
        }
        .check(Decision::Accept);
    }
}

#[test]
fn config_map_generator_sources() {
    check_generator("configMapGenerator");
}

#[test]
fn secret_generator_sources() {
    check_generator("secretGenerator");
}

#[test]
fn configurations_files() {
    FileKind {
        case: "configurations",
        file: "conf.yaml",
        content: "nameReference:\n- kind: ConfigMap\n  fieldSpecs:\n  - path: spec/cmName\n    kind: Foo\n",
        kustomization: "resources:\n- base.yaml\nconfigurations:\n- @P@\n",
    }
    .check(Decision::Accept);
}

#[test]
fn crds_files() {
    FileKind {
        case: "crds",
        file: "crd.json",
        content: "{\"github.com/example/pkg/apis/v1beta1.Bee\": {\"Schema\": {\"description\": \"Bee\", \"properties\": {\"apiVersion\": {\"type\": \"string\"}}}}}\n",
        kustomization: "resources:\n- base.yaml\ncrds:\n- @P@\n",
    }
    .check(Decision::Accept);
}

#[test]
fn openapi_path() {
    FileKind {
        case: "openapi",
        file: "schema.json",
        content: "{\"definitions\": {}}\n",
        kustomization: "resources:\n- base.yaml\nopenapi:\n  path: @P@\n",
    }
    .check(Decision::Accept);
}

#[test]
fn replacements_paths() {
    FileKind {
        case: "replacements",
        file: "repl.yaml",
        content: "source:\n  kind: ConfigMap\n  name: base\n  fieldPath: data.k\ntargets:\n- select:\n    kind: ConfigMap\n  fieldPaths:\n  - data.copy\n  options:\n    create: true\n",
        kustomization: "resources:\n- base.yaml\nreplacements:\n- path: @P@\n",
    }
    .check(Decision::Accept);
}

const LABELS: &str = "apiVersion: builtin\nkind: LabelTransformer\nmetadata:\n  name: lab\nlabels:\n  tr: \"yes\"\nfieldSpecs:\n- path: metadata/labels\n  create: true\n";
const GENERATOR: &str =
    "apiVersion: builtin\nkind: ConfigMapGenerator\nmetadata:\n  name: gen\nliterals:\n- a=b\n";

#[test]
fn generators_files() {
    FileKind {
        case: "generators-file",
        file: "gen.yaml",
        content: GENERATOR,
        kustomization: "generators:\n- @P@\n",
    }
    .check(Decision::Accept);
}

#[test]
fn transformers_files() {
    FileKind {
        case: "transformers-file",
        file: "tr.yaml",
        content: LABELS,
        kustomization: "resources:\n- base.yaml\ntransformers:\n- @P@\n",
    }
    .check(Decision::Accept);
}

#[test]
fn validators_files() {
    // No resources: a validator that would change one is refused.
    FileKind {
        case: "validators-file",
        file: "val.yaml",
        content: LABELS,
        kustomization: "validators:\n- @P@\n",
    }
    .check(Decision::Accept);
}

#[test]
fn generators_and_transformers_directories() {
    check_directory(
        "generators-directory",
        "generators",
        &[("gen.yaml", GENERATOR)],
    );
    check_directory(
        "transformers-directory",
        "transformers",
        &[("tr.yaml", LABELS)],
    );
}

#[test]
fn components() {
    let component =
        "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\nnamePrefix: c-\n";
    for (variant, target, real) in [
        ("out", "../outside/comp", "outside/comp"),
        ("in", "real", "root/real"),
    ] {
        let tree = Tree::new(&format!("component-directory-{variant}"));
        tree.write(&format!("{real}/kustomization.yaml"), component);
        tree.link("root/comp", target);
        tree.write("root/cm.yaml", CM);
        tree.write(
            "root/kustomization.yaml",
            "resources:\n- cm.yaml\ncomponents:\n- comp\n",
        );
        check(&tree, &[], &Decision::Accept);
        check(&tree, NONE, &Decision::Accept);
    }
    // A component is a directory: a symlink to a file is none.
    let file = Tree::new("component-file-out");
    file.write("outside/ck.yaml", component);
    file.link("root/comp.yaml", "../outside/ck.yaml");
    file.write("root/cm.yaml", CM);
    file.write(
        "root/kustomization.yaml",
        "resources:\n- cm.yaml\ncomponents:\n- comp.yaml\n",
    );
    for flags in [&[][..], NONE] {
        check(&file, flags, &reject(&["file is not directory"]));
    }
}

#[test]
fn exec_function_paths_are_not_subject_to_the_load_restrictor() {
    // An exec path is resolved against the kustomization's directory and
    // may lead anywhere, through symlinks too (docs/functions.md).
    // kubectl cannot run exec functions: with --enable-alpha-plugins it
    // passes over their configs whatever the path, so only that it does not
    // refuse the config is checked against it.
    let script = "#!/bin/sh\ncat\n";
    let fn_config = |path: &str| {
        format!(
            "apiVersion: example.com/v1\nkind: Fn\nmetadata:\n  name: fn\n  annotations:\n    config.kubernetes.io/function: |\n      exec:\n        path: {path}\n"
        )
    };
    let exec = ["--enable-alpha-plugins", "--enable-exec"];
    let exec_none = [&exec[..], NONE].concat();
    for (variant, link_target) in [("out", "../outside/fn.sh"), ("in", "inner/fn.sh")] {
        let tree = Tree::new(&format!("exec-path-{variant}"));
        for dir in ["outside", "root/inner"] {
            tree.write(&format!("{dir}/fn.sh"), script);
            let path = tree.path(&format!("{dir}/fn.sh"));
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        }
        tree.link("root/link-fn.sh", link_target);
        tree.write("root/base.yaml", CM);
        tree.write("root/fn.yaml", &fn_config("link-fn.sh"));
        tree.write(
            "root/kustomization.yaml",
            "resources:\n- base.yaml\ntransformers:\n- fn.yaml\n",
        );
        for flags in [&exec[..], &exec_none[..]] {
            let out = krusty(&tree.root(), flags);
            assert!(out.status.success(), "{}", text(&out.stderr));
        }
        if let Some(k) = kubectl(&tree.root(), &["--enable-alpha-plugins"]) {
            assert!(k.status.success(), "{}", text(&k.stderr));
        }
    }
}
