//! Reading a git repository: its top folder, revisions, the paths that
//! differ between two trees, and a revision's files written out from git
//! objects into a folder of krusty's own (the user's work tree, index and
//! stash are never touched).

use std::path::{Component, Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::error::{Error, Result};

/// How long one git command may run.
const GIT_TIMEOUT: Duration = Duration::from_secs(600);

/// The most a revision written out may hold, in bytes and in files: a
/// small repository can name one large object many times.
pub const MAX_EXPORT_BYTES: u64 = 1 << 30;

/// The most files a revision written out may hold.
pub const MAX_EXPORT_FILES: usize = 200_000;

/// The most a git command may print (a revision's whole contents, for
/// `cat-file --batch`, with the objects' headers).
const MAX_GIT_OUTPUT: usize = (MAX_EXPORT_BYTES as usize) + (64 << 20);

/// A git repository, found from a folder inside its work tree.
#[derive(Debug, Clone)]
pub struct Repo {
    /// The top folder of the work tree, with symlinks resolved.
    pub top: PathBuf,
}

/// One side of a comparison: a commit, or the work tree as it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tree {
    /// The files of a commit (its full id).
    Commit(String),
    /// The work tree, with changes not committed and files not tracked
    /// (but not ignored).
    WorkTree,
}

impl Repo {
    /// The repository whose work tree holds `dir`.
    pub fn containing(dir: &Path) -> Result<Repo> {
        let out = git(dir, &["rev-parse", "--show-toplevel"], Vec::new())?;
        let top = String::from_utf8_lossy(&out)
            .trim_end_matches('\n')
            .to_string();
        let top = std::fs::canonicalize(&top).map_err(|e| Error::io(&top, e))?;
        Ok(Repo { top })
    }

    /// The full id of the commit `rev` names (a branch, tag, id, or any
    /// expression `git rev-parse` reads). A revision starting with `-`
    /// is refused: it would read as an option.
    pub fn commit(&self, rev: &str) -> Result<String> {
        if rev.starts_with('-') || rev.is_empty() {
            return Err(Error::Revision(
                rev.to_string(),
                "a revision may not be empty or start with '-'".into(),
            ));
        }
        let spec = format!("{rev}^{{commit}}");
        let out = git(
            &self.top,
            &[
                "rev-parse",
                "--verify",
                "--quiet",
                "--end-of-options",
                &spec,
            ],
            Vec::new(),
        )
        .map_err(|_| Error::Revision(rev.to_string(), "git does not know it".into()))?;
        Ok(String::from_utf8_lossy(&out).trim().to_string())
    }

    /// The commit where `a` and `b` last met (`git merge-base`).
    pub fn merge_base(&self, a: &str, b: &str) -> Result<String> {
        let out = git(
            &self.top,
            &["merge-base", "--end-of-options", a, b],
            Vec::new(),
        )?;
        Ok(String::from_utf8_lossy(&out).trim().to_string())
    }

    /// The paths (relative to the top folder) whose content differs
    /// between `base` and `head`, on either side of a rename. Against the
    /// work tree: also every file not tracked, ignored ones included (a
    /// folder git ignores whole is one path ending in `/`).
    pub fn changed(&self, base: &str, head: &Tree) -> Result<Vec<PathBuf>> {
        let mut args = vec![
            "diff",
            "--name-only",
            "-z",
            "--no-renames",
            "--no-ext-diff",
            "--end-of-options",
            base,
        ];
        if let Tree::Commit(head) = head {
            args.push(head);
        }
        args.push("--");
        let mut paths = split_nul(&git(&self.top, &args, Vec::new())?);
        if *head == Tree::WorkTree {
            let untracked = git(
                &self.top,
                &["ls-files", "--others", "--exclude-standard", "-z"],
                Vec::new(),
            )?;
            paths.extend(split_nul(&untracked));
            // Ignored files too (a build may read one): listed by folder
            // where a whole folder is ignored, its name ending in `/`.
            let ignored = git(
                &self.top,
                &[
                    "ls-files",
                    "--others",
                    "--ignored",
                    "--exclude-standard",
                    "--directory",
                    "-z",
                ],
                Vec::new(),
            )?;
            paths.extend(split_nul(&ignored));
        }
        paths.sort();
        paths.dedup();
        Ok(paths)
    }

    /// Writes the files of `commit` into the empty folder `dest`, read
    /// from git objects: regular files (with their executable bit) and
    /// symlinks; submodules are left out.
    pub fn export(&self, commit: &str, dest: &Path) -> Result<()> {
        let listing = git(
            &self.top,
            &[
                "ls-tree",
                "-r",
                "-z",
                "-l",
                "--full-tree",
                "--end-of-options",
                commit,
            ],
            Vec::new(),
        )?;
        let entries = tree_entries(&listing, commit)?;
        let request: String = entries.iter().map(|e| format!("{}\n", e.oid)).collect();
        let contents = git(&self.top, &["cat-file", "--batch"], request.into_bytes())?;
        let mut rest: &[u8] = &contents;
        for entry in &entries {
            let (body, after) = next_object(rest, &entry.oid)?;
            rest = after;
            write_entry(&dest.join(&entry.path), &entry.mode, body)?;
        }
        Ok(())
    }
}

/// A file of a tree: its mode, object id and path.
struct Entry {
    mode: String,
    oid: String,
    path: PathBuf,
}

