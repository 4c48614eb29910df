//! What the user allows functions to do: the gates behind Kustomize's
//! flags, and the limits on each run.

use std::time::Duration;

use crate::spec::{Mount, Runtime};
use crate::Traits;

/// The default of `--function-max-memory`: 1 GiB.
pub const DEFAULT_MAX_MEMORY: u64 = 1 << 30;

/// The user's permissions and limits for running functions.
#[derive(Debug, Clone)]
pub struct Policy {
    /// `--enable-alpha-plugins`: functions may run at all.
    pub enable_alpha_plugins: bool,
    /// `--enable-exec`: exec functions may run.
    pub enable_exec: bool,
    /// `--enable-star`: Starlark functions may run.
    pub enable_star: bool,
    /// `--network`: container functions that ask for network get it.
    pub network: bool,
    /// `--network-name`: the container network they get (`None`: the
    /// host's).
    pub network_name: Option<String>,
    /// `--mount`: mounts given to every container function; a function's
    /// own mounts must be among them.
    pub mounts: Vec<Mount>,
    /// `--as-current-user`: containers run as krusty's user, not `nobody`.
    pub as_current_user: bool,
    /// `--env/-e`: environment variables passed to functions (`NAME` or
    /// `NAME=value`). An exec function gets them all ([`Policy::env_pairs`]);
    /// when its spec declares `envs`, the `NAME=value` ones also take part
    /// in the merge with those ([`crate::exec::merged_envs`]).
    pub envs: Vec<String>,
    /// The longest one function may run.
    pub timeout: Duration,
    /// The most bytes a function may print on stdout.
    pub max_output: usize,
    /// The most memory, in bytes, a Starlark program or a container
    /// function may use (exec functions are not limited).
    pub max_memory: u64,
    /// The docker-compatible CLI to use (`None`: `KRUSTY_CONTAINER_CLI`,
    /// else podman, else docker, from `PATH`).
    pub container_cli: Option<String>,
    /// `--trusted-catalog`: the catalogs (by reference as written, or by
    /// `metadata.name`) whose functions may run.
    pub trusted_catalogs: Vec<String>,
    /// `--max-function-servers`: how many spec v2 function servers may
    /// run at once (at least one; the least recently used idle one is
    /// stopped for a new one).
    pub max_servers: usize,
    /// Show a progress line on stderr while a container function's image
    /// is pulled (when stderr is a terminal).
    pub progress: bool,
}

impl Default for Policy {
    fn default() -> Policy {
        Policy {
            enable_alpha_plugins: false,
            enable_exec: false,
            enable_star: false,
            network: false,
            network_name: None,
            mounts: Vec::new(),
            as_current_user: false,
            envs: Vec::new(),
            timeout: Duration::from_secs(300),
            max_output: 512 << 20,
            max_memory: DEFAULT_MAX_MEMORY,
            container_cli: None,
            trusted_catalogs: Vec::new(),
            max_servers: crate::server::DEFAULT_MAX_SERVERS,
            progress: false,
        }
    }
}

/// Why the policy does not let a function run, and which flag would.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    /// KRM functions are off.
    #[error("KRM functions are disabled: run with --enable-alpha-plugins to allow them")]
    Functions,
    /// Exec functions are off.
    #[error(
        "exec functions are disabled: run with --enable-alpha-plugins --enable-exec to allow them"
    )]
    Exec,
    /// Starlark functions are off.
    #[error("Starlark functions are disabled: run with --enable-alpha-plugins --enable-star to allow them")]
    Starlark,
    /// The function asks for network access.
    #[error("the function asks for network access: run with --network to allow it")]
    Network,
    /// The function asks for a mount the user did not allow.
    #[error(
        "the function asks to mount '{}' at '{}': allow it with --mount {}",
        .0.src,
        .0.dst,
        mount_flag(.0)
    )]
    Mount(Mount),
}

/// The `--mount` value that allows `m`.
fn mount_flag(m: &Mount) -> String {
    let rw = if m.rw { ",rw=true" } else { "" };
    format!("type=bind,src={},dst={}{rw}", m.src, m.dst)
}

/// A size that [`parse_size`] cannot read (as written, trimmed).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("'{0}' is not a size: give a positive number of bytes, optionally with a unit (Ki, Mi, Gi, Ti, k, M, G, T), e.g. 512Mi")]
pub struct SizeError(pub String);

impl Policy {
    /// Checks that `runtime` may run; the error says which flag allows it.
    /// A function from a trusted catalog (`traits.trusted`) needs no
    /// enable flag, but still needs `--network` and `--mount` for what it
    /// asks.
    pub fn permit(&self, runtime: &Runtime, traits: &Traits) -> Result<(), Refused> {
        if traits.trusted {
            return self.permit_access(runtime);
        }
        if !self.enable_alpha_plugins {
            return Err(Refused::Functions);
        }
        match runtime {
            Runtime::Exec { .. } if !self.enable_exec => Err(Refused::Exec),
            Runtime::Starlark(_) if !self.enable_star => Err(Refused::Starlark),
            _ => self.permit_access(runtime),
        }
    }

