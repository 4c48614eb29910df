//! A pool of function servers: each started on first use, shared by
//! every later call of the same function, restarted once, stopped when
//! the pool is dropped, at most the policy's `max_servers` at once (the
//! least recently used idle one is stopped for a new one).

use std::collections::HashMap;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, Once};
use std::time::{Duration, Instant};

use krusty_fn::ResourceList;

use super::http;
use super::limit::Places;
use super::log::Log;
use super::{next_id, Outgoing, Plan, Wire};
use crate::interrupt::{self, Registration};
use crate::{container, exec, watchdog, Failed, FunctionCall, Policy, Runtime, ServerProtocol};

/// How many servers of a function may fail (not ready, or dead) in a
/// run before it runs as spec v1.
const FAILURES: u32 = 2;

/// The folder of the socket inside a container.
const CONTAINER_SOCKET_DIR: &str = "/krm-function";

/// The socket's file name.
const SOCKET: &str = "fn.sock";

/// One function's server and its history.
#[derive(Default)]
struct Slot {
    server: Option<Server>,
    /// How many of its servers failed.
    failures: u32,
    /// It failed too often: the function runs as spec v1 from now on.
    fallen_back: bool,
    /// A server of it passed a bound that fails the build: every call
    /// fails with this.
    fatal: Option<String>,
    /// Calls sent to its server and not answered yet.
    in_flight: usize,
    /// When a call last ended (or the server started).
    last_used: Option<Instant>,
}

/// A running server.
struct Server {
    /// Its socket, on this side.
    socket: PathBuf,
    /// The process serving (for a container, the CLI's `run`).
    child: Child,
    /// Its stdout and stderr.
    log: Arc<Log>,
    /// Its entry in the pool's [`Live`] servers.
    live: u64,
    /// What it is known to speak.
    wire: Arc<Wire>,
}

/// Why a call found no server to answer it.
enum Down {
    /// It did not become ready, or died: its stderr.
    Failed(String),
    /// It passed a bound: the call fails, with no new server and no
    /// fallback.
    Fatal(String),
}

/// What stopping a server takes, without locks: every server running,
/// by number.
struct Stopper {
    pid: u32,
    container: Option<(PathBuf, String)>,
    dir: PathBuf,
    _interrupt: Registration,
}

/// The function servers of one [`crate::Host`]: dropping the pool stops
/// every server it started (their processes and containers end and their
/// folders are removed). An interrupt (SIGINT, SIGTERM, SIGHUP) stops
/// them too, and the watchdog removes them when krusty is killed
/// outright.
pub struct ServerPool {
    /// One slot a function (by its plan's key).
    slots: Mutex<HashMap<String, Arc<Mutex<Slot>>>>,
    /// What stopping each running server takes, and the places they hold.
    live: Arc<Live>,
}

/// The pool's running servers, shared with their log readers (a server
/// whose log passes its bound is halted by its reader).
struct Live {
    /// Every running server, by number.
    servers: Mutex<HashMap<u64, Stopper>>,
    /// The bound on servers at once.
    places: Places,
}

impl std::fmt::Debug for ServerPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerPool")
            .field("running", &self.running())
            .finish_non_exhaustive()
    }
}

impl ServerPool {
    /// A pool running at most `max_servers` servers at once (at least
    /// one).
    pub fn new(max_servers: usize) -> ServerPool {
        ServerPool {
            slots: Mutex::new(HashMap::new()),
            live: Arc::new(Live {
                servers: Mutex::new(HashMap::new()),
                places: Places::new(max_servers),
            }),
        }
    }

    /// How many servers run now.
    pub fn running(&self) -> usize {
        self.live
            .servers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .len()
    }

    /// The slot of the server `key` names.
    fn slot(&self, key: &str) -> Arc<Mutex<Slot>> {
        let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        Arc::clone(slots.entry(key.to_string()).or_default())
    }

