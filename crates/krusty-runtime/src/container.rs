//! The container runtime: an image run with a docker-compatible CLI
//! (docker or podman), locked down by default: no network, no mounts,
//! user `nobody`, no new privileges, the policy's memory limit.
//!
//! Containers are named `krusty-fn-<pid>-<start>-<n>` (krusty's process
//! id and start time, in clock ticks since boot) and labelled, so that they
//! can be removed when a run is cut short: by a limit, by a signal, or by
//! the next krusty on the same machine when this one was killed outright
//! ([`prepare_cli`] removes containers whose krusty is gone). podman also
//! gets the time limit itself (`--timeout`), so it stops a container whose
//! krusty was killed.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

use crate::interrupt::{self, Registration};
use crate::policy::Policy;

/// Every container krusty starts has this label (its value: the process
/// id and start time of the krusty that started it).
pub const OWNER_LABEL: &str = "dev.krusty.owner";

/// Label whose value names the process id space of the krusty that started
/// a container (boot id and PID namespace): only containers of the same
/// space can be checked for a living owner.
pub const SCOPE_LABEL: &str = "dev.krusty.scope";

/// The prefix of every container name.
const NAME_PREFIX: &str = "krusty-fn-";

static NEXT: AtomicUsize = AtomicUsize::new(0);

/// The CLIs prepared so far, and whether each is podman.
static PREPARED: Mutex<Vec<(PathBuf, bool)>> = Mutex::new(Vec::new());

/// Why there is no container CLI to run a container function with.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CliError {
    /// The CLI named by `--container-cli` or `KRUSTY_CONTAINER_CLI` is
    /// not there.
    #[error("container CLI '{0}' was not found (set by --container-cli or KRUSTY_CONTAINER_CLI)")]
    NotFound(String),
    /// Neither podman nor docker is in `PATH`.
    #[error("no container CLI found: install podman or docker, or name one with --container-cli")]
    Missing,
}

/// The CLI to run containers with: the policy's choice, else
/// `KRUSTY_CONTAINER_CLI`, else the first of podman and docker in `PATH`.
pub fn cli(policy: &Policy) -> Result<PathBuf, CliError> {
    let chosen = policy.container_cli.clone().or_else(|| {
        std::env::var("KRUSTY_CONTAINER_CLI")
            .ok()
            .filter(|s| !s.is_empty())
    });
    if let Some(name) = chosen {
        return find_in_path(&name).ok_or(CliError::NotFound(name));
    }
    ["podman", "docker"]
        .iter()
        .find_map(|name| find_in_path(name))
        .ok_or(CliError::Missing)
}

fn find_in_path(name: &str) -> Option<PathBuf> {
    if name.contains('/') {
        return Path::new(name).is_file().then(|| PathBuf::from(name));
    }
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join(name))
            .find(|p| p.is_file())
    })
}

/// This krusty's identity in container names and labels.
struct Owner {
    pid: u32,
    /// When the process started, in clock ticks since boot (0 when unknown).
    start: u64,
    /// The process id space (empty when unknown: orphans are not looked for).
    scope: String,
}

fn owner() -> &'static Owner {
    static OWNER: OnceLock<Owner> = OnceLock::new();
    OWNER.get_or_init(|| {
        let pid = std::process::id();
        let start = start_time(pid);
        let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id");
        let pid_ns = std::fs::read_link("/proc/self/ns/pid");
        // Without its own start time, krusty cannot tell its containers
        // from orphans: it neither looks for orphans nor joins a scope.
        let scope = match (start, boot, pid_ns) {
            (Some(_), Ok(boot), Ok(ns)) => {
                let ns: String = ns
                    .to_string_lossy()
                    .chars()
                    .filter(char::is_ascii_digit)
                    .collect();
                format!("{}-{ns}", boot.trim())
            }
            _ => String::new(),
        };
        Owner {
            pid,
            start: start.unwrap_or(0),
            scope,
        }
    })
}

/// When process `pid` started, in clock ticks since boot (the 22nd field
/// of `/proc/<pid>/stat`); `None` when there is no such process.
fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may hold spaces.
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.split_whitespace().nth(19)?.parse().ok()
}