/// The files `ls-tree -r -l -z` lists, checked so that writing them one
/// after another can only create new files below the folder they are
/// written to: every path plain names, none twice, none below another
/// entry (a link or file that a later path would pass through), and
/// their sizes within [`MAX_EXPORT_BYTES`] and [`MAX_EXPORT_FILES`].
/// Submodules are left out.
fn tree_entries(listing: &[u8], commit: &str) -> Result<Vec<Entry>> {
    use std::os::unix::ffi::OsStrExt;
    let unreadable = || git_error("ls-tree", "unreadable listing");
    let mut entries = Vec::new();
    let mut total: u64 = 0;
    for record in listing.split(|b| *b == 0).filter(|r| !r.is_empty()) {
        let tab = record
            .iter()
            .position(|b| *b == b'\t')
            .ok_or_else(unreadable)?;
        let meta = String::from_utf8_lossy(&record[..tab]);
        let path = PathBuf::from(std::ffi::OsStr::from_bytes(&record[tab + 1..]));
        let mut fields = meta.split_whitespace();
        let (Some(mode), Some(kind), Some(oid), Some(size)) =
            (fields.next(), fields.next(), fields.next(), fields.next())
        else {
            return Err(unreadable());
        };
        if kind != "blob" {
            continue;
        }
        if !path.components().all(|c| matches!(c, Component::Normal(_))) {
            return Err(git_error(
                "ls-tree",
                &format!("refusing the path '{}'", path.display()),
            ));
        }
        total = total.saturating_add(size.parse().map_err(|_| unreadable())?);
        if total > MAX_EXPORT_BYTES || entries.len() >= MAX_EXPORT_FILES {
            return Err(git_error(
                "ls-tree",
                &format!(
                    "revision {commit} holds more than {MAX_EXPORT_BYTES} bytes or {MAX_EXPORT_FILES} files: krusty does not write it out"
                ),
            ));
        }
        entries.push(Entry {
            mode: mode.to_string(),
            oid: oid.to_string(),
            path,
        });
    }
    let paths: std::collections::HashSet<&Path> =
        entries.iter().map(|e| e.path.as_path()).collect();
    if paths.len() != entries.len() {
        return Err(git_error(
            "ls-tree",
            &format!("revision {commit} names one path twice"),
        ));
    }
    for e in &entries {
        if let Some(outer) = e.path.ancestors().skip(1).find(|a| paths.contains(a)) {
            return Err(git_error(
                "ls-tree",
                &format!(
                    "revision {commit} has '{}' inside the file or link '{}'",
                    e.path.display(),
                    outer.display()
                ),
            ));
        }
    }
    Ok(entries)
}

/// The next object of `cat-file --batch` output: its body, and what
/// follows it.
fn next_object<'a>(out: &'a [u8], oid: &str) -> Result<(&'a [u8], &'a [u8])> {
    let bad = || git_error("cat-file", &format!("unreadable output for object {oid}"));
    let line_end = out.iter().position(|b| *b == b'\n').ok_or_else(bad)?;
    let header = String::from_utf8_lossy(&out[..line_end]);
    let size: usize = header
        .rsplit(' ')
        .next()
        .and_then(|s| s.parse().ok())
        .ok_or_else(bad)?;
    let start = line_end + 1;
    let end = start
        .checked_add(size)
        .filter(|e| *e < out.len())
        .ok_or_else(bad)?;
    Ok((&out[start..end], &out[end + 1..]))
}

fn write_entry(path: &Path, mode: &str, body: &[u8]) -> Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
    }
    if mode == "120000" {
        use std::os::unix::ffi::OsStrExt;
        let target = std::ffi::OsStr::from_bytes(body);
        return std::os::unix::fs::symlink(target, path).map_err(|e| Error::io(path, e));
    }
    // A new file only: never one already there, nor through a link.
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(|e| Error::io(path, e))?;
    std::io::Write::write_all(&mut file, body).map_err(|e| Error::io(path, e))?;
    if mode == "100755" {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
            .map_err(|e| Error::io(path, e))?;
    }
    Ok(())
}

fn split_nul(out: &[u8]) -> Vec<PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    out.split(|b| *b == 0)
        .filter(|p| !p.is_empty())
        .map(|p| PathBuf::from(std::ffi::OsStr::from_bytes(p)))
        .collect()
}

fn git_error(command: &str, message: &str) -> Error {
    Error::Git {
        command: command.to_string(),
        message: message.to_string(),
    }
}

/// Runs git in `dir` with `args` (never taken from a tree: revisions are
/// resolved to ids first) and `input` on stdin; its stdout.
fn git(dir: &Path, args: &[&str], input: Vec<u8>) -> Result<Vec<u8>> {
    let mut cmd = Command::new("git");
    cmd.arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_OPTIONAL_LOCKS", "0");
    let finished = krusty_process::run(cmd, input, GIT_TIMEOUT, MAX_GIT_OUTPUT, None, &|| {})
        .map_err(|e| git_error(args[0], &describe(&e)))?;
    if !finished.status.success() {
        let stderr = String::from_utf8_lossy(&finished.stderr);
        return Err(git_error(&args.join(" "), stderr.trim()));
    }
    Ok(finished.stdout)
}

/// Why git did not finish.
fn describe(failure: &krusty_process::Failure) -> String {
    match failure {
        krusty_process::Failure::Spawn(e) => format!("cannot run git: {e}"),
        krusty_process::Failure::Timeout { .. } => format!("ran past {} s", GIT_TIMEOUT.as_secs()),
        krusty_process::Failure::TooMuchOutput => {
            format!("printed more than {MAX_GIT_OUTPUT} bytes")
        }
    }
}
