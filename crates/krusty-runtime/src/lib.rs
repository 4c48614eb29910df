//! # krusty-runtime: running KRM functions
//!
//! The orchestrator side of the KRM functions specification v1: given a
//! function's declared [`Runtime`] and a [`ResourceList`], run it (as a
//! local executable, a container, or a Starlark program) if the user's
//! [`Policy`] allows it, and return the list it produced.

pub mod container;
pub mod exec;
pub mod host;
pub mod policy;
pub mod records;
pub mod server;
pub use krusty_schema::function as spec;
pub mod starlark;

use krusty_process as process;
use krusty_process::{interrupt, watchdog};

use std::path::Path;

use krusty_fn::{FnResult, ResourceList};

pub use host::{Change, FunctionCall, Host, Role, RunError, ServerProtocol, Shown, Traits};
pub use policy::{parse_size, Policy, Refused, SizeError};
pub use spec::{runtime_of, server_of, Mount, MountError, Runtime, SpecError, StarlarkSource};

/// A function run that failed: why, and any results it reported.
#[derive(Debug, Clone, PartialEq)]
pub struct Failed {
    /// What went wrong.
    pub message: String,
    /// Results the function printed before failing.
    pub results: Vec<FnResult>,
}

impl Failed {
    /// A failure without results.
    pub fn new(message: impl Into<String>) -> Failed {
        Failed {
            message: message.into(),
            results: Vec::new(),
        }
    }
}

/// Runs `call` over `input`, on its server in `servers` when it is a spec
/// v2 function. Its `dir` is the kustomization's directory
/// (exec functions run there; relative mounts start there). Exec paths and
/// Starlark files must already be resolved by the caller, which knows the
/// load restrictions: pass `Exec { path }` absolute and Starlark as
/// [`StarlarkSource::Inline`].
pub(crate) fn invoke(
    servers: &server::ServerPool,
    call: &FunctionCall,
    input: ResourceList,
    policy: &Policy,
) -> Result<ResourceList, Failed> {
    let (runtime, dir) = (&call.runtime, call.dir.as_path());
    policy
        .permit(runtime, &call.traits)
        .map_err(|e| Failed::new(e.to_string()))?;
    let input = match server::invoke(servers, call, input, policy) {
        Ok(served) => return served,
        Err(input) => input,
    };
    match runtime {
        Runtime::Exec { path, args, envs } => {
            let cmd = exec::command(Path::new(path), args, envs, dir, policy);
            run_process(cmd, input, policy, None, &|| {})
        }
        Runtime::Container {
            image,
            network,
            envs,
            ..
        } => {
            let cli = container::cli(policy).map_err(|e| Failed::new(e.to_string()))?;
            let podman = container::prepare_cli(&cli);
            container::pull_shown(&cli, image, policy);
            let envs: Vec<String> = KUSTOMIZE_ENV
                .iter()
                .map(|e| e.to_string())
                .chain(envs.iter().cloned())
                .collect();
            let prepared = container::prepare(&cli, podman, image, *network, &envs, dir, policy);
            let registration = container::track(&prepared.cli, &prepared.name);
            let (cli, name) = (prepared.cli.clone(), prepared.name.clone());
            // Removed by the watchdog if krusty is killed outright (docker
            // has no time limit of its own).
            watchdog::watch_container(&cli, container::remove_options(&cli), &name);
            let memory = Some(policy.max_memory);
            let result = run_process(prepared.command, input, policy, memory, &|| {
                container::remove(&cli, std::slice::from_ref(&name))
            });
            watchdog::forget_container(&cli, &name);
            container::untrack(registration);
            result
        }
        Runtime::Starlark(StarlarkSource::Inline(program)) => starlark::run(program, input, policy),
        Runtime::Starlark(_) => Err(Failed::new(
            "internal error: the Starlark program was not loaded before the run",
        )),
    }
}

/// The environment Kustomize gives every container function (a function's
/// own `envs` may override it).
pub(crate) const KUSTOMIZE_ENV: [&str; 2] = ["LOG_TO_STDERR=true", "STRUCTURED_RESULTS=true"];

/// Frees `items` on another thread: freeing a large tree costs about as
/// much as writing it, and that work can overlap the build on a second core.
pub(crate) fn free_later(items: Vec<krusty_yaml::Node>) {
    let _ = std::thread::Builder::new()
        .name("free-list".into())
        .spawn(move || drop(items));
}

/// Status 137 (128 + SIGKILL) from a container CLI: the container was
/// killed, which its memory limit does when it is reached.
const KILLED: i32 = 137;

/// How a function process that failed ended, for messages.
fn describe_failed_exit(status: std::process::ExitStatus, memory_limit: Option<u64>) -> String {
    match memory_limit {
        Some(limit) if status.code() == Some(KILLED) => format!(
            "was killed (exit status {KILLED}), most likely for using more than its memory limit of {} (--function-max-memory)",
            policy::describe_size(limit)
        ),
        _ => process::describe_exit(status),
    }
}

/// Runs a function process and reads its output list. Items the function
/// returns unchanged are not parsed again. `memory_limit` is the limit
/// the process enforces itself, if any (a container's), for messages.
fn run_process(
    cmd: std::process::Command,
    input: ResourceList,
    policy: &Policy,
    memory_limit: Option<u64>,
    on_kill: &dyn Fn(),
) -> Result<ResourceList, Failed> {
    use process::{stderr_excerpt, Failure};
    let sent = input
        .to_yaml_tracked()
        .map_err(|e| Failed::new(e.to_string()))?;
    let mut items = input.items;
    let program = cmd.get_program().to_string_lossy().into_owned();
    let done = process::run(
        cmd,
        sent.text.clone().into_bytes(),
        policy.timeout,
        policy.max_output,
        None,
        on_kill,
    )
    .map_err(|f| match f {
        Failure::Spawn(e) => Failed::new(format!("cannot start '{program}': {e}")),
        Failure::Timeout { stderr } => Failed::new(format!(
            "timed out after {} s and was stopped; its stderr: {}",
            policy.timeout.as_secs_f64(),
            stderr_excerpt(&stderr)
        )),
        Failure::TooMuchOutput => Failed::new(format!(
            "printed more than {} bytes on stdout and was stopped",
            policy.max_output
        )),
    })?;
    let parsed = std::str::from_utf8(&done.stdout)
        .map_err(|_| krusty_fn::WireError::NotUtf8)
        .and_then(|answer| krusty_fn::parse_answer(answer, &sent, &mut items));
    free_later(items);
    if !done.status.success() {
        return Err(Failed {
            message: format!(
                "{}; its stderr: {}",
                describe_failed_exit(done.status, memory_limit),
                stderr_excerpt(&done.stderr)
            ),
            results: parsed.map(|l| l.results).unwrap_or_default(),
        });
    }
    let list = parsed.map_err(|e| {
        let text = String::from_utf8_lossy(&done.stdout);
        let start: String = text.chars().take(200).collect();
        Failed::new(format!(
            "did not print a ResourceList: {e}; its output starts with {start:?}; its stderr: {}",
            stderr_excerpt(&done.stderr)
        ))
    })?;
    // What a function that succeeds writes on stderr is for the user.
    if !done.stderr.is_empty() {
        use std::io::Write;
        let _ = std::io::stderr().lock().write_all(&done.stderr);
    }
    Ok(list)
}
