//! The addresses a function server listens on: `host:port` or
//! `unix:///absolute/path` (also `unix:relative/path`), as in the
//! `--http-addr` and `--grpc-addr` flags.

use std::fmt;
use std::path::PathBuf;

/// Where a function server listens, or where a client connects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Address {
    /// A TCP `host:port` (`:port` listens on every interface; port 0 picks
    /// a free port, which the server announces on stderr).
    Tcp(String),
    /// A unix domain socket path.
    Unix(PathBuf),
}

impl Address {
    /// Reads `unix:///path`, `unix:path` or `host:port`.
    pub fn parse(text: &str) -> Result<Address, String> {
        if let Some(rest) = text.strip_prefix("unix:") {
            let path = rest.strip_prefix("//").unwrap_or(rest);
            if path.is_empty() {
                return Err(format!("address {text:?}: no socket path after unix:"));
            }
            return Ok(Address::Unix(PathBuf::from(path)));
        }
        let (host, port) = text
            .rsplit_once(':')
            .ok_or_else(|| format!("address {text:?}: expected host:port or unix:///path"))?;
        port.parse::<u16>()
            .map_err(|_| format!("address {text:?}: {port:?} is not a port number"))?;
        let host = if host.is_empty() { "0.0.0.0" } else { host };
        Ok(Address::Tcp(format!("{host}:{port}")))
    }
}

impl fmt::Display for Address {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Address::Tcp(host_port) => f.write_str(host_port),
            Address::Unix(path) if path.is_absolute() => write!(f, "unix://{}", path.display()),
            Address::Unix(path) => write!(f, "unix:{}", path.display()),
        }
    }
}

impl std::str::FromStr for Address {
    type Err = String;

    fn from_str(text: &str) -> Result<Address, String> {
        Address::parse(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_tcp_and_unix_addresses() {
        assert_eq!(
            Address::parse("127.0.0.1:0"),
            Ok(Address::Tcp("127.0.0.1:0".into()))
        );
        assert_eq!(Address::parse(":80"), Ok(Address::Tcp("0.0.0.0:80".into())));
        assert_eq!(
            Address::parse("[::1]:9"),
            Ok(Address::Tcp("[::1]:9".into()))
        );
        assert_eq!(
            Address::parse("unix:///run/fn.sock"),
            Ok(Address::Unix("/run/fn.sock".into()))
        );
        assert_eq!(
            Address::parse("unix:fn.sock"),
            Ok(Address::Unix("fn.sock".into()))
        );
        assert_eq!(
            Address::parse("unix:///run/fn.sock").unwrap().to_string(),
            "unix:///run/fn.sock"
        );
        assert!(Address::parse("unix://").is_err());
        assert!(Address::parse("localhost").is_err());
        assert!(Address::parse("localhost:http").is_err());
    }
}
