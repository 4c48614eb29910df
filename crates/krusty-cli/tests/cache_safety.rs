//! The cache folder against damage, other users and concurrent builds,
//! with a git server and a file server on loopback:
//!
//! - entries are verified when used: a checkout against the manifest made
//!   when it was published, a copy of an HTTP file against its length and
//!   digest, an exec program against its digest; a damaged entry is
//!   fetched again online and is an error offline;
//! - a cache folder others can write, or another user owns, is refused;
//! - `krusty cache clean` removes only a folder tagged as krusty's cache,
//!   and through a symlink it empties the folder the link names;
//! - many builds on one empty cache all succeed, with the same output;
//! - everything a build keeps lies in the cache folder: its home, XDG
//!   folders and temporary folder stay empty.

mod support;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::OnceLock;

use krusty_fetch::oci::sha256_hex;
use krusty_fetch::{FetchError, FetchOptions, Fetcher};
use support::{bare_clone, git_command, output_text, run, scratch, serve, write};

const BASE_CM: &str =
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: base\ndata:\n  color: blue\n";
const BASE_SECRET: &str =
    "apiVersion: v1\nkind: Secret\nmetadata:\n  name: base\nstringData:\n  key: value\n";
const REMOTE_FILE: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: first\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: second\n";
const PROGRAM: &str = "#!/bin/sh\necho \"hello from the function\"\n";
/// A KRM function that hands its ResourceList back unchanged.
const ECHO_FUNCTION: &str = "#!/bin/sh\nexec cat\n";
/// A Starlark program that annotates every item.
const ANNOTATE_STAR: &str = "for r in ctx.resource_list[\"items\"]:\n    r[\"metadata\"].setdefault(\"annotations\", {})[\"fetched\"] = \"yes\"\n";

/// The servers every test shares: a git server over HTTP (`base.git`:
/// `app/` with a ConfigMap and a Secret) and a plain HTTP file server
/// (`remote.yaml`, two ConfigMaps; `fn`, a program; `fn.tar.gz`, an
/// archive holding it as `bin/fn`).
struct World {
    git: String,
    files: String,
    files_dir: PathBuf,
    /// Keeps the servers' stdin open: they stop when the tests end.
    _servers: Vec<Child>,
}

fn world() -> &'static World {
    static WORLD: OnceLock<World> = OnceLock::new();
    WORLD.get_or_init(World::start)
}

impl World {
    fn start() -> World {
        let dir = scratch("cache-safety", "world");
        let work = dir.join("work");
        write(
            &work,
            "app/kustomization.yaml",
            "resources:\n- cm.yaml\n- secret.yaml\n",
        );
        write(&work, "app/cm.yaml", BASE_CM);
        write(&work, "app/secret.yaml", BASE_SECRET);
        run(git_command(&work).args(["init", "-q", "-b", "main"]));
        run(git_command(&work).args(["add", "-A"]));
        run(git_command(&work).args(["commit", "-qm", "base"]));
        let srv = dir.join("srv");
        std::fs::create_dir_all(&srv).unwrap();
        bare_clone(&work, &srv.join("base.git"));
        let files_dir = dir.join("files");
        write(&files_dir, "remote.yaml", REMOTE_FILE);
        write(&files_dir, "fn", PROGRAM);
        write(&files_dir, "tree/bin/fn", PROGRAM);
        write(&files_dir, "echo-fn", ECHO_FUNCTION);
        write(&files_dir, "annotate.star", ANNOTATE_STAR);
        run(Command::new("tar")
            .arg("-czf")
            .arg(files_dir.join("fn.tar.gz"))
            .arg("-C")
            .arg(files_dir.join("tree"))
            .arg("bin/fn"));
        let os = |p: &Path| p.as_os_str().to_owned();
        let (git, git_port) = serve(&[std::ffi::OsStr::new("0"), &os(&srv)]);
        let (files, files_port) = serve(&[
            std::ffi::OsStr::new("0"),
            &os(&files_dir),
            std::ffi::OsStr::new("--static"),
        ]);
        World {
            git: format!("http://127.0.0.1:{git_port}"),
            files: format!("http://127.0.0.1:{files_port}"),
            files_dir,
            _servers: vec![git, files],
        }
    }

