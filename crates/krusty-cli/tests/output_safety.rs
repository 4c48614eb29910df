//! Writing output safely: what is at an `-o` path is written the way
//! Kustomize writes it (through devices, FIFOs and links), regular files
//! are replaced whole keeping their mode, owner and hard links, new files
//! follow the umask, and `-o DIR` changes the folder all or nothing, even
//! when a write fails or krusty is interrupted.

use std::fs;
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

mod support;
use support::unix::{limit_file_size, listing, mkfifo, null_device};
use support::write;

fn scratch(name: &str) -> PathBuf {
    support::scratch("output-safety", name)
}

/// A kustomization in `dir/k` with two ConfigMaps; returns what a build
/// prints.
fn tree(dir: &Path) -> Vec<u8> {
    write(dir, "k/kustomization.yaml", "resources:\n- cm.yaml\n");
    write(
        dir,
        "k/cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  x: \"1\"\n---\n\
         apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\ndata:\n  y: \"2\"\n",
    );
    let out = krusty(dir, &["build", "k"]);
    assert!(out.status.success(), "{}", stderr(&out));
    out.stdout
}

fn krusty(cwd: &Path, args: &[&str]) -> Output {
    support::krusty_output(cwd, args)
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn device_node_is_written_through_not_replaced() {
    let dir = scratch("device");
    tree(&dir);
    let node = dir.join("null");
    if let Err(e) = null_device(&node) {
        eprintln!("SKIPPED: cannot make a device node here: {e}");
        return;
    }
    let out = krusty(&dir, &["build", "k", "-o", "null"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let meta = fs::symlink_metadata(&node).expect("still there");
    assert!(
        meta.file_type().is_char_device(),
        "the device node was replaced by a {:?}",
        meta.file_type()
    );
    assert_eq!(listing(&dir), ["k", "null"], "no temporary file left");
}

#[test]
fn fifo_is_written_through() {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let dir = scratch("fifo");
    let want = tree(&dir);
    let fifo = dir.join("pipe");
    mkfifo(&fifo);
    // A reader that never blocks, so a krusty that replaces the FIFO
    // fails the test instead of hanging it.
    let mut reader = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(&fifo)
        .expect("open fifo");
    let mut child = support::krusty_command()
        .args(["build", "k", "-o", "pipe"])
        .current_dir(&dir)
        .spawn()
        .expect("krusty starts");
    let (mut got, mut buf) = (Vec::new(), [0u8; 65536]);
    let started = Instant::now();
    let status = loop {
        match reader.read(&mut buf) {
            Ok(0) => {
                if let Some(status) = child.try_wait().expect("wait") {
                    break status;
                }
            }
            Ok(n) => {
                got.extend_from_slice(&buf[..n]);
                continue;
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(e) => panic!("reading the FIFO: {e}"),
        }
        assert!(started.elapsed() < Duration::from_secs(30), "krusty hangs");
        std::thread::sleep(Duration::from_millis(5));
    };
    assert!(status.success());
    assert_eq!(got, want, "the output went through the FIFO");
    let meta = fs::symlink_metadata(&fifo).expect("still there");
    assert!(meta.file_type().is_fifo(), "the FIFO was replaced");
}

#[test]
fn symlink_is_followed_and_kept() {
    let dir = scratch("symlink");
    let want = tree(&dir);
    fs::write(dir.join("real.yaml"), "old\n").expect("write");
    std::os::unix::fs::symlink("real.yaml", dir.join("link.yaml")).expect("symlink");
    std::os::unix::fs::symlink("new.yaml", dir.join("dangling.yaml")).expect("symlink");

    let out = krusty(&dir, &["build", "k", "-o", "link.yaml"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(fs::symlink_metadata(dir.join("link.yaml"))
        .expect("link")
        .file_type()
        .is_symlink());
    assert_eq!(fs::read(dir.join("real.yaml")).expect("read"), want);

    // A link to nothing yet creates what it names, as Kustomize does.
    let out = krusty(&dir, &["build", "k", "-o", "dangling.yaml"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(fs::read(dir.join("new.yaml")).expect("read"), want);
    assert!(listing(&dir).iter().all(|n| !n.contains("krusty")));
}

#[test]
fn existing_file_keeps_mode_owner_and_hard_links() {
    let dir = scratch("mode");
    let want = tree(&dir);
    let secret = dir.join("secret.yaml");
    fs::write(&secret, "old\n").expect("write");
    fs::set_permissions(&secret, fs::Permissions::from_mode(0o600)).expect("chmod");
    // As root, give the file another owner; elsewhere the owner is ours.
    let owner = (65534, 65534);
    let chowned = std::os::unix::fs::chown(&secret, Some(owner.0), Some(owner.1)).is_ok();

    let out = krusty(&dir, &["build", "k", "-o", "secret.yaml"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let meta = fs::metadata(&secret).expect("stat");
    assert_eq!(meta.mode() & 0o7777, 0o600, "mode kept");
    if chowned {
        assert_eq!((meta.uid(), meta.gid()), owner, "owner kept");
    }
    assert_eq!(fs::read(&secret).expect("read"), want);

    // A file with another hard link is written in place: both names see it.
    let linked = dir.join("linked.yaml");
    fs::write(&linked, "old\n").expect("write");
    fs::hard_link(&linked, dir.join("other-name.yaml")).expect("hard link");
    let out = krusty(&dir, &["build", "k", "-o", "linked.yaml"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(fs::read(dir.join("other-name.yaml")).expect("read"), want);
    assert_eq!(fs::metadata(&linked).expect("stat").nlink(), 2);
}

/// Runs krusty with a umask set in the child.
fn krusty_with_umask(cwd: &Path, mask: libc::mode_t, args: &[&str]) -> Output {
    let mut cmd = support::krusty_command();
    cmd.args(args).current_dir(cwd);
    // SAFETY: umask is async-signal-safe and touches only the child.
    unsafe {
        cmd.pre_exec(move || {
            libc::umask(mask);
            Ok(())
        });
    }
    cmd.output().expect("krusty runs")
}

#[test]
fn new_files_follow_the_umask() {
    let dir = scratch("umask");
    tree(&dir);
    fs::create_dir(dir.join("out")).expect("mkdir");
    for (mask, mode) in [(0o077, 0o600), (0o022, 0o644)] {
        let name = format!("new-{mask:o}.yaml");
        let out = krusty_with_umask(&dir, mask, &["build", "k", "-o", &name]);
        assert!(out.status.success(), "{}", stderr(&out));
        let got = fs::metadata(dir.join(&name)).expect("stat").mode() & 0o777;
        assert_eq!(got, mode, "file with umask {mask:o}");
    }
    let out = krusty_with_umask(&dir, 0o077, &["build", "k", "-o", "out"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let got = fs::metadata(dir.join("out/v1_configmap_a.yaml"))
        .expect("stat")
        .mode()
        & 0o777;
    assert_eq!(got, 0o600, "directory output with umask 077");
}

#[test]
fn empty_output_path_means_stdout() {
    let dir = scratch("empty-path");
    let want = tree(&dir);
    let out = krusty(&dir, &["build", "k", "-o", ""]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(out.stdout, want);
}

#[test]
fn missing_parent_folder_fails_and_names_the_path() {
    let dir = scratch("missing-parent");
    tree(&dir);
    let out = krusty(&dir, &["build", "k", "-o", "nope/x.yaml"]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("nope/x.yaml"), "{}", stderr(&out));
    assert!(out.stdout.is_empty());
}

#[test]
fn directory_output_keeps_other_files_and_existing_modes() {
    let dir = scratch("dir-keeps");
    tree(&dir);
    let out_dir = dir.join("out");
    fs::create_dir(&out_dir).expect("mkdir");
    fs::write(out_dir.join("other"), "mine\n").expect("write");
    let a = out_dir.join("v1_configmap_a.yaml");
    fs::write(&a, "old\n").expect("write");
    fs::set_permissions(&a, fs::Permissions::from_mode(0o600)).expect("chmod");
    let out = krusty(&dir, &["build", "k", "-o", "out"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        listing(&out_dir),
        ["other", "v1_configmap_a.yaml", "v1_configmap_b.yaml"]
    );
    assert_eq!(
        fs::read_to_string(out_dir.join("other")).expect("read"),
        "mine\n"
    );
    assert_eq!(fs::metadata(&a).expect("stat").mode() & 0o777, 0o600);
    assert!(fs::read_to_string(&a).expect("read").contains("name: a"));
}

/// A tree whose second resource renders to more than `limit` bytes.
fn tree_with_large_resource(dir: &Path, limit: usize) {
    write(dir, "k/kustomization.yaml", "resources:\n- cm.yaml\n");
    let big = "v".repeat(limit * 2);
    write(
        dir,
        "k/cm.yaml",
        &format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  x: \"1\"\n---\n\
             apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\ndata:\n  y: {big}\n"
        ),
    );
}

/// Runs krusty with a file size limit (`ulimit -f`) of `limit` bytes.
fn krusty_with_file_size_limit(cwd: &Path, limit: usize, args: &[&str]) -> Output {
    let mut cmd = support::krusty_command();
    cmd.args(args).current_dir(cwd);
    limit_file_size(&mut cmd, limit);
    cmd.output().expect("krusty runs")
}

#[test]
fn directory_output_is_all_or_nothing_when_a_write_fails() {
    let dir = scratch("dir-fails");
    const LIMIT: usize = 4096;
    tree_with_large_resource(&dir, LIMIT);
    let out_dir = dir.join("out");
    fs::create_dir(&out_dir).expect("mkdir");
    fs::write(out_dir.join("v1_configmap_a.yaml"), "old\n").expect("write");
    // A file size limit stands in for a full disk: the second file cannot
    // be written.
    let out = krusty_with_file_size_limit(&dir, LIMIT, &["build", "k", "-o", "out"]);
    assert!(
        !out.status.success(),
        "the oversized file cannot be written"
    );
    assert!(
        stderr(&out).contains("v1_configmap_b.yaml"),
        "{}",
        stderr(&out)
    );
    assert_eq!(listing(&out_dir), ["v1_configmap_a.yaml"], "nothing added");
    assert_eq!(
        fs::read_to_string(out_dir.join("v1_configmap_a.yaml")).expect("read"),
        "old\n",
        "nothing changed"
    );
}

#[test]
fn file_output_is_untouched_when_the_write_fails() {
    let dir = scratch("file-fails");
    const LIMIT: usize = 4096;
    tree_with_large_resource(&dir, LIMIT);
    fs::write(dir.join("all.yaml"), "old\n").expect("write");
    let out = krusty_with_file_size_limit(&dir, LIMIT, &["build", "k", "-o", "all.yaml"]);
    assert!(!out.status.success());
    assert_eq!(
        fs::read_to_string(dir.join("all.yaml")).expect("read"),
        "old\n"
    );
    assert_eq!(listing(&dir), ["all.yaml", "k"], "no temporary file left");
}

#[test]
fn interrupted_directory_output_leaves_nothing_behind() {
    let dir = scratch("dir-interrupted");
    tree(&dir);
    let out_dir = dir.join("out");
    fs::create_dir(&out_dir).expect("mkdir");
    // A FIFO among the output paths: krusty opens it (and waits for a
    // reader) after staging the other files and before moving any.
    let fifo = out_dir.join("v1_configmap_b.yaml");
    mkfifo(&fifo);
    let mut child = support::krusty_command()
        .args(["build", "k", "-o", "out"])
        .current_dir(&dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("krusty starts");
    // Wait until the private folder holds the staged file.
    let started = Instant::now();
    let staged = loop {
        let staging: Vec<PathBuf> = fs::read_dir(&out_dir)
            .expect("read dir")
            .map(|e| e.expect("entry").path())
            .filter(|p| {
                p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with(".krusty-"))
            })
            .collect();
        if staging
            .iter()
            .any(|s| s.join("v1_configmap_a.yaml").exists())
        {
            break true;
        }
        if started.elapsed() > Duration::from_secs(20) {
            break false;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    // Give it a moment to reach the FIFO, then interrupt.
    std::thread::sleep(Duration::from_millis(200));
    // SAFETY: kill sends a signal to our own child.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
    let status = child.wait().expect("wait");
    assert!(staged, "krusty never staged its output");
    assert_eq!(status.code(), Some(128 + libc::SIGTERM), "{status:?}");
    assert_eq!(
        listing(&out_dir),
        ["v1_configmap_b.yaml"],
        "only the FIFO: nothing staged or moved is left"
    );
}

#[test]
fn several_targets_keep_mode_owner_and_hard_links() {
    let dir = scratch("targets-mode");
    let want = tree(&dir);
    write(&dir, "k2/kustomization.yaml", "resources:\n- ../k\n");
    let out_dir = dir.join("out");
    fs::create_dir(&out_dir).expect("mkdir");
    // A Secret's file kept private, owned (as root) by someone else.
    let secret = out_dir.join("k.yaml");
    fs::write(&secret, "old\n").expect("write");
    fs::set_permissions(&secret, fs::Permissions::from_mode(0o600)).expect("chmod");
    let owner = (65534, 65534);
    let chowned = std::os::unix::fs::chown(&secret, Some(owner.0), Some(owner.1)).is_ok();
    // A file with another hard link, outside the output folder.
    let linked = out_dir.join("k2.yaml");
    fs::write(&linked, "old\n").expect("write");
    fs::hard_link(&linked, dir.join("other-name.yaml")).expect("hard link");

    let out = krusty(&dir, &["build", "k", "k2", "-o", "out"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let meta = fs::metadata(&secret).expect("stat");
    assert_eq!(meta.mode() & 0o7777, 0o600, "mode kept");
    if chowned {
        assert_eq!((meta.uid(), meta.gid()), owner, "owner kept");
    }
    assert_eq!(fs::read(&secret).expect("read"), want);
    assert_eq!(
        fs::read(dir.join("other-name.yaml")).expect("read"),
        want,
        "written in place: both names see it"
    );
    assert_eq!(fs::metadata(&linked).expect("stat").nlink(), 2);
    assert_eq!(listing(&out_dir), ["k.yaml", "k2.yaml"], "nothing left");
}

#[test]
fn several_targets_write_through_a_device_node() {
    let dir = scratch("targets-device");
    tree(&dir);
    write(&dir, "k2/kustomization.yaml", "resources:\n- ../k\n");
    let out_dir = dir.join("out");
    fs::create_dir(&out_dir).expect("mkdir");
    let node = out_dir.join("k.yaml");
    if let Err(e) = null_device(&node) {
        eprintln!("SKIPPED: cannot make a device node here: {e}");
        return;
    }
    let out = krusty(&dir, &["build", "k", "k2", "-o", "out"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        fs::symlink_metadata(&node)
            .expect("still there")
            .file_type()
            .is_char_device(),
        "the device node was replaced"
    );
    assert_eq!(listing(&out_dir), ["k.yaml", "k2.yaml"], "nothing left");
}

#[test]
fn several_targets_fail_whole_when_a_write_fails() {
    let dir = scratch("targets-fails");
    const LIMIT: usize = 4096;
    tree_with_large_resource(&dir, LIMIT);
    write(&dir, "small/kustomization.yaml", "namePrefix: p-\n");
    let out_dir = dir.join("out");
    fs::create_dir(&out_dir).expect("mkdir");
    fs::write(out_dir.join("small.yaml"), "old\n").expect("write");
    let out = krusty_with_file_size_limit(&dir, LIMIT, &["build", "small", "k", "-o", "out"]);
    assert!(!out.status.success(), "the large target cannot be written");
    assert!(stderr(&out).contains("k.yaml"), "{}", stderr(&out));
    assert_eq!(listing(&out_dir), ["small.yaml"], "nothing added");
    assert_eq!(
        fs::read_to_string(out_dir.join("small.yaml")).expect("read"),
        "old\n"
    );
}
