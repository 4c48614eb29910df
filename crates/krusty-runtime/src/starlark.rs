//! Starlark functions, run by the `krusty-starlark` program beside
//! `krusty`. The interpreter is most of a build's code, and most builds never need it; kept
//! out of the build engine's binary, that binary is a third of the size,
//! which is what a run pays for when the system has dropped it from its
//! page cache (`docs/performance.md`).
//!
//! The exchange between the two programs (both are built from this
//! workspace, so it changes with them):
//! - `krusty-starlark run`: stdin holds the program's length in bytes and
//!   a line break, the program, then the input ResourceList as JSON. The
//!   program's `ctx.resource_list` comes back on stdout as JSON (exit
//!   status 0); when the program fails, `{"message": …, "results": […]}`
//!   does (exit status 1). What the program `print`s goes to stderr.
//! - `KRUSTY_STARLARK_PARENT` holds krusty's process id: on Linux the
//!   runtime asks to be killed when krusty ends, even by SIGKILL.
//! - It ends with exit status 3 when it runs out of memory: `krusty`
//!   starts it with the policy's memory limit as its data size limit
//!   (`RLIMIT_DATA`, set by `process::limit_memory`).

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use krusty_fn::{FnResult, ResourceList};

use crate::policy::{describe_size, Policy};
use crate::process::{self, stderr_excerpt, Failure};
use crate::Failed;

/// The Starlark runtime's program name.
pub const PROGRAM: &str = "krusty-starlark";

/// Names the Starlark runtime's program when it is not beside `krusty`.
pub const PROGRAM_ENV: &str = "KRUSTY_STARLARK";

/// The subcommand that runs a program over a list.
pub const RUN: &str = "run";

/// Exit status of a run whose program failed (its answer says why).
pub const PROGRAM_FAILED: i32 = 1;

/// Holds the process id of the `krusty` that started the Starlark
/// runtime, which dies with it (`PR_SET_PDEATHSIG` on Linux).
pub const PARENT_ENV: &str = "KRUSTY_STARLARK_PARENT";

/// Exit status of a run that needed more memory than its limit.
pub const OUT_OF_MEMORY: i32 = 3;

/// Why the Starlark runtime did not run a program to its end.
#[derive(Debug, thiserror::Error)]
enum Unrun {
    /// krusty's own path is unknown.
    #[error("cannot find the Starlark runtime: where is krusty? {0}")]
    NoExe(#[source] std::io::Error),
    /// The runtime's program is not beside krusty (where it was looked
    /// for).
    #[error("Starlark functions run in the {PROGRAM} program, which is not beside krusty ({}): build the workspace (cargo build --release) or install both programs together, or set {PROGRAM_ENV} to its path", .0.display())]
    NotBeside(PathBuf),
    /// The runtime's program could not be started.
    #[error("cannot start the Starlark runtime '{}': {source}", .path.display())]
    Spawn {
        /// The program.
        path: PathBuf,
        /// Why it did not start.
        source: std::io::Error,
    },
    /// The program ran past the time limit.
    #[error("the Starlark program ran longer than {} s and was stopped", .0.as_secs_f64())]
    Timeout(Duration),
    /// The program's list grew past the output limit (in bytes).
    #[error("the Starlark program's list grew past {0} bytes and it was stopped")]
    TooMuchOutput(usize),
    /// The program needed more memory than the limit (in bytes).
    #[error("the Starlark program needed more memory than its limit of {} (--function-max-memory) and was stopped", describe_size(*.0))]
    OutOfMemory(u64),
}

/// Runs `program` over `input` in the Starlark runtime, within the
/// policy's time and output limits.
pub fn run(program: &str, input: ResourceList, policy: &Policy) -> Result<ResourceList, Failed> {
    let json = krusty_yaml::to_go_json(&input.into_node());
    let mut stdin = Vec::with_capacity(program.len() + json.len() + 16);
    stdin.extend_from_slice(format!("{}\n", program.len()).as_bytes());
    stdin.extend_from_slice(program.as_bytes());
    stdin.extend_from_slice(json.as_bytes());
    let done = invoke(&[RUN.to_string()], stdin, policy).map_err(|e| Failed::new(e.to_string()))?;
    forward_prints(&done.stderr);
    if done.status.code() == Some(PROGRAM_FAILED) {
        return Err(program_failure(&done.stdout).unwrap_or_else(|| {
            Failed::new(format!(
                "the Starlark runtime failed without saying why; its stderr: {}",
                stderr_excerpt(&done.stderr)
            ))
        }));
    }
    if !done.status.success() {
        return Err(Failed::new(ended_badly(&done)));
    }
    std::str::from_utf8(&done.stdout)
        .map_err(|_| krusty_fn::WireError::NotUtf8)
        .and_then(ResourceList::parse)
        .map_err(|e| {
            Failed::new(format!(
                "the Starlark program left ctx.resource_list in a state that is not a ResourceList: {e}"
            ))
        })
}

/// Runs the Starlark runtime with `args`, `stdin` as its input.
fn invoke(args: &[String], stdin: Vec<u8>, policy: &Policy) -> Result<process::Finished, Unrun> {
    let path = program_path()?;
    let mut cmd = Command::new(&path);
    cmd.args(args)
        .env(PARENT_ENV, std::process::id().to_string());
    let memory = Some(policy.max_memory);
    let done = process::run(
        cmd,
        stdin,
        policy.timeout,
        policy.max_output,
        memory,
        &|| {},
    )
    .map_err(|f| match f {
        Failure::Spawn(source) => Unrun::Spawn {
            path: path.clone(),
            source,
        },
        Failure::Timeout { .. } => Unrun::Timeout(policy.timeout),
        Failure::TooMuchOutput => Unrun::TooMuchOutput(policy.max_output),
    })?;
    if done.status.code() == Some(OUT_OF_MEMORY) {
        return Err(Unrun::OutOfMemory(policy.max_memory));
    }
    Ok(done)
}

/// Where the Starlark runtime's program is: `$KRUSTY_STARLARK`, else
/// beside the running `krusty`.
fn program_path() -> Result<PathBuf, Unrun> {
    if let Some(path) = std::env::var_os(PROGRAM_ENV) {
        return Ok(PathBuf::from(path));
    }
    let exe = std::env::current_exe().map_err(Unrun::NoExe)?;
    let beside = exe.with_file_name(PROGRAM);
    if beside.is_file() {
        return Ok(beside);
    }
    Err(Unrun::NotBeside(beside))
}

/// Passes on what the program printed, as an interpreter in this process
/// would have (a failure's own message comes back on stdout).
fn forward_prints(stderr: &[u8]) {
    use std::io::Write;
    if !stderr.is_empty() {
        let _ = std::io::stderr().write_all(stderr);
    }
}

/// The failure a failed program's answer describes.
fn program_failure(stdout: &[u8]) -> Option<Failed> {
    let text = std::str::from_utf8(stdout).ok()?;
    let root = krusty_yaml::parse_stream(text)
        .ok()?
        .into_iter()
        .find_map(|d| d.root)?;
    let message = root.get("message")?.as_str()?.to_string();
    let results = root
        .get("results")
        .and_then(|r| r.as_seq())
        .map(|items| {
            items
                .iter()
                .filter_map(|r| FnResult::from_node(r).ok())
                .collect()
        })
        .unwrap_or_default();
    Some(Failed { message, results })
}

/// How the Starlark runtime ended when it did not end as agreed.
fn ended_badly(done: &process::Finished) -> String {
    format!(
        "the Starlark runtime {}; its stderr: {}",
        process::describe_exit(done.status),
        stderr_excerpt(&done.stderr)
    )
}