    /// A kustomization in `dir/in` with the remote base and the remote
    /// file; its path.
    fn tree(&self, dir: &Path) -> PathBuf {
        write(
            dir,
            "in/kustomization.yaml",
            &format!(
                "resources:\n- {}/base.git//app?ref=main\n- {}/remote.yaml\n",
                self.git, self.files
            ),
        );
        dir.join("in")
    }
}

/// `krusty ARGS` on the cache `cache`.
fn krusty(cache: &Path, args: &[&std::ffi::OsStr]) -> Command {
    let mut cmd = support::krusty_command();
    cmd.args(args)
        .env("KRUSTY_CACHE_DIR", cache)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1");
    cmd
}

/// `krusty build TARGET [--offline]` on `cache`.
fn build(cache: &Path, target: &Path, offline: bool) -> Output {
    let mut args = vec![std::ffi::OsStr::new("build"), target.as_os_str()];
    if offline {
        args.push(std::ffi::OsStr::new("--offline"));
    }
    krusty(cache, &args).output().unwrap()
}

/// The stdout of a build that succeeds.
fn build_ok(cache: &Path, target: &Path, offline: bool) -> String {
    let out = build(cache, target, offline);
    let (stdout, stderr) = output_text(&out);
    assert!(out.status.success(), "the build failed:\n{stderr}");
    stdout
}

/// The stderr of a build that fails, which printed nothing.
fn build_err(cache: &Path, target: &Path, offline: bool) -> String {
    let out = build(cache, target, offline);
    let (stdout, stderr) = output_text(&out);
    assert!(!out.status.success(), "the build succeeded:\n{stdout}");
    assert_eq!(stdout, "", "a failed build prints nothing");
    stderr
}

/// `krusty cache clean` on `cache`.
fn clean(cache: &Path) -> Output {
    krusty(
        cache,
        &[std::ffi::OsStr::new("cache"), std::ffi::OsStr::new("clean")],
    )
    .output()
    .unwrap()
}

/// Every file under `dir` named `name`.
fn find(dir: &Path, name: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return found;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let kind = entry.file_type().unwrap();
        if kind.is_dir() {
            found.extend(find(&path, name));
        } else if entry.file_name() == name {
            found.push(path);
        }
    }
    found
}

/// The one file named `name` in the cache.
fn cached(cache: &Path, name: &str) -> PathBuf {
    let found = find(cache, name);
    assert_eq!(found.len(), 1, "{name} in the cache: {found:?}");
    found.into_iter().next().unwrap()
}