/// Gets `cli` ready for this process's first container: learns whether it
/// is podman, and removes containers left behind by krusty processes that
/// are gone (killed before they could remove them). Later calls return
/// at once. Returns whether the CLI is podman.
pub fn prepare_cli(cli: &Path) -> bool {
    let Ok(mut prepared) = PREPARED.lock() else {
        return false;
    };
    if let Some((_, podman)) = prepared.iter().find(|(c, _)| c == cli) {
        return *podman;
    }
    let version = quiet(Command::new(cli).arg("--version"))
        .stdout(Stdio::piped())
        .spawn();
    let orphans = find_orphans(cli);
    let podman = version
        .and_then(|c| c.wait_with_output())
        .is_ok_and(|out| String::from_utf8_lossy(&out.stdout).starts_with("podman"));
    prepared.push((cli.to_path_buf(), podman));
    drop(prepared);
    if !orphans.is_empty() {
        remove(cli, &orphans);
    }
    podman
}

/// The containers of this machine's process id space whose krusty is gone.
fn find_orphans(cli: &Path) -> Vec<String> {
    let me = owner();
    if me.scope.is_empty() {
        return Vec::new();
    }
    let listed = quiet(Command::new(cli).args([
        "ps",
        "-a",
        "--filter",
        &format!("label={SCOPE_LABEL}={}", me.scope),
        "--format",
        "{{.Names}}",
    ]))
    .stdout(Stdio::piped())
    .output();
    let Ok(listed) = listed else {
        return Vec::new();
    };
    String::from_utf8_lossy(&listed.stdout)
        .lines()
        .map(str::trim)
        .filter(|name| is_orphan(name))
        .map(str::to_string)
        .collect()
}

/// Whether container `name` was started by a krusty that is gone: no
/// process has its id and start time (this krusty's have).
fn is_orphan(name: &str) -> bool {
    let Some(rest) = name.strip_prefix(NAME_PREFIX) else {
        return false;
    };
    let mut parts = rest.split('-').map(str::parse::<u64>);
    let (Some(Ok(pid)), Some(Ok(start))) = (parts.next(), parts.next()) else {
        return false;
    };
    u32::try_from(pid).map_or(true, |pid| start_time(pid) != Some(start))
}

/// A command whose stdin, stdout and stderr go nowhere.
fn quiet(cmd: &mut Command) -> &mut Command {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
}

/// A prepared container run: the command and the container's name.
pub struct Prepared {
    /// The CLI command to spawn.
    pub command: Command,
    /// The container's name, for clean-up.
    pub name: String,
    /// The CLI.
    pub cli: PathBuf,
}

/// Pulls `image` before its first run when `policy.progress` is set and
/// the machine does not have it, under a progress line (the run would
/// pull it without one). A failed pull is left for the run to report;
/// the pull has the function time limit.
pub fn pull_shown(cli: &Path, image: &str, policy: &Policy) {
    if !policy.progress {
        return;
    }
    let present = Command::new(cli)
        .args(["image", "inspect", "--format", "{{.Id}}", "--", image])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if present {
        return;
    }
    let _progress = krusty_fetch::Progress::start(true, &format!("image {image}"));
    let mut pull = Command::new(cli);
    pull.args(["pull", "--", image]);
    let _ = krusty_process::run(pull, Vec::new(), policy.timeout, 1 << 20, None, &|| {});
}

/// Builds the `run` command for `image`; `podman` says whether the CLI is
/// podman (which takes a time limit of its own).
pub fn prepare(
    cli: &Path,
    podman: bool,
    image: &str,
    network: bool,
    envs: &[String],
    dir: &Path,
    policy: &Policy,
) -> Prepared {
    let name = next_name();
    let mut cmd = Command::new(cli);
    cmd.args(["run", "--rm", "-i", "--name", &name]);
    let time_limit = podman.then_some(policy.timeout);
    lock_down(&mut cmd, time_limit, network, envs, dir, policy);
    cmd.arg(image);
    Prepared {
        command: cmd,
        name,
        cli: cli.to_path_buf(),
    }
}

