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

/// Why a text is not an [`Address`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AddressError {
    /// `unix:` with no path after it (the address).
    #[error("address {0:?}: no socket path after unix:")]
    NoSocketPath(String),
    /// Neither `unix:` nor a `:` before a port (the address).
    #[error("address {0:?}: expected host:port or unix:///path")]
    NoPort(String),
    /// What follows the last `:` is not a port number.
    #[error("address {address:?}: {port:?} is not a port number")]
    BadPort {
        /// The address.
        address: String,
        /// The text after its last `:`.
        port: String,
    },
}

impl Address {
    /// Reads `unix:///path`, `unix:path` or `host:port`.
    pub fn parse(text: &str) -> Result<Address, AddressError> {
        if let Some(rest) = text.strip_prefix("unix:") {
            let path = rest.strip_prefix("//").unwrap_or(rest);
            if path.is_empty() {
                return Err(AddressError::NoSocketPath(text.to_string()));
            }
            return Ok(Address::Unix(PathBuf::from(path)));
        }
        let (host, port) = text
            .rsplit_once(':')
            .ok_or_else(|| AddressError::NoPort(text.to_string()))?;
        port.parse::<u16>().map_err(|_| AddressError::BadPort {
            address: text.to_string(),
            port: port.to_string(),
        })?;
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
    type Err = AddressError;

    fn from_str(text: &str) -> Result<Address, AddressError> {
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
        for (bad, error) in [
            (
                "unix://",
                r#"address "unix://": no socket path after unix:"#,
            ),
            (
                "localhost",
                r#"address "localhost": expected host:port or unix:///path"#,
            ),
            (
                "localhost:http",
                r#"address "localhost:http": "http" is not a port number"#,
            ),
        ] {
            assert_eq!(Address::parse(bad).unwrap_err().to_string(), error);
        }
    }
}