/// The copy of the remote file in the cache (the one file under `http/`).
fn http_copy(cache: &Path) -> PathBuf {
    let entries: Vec<PathBuf> = std::fs::read_dir(cache.join("http"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(entries.len(), 1, "{entries:?}");
    entries.into_iter().next().unwrap()
}

/// Replaces what `path` holds with `content` (made writable first).
fn overwrite(path: &Path, content: &[u8]) {
    let mut perms = std::fs::metadata(path).unwrap().permissions();
    perms.set_mode(perms.mode() | 0o200);
    std::fs::set_permissions(path, perms).unwrap();
    std::fs::write(path, content).unwrap();
}

#[test]
fn a_changed_checkout_is_fetched_again_online_and_refused_offline() {
    let world = world();
    let dir = scratch("cache-safety", "changed-checkout");
    let target = world.tree(&dir);
    let cache = dir.join("cache");
    let expected = build_ok(&cache, &target, false);
    assert!(expected.contains("color: blue"), "{expected}");

    // A file changed in place: offline, an error naming the entry and the
    // fix; online, fetched again (and the cache repaired).
    overwrite(
        &cached(&cache, "cm.yaml"),
        BASE_CM.replace("blue", "red").as_bytes(),
    );
    let err = build_err(&cache, &target, true);
    assert!(
        err.contains(&format!("{}/base.git", world.git))
            && err.contains("damaged")
            && err.contains("app/cm.yaml")
            && err.contains("without --offline"),
        "{err}"
    );
    assert_eq!(build_ok(&cache, &target, false), expected);
    assert_eq!(build_ok(&cache, &target, true), expected);

    // Truncated, removed, or a file added: the same.
    let truncate = |p: &Path| overwrite(p, &BASE_CM.as_bytes()[..20]);
    truncate(&cached(&cache, "cm.yaml"));
    assert_eq!(build_ok(&cache, &target, false), expected);
    std::fs::remove_file(cached(&cache, "secret.yaml")).unwrap();
    assert!(build_err(&cache, &target, true).contains("app/secret.yaml"));
    assert_eq!(build_ok(&cache, &target, false), expected);
    let app = cached(&cache, "cm.yaml").parent().unwrap().to_path_buf();
    write(&app, "planted.yaml", BASE_CM);
    assert!(build_err(&cache, &target, true).contains("app/planted.yaml"));
    assert_eq!(build_ok(&cache, &target, false), expected);
    assert!(find(&cache, "planted.yaml").is_empty());
}

#[test]
fn a_truncated_copy_of_a_remote_file_is_an_error_offline() {
    let world = world();
    let dir = scratch("cache-safety", "truncated-copy");
    let target = world.tree(&dir);
    let cache = dir.join("cache");
    let expected = build_ok(&cache, &target, false);
    assert!(expected.contains("name: second"), "{expected}");
    // Cut after the first document: what is left still reads as YAML.
    let copy = http_copy(&cache);
    let bytes = std::fs::read(&copy).unwrap();
    let cut = bytes.windows(5).position(|w| w == b"\n---\n").unwrap() + 5;
    overwrite(&copy, &bytes[..cut]);
    let err = build_err(&cache, &target, true);
    assert!(
        err.contains(&format!("{}/remote.yaml", world.files))
            && err.contains("damaged")
            && err.contains("without --offline"),
        "{err}"
    );
    // Online, it is fetched (and kept) again.
    assert_eq!(build_ok(&cache, &target, false), expected);
    assert_eq!(build_ok(&cache, &target, true), expected);
}

/// A fetcher on `cache`.
fn fetcher(cache: &Path, offline: bool) -> Fetcher {
    Fetcher::new(FetchOptions {
        offline,
        cache_dir: Some(cache.to_path_buf()),
        ..FetchOptions::default()
    })
}

#[test]
fn a_changed_exec_program_is_fetched_again_or_refused() {
    let world = world();
    let dir = scratch("cache-safety", "changed-program");
    let files = &world.files_dir;
    let plain_sha = sha256_hex(PROGRAM.as_bytes());
    let archive_sha = sha256_hex(&std::fs::read(files.join("fn.tar.gz")).unwrap());
    let sources = [
        ("file://fn".to_string(), &plain_sha, "fn"),
        ("file://fn.tar.gz".to_string(), &archive_sha, "bin/fn"),
        (format!("{}/fn", world.files), &plain_sha, "fn"),
        (format!("{}/fn.tar.gz", world.files), &archive_sha, "bin/fn"),
    ];
    for (n, (uri, sha, bin)) in sources.iter().enumerate() {
        let cache = dir.join(format!("cache-{n}"));
        let kept = fetcher(&cache, false)
            .verified_executable(uri, sha, bin, files)
            .unwrap();
        assert_eq!(std::fs::read_to_string(&kept).unwrap(), PROGRAM);
        for damage in [
            &b"#!/bin/sh\necho tampered\n"[..],
            &PROGRAM.as_bytes()[..9],
            b"",
        ] {
            overwrite(&kept, damage);
            if uri.starts_with("http") {
                let err = fetcher(&cache, true)
                    .verified_executable(uri, sha, bin, files)
                    .unwrap_err();
                assert!(matches!(err, FetchError::Offline(_)), "{uri}: {err:?}");
                let text = err.to_string();
                assert!(
                    text.contains(uri)
                        && text.contains("damaged")
                        && text.contains("without --offline"),
                    "{text}"
                );
            }
            let again = fetcher(&cache, false)
                .verified_executable(uri, sha, bin, files)
                .unwrap();
            assert_eq!(again, kept, "{uri}");
            assert_eq!(std::fs::read_to_string(&again).unwrap(), PROGRAM, "{uri}");
        }
    }
}

/// A private folder for a cache test, made with `mode`.
fn folder(path: &Path, mode: u32) {
    std::fs::create_dir_all(path).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

#[test]
fn a_cache_others_can_write_is_refused() {
    let world = world();
    let dir = scratch("cache-safety", "writable");
    let target = world.tree(&dir);
    for (mode, what) in [(0o777, "others"), (0o770, "its group"), (0o1777, "others")] {
        let cache = dir.join(format!("cache-{mode:o}"));
        folder(&cache, mode);
        let err = build_err(&cache, &target, false);
        assert!(
            err.contains(&cache.display().to_string())
                && err.contains(&format!("writable by {what}"))
                && err.contains("chmod go-w"),
            "{mode:o}: {err}"
        );
        assert!(!cache.join("git").exists(), "nothing is written to it");
    }
    // A folder above it that others can write: refused too, unless it is
    // sticky (as /tmp is), where no one else can move the cache away.
    let open = dir.join("open");
    folder(&open, 0o777);
    let err = build_err(&open.join("cache"), &target, false);
    assert!(
        err.contains(&open.display().to_string()) && err.contains("writable by others"),
        "{err}"
    );
    let sticky = dir.join("sticky");
    folder(&sticky, 0o1777);
    build_ok(&sticky.join("cache"), &target, false);
    // A private cache under a group-writable folder of the user's.
    std::fs::set_permissions(&sticky, std::fs::Permissions::from_mode(0o770)).unwrap();
    let err = build_err(&sticky.join("cache"), &target, true);
    assert!(err.contains("writable by its group"), "{err}");
}

#[test]
fn a_cache_another_user_owns_is_refused() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        support::skip("a_cache_another_user_owns_is_refused: needs root to give a folder away");
        return;
    }
    let world = world();
    let dir = scratch("cache-safety", "owner");
    let target = world.tree(&dir);
    let nobody = 65534;
    let cache = dir.join("cache");
    build_ok(&cache, &target, false);
    std::os::unix::fs::chown(&cache, Some(nobody), Some(nobody)).unwrap();
    let err = build_err(&cache, &target, true);
    assert!(
        err.contains(&cache.display().to_string())
            && err.contains(&format!("owned by uid {nobody}"))
            && err.contains("KRUSTY_CACHE_DIR"),
        "{err}"
    );
    // A folder above it another user owns (who could replace the cache).
    std::os::unix::fs::chown(&cache, Some(0), Some(0)).unwrap();
    let theirs = dir.join("theirs");
    folder(&theirs, 0o755);
    std::os::unix::fs::chown(&theirs, Some(nobody), Some(nobody)).unwrap();
    let err = build_err(&theirs.join("cache"), &target, false);
    assert!(
        err.contains(&theirs.display().to_string()) && err.contains("owned by uid"),
        "{err}"
    );
    // A symlink another user owns in a sticky folder (they may replace it).
    let sticky = dir.join("sticky");
    folder(&sticky, 0o1777);
    let link = sticky.join("link");
    std::os::unix::fs::symlink(&cache, &link).unwrap();
    build_ok(&link, &target, true);
    std::os::unix::fs::lchown(&link, Some(nobody), Some(nobody)).unwrap();
    let err = build_err(&link, &target, true);
    assert!(
        err.contains(&link.display().to_string()) && err.contains("owned by uid"),
        "{err}"
    );
}

#[test]
fn clean_removes_only_a_tagged_cache() {
    let world = world();
    let dir = scratch("cache-safety", "clean-tagged");
    let target = world.tree(&dir);
    let cache = dir.join("cache");
    build_ok(&cache, &target, false);
    let tag = std::fs::read_to_string(cache.join("CACHEDIR.TAG")).unwrap();
    assert!(
        tag.starts_with("Signature: 8a477f597d28d172789f06886806bc55\n")
            && tag.contains("created by krusty"),
        "{tag}"
    );
    let out = clean(&cache);
    assert!(out.status.success(), "{}", output_text(&out).1);
    assert!(!cache.exists());

    // A folder that is not krusty's cache is left alone, and a build does
    // not write into it.
    let mine = dir.join("mine");
    write(&mine, "notes.txt", "mine\n");
    write(&mine, "git/config", "mine\n");
    let out = clean(&mine);
    let (_, err) = output_text(&out);
    assert!(
        !out.status.success(),
        "cleaned a folder that is not a cache"
    );
    assert!(
        err.contains(&mine.display().to_string()) && err.contains("CACHEDIR.TAG"),
        "{err}"
    );
    assert!(mine.join("notes.txt").is_file() && mine.join("git/config").is_file());
    let err = build_err(&mine, &target, false);
    assert!(
        err.contains("not krusty's cache") && err.contains("notes.txt"),
        "{err}"
    );
    assert!(!mine.join("tmp").exists() && !mine.join("http").exists());
    // Another tool's cache is not krusty's either.
    let other = dir.join("other");
    write(
        &other,
        "CACHEDIR.TAG",
        "Signature: 8a477f597d28d172789f06886806bc55\n# This file is a cache directory tag created by another tool.\n",
    );
    write(&other, "data", "theirs\n");
    assert!(!clean(&other).status.success());
    assert!(other.join("data").is_file());
}

#[test]
fn an_untagged_cache_of_krustys_layout_is_tagged_on_use() {
    let world = world();
    let dir = scratch("cache-safety", "untagged");
    let target = world.tree(&dir);
    let cache = dir.join("cache");
    let expected = build_ok(&cache, &target, false);
    // As an older krusty may have left it, or a user made it (empty).
    std::fs::remove_file(cache.join("CACHEDIR.TAG")).unwrap();
    assert!(!clean(&cache).status.success());
    assert_eq!(build_ok(&cache, &target, false), expected);
    assert!(cache.join("CACHEDIR.TAG").is_file());
    let empty = dir.join("empty");
    folder(&empty, 0o700);
    assert_eq!(build_ok(&empty, &target, false), expected);
    assert!(empty.join("CACHEDIR.TAG").is_file());
    assert!(clean(&empty).status.success());
}

#[test]
fn clean_through_a_symlink_empties_the_folder_it_names() {
    let world = world();
    let dir = scratch("cache-safety", "clean-link");
    let target = world.tree(&dir);
    let real = dir.join("real");
    let link = dir.join("link");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    build_ok(&link, &target, false);
    assert!(real.join("CACHEDIR.TAG").is_file() && real.join("git").is_dir());
    // A link inside the cache to a folder of the user's: removed as a link.
    let elsewhere = dir.join("elsewhere");
    write(&elsewhere, "keep.txt", "keep\n");
    std::os::unix::fs::symlink(&elsewhere, real.join("git").join("away")).unwrap();
    let out = clean(&link);
    assert!(out.status.success(), "{}", output_text(&out).1);
    let meta = std::fs::symlink_metadata(&link).unwrap();
    assert!(meta.file_type().is_symlink(), "the link is kept");
    assert!(real.is_dir(), "the folder it names is kept");
    let left: Vec<_> = std::fs::read_dir(&real).unwrap().collect();
    assert!(left.is_empty(), "emptied: {left:?}");
    assert!(elsewhere.join("keep.txt").is_file());
    // It serves as a cache again.
    build_ok(&link, &target, false);
}

#[test]
fn concurrent_builds_on_an_empty_cache_all_succeed() {
    let world = world();
    let dir = scratch("cache-safety", "concurrent");
    let target = world.tree(&dir);
    let expected = build_ok(&dir.join("reference-cache"), &target, false);
    for round in 0..4 {
        let cache = dir.join(format!("cache-{round}"));
        let children: Vec<Child> = (0..24)
            .map(|_| {
                krusty(&cache, &[std::ffi::OsStr::new("build"), target.as_os_str()])
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for child in children {
            let out = child.wait_with_output().unwrap();
            let (stdout, stderr) = output_text(&out);
            assert!(out.status.success(), "round {round}: {stderr}");
            assert_eq!(stdout, expected, "round {round}");
        }
        let staging: Vec<_> = std::fs::read_dir(cache.join("tmp")).unwrap().collect();
        assert!(staging.is_empty(), "staging folders left: {staging:?}");
        assert_eq!(build_ok(&cache, &target, true), expected);
    }
}

/// A function catalog of one container function, `example.com/v1 Paint`.
const CATALOG: &str = "apiVersion: config.kubernetes.io/v1alpha1\nkind: Catalog\nmetadata:\n  name: cached\nspec:\n  krmFunctions:\n  - group: example.com\n    names:\n      kind: Paint\n    versions:\n    - name: v1\n      runtime:\n        container:\n          image: example.com/paint:v1\n";

/// `krusty view catalog REFERENCE [--offline]` on `cache`, with at most
/// `data_limit` bytes of data memory (`RLIMIT_DATA`) when given.
fn view(cache: &Path, reference: &str, offline: bool, data_limit: Option<u64>) -> Output {
    let mut args = vec![
        std::ffi::OsStr::new("view"),
        std::ffi::OsStr::new("catalog"),
        std::ffi::OsStr::new(reference),
    ];
    if offline {
        args.push(std::ffi::OsStr::new("--offline"));
    }
    let mut cmd = krusty(cache, &args);
    if let Some(limit) = data_limit {
        use std::os::unix::process::CommandExt;
        // SAFETY: setrlimit is async-signal-safe and touches only the
        // child about to exec.
        unsafe {
            cmd.pre_exec(move || {
                let rlimit = libc::rlimit {
                    rlim_cur: limit,
                    rlim_max: limit,
                };
                match libc::setrlimit(libc::RLIMIT_DATA, &rlimit) {
                    0 => Ok(()),
                    _ => Err(std::io::Error::last_os_error()),
                }
            });
        }
    }
    cmd.output().unwrap()
}

/// What `view` printed, when it succeeded.
fn view_ok(cache: &Path, reference: &str, offline: bool) -> String {
    let out = view(cache, reference, offline, None);
    let (stdout, stderr) = output_text(&out);
    assert!(out.status.success(), "view catalog failed:\n{stderr}");
    stdout
}

/// What `view` said, when it failed having printed nothing.
fn view_err(cache: &Path, reference: &str, offline: bool, data_limit: Option<u64>) -> String {
    let out = view(cache, reference, offline, data_limit);
    let (stdout, stderr) = output_text(&out);
    assert!(!out.status.success(), "view catalog succeeded:\n{stdout}");
    assert_eq!(stdout, "", "a failed view prints nothing");
    stderr
}

/// A blob of an OCI artifact (a manifest or a layer) is checked against
/// the digest that names it on every read from the cache, and read only
/// up to the size it has: changed or truncated, it is pulled again
/// online and is an error offline naming the entry; a huge file in its
/// place is not read whole (under a data limit far below its size).
#[test]
fn a_changed_oci_blob_is_fetched_again_online_and_refused_offline() {
    let dir = scratch("cache-safety", "changed-blob");
    let Some(registry) = support::oci::OciRegistry::start(&dir.join("registry")) else {
        return;
    };
    let pushed = registry.push_artifact(
        "krm/catalog",
        "v1",
        "application/vnd.cncf.kubernetes.krm-func-catalog.v1",
        &[(krusty_fetch::CATALOG_MEDIA_TYPE, CATALOG.as_bytes())],
        &[],
    );
    let cache = dir.join("cache");
    let blob = |digest: &str| {
        let hex = digest.strip_prefix("sha256:").unwrap();
        cache.join("oci/blobs/sha256").join(hex)
    };
    let (layer, manifest) = (blob(&pushed.layer_digests[0]), blob(&pushed.digest));
    for reference in [&pushed.reference, &pushed.by_digest] {
        let expected = view_ok(&cache, reference, false);
        assert!(expected.contains("name: cached"), "{expected}");
        for path in [&layer, &manifest] {
            let original = std::fs::read(path).unwrap();
            let changed = String::from_utf8(original.clone())
                .unwrap()
                .replacen("a", "b", 1);
            for damage in [changed.as_bytes(), &original[..original.len() - 1]] {
                overwrite(path, damage);
                let err = view_err(&cache, reference, true, None);
                assert!(
                    err.contains(reference.as_str())
                        && err.contains("damaged")
                        && err.contains(&path.display().to_string())
                        && err.contains("without --offline"),
                    "{}: {err}",
                    path.display()
                );
                assert_eq!(view_ok(&cache, reference, false), expected);
                assert_eq!(std::fs::read(path).unwrap(), original, "kept again");
                assert_eq!(view_ok(&cache, reference, true), expected);
            }
        }
    }
    // A layer of 4 GiB (sparse) where a few hundred bytes are expected.
    overwrite(&layer, b"");
    std::fs::File::options()
        .write(true)
        .open(&layer)
        .unwrap()
        .set_len(4 << 30)
        .unwrap();
    let limit = Some(256 << 20);
    let err = view_err(&cache, &pushed.reference, true, limit);
    assert!(
        err.contains("damaged") && err.contains(&format!("larger than {} bytes", CATALOG.len())),
        "{err}"
    );
    let out = view(&cache, &pushed.reference, false, limit);
    let (expected, stderr) = output_text(&out);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(view_ok(&cache, &pushed.reference, true), expected);
}

/// A refused cache is an error for a build that keeps function results
/// in it (an idempotent function), naming the folder, before the
/// function runs; with `--no-function-cache`, or in a build that needs no
/// cache, it is not used and so not in the way.
#[test]
fn a_refused_cache_fails_a_build_that_keeps_function_results() {
    let dir = scratch("cache-safety", "refused-results");
    let log = dir.join("cli.log");
    write(
        &dir,
        "container-cli",
        &format!(
            "#!/bin/sh\necho \"$@\" >> '{}'\necho 'the stand-in container CLI ran' >&2\nexit 1\n",
            log.display()
        ),
    );
    let cli = dir.join("container-cli");
    std::fs::set_permissions(&cli, std::fs::Permissions::from_mode(0o755)).unwrap();
    let idempotent = CATALOG
        .replace("- name: v1\n", "- name: v1\n      idempotent: true\n")
        .replace(
            "image: example.com/paint:v1\n",
            &format!(
                "image: example.com/paint:v1\n          sha256: {}\n",
                sha256_hex(b"paint")
            ),
        );
    let app = dir.join("app");
    write(&app, "catalog.yaml", &idempotent);
    write(&app, "cm.yaml", BASE_CM);
    write(
        &app,
        "fn.yaml",
        "apiVersion: example.com/v1\nkind: Paint\nmetadata:\n  name: p\n",
    );
    write(
        &app,
        "kustomization.yaml",
        "resources:\n- cm.yaml\ncatalogs:\n- catalog.yaml\ntransformers:\n- fn.yaml\n",
    );
    let cache = dir.join("cache");
    folder(&cache, 0o777);
    let build = |extra: &[&str]| {
        let mut args = vec![
            std::ffi::OsStr::new("build"),
            app.as_os_str(),
            std::ffi::OsStr::new("--trusted-catalog"),
            std::ffi::OsStr::new("catalog.yaml"),
        ];
        args.extend(extra.iter().map(std::ffi::OsStr::new));
        let out = krusty(&cache, &args)
            .current_dir(&app)
            .env("KRUSTY_CONTAINER_CLI", &cli)
            .output()
            .unwrap();
        let (stdout, stderr) = output_text(&out);
        assert!(!out.status.success(), "the build succeeded:\n{stdout}");
        assert_eq!(stdout, "", "a failed build prints nothing");
        stderr
    };
    let err = build(&[]);
    assert!(
        err.contains(&cache.display().to_string()) && err.contains("writable by others"),
        "{err}"
    );
    assert!(!log.exists(), "the function ran");
    let err = build(&["--no-function-cache"]);
    assert!(
        err.contains("the stand-in container CLI ran") && !err.contains("writable by others"),
        "{err}"
    );
    assert!(log.exists(), "the function did not run");
    // A build that needs no cache does not read it.
    write(&app, "kustomization.yaml", "resources:\n- cm.yaml\n");
    assert!(build_ok(&cache, &app, false).contains("color: blue"));
    assert!(!cache.join("functions").exists());
}

/// Every path below `dir`, relative to it, sorted.
fn contents(dir: &Path) -> Vec<String> {
    fn walk(top: &Path, dir: &Path, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let path = entry.path();
            out.push(path.strip_prefix(top).unwrap().display().to_string());
            if entry.file_type().unwrap().is_dir() {
                walk(top, &path, out);
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

#[test]
fn everything_a_build_keeps_lies_in_the_cache_folder() {
    let world = world();
    let dir = scratch("cache-safety", "all-state");
    let target = world.tree(&dir);
    // Besides the remote base and file: a catalog's exec program and a
    // Starlark program, both by URL.
    let sha = sha256_hex(ECHO_FUNCTION.as_bytes());
    write(
        &target,
        "catalog.yaml",
        &format!(
            "apiVersion: config.kubernetes.io/v1alpha1\nkind: Catalog\nmetadata:\n  name: echo\nspec:\n  krmFunctions:\n  - group: example.com\n    names:\n      kind: Echo\n    versions:\n    - name: v1\n      runtime:\n        exec:\n          platforms:\n          - bin: echo-fn\n            os: linux\n            arch: {arch}\n            uri: {files}/echo-fn\n            sha256: {sha}\n",
            arch = if cfg!(target_arch = "aarch64") { "arm64" } else { "amd64" },
            files = world.files,
        ),
    );
    write(
        &target,
        "echo.yaml",
        "apiVersion: example.com/v1\nkind: Echo\nmetadata:\n  name: echo\n",
    );
    write(
        &target,
        "star.yaml",
        &format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: star\nruntime:\n  starlark:\n    url: {}/annotate.star\n",
            world.files
        ),
    );
    let k = target.join("kustomization.yaml");
    let mut text = std::fs::read_to_string(&k).unwrap();
    text.push_str("catalogs:\n- catalog.yaml\ntransformers:\n- echo.yaml\n- star.yaml\n");
    std::fs::write(&k, text).unwrap();
    let cache = dir.join("cache");
    let home = dir.join("home");
    let tmp = dir.join("tmp");
    for folder in [&home, &tmp] {
        std::fs::create_dir_all(folder).unwrap();
    }
    let build = |offline: bool| {
        let mut args = vec![
            std::ffi::OsStr::new("build"),
            std::ffi::OsStr::new("--enable-alpha-plugins"),
            std::ffi::OsStr::new("--enable-star"),
            std::ffi::OsStr::new("--trusted-catalog"),
        ];
        let catalog = target.join("catalog.yaml");
        args.push(catalog.as_os_str());
        args.push(target.as_os_str());
        if offline {
            args.push(std::ffi::OsStr::new("--offline"));
        }
        let out = krusty(&cache, &args)
            .env("HOME", &home)
            .env("TMPDIR", &tmp)
            .env("XDG_CACHE_HOME", home.join(".cache"))
            .env("XDG_CONFIG_HOME", home.join(".config"))
            .env("XDG_DATA_HOME", home.join(".local/share"))
            .env("XDG_STATE_HOME", home.join(".local/state"))
            .output()
            .unwrap();
        let (stdout, stderr) = output_text(&out);
        assert!(out.status.success(), "offline {offline}: {stderr}");
        stdout
    };
    let online = build(false);
    for name in ["base", "first", "second"] {
        assert!(online.contains(&format!("name: {name}\n")), "{online}");
    }
    assert_eq!(online.matches("fetched: \"yes\"").count(), 4, "{online}");
    for (what, folder) in [("home", &home), ("temporary folder", &tmp)] {
        assert_eq!(
            contents(folder),
            Vec::<String>::new(),
            "the {what} holds something"
        );
    }
    let kept = contents(&cache);
    for entry in ["http", "git", "exec"] {
        assert!(
            kept.iter().any(|p| p.starts_with(entry)),
            "no {entry}/ in {kept:?}"
        );
    }
    assert_eq!(
        build(true),
        online,
        "offline, the cache alone gives the same bytes"
    );
    for (what, folder) in [("home", &home), ("temporary folder", &tmp)] {
        assert_eq!(
            contents(folder),
            Vec::<String>::new(),
            "offline, the {what} holds something"
        );
    }
}