/// A spec v2 function server to run in a container.
pub struct ServerRun<'a> {
    /// The CLI.
    pub cli: &'a Path,
    /// The image.
    pub image: &'a str,
    /// The function asks for network access.
    pub network: bool,
    /// Its environment.
    pub envs: &'a [String],
    /// The kustomization's directory (relative mounts start there).
    pub dir: &'a Path,
    /// The folder for the server's socket, and where it is mounted in
    /// the container (writable): the only way in, as the network stays
    /// off.
    pub socket_dir: (&'a Path, &'a str),
    /// Arguments after the image (the address to listen on).
    pub args: &'a [String],
}

/// Builds the `run` command for a function server: locked down as a
/// spec v1 run, without podman's time limit (it lives for the whole
/// run), its socket folder mounted.
pub fn prepare_server(run: &ServerRun<'_>, policy: &Policy) -> Prepared {
    let name = next_name();
    let mut cmd = Command::new(run.cli);
    cmd.args(["run", "--rm", "--name", &name]);
    lock_down(&mut cmd, None, run.network, run.envs, run.dir, policy);
    let (source, target) = run.socket_dir;
    cmd.arg("--mount").arg(format!(
        "type=bind,source={},target={target}",
        source.display()
    ));
    cmd.arg(run.image).args(run.args);
    Prepared {
        command: cmd,
        name,
        cli: run.cli.to_path_buf(),
    }
}

/// A new container name for this krusty.
fn next_name() -> String {
    let me = owner();
    format!(
        "{NAME_PREFIX}{}-{}-{}",
        me.pid,
        me.start,
        NEXT.fetch_add(1, Ordering::SeqCst)
    )
}

/// The options every function container gets: labels, memory, the time
/// limit (when given), network, user, environment and the user's mounts.
fn lock_down(
    cmd: &mut Command,
    time_limit: Option<std::time::Duration>,
    network: bool,
    envs: &[String],
    dir: &Path,
    policy: &Policy,
) {
    let me = owner();
    cmd.arg("--label")
        .arg(format!("{OWNER_LABEL}={}-{}", me.pid, me.start));
    if !me.scope.is_empty() {
        cmd.arg("--label")
            .arg(format!("{SCOPE_LABEL}={}", me.scope));
    }
    let memory = policy.max_memory.to_string();
    cmd.args(["--memory", &memory, "--memory-swap", &memory]);
    if let Some(limit) = time_limit {
        // A second guard, for when krusty is killed outright; later than
        // krusty's own limit, which stops it first.
        let seconds = limit.as_secs_f64().ceil() as u64 + 1;
        cmd.args(["--timeout", &seconds.to_string()]);
    }
    let network = match (network && policy.network, &policy.network_name) {
        (false, _) => "none",
        (true, Some(name)) => name,
        (true, None) => "host",
    };
    cmd.args(["--network", network]);
    let user = if policy.as_current_user {
        current_user()
    } else {
        "nobody".to_string()
    };
    cmd.args(["--user", &user, "--security-opt=no-new-privileges"]);
    for (k, v) in policy.env_pairs(envs) {
        cmd.arg("-e").arg(format!("{k}={v}"));
    }
    // The user's --mount entries go to every container function; a
    // function's own mounts were checked to be among them.
    for m in &policy.mounts {
        let src = dir.join(&m.src);
        let mut spec = format!("type=bind,source={},target={}", src.display(), m.dst);
        if !m.rw {
            spec.push_str(",readonly");
        }
        cmd.arg("--mount").arg(spec);
    }
}

/// `uid:gid` of this process (the owner of `/proc/self`).
fn current_user() -> String {
    use std::os::unix::fs::MetadataExt;
    match std::fs::metadata("/proc/self") {
        Ok(m) => format!("{}:{}", m.uid(), m.gid()),
        Err(_) => "nobody".to_string(),
    }
}

/// Records a started container, so that an interrupt removes it; give
/// the registration to [`untrack`] when it is done.
pub fn track(cli: &Path, name: &str) -> Registration {
    let (cli, name) = (cli.to_path_buf(), name.to_string());
    interrupt::on_interrupt(move || {
        eprintln!("krusty: interrupted; removing function container {name}");
        remove(&cli, std::slice::from_ref(&name));
    })
}

