//! Running the system `git` (so the user's credential helpers, SSH
//! configuration and proxies apply, as with Kustomize): resolving a ref to
//! its commit, and a shallow checkout of one commit.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use krusty_process::Failure;

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
        check_arguments(url, reference)?;
        // An annotated tag's commit is listed as `TAG^{}`, which the name
        // alone does not match.
        let peeled = format!("{reference}^{{}}");
        let out = self.run(
            None,
            &["ls-remote", END_OF_OPTIONS, url, reference, &peeled],
            timeout,
        )?;
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
        check_arguments(url, reference)?;
        self.run(Some(dir), &["init"], timeout)?;
        // Relative submodule URLs need an origin.
        self.run(
            Some(dir),
            &["remote", "add", END_OF_OPTIONS, "origin", url],
            timeout,
        )?;
        self.run(
            Some(dir),
            &["fetch", "--depth=1", END_OF_OPTIONS, url, reference],
            timeout,
        )?;
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
        // Shown as Kustomize shows the command it runs, which has no
        // end-of-options marker.
        let command_line = std::iter::once(self.program.display().to_string())
            .chain(
                args.iter()
                    .filter(|a| **a != END_OF_OPTIONS)
                    .map(|a| a.to_string()),
            )
            .collect::<Vec<_>>()
            .join(" ");
        let mut command = Command::new(&self.program);
        add_protocol_rules(&mut command);
        command.args(args);
        if let Some(dir) = dir {
            command.current_dir(dir);
        }
        let done = match krusty_process::run_combined(command, timeout) {
            Ok(done) => done,
            Err(Failure::Timeout { .. }) => {
                return Err(FetchError::Timeout(format!(
                    "hit {} timeout running '{command_line}'",
                    format_duration(timeout)
                )))
            }
            Err(Failure::Spawn(e)) => return Err(spawn_error(&command_line, &e)),
            // `run_combined` sets no output limit: not met.
            Err(Failure::TooMuchOutput) => {
                return Err(FetchError::Git(format!(
                    "failed to run '{command_line}': too much output"
                )))
            }
        };
        let status = done.status;
        let text = String::from_utf8_lossy(&done.output).into_owned();
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

/// Ends git's options: every argument after it is data (a URL, a ref),
/// even one that starts with `-` (git 2.24 and later).
const END_OF_OPTIONS: &str = "--end-of-options";

/// Configuration every git command gets, whatever the user's own says:
/// the `ext::` transport (which runs a command named in the URL) is off,
/// and local repositories (`file://`, plain paths) may be named by the
/// user but not by a fetched tree: git turns `user` protocols off in the
/// clones `submodule update` makes.
const PROTOCOL_RULES: [(&str, &str); 2] = [
    ("protocol.ext.allow", "never"),
    ("protocol.file.allow", "user"),
];

/// Gives `command` [`PROTOCOL_RULES`] through git's `GIT_CONFIG_COUNT`
/// environment (git 2.31 and later), after any entries the user's
/// environment already holds, so the arguments stay as written.
fn add_protocol_rules(command: &mut Command) {
    let first = std::env::var("GIT_CONFIG_COUNT")
        .ok()
        .and_then(|n| n.trim().parse::<usize>().ok())
        .unwrap_or(0);
    for (i, (key, value)) in PROTOCOL_RULES.iter().enumerate() {
        command
            .env(format!("GIT_CONFIG_KEY_{}", first + i), key)
            .env(format!("GIT_CONFIG_VALUE_{}", first + i), value);
    }
    command.env(
        "GIT_CONFIG_COUNT",
        (first + PROTOCOL_RULES.len()).to_string(),
    );
}

/// Refuses a URL or ref that git could read as something other than the
/// data it is: a leading `-` (an option, such as `--upload-pack=...`), a
/// control character, and a ref that breaks git's rules for ref names
/// (`git check-ref-format --allow-onelevel`), so that git is never asked
/// to interpret one.
pub fn check_arguments(url: &str, reference: &str) -> Result<(), FetchError> {
    if url.starts_with('-') || url.chars().any(char::is_control) {
        return Err(FetchError::Reference(format!(
            "invalid git repository URL {url:?}: it may not start with '-' or hold control characters"
        )));
    }
    check_ref(reference).map_err(|why| {
        FetchError::Reference(format!("invalid git ref {reference:?} in '{url}': {why}"))
    })
}

/// Why `reference` is not a ref name git accepts (one level allowed, a
/// commit id included), if it is not.
fn check_ref(reference: &str) -> Result<(), &'static str> {
    if reference.starts_with('-') {
        return Err("a ref may not start with '-'");
    }
    if reference == "@" {
        return Err("a ref may not be '@'");
    }
    if let Some(c) = reference
        .chars()
        .find(|c| c.is_control() || matches!(c, ' ' | '~' | '^' | ':' | '?' | '*' | '[' | '\\'))
    {
        return Err(match c {
            ' ' => "a ref may not hold a space",
            c if c.is_control() => "a ref may not hold a control character",
            _ => "a ref may not hold any of ~ ^ : ? * [ \\",
        });
    }
    if reference.contains("..") || reference.contains("@{") {
        return Err("a ref may not hold '..' or '@{'");
    }
    if reference.ends_with('.') {
        return Err("a ref may not end with '.'");
    }
    if reference
        .split('/')
        .any(|part| part.is_empty() || part.starts_with('.') || part.ends_with(".lock"))
    {
        return Err("each '/'-separated part of a ref must be non-empty, not start with '.' and not end with '.lock'");
    }
    Ok(())
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

    #[test]
    fn refs_that_git_accepts_pass() {
        for good in [
            "HEAD",
            "main",
            "v1.2.3",
            "feature/x-y_z",
            "refs/tags/v1",
            "refs/pull/12/head",
            "0123456789abcdef0123456789abcdef01234567",
            "a-b",
        ] {
            assert_eq!(check_arguments("https://h/r", good), Ok(()), "{good}");
        }
    }

    #[test]
    fn options_and_bad_ref_names_are_refused() {
        for bad in [
            "--upload-pack=touch x",
            "-u",
            "a b",
            "a\nb",
            "a..b",
            "a~1",
            "a^",
            "a:b",
            "a?",
            "a*",
            "a[",
            "a\\b",
            "a@{1}",
            "@",
            "a.",
            "a/",
            "/a",
            "a//b",
            ".a",
            "a/.b",
            "a.lock",
            "a/b.lock/c",
        ] {
            let err = check_arguments("https://h/r", bad).unwrap_err();
            assert!(matches!(err, FetchError::Reference(_)), "{bad}: {err}");
        }
        assert!(check_arguments("--upload-pack=x", "main").is_err());
        assert!(check_arguments("https://h/r\n", "main").is_err());
    }
}
