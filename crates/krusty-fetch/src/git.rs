//! Running the system `git` (so the user's credential helpers, SSH
//! configuration and proxies apply, as with Kustomize): resolving a ref to
//! its commit, and a shallow checkout of one commit.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::error::FetchError;
use crate::go::format_duration;

/// The `git` program found on `PATH`.
#[derive(Debug, Clone)]
pub struct Git {
    program: PathBuf,
}

impl Git {
    /// Finds `git` on `PATH`.
    pub fn find() -> Result<Git, FetchError> {
        let path = std::env::var_os("PATH").unwrap_or_default();
        std::env::split_paths(&path)
            .map(|dir| dir.join("git"))
            .find(|p| is_executable(p))
            .map(|program| Git { program })
            .ok_or_else(|| {
                FetchError::Git(
                    "no 'git' program on path: exec: \"git\": executable file not found in $PATH"
                        .to_string(),
                )
            })
    }

    /// The commit `reference` names at `url`, by `git ls-remote`, following
    /// git's order for a short name (`refs/NAME`, tags, branches, remote
    /// branches); `None` when the remote has no such ref (it may still be
    /// a commit, which only a fetch can tell).
    pub fn resolve(
        &self,
        url: &str,
        reference: &str,
        timeout: Duration,
    ) -> Result<Option<String>, FetchError> {
        // An annotated tag's commit is listed as `TAG^{}`, which the name
        // alone does not match.
        let peeled = format!("{reference}^{{}}");
        let out = self.run(None, &["ls-remote", url, reference, &peeled], timeout)?;
        Ok(pick_ref(&out, reference))
    }

    /// Fetches `reference` from `url` into the empty folder `dir` (one
    /// commit deep, as Kustomize does), checks it out with its submodules
    /// if asked, and returns the commit.
    pub fn checkout(
        &self,
        dir: &Path,
        url: &str,
        reference: &str,
        submodules: bool,
        timeout: Duration,
    ) -> Result<String, FetchError> {
        self.run(Some(dir), &["init"], timeout)?;
        // Relative submodule URLs need an origin.
        self.run(Some(dir), &["remote", "add", "origin", url], timeout)?;
        self.run(Some(dir), &["fetch", "--depth=1", url, reference], timeout)?;
        self.run(Some(dir), &["checkout", "FETCH_HEAD"], timeout)?;
        if submodules {
            self.run(
                Some(dir),
                &["submodule", "update", "--init", "--recursive"],
                timeout,
            )?;
        }
        let head = self.run(Some(dir), &["rev-parse", "HEAD"], timeout)?;
        Ok(head.trim().to_string())
    }

    /// Runs git with `args`, in `dir`, within `timeout`; its output
    /// (stdout and stderr together, as Kustomize reads it) on failure
    /// makes the error, in Kustomize's words.
    fn run(
        &self,
        dir: Option<&Path>,
        args: &[&str],
        timeout: Duration,
    ) -> Result<String, FetchError> {
        let command_line = std::iter::once(self.program.display().to_string())
            .chain(args.iter().map(|a| a.to_string()))
            .collect::<Vec<_>>()
            .join(" ");
        let (reader, writer) = std::io::pipe().map_err(|e| spawn_error(&command_line, &e))?;
        let stderr = writer
            .try_clone()
            .map_err(|e| spawn_error(&command_line, &e))?;
        let mut command = Command::new(&self.program);
        command
            .args(args)
            .stdin(Stdio::null())
            .stdout(writer)
            .stderr(stderr)
            .process_group(0);
        if let Some(dir) = dir {
            command.current_dir(dir);
        }
        let mut child = command
            .spawn()
            .map_err(|e| spawn_error(&command_line, &e))?;
        drop(command);
        let output = std::thread::spawn(move || {
            let mut text = Vec::new();
            let mut reader = reader;
            let _ = reader.read_to_end(&mut text);
            text
        });
        let deadline = Instant::now() + timeout;
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) if Instant::now() >= deadline => {
                    // SAFETY: signals the process group this function started.
                    unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
                    let _ = child.wait();
                    return Err(FetchError::Timeout(format!(
                        "hit {} timeout running '{command_line}'",
                        format_duration(timeout)
                    )));
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(5)),
                Err(e) => return Err(spawn_error(&command_line, &e)),
            }
        };
        let text = String::from_utf8_lossy(&output.join().unwrap_or_default()).into_owned();
        if status.success() {
            return Ok(text);
        }
        let why = match status.code() {
            Some(code) => format!("exit status {code}"),
            None => "signal: killed".to_string(),
        };
        Err(FetchError::Git(format!(
            "failed to run '{command_line}': {text}: {why}"
        )))
    }
}

fn spawn_error(command_line: &str, e: &std::io::Error) -> FetchError {
    FetchError::Git(format!("failed to run '{command_line}': {e}"))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The commit of the ref `name` in `git ls-remote` output: the first of
/// `NAME` (a full ref or `HEAD`), `refs/NAME`, `refs/tags/NAME`,
/// `refs/heads/NAME`, `refs/remotes/NAME`, `refs/remotes/NAME/HEAD`; an
/// annotated tag gives the commit it points to.
pub fn pick_ref(listing: &str, name: &str) -> Option<String> {
    let refs: Vec<(&str, &str)> = listing
        .lines()
        .filter_map(|line| line.split_once('\t'))
        .map(|(sha, r)| (r.trim(), sha.trim()))
        .collect();
    let lookup = |full: &str| {
        let peeled = format!("{full}^{{}}");
        refs.iter()
            .find(|(r, _)| *r == peeled)
            .or_else(|| refs.iter().find(|(r, _)| *r == full))
            .map(|(_, sha)| sha.to_string())
    };
    [
        name.to_string(),
        format!("refs/{name}"),
        format!("refs/tags/{name}"),
        format!("refs/heads/{name}"),
        format!("refs/remotes/{name}"),
        format!("refs/remotes/{name}/HEAD"),
    ]
    .iter()
    .find_map(|full| lookup(full))
}

/// Whether `reference` is a full commit id (which names one tree forever).
pub fn is_commit_id(reference: &str) -> bool {
    reference.len() == 40 && reference.bytes().all(|b| b.is_ascii_hexdigit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refs_resolve_in_gits_order() {
        let listing = "\
aaaa\tHEAD
bbbb\trefs/heads/main
cccc\trefs/heads/v1
dddd\trefs/tags/v1
eeee\trefs/tags/v1^{}
ffff\trefs/heads/feature/v1
";
        assert_eq!(pick_ref(listing, "HEAD").as_deref(), Some("aaaa"));
        assert_eq!(pick_ref(listing, "main").as_deref(), Some("bbbb"));
        assert_eq!(pick_ref(listing, "v1").as_deref(), Some("eeee"));
        assert_eq!(pick_ref(listing, "refs/heads/v1").as_deref(), Some("cccc"));
        assert_eq!(pick_ref(listing, "feature/v1").as_deref(), Some("ffff"));
        assert_eq!(pick_ref(listing, "nope"), None);
    }
}