    /// Runs `call` on its server; `Err(input)`: run it as spec v1.
    pub(crate) fn call(
        &self,
        plan: &Plan,
        call: &FunctionCall,
        input: ResourceList,
        policy: &Policy,
    ) -> Result<Result<ResourceList, Failed>, ResourceList> {
        let slot = self.slot(&plan.key);
        {
            let s = slot.lock().unwrap_or_else(|e| e.into_inner());
            if s.fallen_back {
                return Err(input);
            }
            if let Some(fatal) = &s.fatal {
                return Ok(Err(Failed::new(fatal.clone())));
            }
        }
        let mut out = Outgoing::new(&input);
        loop {
            let (socket, wire) = match self.ready_socket(&slot, call, plan, policy) {
                Ok(ready) => ready,
                Err(Down::Failed(stderr)) => return give_up(&slot, plan, call, input, &stderr),
                Err(Down::Fatal(why)) => return Ok(Err(Failed::new(why))),
            };
            let sent_to = super::send(plan.protocol, &socket, &mut out, &wire, policy);
            let mut s = slot.lock().unwrap_or_else(|e| e.into_inner());
            s.in_flight = s.in_flight.saturating_sub(1);
            s.last_used = Some(Instant::now());
            if s.in_flight == 0 {
                self.live.places.idle();
            }
            // A log past its bound fails the call, whatever the answer.
            if let Some(why) = self.live.log_over(&mut s) {
                return Ok(Err(Failed::new(why)));
            }
            let failure = match sent_to {
                Ok(answer) => {
                    drop(s);
                    let sent = out.into_sent();
                    return Ok(super::answer::read(answer, sent.as_ref(), input.items));
                }
                Err(http::Error::Encode(why)) => return Ok(Err(Failed::new(why))),
                Err(http::Error::Connection(e)) => {
                    // Dead or dying: stopped, and started again on the next turn.
                    if let Some(server) = take_if_serving(&mut s, &socket) {
                        let stderr = server.log.excerpt();
                        self.live.stop(server);
                        s.failures += 1;
                        if s.failures >= FAILURES {
                            drop(s);
                            return give_up(
                                &slot,
                                plan,
                                call,
                                input,
                                &format!("its server stopped answering ({e}); its stderr: {stderr}"),
                            );
                        }
                    }
                    continue;
                }
                Err(http::Error::Timeout) => format!(
                    "timed out after {} s and its server was stopped",
                    policy.timeout.as_secs_f64()
                ),
                Err(http::Error::TooLarge) => format!(
                    "its server's answer is larger than --function-max-output ({} bytes) and its server was stopped",
                    policy.max_output
                ),
                Err(e) => {
                    let stderr = s.server.as_ref().map(|sv| sv.log.excerpt());
                    return Ok(Err(Failed::new(format!(
                        "its server gave no usable answer: {e}; its stderr: {}",
                        stderr.unwrap_or_default()
                    ))));
                }
            };
            // A limit: the server is stopped (the next call starts another).
            let server = take_if_serving(&mut s, &socket);
            drop(s);
            let stderr = server.as_ref().map(|sv| sv.log.excerpt());
            if let Some(server) = server {
                self.live.stop(server);
            }
            return Ok(Err(Failed::new(format!(
                "{failure}; its stderr: {}",
                stderr.unwrap_or_default()
            ))));
        }
    }

    /// A gRPC server when krusty is built without its gRPC client.
    #[cfg(not(feature = "grpc"))]
    pub(crate) fn unsupported(
        &self,
        plan: &Plan,
        call: &FunctionCall,
        input: ResourceList,
    ) -> Result<Result<ResourceList, Failed>, ResourceList> {
        let slot = self.slot(&plan.key);
        let why =
            "this krusty was built without gRPC (cargo feature grpc); the function serves gRPC";
        give_up(&slot, plan, call, input, why)
    }

    /// The socket of the slot's server, started when none runs (unless
    /// [`FAILURES`] of its servers failed), with the call counted in flight.
    fn ready_socket(
        &self,
        slot: &Mutex<Slot>,
        call: &FunctionCall,
        plan: &Plan,
        policy: &Policy,
    ) -> Result<(PathBuf, Arc<Wire>), Down> {
        let mut s = slot.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(fatal) = &s.fatal {
            return Err(Down::Fatal(fatal.clone()));
        }
        if let Some(server) = &s.server {
            let ready = (server.socket.clone(), Arc::clone(&server.wire));
            s.in_flight += 1;
            return Ok(ready);
        }
        let mut last = String::from("(it was not started)");
        while !s.fallen_back && s.failures < FAILURES {
            self.live.places.take(|| self.stop_idle(slot));
            match self.live.start(call, plan, policy) {
                Ok(server) => {
                    let ready = (server.socket.clone(), Arc::clone(&server.wire));
                    s.server = Some(server);
                    s.in_flight += 1;
                    s.last_used = Some(Instant::now());
                    return Ok(ready);
                }
                Err(Down::Failed(why)) => {
                    s.failures += 1;
                    last = why;
                }
                Err(Down::Fatal(why)) => {
                    s.fatal = Some(why.clone());
                    return Err(Down::Fatal(why));
                }
            }
        }
        Err(Down::Failed(last))
    }

