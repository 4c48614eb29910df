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
//! mode. A server that shows it speaks krusty-yaml's binary node encoding
//! (its gRPC `Capabilities` list `FORMAT_KRUSTY_NODE`; over HTTP, it
//! answered a request asking for it first in `Accept` with it) gets the
//! list in that encoding instead of YAML: see [`Wire`].
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

use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::time::Instant;

use krusty_fn::answer::{is_node_media_type, NODE_MEDIA_TYPE};
use krusty_fn::{ResourceList, Sent};

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

/// The `Accept` of an HTTP request to a server that may speak the binary
/// node encoding: that first, YAML for a server that does not.
const ACCEPT_NODE_FIRST: &str = "application/vnd.krusty.node, text/yaml;q=0.9";

/// What a server is known to speak: until it has shown it reads and
/// writes the binary node encoding, it gets YAML. One a server (a new
/// server of the same function starts unknown).
#[derive(Debug, Default)]
pub(crate) struct Wire(AtomicU8);

/// Not known yet: over HTTP, the next YAML request asks for the binary
/// encoding first; over gRPC, `Capabilities` is asked first.
const UNKNOWN: u8 = 0;
/// It reads and writes the binary node encoding.
const NODE: u8 = 1;
/// YAML only.
const YAML: u8 = 2;

impl Wire {
    fn get(&self) -> u8 {
        self.0.load(Ordering::Relaxed)
    }

    fn set(&self, state: u8) {
        self.0.store(state, Ordering::Relaxed);
    }
}

/// A call's input list, encoded the way each request needs it (each
/// encoding made once, when first needed).
pub(crate) struct Outgoing<'a> {
    list: &'a ResourceList,
    yaml: Option<Sent>,
    node: Option<Vec<u8>>,
}

