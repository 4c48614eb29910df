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

/// The most a git command may print (a revision's whole contents, for
/// `cat-file --batch`).
const MAX_GIT_OUTPUT: usize = 4 << 30;

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

    /// The paths (relative to the top folder) whose content differs
    /// between `base` and `head`, on either side of a rename.
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
                "--full-tree",
                "--end-of-options",
                commit,
            ],
            Vec::new(),
        )?;
        let mut entries = Vec::new();
        for record in listing.split(|b| *b == 0).filter(|r| !r.is_empty()) {
            let text = String::from_utf8_lossy(record);
            let (meta, path) = text
                .split_once('\t')
                .ok_or_else(|| git_error("ls-tree", "unreadable listing"))?;
            let mut fields = meta.split(' ');
            let (Some(mode), Some(kind), Some(oid)) = (fields.next(), fields.next(), fields.next())
            else {
                return Err(git_error("ls-tree", "unreadable listing"));
            };
            if kind != "blob" {
                continue;
            }
            let rel = PathBuf::from(path);
            if !rel.components().all(|c| matches!(c, Component::Normal(_))) {
                return Err(git_error("ls-tree", &format!("refusing the path '{path}'")));
            }
            entries.push((mode.to_string(), oid.to_string(), rel));
        }
        let request: String = entries
            .iter()
            .map(|(_, oid, _)| format!("{oid}\n"))
            .collect();
        let contents = git(&self.top, &["cat-file", "--batch"], request.into_bytes())?;
        let mut rest: &[u8] = &contents;
        for (mode, oid, rel) in &entries {
            let (body, after) = next_object(rest, oid)?;
            rest = after;
            write_entry(&dest.join(rel), mode, body)?;
        }
        Ok(())
    }
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
        let target = std::ffi::OsStr::new(std::str::from_utf8(body).unwrap_or_default());
        return std::os::unix::fs::symlink(target, path).map_err(|e| Error::io(path, e));
    }
    std::fs::write(path, body).map_err(|e| Error::io(path, e))?;
    if mode == "100755" {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
            .map_err(|e| Error::io(path, e))?;
    }
    Ok(())
}

fn split_nul(out: &[u8]) -> Vec<PathBuf> {
    out.split(|b| *b == 0)
        .filter(|p| !p.is_empty())
        .map(|p| PathBuf::from(String::from_utf8_lossy(p).into_owned()))
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