    /// Stops the least recently used server with no call in flight, other
    /// than `except`'s; whether it found one. Slots in use by another thread
    /// are passed over (never waited for: the caller holds `except`).
    fn stop_idle(&self, except: &Mutex<Slot>) -> bool {
        let slots: Vec<Arc<Mutex<Slot>>> = self
            .slots
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .cloned()
            .collect();
        let idle = |s: &Slot| s.server.is_some() && s.in_flight == 0;
        let oldest = slots
            .iter()
            .filter(|other| !std::ptr::eq(other.as_ref(), except))
            .filter_map(|other| {
                let s = other.try_lock().ok()?;
                idle(&s).then(|| (s.last_used, Arc::clone(other)))
            })
            .min_by_key(|(used, _)| *used);
        let Some((_, victim)) = oldest else {
            return false;
        };
        let Ok(mut s) = victim.try_lock() else {
            return false;
        };
        if !idle(&s) {
            return false;
        }
        // A log past its bound is kept as the function's failure.
        if self.live.log_over(&mut s).is_some() {
            return true;
        }
        let Some(server) = s.server.take() else {
            return false;
        };
        drop(s);
        self.live.stop(server);
        true
    }
}

impl Drop for ServerPool {
    /// Stops every server of the pool: their processes and containers end
    /// and their folders are removed.
    fn drop(&mut self) {
        // An interrupt's clean-up has stopped them all; the process is ending.
        if interrupt::interrupted() {
            return;
        }
        let slots = std::mem::take(self.slots.get_mut().unwrap_or_else(|e| e.into_inner()));
        for slot in slots.into_values() {
            if let Ok(mut s) = slot.try_lock() {
                if let Some(server) = s.server.take() {
                    self.live.stop(server);
                }
            }
        }
        // Servers whose slot was busy: stopped without waiting.
        let rest: Vec<Stopper> =
            std::mem::take(&mut *self.live.servers.lock().unwrap_or_else(|e| e.into_inner()))
                .into_values()
                .collect();
        for s in &rest {
            halt(s.pid, s.container.as_ref(), &s.dir);
            self.live.places.give_back();
        }
    }
}

impl Live {
    /// When the slot's server wrote more than its log's bound: the server
    /// is stopped, and the function fails from now on; why.
    fn log_over(&self, slot: &mut Slot) -> Option<String> {
        if slot.fatal.is_none() && slot.server.as_ref().is_some_and(|sv| sv.log.over()) {
            if let Some(server) = slot.server.take() {
                slot.fatal = Some(server.log.over_message());
                self.stop(server);
            }
        }
        slot.fatal.clone()
    }

