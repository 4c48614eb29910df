//! Fetching a function's program by URL (`starlark: {url: …}`), through
//! the fetch layer's HTTP client (the platform's trust store, so
//! `SSL_CERT_FILE` adds a private CA), with a time limit and a size limit.

use std::time::Duration;

use krusty_fetch::FetchError;

/// The most bytes a fetched program may have.
pub const MAX_PROGRAM_BYTES: u64 = 16 << 20;

/// The body of `url` as UTF-8 text.
pub fn fetch_text(url: &str, timeout: Duration) -> Result<String, String> {
    if !krusty_fetch::is_http_url(url) {
        return Err(format!(
            "'{url}': only http:// and https:// URLs can be fetched"
        ));
    }
    let body = krusty_fetch::http::get(url, timeout, MAX_PROGRAM_BYTES).map_err(|e| match e {
        FetchError::HttpStatus { code, reason } => {
            format!("fetching '{url}': the server answered {code} {reason}")
        }
        other => format!("fetching '{url}': {other}"),
    })?;
    String::from_utf8(body).map_err(|_| format!("fetching '{url}': the body is not UTF-8 text"))
}
