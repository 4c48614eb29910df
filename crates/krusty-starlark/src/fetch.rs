//! Fetching a function's program by URL (`starlark: {url: …}`): HTTP and
//! HTTPS (rustls; the platform's trust store, so `SSL_CERT_FILE` adds a
//! private CA), with a time limit and a size limit.

use std::io::Read;
use std::time::Duration;

/// The most bytes a fetched program may have.
pub const MAX_PROGRAM_BYTES: u64 = 16 << 20;

/// The body of `url` as UTF-8 text.
pub fn fetch_text(url: &str, timeout: Duration) -> Result<String, String> {
    if !(url.starts_with("http://") || url.starts_with("https://")) {
        return Err(format!(
            "'{url}': only http:// and https:// URLs can be fetched"
        ));
    }
    let agent = ureq::AgentBuilder::new().timeout(timeout).build();
    let response = agent.get(url).call().map_err(|e| match e {
        ureq::Error::Status(code, r) => {
            format!(
                "fetching '{url}': the server answered {code} {}",
                r.status_text()
            )
        }
        ureq::Error::Transport(t) => format!("fetching '{url}': {t}"),
    })?;
    let mut body = Vec::new();
    response
        .into_reader()
        .take(MAX_PROGRAM_BYTES + 1)
        .read_to_end(&mut body)
        .map_err(|e| format!("fetching '{url}': {e}"))?;
    if body.len() as u64 > MAX_PROGRAM_BYTES {
        return Err(format!(
            "fetching '{url}': larger than {MAX_PROGRAM_BYTES} bytes"
        ));
    }
    String::from_utf8(body).map_err(|_| format!("fetching '{url}': the body is not UTF-8 text"))
}