    /// Starts the server for `call` and waits until its socket answers. It
    /// holds the place its caller took ([`Places::take`]): given back here
    /// if it does not start, else when it leaves the running servers.
    fn start(
        self: &Arc<Live>,
        call: &FunctionCall,
        plan: &Plan,
        policy: &Policy,
    ) -> Result<Server, Down> {
        use std::os::unix::process::CommandExt;
        let failed = |why: String| {
            self.places.give_back();
            Down::Failed(why)
        };
        let dir = private_dir()
            .map_err(|e| failed(format!("cannot make a folder for the server: {e}")))?;
        let sockets = dir.join("socket");
        let made = std::fs::create_dir(&sockets)
            // Written by the container's user (nobody).
            .and_then(|()| {
                std::fs::set_permissions(&sockets, std::fs::Permissions::from_mode(0o777))
            })
            .and_then(|()| Log::pipe());
        let (log, log_reader, log_writer) = match made {
            Ok(made) => made,
            Err(e) => {
                let _ = std::fs::remove_dir_all(&dir);
                return Err(failed(format!("cannot make a folder for the server: {e}")));
            }
        };
        let socket = sockets.join(SOCKET);
        let (mut cmd, container) = command(call, plan, policy, &sockets, &socket);
        let program = cmd.get_program().to_string_lossy().into_owned();
        cmd.stdin(Stdio::null())
            .stdout(
                log_writer
                    .try_clone()
                    .map_or_else(|_| Stdio::null(), Stdio::from),
            )
            .stderr(Stdio::from(log_writer))
            .process_group(0);
        // Watched before it exists: a krusty killed while it starts leaves
        // no container either.
        if let Some((cli, name)) = &container {
            watchdog::watch_container(cli, container::remove_options(cli), name);
        }
        let spawned = cmd.spawn();
        // The write ends now belong to the server alone: its log ends with it.
        drop(cmd);
        let child = match spawned {
            Ok(c) => c,
            Err(e) => {
                if let Some((cli, name)) = &container {
                    watchdog::forget_container(cli, name);
                }
                let _ = std::fs::remove_dir_all(&dir);
                return Err(failed(format!("cannot start '{program}': {e}")));
            }
        };
        let pid = child.id();
        watchdog::watch(pid);
        let live = next_id();
        self.register(live, pid, container, dir);
        let halted = Arc::clone(self);
        log.read_from(log_reader, move || halted.halt(live));
        let mut server = Server {
            socket,
            child,
            log,
            live,
            wire: Arc::default(),
        };
        match wait_ready(&mut server, policy.timeout) {
            Ok(()) => Ok(server),
            Err(_) if server.log.over() => {
                let why = server.log.over_message();
                self.stop(server);
                Err(Down::Fatal(why))
            }
            Err(why) => {
                let stderr = server.log.excerpt();
                self.stop(server);
                Err(Down::Failed(format!("{why}; its stderr: {stderr}")))
            }
        }
    }

    /// Records a started server among the running ones, with its interrupt
    /// clean-up.
    fn register(&self, live: u64, pid: u32, container: Option<(PathBuf, String)>, dir: PathBuf) {
        let on_interrupt = {
            let container = container.clone();
            let dir = dir.clone();
            interrupt::on_interrupt(move || {
                if let Some((_, name)) = &container {
                    eprintln!("krusty: interrupted; removing function server container {name}");
                }
                halt(pid, container.as_ref(), &dir);
            })
        };
        self.servers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(
                live,
                Stopper {
                    pid,
                    container,
                    dir,
                    _interrupt: on_interrupt,
                },
            );
    }

    /// Stops a server and waits for its process.
    fn stop(&self, mut server: Server) {
        self.halt(server.live);
        let _ = server.child.wait();
    }

    /// Halts the running server `live` and gives its place back, unless it
    /// is halted already (by its log's reader, or by [`Live::stop`]): each
    /// server gives its place back once, when it leaves the running servers.
    fn halt(&self, live: u64) {
        let stopper = self
            .servers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&live);
        if let Some(s) = stopper {
            halt(s.pid, s.container.as_ref(), &s.dir);
            self.places.give_back();
        }
    }
}

/// The slot's server if it is still the one on `socket` (another call
/// may have replaced it since).
fn take_if_serving(slot: &mut Slot, socket: &Path) -> Option<Server> {
    if slot.server.as_ref()?.socket == socket {
        slot.server.take()
    } else {
        None
    }
}

/// After a server failed for good: spec v1 for the rest of the run (with
/// a warning, once) when the function supports it, else the call fails.
fn give_up(
    slot: &Mutex<Slot>,
    plan: &Plan,
    call: &FunctionCall,
    input: ResourceList,
    why: &str,
) -> Result<Result<ResourceList, Failed>, ResourceList> {
    if !plan.supports_v1 {
        return Ok(Err(Failed::new(format!(
            "its spec v2 server failed and it does not support spec v1: {why}"
        ))));
    }
    let mut s = slot.lock().unwrap_or_else(|e| e.into_inner());
    if !s.fallen_back {
        s.fallen_back = true;
        eprintln!(
        "Warning: function {}: its spec v2 server failed ({why}); it runs as a spec v1 function for the rest of the run",
        call.label
    );
    }
    Err(input)
}

