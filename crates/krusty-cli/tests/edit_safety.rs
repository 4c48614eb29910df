//! How `edit` and `create` write the kustomization file, and `edit fix
//! --vars` the resource and patch files it rewrites: never through a link
//! leading out of the kustomization's folder, never by opening a FIFO or a
//! device, whole or not at all (mode and owner kept), and one edit at a
//! time, so concurrent edits lose nothing.

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

mod support;
use support::unix::{limit_file_size, listing, mkfifo};
use support::{text, write};

fn scratch(name: &str) -> PathBuf {
    support::scratch("edit-safety", name)
}

/// `krusty ARGS` in `cwd`.
fn command(cwd: &Path, args: &[&str]) -> Command {
    let mut cmd = support::krusty_command();
    cmd.args(args)
        .current_dir(cwd)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

/// Waits for `child`, killing it (and failing the test) if it is still
/// running after `limit`.
fn finish_within(mut child: Child, limit: Duration, what: &str) -> Output {
    let started = Instant::now();
    while child.try_wait().expect("wait").is_none() {
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what}: krusty still runs after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    child.wait_with_output().expect("output")
}

/// Runs `krusty ARGS` in `cwd`; it must end within ten seconds.
fn krusty(cwd: &Path, args: &[&str]) -> Output {
    let child = command(cwd, args).spawn().expect("krusty starts");
    finish_within(child, Duration::from_secs(10), &args.join(" "))
}

fn stderr(out: &Output) -> String {
    text(&out.stderr)
}

fn read(path: &Path) -> String {
    fs::read_to_string(path).expect("read")
}

#[test]
fn a_link_leading_out_of_the_folder_is_not_written_through() {
    let dir = scratch("link-out");
    let victim = dir.join("elsewhere/victim.yaml");
    write(&dir, "elsewhere/victim.yaml", "namespace: mine\n");
    fs::create_dir_all(dir.join("app")).expect("mkdir");
    std::os::unix::fs::symlink(
        "../elsewhere/victim.yaml",
        dir.join("app/kustomization.yaml"),
    )
    .expect("symlink");

    let out = krusty(&dir.join("app"), &["edit", "set", "namespace", "theirs"]);
    assert!(!out.status.success(), "the edit is refused");
    let err = stderr(&out);
    assert!(
        err.contains("kustomization.yaml") && err.contains("outside its folder"),
        "{err}"
    );
    assert_eq!(
        read(&victim),
        "namespace: mine\n",
        "the file it names is untouched"
    );
    assert!(fs::symlink_metadata(dir.join("app/kustomization.yaml"))
        .expect("link")
        .file_type()
        .is_symlink());

    // `create` does not write through a link to nothing yet either.
    fs::create_dir_all(dir.join("new")).expect("mkdir");
    std::os::unix::fs::symlink("../elsewhere/made.yaml", dir.join("new/kustomization.yaml"))
        .expect("symlink");
    let out = krusty(&dir.join("new"), &["create", "--namespace", "x"]);
    assert!(!out.status.success(), "create is refused");
    assert!(
        stderr(&out).contains("kustomization file already exists"),
        "{}",
        stderr(&out)
    );
    assert!(!dir.join("elsewhere/made.yaml").exists(), "nothing created");
}

#[test]
fn a_link_inside_the_folder_is_followed_and_kept() {
    let dir = scratch("link-in");
    write(&dir, "app/real/k.yaml", "namespace: a\n");
    std::os::unix::fs::symlink("real/k.yaml", dir.join("app/kustomization.yaml")).expect("symlink");
    let out = krusty(&dir.join("app"), &["edit", "set", "namespace", "b"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(fs::symlink_metadata(dir.join("app/kustomization.yaml"))
        .expect("link")
        .file_type()
        .is_symlink());
    assert!(read(&dir.join("app/real/k.yaml")).starts_with("namespace: b\n"));
    assert_eq!(listing(&dir.join("app/real")), ["k.yaml"], "nothing left");
}

#[test]
fn a_fifo_fails_at_once() {
    let dir = scratch("fifo");
    mkfifo(&dir.join("kustomization.yaml"));
    for args in [
        &["edit", "set", "namespace", "x"][..],
        &["edit", "add", "resource", "--no-verify", "a.yaml"],
        &["edit", "add", "configmap", "c", "--from-literal=a=b"],
        &["edit", "fix"],
    ] {
        let out = krusty(&dir, args);
        assert!(!out.status.success(), "{args:?}");
        let err = stderr(&out);
        assert!(
            err.contains("kustomization.yaml") && err.contains("not a regular file (a FIFO)"),
            "{args:?}: {err}"
        );
    }
    // `create --autodetect` passes over a FIFO among the files.
    let dir = scratch("fifo-create");
    write(
        &dir,
        "cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n",
    );
    mkfifo(&dir.join("pipe.yaml"));
    let out = krusty(&dir, &["create", "--autodetect"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        read(&dir.join("kustomization.yaml")).contains("resources:\n- cm.yaml\n"),
        "{}",
        read(&dir.join("kustomization.yaml"))
    );
}

/// A kustomization of about `size` bytes.
fn long_kustomization(size: usize) -> String {
    let mut text = String::from("resources:\n");
    let mut i = 0;
    while text.len() < size {
        text.push_str(&format!("- resource-{i:05}.yaml\n"));
        i += 1;
    }
    text
}

#[test]
fn a_failed_write_leaves_the_old_file_whole() {
    let dir = scratch("failed-write");
    const LIMIT: usize = 4096;
    let old = long_kustomization(LIMIT - 200);
    write(&dir, "kustomization.yaml", &old);
    let prefix = "p".repeat(400);
    let mut cmd = command(&dir, &["edit", "set", "nameprefix", &prefix]);
    limit_file_size(&mut cmd, LIMIT);
    let out = finish_within(
        cmd.spawn().expect("starts"),
        Duration::from_secs(10),
        "edit",
    );
    assert!(!out.status.success(), "the new file is too large to write");
    assert!(
        stderr(&out).contains("kustomization.yaml"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        read(&dir.join("kustomization.yaml")),
        old,
        "the old file, whole"
    );
    assert_eq!(
        listing(&dir),
        ["kustomization.yaml"],
        "no temporary file left"
    );
}

#[test]
fn an_edit_keeps_the_mode_and_owner() {
    let dir = scratch("mode");
    let path = dir.join("kustomization.yaml");
    write(&dir, "kustomization.yaml", "namespace: a\n");
    fs::set_permissions(&path, fs::Permissions::from_mode(0o640)).expect("chmod");
    // As root, give the file another owner; elsewhere the owner is ours.
    let owner = (65534, 65534);
    let chowned = std::os::unix::fs::chown(&path, Some(owner.0), Some(owner.1)).is_ok();
    let inode = fs::metadata(&path).expect("stat").ino();
    let out = krusty(&dir, &["edit", "set", "namespace", "b"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let meta = fs::metadata(&path).expect("stat");
    assert_eq!(meta.mode() & 0o7777, 0o640, "mode kept");
    if chowned {
        assert_eq!((meta.uid(), meta.gid()), owner, "owner kept");
        assert_ne!(meta.ino(), inode, "replaced whole, not written in place");
    }
    assert!(read(&path).starts_with("namespace: b\n"));
    assert_eq!(
        listing(&dir),
        ["kustomization.yaml"],
        "no temporary file left"
    );
}

#[test]
fn concurrent_edits_lose_no_entry() {
    let dir = scratch("concurrent");
    write(&dir, "kustomization.yaml", "resources: []\n");
    const EDITS: usize = 20;
    let children: Vec<(String, Child)> = (0..EDITS)
        .map(|i| {
            let name = format!("r{i}.yaml");
            let child = command(&dir, &["edit", "add", "resource", "--no-verify", &name])
                .spawn()
                .expect("krusty starts");
            (name, child)
        })
        .collect();
    for (name, child) in children {
        let out = finish_within(child, Duration::from_secs(60), &name);
        assert!(out.status.success(), "{name}: {}", stderr(&out));
    }
    let text = read(&dir.join("kustomization.yaml"));
    for i in 0..EDITS {
        assert!(
            text.contains(&format!("- r{i}.yaml\n")),
            "r{i}.yaml lost:\n{text}"
        );
    }
    assert_eq!(
        listing(&dir),
        ["kustomization.yaml"],
        "no temporary file left"
    );
}

#[test]
fn a_file_with_other_hard_links_is_written_in_place() {
    let dir = scratch("hard-link");
    write(&dir, "app/kustomization.yaml", "namespace: a\n");
    fs::hard_link(dir.join("app/kustomization.yaml"), dir.join("other.yaml")).expect("link");
    let out = krusty(&dir.join("app"), &["edit", "set", "namespace", "b"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(read(&dir.join("other.yaml")).starts_with("namespace: b\n"));
    assert_eq!(
        fs::metadata(dir.join("app/kustomization.yaml"))
            .expect("stat")
            .nlink(),
        2
    );
    assert_eq!(listing(&dir.join("app")), ["kustomization.yaml"]);
}

/// A kustomization with a var `DB` (the Service `db`'s name), naming
/// `resources`.
fn with_var(resources: &[&str]) -> String {
    let mut text = String::from("resources:\n- service.yaml\n");
    for r in resources {
        text.push_str(&format!("- {r}\n"));
    }
    text.push_str(
        "vars:\n- name: DB\n  objref:\n    apiVersion: v1\n    kind: Service\n    name: db\n  fieldref:\n    fieldpath: metadata.name\n",
    );
    text
}

const SERVICE: &str =
    "apiVersion: v1\nkind: Service\nmetadata:\n  name: db\nspec:\n  ports:\n  - port: 5432\n";

/// A ConfigMap `name` whose `host` is `$(DB)`.
fn referring(name: &str) -> String {
    format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n  host: $(DB)\n")
}

#[test]
fn fix_vars_does_not_write_through_a_link_out_of_the_kustomizations_folder() {
    for (case, resource) in [
        ("file-link", "linked.yaml"),
        ("folder-link", "sub/victim.yaml"),
    ] {
        let dir = scratch(&format!("vars-{case}"));
        let victim = dir.join("elsewhere/victim.yaml");
        write(&dir, "elsewhere/victim.yaml", &referring("victim"));
        write(&dir, "app/service.yaml", SERVICE);
        write(&dir, "app/mine.yaml", &referring("mine"));
        let kustomization = with_var(&["mine.yaml", resource]);
        write(&dir, "app/kustomization.yaml", &kustomization);
        if case == "file-link" {
            std::os::unix::fs::symlink("../elsewhere/victim.yaml", dir.join("app/linked.yaml"))
                .expect("symlink");
        } else {
            std::os::unix::fs::symlink("../elsewhere", dir.join("app/sub")).expect("symlink");
        }

        let out = krusty(&dir.join("app"), &["edit", "fix", "--vars"]);
        assert!(!out.status.success(), "{case}: the conversion is refused");
        let err = stderr(&out);
        assert!(
            err.contains(resource) && err.contains("outside"),
            "{case}: {err}"
        );
        assert_eq!(
            read(&victim),
            referring("victim"),
            "{case}: the file it leads to is untouched"
        );
        assert_eq!(
            read(&dir.join("app/mine.yaml")),
            referring("mine"),
            "{case}: nothing written"
        );
        assert_eq!(
            read(&dir.join("app/kustomization.yaml")),
            kustomization,
            "{case}"
        );
    }
}

#[test]
fn fix_vars_refuses_a_fifo_at_once() {
    // `sub` holds two kustomization files, so the builds `edit fix` runs
    // fail at once, before reading a file: what meets the FIFO is the
    // conversion, which reads the resources of every kustomization file
    // of a resource folder.
    let dir = scratch("vars-fifo");
    write(&dir, "service.yaml", SERVICE);
    write(&dir, "kustomization.yaml", &with_var(&["sub"]));
    for name in ["kustomization.yaml", "kustomization.yml"] {
        write(&dir, &format!("sub/{name}"), "resources:\n- pipe.yaml\n");
    }
    mkfifo(&dir.join("sub/pipe.yaml"));
    let out = krusty(&dir, &["edit", "fix", "--vars"]);
    assert!(!out.status.success(), "a FIFO is not rewritten");
    let err = stderr(&out);
    assert!(
        err.contains("sub/pipe.yaml") && err.contains("not a regular file (a FIFO)"),
        "{err}"
    );
    assert!(
        read(&dir.join("kustomization.yaml")).contains("vars:"),
        "nothing written"
    );
}

#[test]
fn fix_vars_replaces_resource_files_whole_as_edits_write_kustomization_files() {
    let dir = scratch("vars-write");
    write(&dir, "app/service.yaml", SERVICE);
    write(&dir, "app/plain.yaml", &referring("plain"));
    write(&dir, "app/real/linked.yaml", &referring("linked"));
    std::os::unix::fs::symlink("real/linked.yaml", dir.join("app/linked.yaml")).expect("symlink");
    write(&dir, "app/hard.yaml", &referring("hard"));
    fs::hard_link(dir.join("app/hard.yaml"), dir.join("other-name.yaml")).expect("hard link");
    write(
        &dir,
        "app/kustomization.yaml",
        &with_var(&["plain.yaml", "linked.yaml", "hard.yaml"]),
    );
    let plain = dir.join("app/plain.yaml");
    fs::set_permissions(&plain, fs::Permissions::from_mode(0o640)).expect("chmod");
    let inode = fs::metadata(&plain).expect("stat").ino();

    let out = krusty(&dir.join("app"), &["edit", "fix", "--vars"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let placeholder = |name: &str| referring(name).replace("$(DB)", "DB_PLACEHOLDER");
    // Replaced whole, its mode kept.
    assert_eq!(read(&plain), placeholder("plain"));
    let meta = fs::metadata(&plain).expect("stat");
    assert_ne!(meta.ino(), inode, "replaced whole, not written in place");
    assert_eq!(meta.mode() & 0o7777, 0o640, "mode kept");
    // A link inside the folder is followed and kept.
    assert!(fs::symlink_metadata(dir.join("app/linked.yaml"))
        .expect("link")
        .file_type()
        .is_symlink());
    assert_eq!(
        read(&dir.join("app/real/linked.yaml")),
        placeholder("linked")
    );
    // A file with other hard links is written in place: both names see it.
    assert_eq!(read(&dir.join("other-name.yaml")), placeholder("hard"));
    assert_eq!(
        fs::metadata(dir.join("app/hard.yaml"))
            .expect("stat")
            .nlink(),
        2
    );
    assert_eq!(
        listing(&dir.join("app")),
        [
            "hard.yaml",
            "kustomization.yaml",
            "linked.yaml",
            "plain.yaml",
            "real",
            "service.yaml"
        ],
        "no temporary file left"
    );
    assert_eq!(listing(&dir.join("app/real")), ["linked.yaml"]);
}