    /// Checks the network and mounts a container function asks for.
    fn permit_access(&self, runtime: &Runtime) -> Result<(), Refused> {
        match runtime {
            Runtime::Container {
                network, mounts, ..
            } => {
                if *network && !self.network {
                    return Err(Refused::Network);
                }
                if let Some(m) = mounts.iter().find(|m| !self.mounts.contains(m)) {
                    return Err(Refused::Mount(m.clone()));
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// The `-e` variables as `(name, value)` pairs; a bare `NAME` takes
    /// its value from krusty's environment (and is skipped when unset).
    pub fn env_pairs(&self, extra: &[String]) -> Vec<(String, String)> {
        self.envs
            .iter()
            .chain(extra)
            .filter_map(|e| match e.split_once('=') {
                Some((k, v)) => Some((k.to_string(), v.to_string())),
                None => std::env::var(e).ok().map(|v| (e.clone(), v)),
            })
            .collect()
    }
}

/// Reads a size: plain bytes, or a number with a binary (`Ki`, `Mi`,
/// `Gi`, `Ti`) or decimal (`k`, `M`, `G`, `T`) suffix, as Kubernetes
/// writes memory quantities: `256Mi`, `1Gi`, `500M`, `1048576`.
pub fn parse_size(text: &str) -> Result<u64, SizeError> {
    const UNITS: [(&str, u64); 8] = [
        ("Ki", 1 << 10),
        ("Mi", 1 << 20),
        ("Gi", 1 << 30),
        ("Ti", 1 << 40),
        ("k", 1_000),
        ("M", 1_000_000),
        ("G", 1_000_000_000),
        ("T", 1_000_000_000_000),
    ];
    let text = text.trim();
    let (digits, unit) = UNITS
        .iter()
        .find_map(|&(suffix, unit)| text.strip_suffix(suffix).map(|d| (d, unit)))
        .unwrap_or((text, 1));
    digits
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(unit))
        .filter(|&n| n > 0)
        .ok_or_else(|| SizeError(text.to_string()))
}

/// A size for messages: `512 MiB`, `1 GiB`, else in bytes.
pub fn describe_size(bytes: u64) -> String {
    for (unit, size) in [
        ("TiB", 1u64 << 40),
        ("GiB", 1 << 30),
        ("MiB", 1 << 20),
        ("KiB", 1 << 10),
    ] {
        if bytes >= size && bytes.is_multiple_of(size) {
            return format!("{} {unit}", bytes / size);
        }
    }
    format!("{bytes} bytes")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_in_kubernetes_units() {
        assert_eq!(parse_size("256Mi"), Ok(256 << 20));
        assert_eq!(parse_size("1Gi"), Ok(1 << 30));
        assert_eq!(parse_size("500M"), Ok(500_000_000));
        assert_eq!(parse_size("4k"), Ok(4000));
        assert_eq!(parse_size("1048576"), Ok(1 << 20));
        for bad in ["", "0", "-1", "1.5Gi", "1GB", "Mi", "99999999999Ti"] {
            assert!(parse_size(bad).is_err(), "{bad}");
        }
        assert_eq!(describe_size(1 << 30), "1 GiB");
        assert_eq!(describe_size(256 << 20), "256 MiB");
        assert_eq!(describe_size(500_000_000), "500000000 bytes");
    }

    #[test]
    fn every_gate_names_its_flag() {
        let exec = Runtime::Exec {
            path: "f".into(),
            args: vec![],
            envs: vec![],
        };
        let mut p = Policy::default();
        assert!(p
            .permit(&exec, &Traits::default())
            .unwrap_err()
            .to_string()
            .contains("--enable-alpha-plugins"));
        p.enable_alpha_plugins = true;
        assert!(p
            .permit(&exec, &Traits::default())
            .unwrap_err()
            .to_string()
            .contains("--enable-exec"));
        p.enable_exec = true;
        assert!(p.permit(&exec, &Traits::default()).is_ok());
        let star = Runtime::Starlark(crate::spec::StarlarkSource::Inline(String::new()));
        assert!(p
            .permit(&star, &Traits::default())
            .unwrap_err()
            .to_string()
            .contains("--enable-star"));
        let mount = Mount::parse_flag("type=bind,src=/d,dst=/d").unwrap();
        let c = Runtime::Container {
            image: "i".into(),
            network: true,
            mounts: vec![mount.clone()],
            envs: vec![],
        };
        assert!(p
            .permit(&c, &Traits::default())
            .unwrap_err()
            .to_string()
            .contains("--network"));
        p.network = true;
        assert!(p
            .permit(&c, &Traits::default())
            .unwrap_err()
            .to_string()
            .contains("--mount type=bind,src=/d,dst=/d"));
        p.mounts.push(mount);
        assert!(p.permit(&c, &Traits::default()).is_ok());
    }
}