/// The command that starts the server, and the container it runs in.
fn command(
    call: &FunctionCall,
    plan: &Plan,
    policy: &Policy,
    sockets: &Path,
    socket: &Path,
) -> (Command, Option<(PathBuf, String)>) {
    let (flag, variable) = match plan.protocol {
        ServerProtocol::Http => ("--http-addr", "KRM_FUNCTION_HTTP_ADDRESS"),
        ServerProtocol::Grpc => ("--grpc-addr", "KRM_FUNCTION_GRPC_ADDRESS"),
    };
    match (&call.runtime, &plan.cli) {
        (
            Runtime::Container {
                image,
                network,
                envs,
                ..
            },
            Some(cli),
        ) => {
            container::prepare_cli(cli);
            container::pull_shown(cli, image, policy);
            let address = format!("unix://{CONTAINER_SOCKET_DIR}/{SOCKET}");
            let envs: Vec<String> = crate::KUSTOMIZE_ENV
                .iter()
                .map(|e| e.to_string())
                .chain(envs.iter().cloned())
                .chain([format!("{variable}={address}")])
                .collect();
            let prepared = container::prepare_server(
                &container::ServerRun {
                    cli,
                    image,
                    network: *network,
                    envs: &envs,
                    dir: &call.dir,
                    socket_dir: (sockets, CONTAINER_SOCKET_DIR),
                    args: &[flag.to_string(), address],
                },
                policy,
            );
            (prepared.command, Some((prepared.cli, prepared.name)))
        }
        (Runtime::Exec { path, args, envs }, _) => {
            let address = format!("unix://{}", socket.display());
            let mut all = vec![flag.to_string(), address.clone()];
            all.extend(args.iter().cloned());
            let mut cmd = exec::command(Path::new(path), &all, envs, &call.dir, policy);
            cmd.env(variable, address);
            (cmd, None)
        }
        // Planned only for exec and container functions.
        _ => (Command::new("false"), None),
    }
}

/// Why a server did not become ready.
#[derive(Debug, thiserror::Error)]
enum NotReady {
    /// Its log passed its bound.
    #[error("its log passed its bound")]
    LogOver,
    /// Its process ended (how).
    #[error("its server {0} before it was ready")]
    Ended(String),
    /// It was not ready in time.
    #[error("its server was not ready after {} s", .0.as_secs_f64())]
    Timeout(Duration),
}

/// Waits until the server's socket accepts a connection, its process
/// ends, or `timeout` passes.
fn wait_ready(server: &mut Server, timeout: Duration) -> Result<(), NotReady> {
    let started = Instant::now();
    let mut pause = Duration::from_micros(200);
    loop {
        if server.log.over() {
            return Err(NotReady::LogOver);
        }
        if server.socket.exists() && UnixStream::connect(&server.socket).is_ok() {
            return Ok(());
        }
        if let Ok(Some(status)) = server.child.try_wait() {
            return Err(NotReady::Ended(crate::process::describe_exit(status)));
        }
        if started.elapsed() >= timeout {
            return Err(NotReady::Timeout(timeout));
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(20));
    }
}

/// The prefix of the servers' private folders in the temporary folder.
const DIR_PREFIX: &str = "krusty-fn-server-";

/// A new folder only this user can enter. The first one of the process
/// removes the folders of krusty processes that are gone (killed before
/// they could remove them).
fn private_dir() -> std::io::Result<PathBuf> {
    use std::os::unix::fs::DirBuilderExt;
    static SWEEP: Once = Once::new();
    let temp = std::env::temp_dir();
    SWEEP.call_once(|| remove_orphan_dirs(&temp));
    let dir = temp.join(format!("{DIR_PREFIX}{}-{}", std::process::id(), next_id()));
    std::fs::DirBuilder::new().mode(0o700).create(&dir)?;
    Ok(dir)
}

/// Removes the private folders in `temp` whose krusty process is gone.
fn remove_orphan_dirs(temp: &Path) {
    let Ok(entries) = std::fs::read_dir(temp) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let pid = name
            .to_str()
            .and_then(|n| n.strip_prefix(DIR_PREFIX))
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<u32>().ok());
        if pid.is_some_and(|pid| !Path::new(&format!("/proc/{pid}")).exists()) {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// Kills a server's process group, removes its container and its folder.
fn halt(pid: u32, container: Option<&(PathBuf, String)>, dir: &Path) {
    if let Some((cli, name)) = container {
        container::remove(cli, std::slice::from_ref(name));
        watchdog::forget_container(cli, name);
    }
    if let Ok(id) = libc::pid_t::try_from(pid) {
        // SAFETY: kill(2) touches no memory of ours.
        unsafe {
            libc::kill(-id, libc::SIGKILL);
        }
    }
    watchdog::forget(pid);
    let _ = std::fs::remove_dir_all(dir);
}
