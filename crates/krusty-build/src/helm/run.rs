//! Running the helm binary: its environment, its failures in Kustomize's
//! words, its version, and the temporary folder a chart is inflated in.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use krusty_process::{self as process, Failure};

use crate::error::{BuildError, BuildResult};

/// The helm command and its environment for one chart.
pub struct Invocation<'a> {
    /// The command (a path, or a name looked up on `PATH`).
    pub command: &'a str,
    /// `HELM_CONFIG_HOME`; the cache and data homes are folders in it.
    pub config_home: &'a Path,
    /// The longest helm may run.
    pub timeout: Duration,
    /// The most helm may print on stdout.
    pub max_output: usize,
}

impl Invocation<'_> {
    /// The variables set for helm, as `NAME=value`.
    fn env(&self) -> [String; 3] {
        let home = self.config_home.display();
        [
            format!("HELM_CONFIG_HOME={home}"),
            format!("HELM_CACHE_HOME={home}/.cache"),
            format!("HELM_DATA_HOME={home}/.data"),
        ]
    }

    /// Runs helm with `args`; returns its stdout. A failure reads as
    /// Kustomize's: helm's stderr, then the command, the environment and
    /// why it failed. With `--debug` among the arguments, the stderr part
    /// is helm's stack trace and what it printed on stdout.
    pub fn run(&self, args: &[String]) -> BuildResult<Vec<u8>> {
        let env = self.env();
        let fail = |stderr: &[u8], stdout: &[u8], why: String| {
            let mut prefix = String::from_utf8_lossy(stderr).into_owned();
            if args.iter().any(|a| a == "--debug") {
                prefix = format!(
                    " Helm stack trace:\n{prefix}\nHelm template:\n{}\n",
                    String::from_utf8_lossy(stdout)
                );
            }
            let message = format!(
                "unable to run: '{} {}' with env=[{}] (is '{}' installed?): {why}",
                self.command,
                krusty_fetch::redact(&args.join(" ")),
                env.join(" "),
                self.command
            );
            BuildError::new(if prefix.is_empty() {
                message
            } else {
                format!("{prefix}: {message}")
            })
        };
        let program = resolve(self.command).map_err(|why| fail(b"", b"", why.to_string()))?;
        let mut cmd = Command::new(&program);
        cmd.args(args);
        for pair in &env {
            if let Some((name, value)) = pair.split_once('=') {
                cmd.env(name, value);
            }
        }
        match process::run(cmd, Vec::new(), self.timeout, self.max_output, None, &|| {}) {
            Ok(done) if done.status.success() => Ok(done.stdout),
            Ok(done) => Err(fail(&done.stderr, &done.stdout, go_exit(done.status))),
            Err(Failure::Spawn(e)) => Err(fail(
                b"",
                b"",
                format!("fork/exec {}: {}", program.display(), go_errno(&e)),
            )),
            Err(Failure::Timeout { stderr }) => Err(fail(
                &stderr,
                b"",
                format!(
                    "killed after {}s (the time limit)",
                    self.timeout.as_secs_f64()
                ),
            )),
            Err(Failure::TooMuchOutput) => Err(fail(
                b"",
                b"",
                format!(
                    "killed after printing more than {} bytes (the output limit)",
                    self.max_output
                ),
            )),
        }
    }
}

/// A program that is not on `PATH` (its name), in Go's `exec.LookPath`
/// words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("exec: \"{0}\": executable file not found in $PATH")]
pub struct NotFound(pub String);

/// The program `command` names: itself when it holds a `/`, else the first
/// executable file of that name on `PATH`, as Go's `exec.LookPath` finds it.
pub fn resolve(command: &str) -> Result<PathBuf, NotFound> {
    if command.contains('/') {
        return Ok(PathBuf::from(command));
    }
    let not_found = || NotFound(command.to_string());
    if command.is_empty() {
        return Err(not_found());
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|dir| {
            let dir = if dir.as_os_str().is_empty() {
                PathBuf::from(".")
            } else {
                dir
            };
            dir.join(command)
        })
        .find(|candidate| is_executable(candidate))
        .ok_or_else(not_found)
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// How Go's `exec` describes a process that failed: `exit status N` or
/// `signal: NAME`.
fn go_exit(status: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit status {code}"),
        (None, Some(libc::SIGKILL)) => "signal: killed".into(),
        (None, Some(libc::SIGTERM)) => "signal: terminated".into(),
        (None, Some(libc::SIGSEGV)) => "signal: segmentation fault".into(),
        (None, Some(sig)) => format!("signal: {sig}"),
        (None, None) => "exit status unknown".into(),
    }
}

/// An OS error in Go's words (`no such file or directory`).
fn go_errno(e: &std::io::Error) -> String {
    let text = match e.raw_os_error() {
        Some(code) => {
            let full = std::io::Error::from_raw_os_error(code).to_string();
            full.split(" (os error")
                .next()
                .unwrap_or_default()
                .to_string()
        }
        None => e.to_string(),
    };
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => text,
    }
}