impl<'a> Outgoing<'a> {
    pub(crate) fn new(list: &'a ResourceList) -> Outgoing<'a> {
        Outgoing {
            list,
            yaml: None,
            node: None,
        }
    }

    /// The list as YAML, with each item's span (to reuse unchanged items).
    fn yaml(&mut self) -> Result<&Sent, http::Error> {
        let sent = match self.yaml.take() {
            Some(sent) => sent,
            None => self
                .list
                .to_yaml_tracked()
                .map_err(|e| http::Error::Encode(e.to_string()))?,
        };
        Ok(self.yaml.insert(sent))
    }

    /// The list in the binary node encoding.
    fn node(&mut self) -> &[u8] {
        let list = self.list;
        self.node.get_or_insert_with(|| {
            let mut bytes = Vec::with_capacity(64 << 10);
            list.to_binary(&mut bytes);
            bytes
        })
    }

    /// The YAML sent, if YAML was sent.
    pub(crate) fn into_sent(self) -> Option<Sent> {
        self.yaml
    }
}

/// Sends the list `out` to the server on `socket`, in the encoding its
/// `wire` allows, learning what it speaks on the way.
fn send(
    protocol: ServerProtocol,
    socket: &std::path::Path,
    out: &mut Outgoing<'_>,
    wire: &Wire,
    policy: &Policy,
) -> Result<answer::Answer, http::Error> {
    match protocol {
        ServerProtocol::Http => send_http(socket, out, wire, policy),
        #[cfg(feature = "grpc")]
        ServerProtocol::Grpc => {
            use krusty_fn::grpc::Format;
            if wire.get() == UNKNOWN {
                let nodes = grpc::reads_nodes(socket, policy.timeout)?;
                wire.set(if nodes { NODE } else { YAML });
            }
            if wire.get() == NODE {
                grpc::run(
                    socket,
                    out.node(),
                    Format::KrustyNode,
                    policy.timeout,
                    policy.max_output,
                )
            } else {
                let text = out.yaml()?.text.as_bytes();
                grpc::run(
                    socket,
                    text,
                    Format::Yaml,
                    policy.timeout,
                    policy.max_output,
                )
            }
        }
        #[cfg(not(feature = "grpc"))]
        ServerProtocol::Grpc => Err(http::Error::Malformed("gRPC is not built in".into())),
    }
}

/// One call over HTTP. A server of unknown speech gets YAML, asked for
/// the binary encoding first (`Accept`); one that answered in it gets it
/// from then on, and one that answered YAML (or refused the `Accept`
/// with 406, or the binary body with 415) gets YAML as before, the
/// refused request sent again as YAML.
fn send_http(
    socket: &std::path::Path,
    out: &mut Outgoing<'_>,
    wire: &Wire,
    policy: &Policy,
) -> Result<answer::Answer, http::Error> {
    let deadline = Instant::now() + policy.timeout;
    let left = || deadline.saturating_duration_since(Instant::now());
    let post = |body: &[u8], content_type: &str, accept: &str| {
        http::post(
            socket,
            body,
            content_type,
            accept,
            left(),
            policy.max_output,
        )
    };
    if wire.get() == NODE {
        let response = post(out.node(), NODE_MEDIA_TYPE, ACCEPT_NODE_FIRST)?;
        if response.status != 415 {
            return Ok(response.into());
        }
        wire.set(YAML);
    }
    let asking = wire.get() == UNKNOWN;
    let accept = if asking {
        ACCEPT_NODE_FIRST
    } else {
        "text/yaml"
    };
    let mut response = post(out.yaml()?.text.as_bytes(), "text/yaml", accept)?;
    if asking {
        let answered = (200..300).contains(&response.status) || response.status == 422;
        let in_nodes = response
            .content_type
            .as_deref()
            .is_some_and(is_node_media_type);
        if response.status == 406 {
            wire.set(YAML);
            response = post(out.yaml()?.text.as_bytes(), "text/yaml", "text/yaml")?;
        } else if answered {
            wire.set(if in_nodes { NODE } else { YAML });
        }
    }
    Ok(response.into())
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::os::unix::net::UnixListener;
    use std::sync::mpsc;

    const LIST: &str = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: a # kept\n  data: {k: 'v'}\n";

    /// One request as the server saw it.
    #[derive(Debug)]
    struct Seen {
        content_type: String,
        accept: String,
        body: Vec<u8>,
    }

    /// A server that answers each request with what `answer` makes of
    /// it (a status, a content type, a body), telling what it saw.
    fn serve(
        answer: fn(&Seen) -> (u16, &'static str, Vec<u8>),
    ) -> (std::path::PathBuf, mpsc::Receiver<Seen>) {
        let dir =
            std::env::temp_dir().join(format!("krusty-wire-{}-{}", std::process::id(), next_id()));
        std::fs::create_dir_all(&dir).unwrap();
        let socket = dir.join("s.sock");
        let listener = UnixListener::bind(&socket).unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut s) = stream else { return };
                let mut raw = Vec::new();
                let mut buf = [0u8; 8192];
                let (head, body) = loop {
                    let n = s.read(&mut buf).unwrap();
                    raw.extend_from_slice(&buf[..n]);
                    let Some(end) = raw.windows(4).position(|w| w == b"\r\n\r\n") else {
                        continue;
                    };
                    let head = String::from_utf8_lossy(&raw[..end]).into_owned();
                    let header = |name: &str| {
                        head.lines()
                            .find_map(|l| l.strip_prefix(name))
                            .unwrap_or_default()
                            .to_string()
                    };
                    let len: usize = header("Content-Length: ").parse().unwrap();
                    if raw.len() >= end + 4 + len {
                        break (head.clone(), raw[end + 4..end + 4 + len].to_vec());
                    }
                };
                let header = |name: &str| {
                    head.lines()
                        .find_map(|l| l.strip_prefix(name))
                        .unwrap_or_default()
                        .to_string()
                };
                let seen = Seen {
                    content_type: header("Content-Type: "),
                    accept: header("Accept: "),
                    body,
                };
                let (status, kind, body) = answer(&seen);
                // Told before the answer: the client has it once it reads one.
                let _ = tx.send(seen);
                let _ = write!(
                    s,
                    "HTTP/1.1 {status} X\r\nContent-Type: {kind}\r\nContent-Length: {}\r\n\r\n",
                    body.len()
                );
                let _ = s.write_all(&body);
            }
        });
        (socket, rx)
    }

    /// The list a request carried, in either encoding.
    fn list_of(seen: &Seen) -> ResourceList {
        if is_node_media_type(&seen.content_type) {
            ResourceList::from_binary(&seen.body).unwrap()
        } else {
            ResourceList::parse(std::str::from_utf8(&seen.body).unwrap()).unwrap()
        }
    }

    /// As krusty-fn's servers answer: the binary encoding when `Accept`
    /// names it first, else YAML.
    fn sdk(seen: &Seen) -> (u16, &'static str, Vec<u8>) {
        let list = list_of(seen);
        if seen.accept.starts_with(NODE_MEDIA_TYPE) {
            let mut bytes = Vec::new();
            list.to_binary(&mut bytes);
            (200, NODE_MEDIA_TYPE, bytes)
        } else {
            (200, "text/yaml", list.to_yaml().unwrap().into_bytes())
        }
    }

    /// A server that knows YAML alone (it never reads `Accept`).
    fn yaml_only(seen: &Seen) -> (u16, &'static str, Vec<u8>) {
        if is_node_media_type(&seen.content_type) {
            return (415, "text/plain", b"text/yaml only".to_vec());
        }
        (
            200,
            "text/yaml",
            list_of(seen).to_yaml().unwrap().into_bytes(),
        )
    }

    /// A server that refuses any `Accept` other than `text/yaml`.
    fn strict(seen: &Seen) -> (u16, &'static str, Vec<u8>) {
        if seen.accept != "text/yaml" {
            return (406, "text/plain", b"text/yaml only".to_vec());
        }
        yaml_only(seen)
    }

    /// Three calls through `wire`: what the server saw, and the outputs.
    fn three_calls(
        socket: &std::path::Path,
        wire: &Wire,
        rx: &mpsc::Receiver<Seen>,
    ) -> (Vec<Seen>, Vec<String>) {
        let policy = Policy::default();
        let mut outputs = Vec::new();
        for _ in 0..3 {
            let input = ResourceList::parse(LIST).unwrap();
            let mut out = Outgoing::new(&input);
            let answer = send(ServerProtocol::Http, socket, &mut out, wire, &policy).unwrap();
            let sent = out.into_sent();
            let list = answer::read(answer, sent.as_ref(), input.items.clone()).unwrap();
            outputs.push(list.to_yaml().unwrap());
        }
        (rx.try_iter().collect(), outputs)
    }

    #[test]
    fn a_server_that_answers_in_nodes_gets_nodes_from_then_on() {
        let (socket, rx) = serve(sdk);
        let wire = Wire::default();
        let (seen, outputs) = three_calls(&socket, &wire, &rx);
        assert_eq!(seen[0].content_type, "text/yaml");
        assert_eq!(seen[0].accept, ACCEPT_NODE_FIRST);
        assert_eq!(wire.get(), NODE);
        for later in &seen[1..] {
            assert_eq!(later.content_type, NODE_MEDIA_TYPE);
        }
        let expected = ResourceList::parse(LIST).unwrap().to_yaml().unwrap();
        assert!(outputs.iter().all(|o| *o == expected), "{outputs:?}");
    }

    #[test]
    fn a_server_that_answers_yaml_gets_yaml_as_before() {
        let expected = ResourceList::parse(LIST).unwrap().to_yaml().unwrap();
        for (server, first_accepts) in [
            (yaml_only as fn(&Seen) -> _, &[ACCEPT_NODE_FIRST][..]),
            (strict, &[ACCEPT_NODE_FIRST, "text/yaml"]),
        ] {
            let (socket, rx) = serve(server);
            let wire = Wire::default();
            let (seen, outputs) = three_calls(&socket, &wire, &rx);
            assert_eq!(wire.get(), YAML);
            let accepts: Vec<&str> = seen.iter().map(|s| s.accept.as_str()).collect();
            let mut want = first_accepts.to_vec();
            want.extend(["text/yaml", "text/yaml"]);
            assert_eq!(accepts, want);
            assert!(
                seen.iter().all(|s| s.content_type == "text/yaml"),
                "{seen:?}"
            );
            assert!(outputs.iter().all(|o| *o == expected), "{outputs:?}");
        }
        // A server taken to speak nodes that refuses them (415): the
        // call is sent again as YAML, and YAML it gets from then on.
        let (socket, rx) = serve(yaml_only);
        let wire = Wire::default();
        wire.set(NODE);
        let (seen, outputs) = three_calls(&socket, &wire, &rx);
        let kinds: Vec<&str> = seen.iter().map(|s| s.content_type.as_str()).collect();
        assert_eq!(
            kinds,
            [NODE_MEDIA_TYPE, "text/yaml", "text/yaml", "text/yaml"]
        );
        assert_eq!(wire.get(), YAML);
        assert!(outputs.iter().all(|o| *o == expected), "{outputs:?}");
    }
}
