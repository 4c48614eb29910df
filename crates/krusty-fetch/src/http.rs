//! Files over HTTP(S): one GET, with the platform's trust store (so
//! `SSL_CERT_FILE` names a private CA), time limits on connecting and on
//! each read, and a size limit.

use std::io::Read;
use std::time::Duration;

use crate::error::FetchError;

/// The largest remote file of resources read.
pub const MAX_BYTES: u64 = 256 << 20;

/// Whether `text` is an `http://` or `https://` URL (scheme in any case),
/// which Kustomize reads as a remote file before anything else.
pub fn is_http_url(text: &str) -> bool {
    let Some((scheme, rest)) = text.split_once("://") else {
        return false;
    };
    (scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("https"))
        && !rest.is_empty()
}

/// The body of `url`, of at most `max_bytes`.
pub fn get(url: &str, timeout: Duration, max_bytes: u64) -> Result<Vec<u8>, FetchError> {
    let agent = ureq::AgentBuilder::new()
        .timeout_connect(timeout)
        .timeout_read(timeout)
        .build();
    let response = agent.get(url).call().map_err(|e| match e {
        ureq::Error::Status(code, _) => FetchError::HttpStatus {
            code,
            reason: reason_phrase(code).to_string(),
        },
        ureq::Error::Transport(t) => FetchError::HttpTransport(format!("Get \"{url}\": {t}")),
    })?;
    let mut body = Vec::new();
    response
        .into_reader()
        .take(max_bytes + 1)
        .read_to_end(&mut body)
        .map_err(|e| FetchError::HttpTransport(format!("Get \"{url}\": {e}")))?;
    if body.len() as u64 > max_bytes {
        return Err(FetchError::HttpTransport(format!(
            "Get \"{url}\": the file is larger than {max_bytes} bytes"
        )));
    }
    Ok(body)
}

/// Go's `http.StatusText`, for the codes a file server answers with.
fn reason_phrase(code: u16) -> &'static str {
    match code {
        300 => "Multiple Choices",
        301 => "Moved Permanently",
        302 => "Found",
        303 => "See Other",
        304 => "Not Modified",
        307 => "Temporary Redirect",
        308 => "Permanent Redirect",
        400 => "Bad Request",
        401 => "Unauthorized",
        402 => "Payment Required",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        406 => "Not Acceptable",
        407 => "Proxy Authentication Required",
        408 => "Request Timeout",
        409 => "Conflict",
        410 => "Gone",
        411 => "Length Required",
        412 => "Precondition Failed",
        413 => "Request Entity Too Large",
        414 => "Request URI Too Long",
        415 => "Unsupported Media Type",
        416 => "Requested Range Not Satisfiable",
        417 => "Expectation Failed",
        418 => "I'm a teapot",
        421 => "Misdirected Request",
        422 => "Unprocessable Entity",
        423 => "Locked",
        424 => "Failed Dependency",
        425 => "Too Early",
        426 => "Upgrade Required",
        428 => "Precondition Required",
        429 => "Too Many Requests",
        431 => "Request Header Fields Too Large",
        451 => "Unavailable For Legal Reasons",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        505 => "HTTP Version Not Supported",
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_urls() {
        assert!(is_http_url("https://h.example/f.yaml"));
        assert!(is_http_url("HTTP://h.example/f.yaml"));
        assert!(!is_http_url("file:///f.yaml"));
        assert!(!is_http_url("git@h.example:o/r"));
        assert!(!is_http_url("https://"));
    }
}
