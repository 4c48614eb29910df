//! The container runtime: an image run with a docker-compatible CLI
//! (docker or podman), locked down by default: no network, no mounts,
//! user `nobody`, no new privileges. Containers are named so they can be
//! removed when a run is cut short, by a limit or by a signal.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, Once};

use crate::policy::Policy;

/// Containers started and not yet finished: `(cli, name)`.
static RUNNING: Mutex<Vec<(PathBuf, String)>> = Mutex::new(Vec::new());
static NEXT: AtomicUsize = AtomicUsize::new(0);
static SIGNALS: Once = Once::new();
/// A signal arrived: the clean-up thread is removing containers and will
/// end the process.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// The CLI to run containers with: the policy's choice, else
/// `KRUSTY_CONTAINER_CLI`, else the first of podman and docker in `PATH`.
pub fn cli(policy: &Policy) -> Result<PathBuf, String> {
    let chosen = policy.container_cli.clone().or_else(|| {
        std::env::var("KRUSTY_CONTAINER_CLI")
            .ok()
            .filter(|s| !s.is_empty())
    });
    if let Some(name) = chosen {
        return find_in_path(&name).ok_or_else(|| {
            format!("container CLI '{name}' was not found (set by --container-cli or KRUSTY_CONTAINER_CLI)")
        });
    }
    ["podman", "docker"]
        .iter()
        .find_map(|name| find_in_path(name))
        .ok_or_else(|| {
            "no container CLI found: install podman or docker, or name one with --container-cli"
                .to_string()
        })
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

/// A prepared container run: the command and the container's name.
pub struct Prepared {
    /// The CLI command to spawn.
    pub command: Command,
    /// The container's name, for clean-up.
    pub name: String,
    /// The CLI.
    pub cli: PathBuf,
}

/// Builds the `run` command for `image`.
pub fn prepare(
    cli: &Path,
    image: &str,
    network: bool,
    envs: &[String],
    dir: &Path,
    policy: &Policy,
) -> Prepared {
    let name = format!(
        "krusty-fn-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::SeqCst)
    );
    let mut cmd = Command::new(cli);
    cmd.args(["run", "--rm", "-i", "--name", &name]);
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
    cmd.arg(image);
    Prepared {
        command: cmd,
        name,
        cli: cli.to_path_buf(),
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

/// Records a started container, and makes sure an interrupt removes it.
pub fn track(cli: &Path, name: &str) {
    SIGNALS.call_once(install_signal_cleanup);
    if let Ok(mut running) = RUNNING.lock() {
        running.push((cli.to_path_buf(), name.to_string()));
    }
}

/// Forgets a finished container. When a signal is being handled, the
/// container ended because the clean-up removed it: wait for the clean-up
/// to end the process rather than report a failure.
pub fn untrack(name: &str) {
    while INTERRUPTED.load(Ordering::SeqCst) {
        std::thread::park();
    }
    if let Ok(mut running) = RUNNING.lock() {
        running.retain(|(_, n)| n != name);
    }
}

/// Removes a container, whatever state it is in.
pub fn remove(cli: &Path, name: &str) {
    let _ = Command::new(cli)
        .args(["rm", "-f", name])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

/// On SIGINT, SIGTERM or SIGHUP: remove every running container, then
/// exit as the signal would have.
fn install_signal_cleanup() {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
        return;
    };
    std::thread::spawn(move || {
        if let Some(sig) = signals.forever().next() {
            INTERRUPTED.store(true, Ordering::SeqCst);
            let running = RUNNING.lock().map(|r| r.clone()).unwrap_or_default();
            for (cli, name) in running {
                remove(&cli, &name);
            }
            eprintln!("krusty: interrupted; function containers removed");
            std::process::exit(128 + sig);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::Mount;

    fn args(policy: &Policy, network: bool) -> Vec<String> {
        let p = prepare(
            Path::new("podman"),
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