/// Forgets a finished container. When an interrupt is being handled, the
/// container ended because the clean-up removed it: wait for the clean-up
/// to end the process rather than report a failure.
pub fn untrack(registration: Registration) {
    while interrupt::interrupted() {
        std::thread::park();
    }
    drop(registration);
}

/// Removes containers, whatever state they are in, without the grace
/// period a stop gives (podman waits 10 s by default; docker's `rm -f`
/// kills at once).
pub fn remove(cli: &Path, names: &[String]) {
    let mut cmd = Command::new(cli);
    quiet(&mut cmd).arg("rm").args(remove_options(cli));
    let _ = cmd.arg("--").args(names).status();
}

/// The options after `rm` that remove a container of `cli` at once:
/// `-f`, and podman's `-t 0` (no grace period).
pub fn remove_options(cli: &Path) -> &'static [&'static str] {
    let podman = PREPARED
        .lock()
        .ok()
        .and_then(|p| p.iter().find(|(c, _)| c == cli).map(|(_, podman)| *podman))
        .unwrap_or(false);
    if podman {
        &["-f", "-t", "0"]
    } else {
        &["-f"]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::Mount;

    fn args(policy: &Policy, network: bool) -> Vec<String> {
        let p = prepare(
            Path::new("podman"),
            true,
            "img:v1",
            network,
            &["A=1".to_string()],
            Path::new("/k"),
            policy,
        );
        p.command
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn orphans_are_containers_of_krusty_processes_that_are_gone() {
        let me = owner();
        let mine = format!("{NAME_PREFIX}{}-{}-3", me.pid, me.start);
        assert!(!is_orphan(&mine));
        // The parent of the test runs, with its real start time: alive.
        let parent = std::os::unix::process::parent_id();
        if let Some(start) = start_time(parent) {
            assert!(!is_orphan(&format!("{NAME_PREFIX}{parent}-{start}-0")));
            // The same id with another start time: a process since gone.
            let earlier = start.wrapping_sub(1);
            assert!(is_orphan(&format!("{NAME_PREFIX}{parent}-{earlier}-0")));
        }
        assert!(!is_orphan("someone-else"));
        assert!(!is_orphan(&format!("{NAME_PREFIX}x-y-0")));
    }

    #[test]
    fn locked_down_unless_the_user_relaxes_it() {
        let strict = args(&Policy::default(), true).join(" ");
        assert!(
            strict.starts_with("run --rm -i --name krusty-fn-"),
            "{strict}"
        );
        assert!(
            strict.ends_with(
                "--network none --user nobody --security-opt=no-new-privileges -e A=1 img:v1"
            ),
            "{strict}"
        );
        assert!(strict.contains(" --label dev.krusty.owner="), "{strict}");
        assert!(
            strict.contains(" --memory 1073741824 --memory-swap 1073741824 --timeout 301 "),
            "{strict}"
        );
        let relaxed = Policy {
            network: true,
            as_current_user: true,
            mounts: vec![Mount::parse_flag("type=bind,src=data,dst=/data").unwrap()],
            ..Policy::default()
        };
        let relaxed = args(&relaxed, true).join(" ");
        assert!(relaxed.contains("--network host"), "{relaxed}");
        assert!(!relaxed.contains("--user nobody"), "{relaxed}");
        assert!(
            relaxed.contains("--mount type=bind,source=/k/data,target=/data,readonly"),
            "{relaxed}"
        );
        // Network needs both the function's request and the user's flag.
        let policy = Policy {
            network: true,
            ..Policy::default()
        };
        assert!(args(&policy, false).join(" ").contains("--network none"));
        // --network-name picks the network they get.
        let named = Policy {
            network: true,
            network_name: Some("bridge".into()),
            ..Policy::default()
        };
        assert!(args(&named, true).join(" ").contains("--network bridge"));
        assert!(args(&named, false).join(" ").contains("--network none"));
    }
}
