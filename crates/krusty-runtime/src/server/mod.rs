//! Spec v2 function servers: the orchestrator side.
//!
//! A function whose metadata says it conforms to KRM function spec v2 (an
//! opt-in annotation on its config, a catalog entry, or a
//! `config.kubernetes.io/function-definition` label on its image) is
//! started once per [`ServerPool`] (one a [`crate::Host`]) as a server
//! listening on a unix socket in a private directory, and every later call of the same
//! function (runtime, binary or image, arguments, environment) is one
//! HTTP `POST` of the ResourceList to it. The answer is read exactly as a
//! spec v1 function's stdout is, so the output does not depend on the
//! mode.
//!
//! A server that does not become ready, or dies, is started once more;
//! after that the function runs as spec v1 for the rest of the run (with
//! a warning) when its metadata says it supports v1, else the call fails
//! with the server's stderr. Every server is stopped when its pool is
//! dropped (and on SIGINT, SIGTERM or SIGHUP); see [`ServerPool`].
//!
//! Servers are bounded: an answer holds at most the policy's
//! `max_output` bytes, a server's log (stdout and stderr) at most 16 MiB
//! in a run (past either, the server is stopped and the call fails), and
//! at most the policy's `max_servers` run at once (the least recently used idle one
//! is stopped for a new one). A container server is removed by the
//! watchdog when krusty is killed outright.

mod answer;
#[cfg(feature = "grpc")]
mod grpc;
mod http;
mod limit;
mod log;
mod metadata;
mod pool;

use std::sync::atomic::{AtomicU64, Ordering};

use krusty_fn::ResourceList;

use crate::{Failed, FunctionCall, Policy, Runtime, ServerProtocol};

pub use limit::DEFAULT_MAX_SERVERS;
pub use metadata::{definition_protocol, DEFINITION_LABEL, V2};
pub use pool::ServerPool;

/// Runs `call` on its function's server when it is one (its traits, or
/// its image's metadata, say spec v2). `Err(input)` hands the input back:
/// the call runs as spec v1.
pub(crate) fn invoke(
    servers: &ServerPool,
    call: &FunctionCall,
    input: ResourceList,
    policy: &Policy,
) -> Result<Result<ResourceList, Failed>, ResourceList> {
    let Some(plan) = plan(call, policy) else {
        return Err(input);
    };
    #[cfg(not(feature = "grpc"))]
    if plan.protocol == ServerProtocol::Grpc {
        return servers.unsupported(&plan, call, input);
    }
    servers.call(&plan, call, input, policy)
}

/// Sends a ResourceList (`text`) to the server on `socket`.
fn send(
    protocol: ServerProtocol,
    socket: &std::path::Path,
    text: &str,
    policy: &Policy,
) -> Result<answer::Answer, http::Error> {
    match protocol {
        ServerProtocol::Http => {
            http::post(socket, text.as_bytes(), policy.timeout, policy.max_output).map(Into::into)
        }
        #[cfg(feature = "grpc")]
        ServerProtocol::Grpc => grpc::run(socket, text, policy.timeout, policy.max_output),
        #[cfg(not(feature = "grpc"))]
        ServerProtocol::Grpc => Err(http::Error::Malformed("gRPC is not built in".into())),
    }
}

/// How a function runs as a server.
pub(crate) struct Plan {
    /// Names the server: calls with the same key share it.
    key: String,
    protocol: ServerProtocol,
    /// The function also serves spec v1 (it may fall back).
    supports_v1: bool,
    /// The container CLI, for container functions.
    cli: Option<std::path::PathBuf>,
}

/// The server plan for `call`, or `None` when it runs as spec v1.
fn plan(call: &FunctionCall, policy: &Policy) -> Option<Plan> {
    match &call.runtime {
        Runtime::Exec { path, args, envs } => {
            let protocol = call.traits.server?;
            // One server per binary, however the kustomizations reach it.
            let binary = std::fs::canonicalize(path)
                .map_or_else(|_| path.clone(), |p| p.to_string_lossy().into_owned());
            // The spec's envs after the arguments, counted so that the two
            // lists cannot run into each other.
            let counts = format!("{} args, {} envs", args.len(), envs.len());
            let mut more = args.clone();
            more.extend(envs.iter().cloned());
            Some(Plan {
                key: key(&["exec", &binary, &counts], &more, &policy.envs),
                protocol,
                // Spec v2 is a superset of v1, unless the metadata says
                // otherwise.
                supports_v1: !call.traits.v2_only,
                cli: None,
            })
        }
        Runtime::Container {
            image,
            network,
            mounts,
            envs,
        } => {
            let cli = crate::container::cli(policy).ok()?;
            let image_meta = metadata::of_image(&cli, image);
            let (protocol, supports_v1) = match (call.traits.server, &image_meta.v2) {
                (Some(p), _) => (
                    p,
                    !call.traits.v2_only && image_meta.v2.as_ref().is_none_or(|m| m.supports_v1),
                ),
                (None, Some(m)) => (m.protocol, m.supports_v1),
                (None, None) => return None,
            };
            let identity = image_meta.id.as_deref().unwrap_or(image);
            let mounts: Vec<String> = mounts.iter().map(|m| format!("{m:?}")).collect();
            let mut extra = envs.clone();
            extra.extend(mounts);
            extra.extend(policy.envs.iter().cloned());
            let network = if *network { "network" } else { "none" };
            Some(Plan {
                key: key(
                    &["container", &cli.to_string_lossy(), identity, network],
                    &extra,
                    &[],
                ),
                protocol,
                supports_v1,
                cli: Some(cli),
            })
        }
        Runtime::Starlark(_) => None,
    }
}

/// A key from parts that cannot run into each other.
fn key(parts: &[&str], more: &[String], envs: &[String]) -> String {
    let mut key = String::new();
    for p in parts
        .iter()
        .copied()
        .chain(more.iter().map(String::as_str))
        .chain(["--env"])
        .chain(envs.iter().map(String::as_str))
    {
        key.push_str(p);
        key.push('\0');
    }
    key
}

/// A number unique in this process (private directories, names).
fn next_id() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}