/// The version helm reports (`v3.17.2`), checked to be one krusty works
/// with (3 or 4). `stdout` is what `helm version --short` printed.
pub fn check_version(stdout: &[u8]) -> BuildResult<String> {
    let text = String::from_utf8_lossy(stdout);
    let Some(version) = find_version(&text) else {
        return Err(BuildError::new(format!(
            "cannot find version string in {text}"
        )));
    };
    let bare = version.trim_start_matches('v');
    match bare.split('.').next() {
        Some("3" | "4") => Ok(version.to_string()),
        _ => Err(BuildError::new(format!(
            "krusty requires helm v3 or v4 but got v{bare}"
        ))),
    }
}

/// The first `v?N.N[.N…]` in `text`.
fn find_version(text: &str) -> Option<&str> {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if !bytes[i].is_ascii_digit() {
            i += 1;
            continue;
        }
        let start = if i > 0 && bytes[i - 1] == b'v' {
            i - 1
        } else {
            i
        };
        let mut end = i;
        while end < bytes.len() && bytes[end].is_ascii_digit() {
            end += 1;
        }
        let mut parts = 0;
        while end + 1 < bytes.len() && bytes[end] == b'.' && bytes[end + 1].is_ascii_digit() {
            end += 1;
            while end < bytes.len() && bytes[end].is_ascii_digit() {
                end += 1;
            }
            parts += 1;
        }
        if parts > 0 {
            return Some(&text[start..end]);
        }
        i = end;
    }
    None
}

/// A private temporary folder, removed with everything in it when
/// dropped.
pub struct TempDir {
    path: PathBuf,
}

impl TempDir {
    /// Makes a new folder `krusty-helm-*` in the system's temporary folder.
    pub fn new() -> BuildResult<TempDir> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let base = std::env::temp_dir();
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default();
        let mut last = None;
        for _ in 0..16 {
            let n = COUNTER.fetch_add(1, Ordering::Relaxed);
            let path = base.join(format!(
                "krusty-helm-{}-{:x}{n:x}",
                std::process::id(),
                nanos
            ));
            let mut builder = std::fs::DirBuilder::new();
            std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
            match builder.create(&path) {
                Ok(()) => return Ok(TempDir { path }),
                Err(e) => last = Some(e),
            }
        }
        Err(BuildError::new(format!(
            "cannot create tmp dir to write helm values: {}",
            last.map(|e| e.to_string()).unwrap_or_default()
        )))
    }

    /// Where it is.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_of_helm_3_and_4_are_accepted() {
        assert_eq!(check_version(b"v3.17.2+gcc0bbbd\n").unwrap(), "v3.17.2");
        assert_eq!(check_version(b"v4.1.4+g05fa379\n").unwrap(), "v4.1.4");
        let e = check_version(b"v2.16.1+g1\n").unwrap_err();
        assert!(e.to_string().contains("got v2.16.1"), "{e}");
        let e = check_version(b"nothing here 7\n").unwrap_err();
        assert!(e.to_string().contains("cannot find version string"), "{e}");
    }

    #[test]
    fn a_missing_program_fails_in_go_words() {
        let home = TempDir::new().unwrap();
        let run = |command| {
            Invocation {
                command,
                config_home: home.path(),
                timeout: Duration::from_secs(5),
                max_output: 1 << 20,
            }
            .run(&["version".to_string()])
            .unwrap_err()
            .to_string()
        };
        let e = run("krusty-no-such-helm");
        assert!(
            e.contains("exec: \"krusty-no-such-helm\": executable file not found in $PATH"),
            "{e}"
        );
        let e = run("/nonexistent/helm");
        assert!(
            e.contains("fork/exec /nonexistent/helm: no such file or directory"),
            "{e}"
        );
        assert!(
            e.starts_with("unable to run: '/nonexistent/helm version' with env=[HELM_CONFIG_HOME=")
        );
    }

    #[test]
    fn a_failing_program_shows_its_stderr_first() {
        let home = TempDir::new().unwrap();
        let e = Invocation {
            command: "/bin/sh",
            config_home: home.path(),
            timeout: Duration::from_secs(5),
            max_output: 1 << 20,
        }
        .run(&["-c".into(), "echo oops >&2; exit 3".into()])
        .unwrap_err()
        .to_string();
        assert!(e.starts_with("oops\n: unable to run: '/bin/sh -c "), "{e}");
        assert!(
            e.ends_with("(is '/bin/sh' installed?): exit status 3"),
            "{e}"
        );
    }

    #[test]
    fn temporary_folders_go_away() {
        let dir = TempDir::new().unwrap();
        let path = dir.path().to_path_buf();
        std::fs::write(path.join("f"), "x").unwrap();
        drop(dir);
        assert!(!path.exists());
    }
}
