//! HTTP(S) GETs for the whole fetch layer (files, catalogs, programs and
//! OCI registries), with the platform's trust store (so `SSL_CERT_FILE`
//! names a private CA) and these bounds:
//!
//! - a time limit on connecting and on each read (the caller's), and a
//!   deadline for the whole exchange, redirects included
//!   ([`Limits::timeout`], `--fetch-timeout`): a server that sends a byte a
//!   second cannot hold a build;
//! - a size limit checked before anything is buffered (`Content-Length`
//!   first, then the bytes as they come;
//!   [`Limits::max_bytes`], `--fetch-max-size`);
//! - redirects followed by krusty, not by the HTTP client: at most
//!   [`MAX_REDIRECTS`], only to `http://` or `https://`, never from
//!   `https://` down to `http://`, and credentials (a URL's user
//!   information, or an `Authorization` given) only to the same scheme,
//!   host and port.
//!
//! User information in a URL (`https://user:token@host/...`) is sent as
//! basic authentication, as Go's client sends it, and never shown: see
//! [`crate::redact`].

use std::io::Read;
use std::sync::{mpsc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine;
use url::Url;

use crate::error::FetchError;

/// The default of `--fetch-timeout`: the most time one download may take.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);

/// The default of `--fetch-max-size`: the most bytes one download may
/// have.
pub const DEFAULT_MAX_BYTES: u64 = 512 << 20;

/// The most redirects followed for one GET (Go's client's number).
pub const MAX_REDIRECTS: usize = 10;

/// The most bytes of an answer outside 2xx read (for the server's
/// message).
const MAX_ERROR_BODY_BYTES: u64 = 64 << 10;

/// Bounds on every download of a build.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The most time one download may take, from connecting to the last
    /// byte, redirects included (`--fetch-timeout`).
    pub timeout: Duration,
    /// The most bytes one download may have (`--fetch-max-size`).
    pub max_bytes: u64,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            timeout: DEFAULT_TIMEOUT,
            max_bytes: DEFAULT_MAX_BYTES,
        }
    }
}

/// When a download must have ended, and the limit that set it (for the
/// message).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Deadline {
    at: Instant,
    allowed: Duration,
}

impl Deadline {
    /// `allowed` from now.
    pub(crate) fn after(allowed: Duration) -> Deadline {
        let now = Instant::now();
        let at = now
            .checked_add(allowed)
            .unwrap_or_else(|| now + Duration::from_secs(u64::from(u32::MAX)));
        Deadline { at, allowed }
    }

    fn remaining(&self) -> Option<Duration> {
        self.at
            .checked_duration_since(Instant::now())
            .filter(|d| !d.is_zero())
    }
}

/// Whether `text` is an `http://` or `https://` URL (scheme in any case),
/// which Kustomize reads as a remote file before anything else.
pub fn is_http_url(text: &str) -> bool {
    let Some((scheme, rest)) = text.split_once("://") else {
        return false;
    };
    (scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("https"))
        && !rest.is_empty()
}

/// The body of the file at `url` within `limits`; `read_timeout` bounds
/// connecting and each read. An answer outside 2xx is
/// [`FetchError::HttpStatus`].
pub fn download(url: &str, read_timeout: Duration, limits: Limits) -> Result<Vec<u8>, FetchError> {
    let answer = exchange(
        url,
        Vec::new(),
        read_timeout,
        Deadline::after(limits.timeout),
        limits.max_bytes,
    )
    .map_err(|f| f.into_error(url, Some("--fetch-max-size")))?;
    if !(200..300).contains(&answer.status) {
        return Err(FetchError::HttpStatus {
            code: answer.status,
            reason: reason_phrase(answer.status).to_string(),
        });
    }
    Ok(answer.body)
}

/// An answer: its status, headers and body (bounded).
#[derive(Debug)]
pub(crate) struct Answer {
    /// The status code (any: the caller judges it).
    pub status: u16,
    /// Header names (lowercase) and values.
    headers: Vec<(String, String)>,
    /// The body: at most the limit asked for on 2xx, a short start of it
    /// otherwise.
    pub body: Vec<u8>,
}

impl Answer {
    /// The first value of the header `name` (lowercase).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Why an exchange failed; made into a [`FetchError`] by the caller, who
/// knows what was fetched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Failure {
    /// No answer: name resolution, connection, TLS, a read, a malformed
    /// URL (the text says which).
    Transport(String),
    /// The body has more than this many bytes.
    TooLarge(u64),
    /// The deadline passed; it was this long.
    TimedOut(Duration),
    /// A redirect krusty does not follow (the text says why).
    Redirect(String),
}

impl Failure {
    /// The error for a GET of `url`: Go's `Get "URL": …`, naming `flag`
    /// (the option that raises the size limit) when the body was too
    /// large.
    pub(crate) fn into_error(self, url: &str, flag: Option<&str>) -> FetchError {
        let why = match self {
            Failure::Transport(why) | Failure::Redirect(why) => why,
            Failure::TooLarge(max) => match flag {
                Some(flag) => format!("the file is larger than {max} bytes ({flag})"),
                None => format!("the answer is larger than {max} bytes"),
            },
            Failure::TimedOut(allowed) => format!(
                "the download did not end within {} (--fetch-timeout)",
                crate::go::format_duration(allowed)
            ),
        };
        FetchError::HttpTransport(format!("Get \"{url}\": {why}"))
    }
}

/// GETs `url` with `headers`, following redirects (see the module's
/// rules), by `deadline`; a 2xx body has at most `max_bytes`. Runs on a
/// thread of its own, so that the deadline holds even while a server
/// trickles its headers.
pub(crate) fn exchange(
    url: &str,
    headers: Vec<(&'static str, String)>,
    read_timeout: Duration,
    deadline: Deadline,
    max_bytes: u64,
) -> Result<Answer, Failure> {
    let start = Url::parse(url).map_err(|e| Failure::Transport(format!("parse {url:?}: {e}")))?;
    check_scheme(&start)?;
    let agent = agent(read_timeout);
    // The bytes count toward the progress line of the fetch asking.
    let meter = crate::progress::current();
    let (sender, receiver) = mpsc::sync_channel(1);
    std::thread::Builder::new()
        .name("krusty-http".into())
        .spawn(move || {
            let answer = follow(
                &agent,
                start,
                headers,
                deadline,
                max_bytes,
                meter.as_deref(),
            );
            let _ = sender.send(answer);
        })
        .map_err(|e| Failure::Transport(format!("cannot start a download: {e}")))?;
    let timed_out = Failure::TimedOut(deadline.allowed);
    let wait = deadline.remaining().ok_or(timed_out.clone())?;
    match receiver.recv_timeout(wait) {
        Ok(answer) => answer,
        Err(mpsc::RecvTimeoutError::Timeout) => Err(timed_out),
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            Err(Failure::Transport("the download stopped".into()))
        }
    }
}

/// The agent for `read_timeout`, made once per process (the trust store
/// is read when an agent is made). Redirects are followed by [`follow`].
fn agent(read_timeout: Duration) -> ureq::Agent {
    static AGENTS: Mutex<Vec<(Duration, ureq::Agent)>> = Mutex::new(Vec::new());
    let mut agents = AGENTS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, agent)) = agents.iter().find(|(t, _)| *t == read_timeout) {
        return agent.clone();
    }
    let agent = ureq::AgentBuilder::new()
        .timeout_connect(read_timeout)
        .timeout_read(read_timeout)
        .timeout_write(read_timeout)
        .redirects(0)
        .build();
    agents.push((read_timeout, agent.clone()));
    agent
}

/// The GET and the redirects it leads to.
fn follow(
    agent: &ureq::Agent,
    start: Url,
    mut headers: Vec<(&'static str, String)>,
    deadline: Deadline,
    max_bytes: u64,
    meter: Option<&crate::progress::Meter>,
) -> Result<Answer, Failure> {
    let mut url = start;
    if let Some(auth) = basic_auth(&url) {
        headers.retain(|(n, _)| !n.eq_ignore_ascii_case("authorization"));
        headers.push(("Authorization", auth));
    }
    let mut redirects = 0;
    loop {
        let response = send(agent, &url, &headers)?;
        let status = response.status();
        let location = response.header("location").map(str::to_string);
        let Some(location) = location.filter(|_| matches!(status, 301 | 302 | 303 | 307 | 308))
        else {
            return read_answer(response, deadline, max_bytes, meter);
        };
        if redirects == MAX_REDIRECTS {
            return Err(Failure::Redirect(format!(
                "stopped after {MAX_REDIRECTS} redirects"
            )));
        }
        let next = redirect_target(&url, &location)?;
        if !same_origin(&url, &next) {
            headers.retain(|(n, _)| !n.eq_ignore_ascii_case("authorization"));
        }
        if let Some(auth) = basic_auth(&next) {
            headers.retain(|(n, _)| !n.eq_ignore_ascii_case("authorization"));
            headers.push(("Authorization", auth));
        }
        url = next;
        redirects += 1;
        if deadline.remaining().is_none() {
            return Err(Failure::TimedOut(deadline.allowed));
        }
    }
}

/// One request to `url` (its user information left out: it travels as a
/// header); any status is an answer.
fn send(
    agent: &ureq::Agent,
    url: &Url,
    headers: &[(&'static str, String)],
) -> Result<ureq::Response, Failure> {
    let mut bare = url.clone();
    let _ = bare.set_username("");
    let _ = bare.set_password(None);
    let mut request = agent.request_url("GET", &bare);
    for (name, value) in headers {
        request = request.set(name, value);
    }
    match request.call() {
        Ok(response) | Err(ureq::Error::Status(_, response)) => Ok(response),
        Err(ureq::Error::Transport(t)) => Err(Failure::Transport(t.to_string())),
    }
}

/// Where a redirect from `from` to `location` leads, if krusty follows it:
/// `http://` or `https://`, and not from `https://` down to `http://`.
fn redirect_target(from: &Url, location: &str) -> Result<Url, Failure> {
    let next = from.join(location).map_err(|e| {
        Failure::Redirect(format!("the redirect to {location:?} is not a URL: {e}"))
    })?;
    check_scheme(&next)?;
    if from.scheme() == "https" && next.scheme() == "http" {
        return Err(Failure::Redirect(format!(
            "refusing the redirect from https to http ({:?})",
            crate::redact(next.as_str())
        )));
    }
    Ok(next)
}

/// Fails unless `url` is `http://` or `https://` with a host.
fn check_scheme(url: &Url) -> Result<(), Failure> {
    match url.scheme() {
        "http" | "https" if url.host_str().is_some_and(|h| !h.is_empty()) => Ok(()),
        "http" | "https" => Err(Failure::Transport(format!(
            "{:?} names no host",
            crate::redact(url.as_str())
        ))),
        scheme => Err(Failure::Redirect(format!(
            "unsupported protocol scheme {scheme:?}"
        ))),
    }
}

fn same_origin(a: &Url, b: &Url) -> bool {
    a.scheme() == b.scheme()
        && a.host_str() == b.host_str()
        && a.port_or_known_default() == b.port_or_known_default()
}

/// `Basic …` for the user information of `url`, if it has any.
fn basic_auth(url: &Url) -> Option<String> {
    if url.username().is_empty() && url.password().is_none() {
        return None;
    }
    let decode = |s: &str| {
        percent_encoding::percent_decode_str(s)
            .decode_utf8_lossy()
            .into_owned()
    };
    Some(basic(
        &decode(url.username()),
        &decode(url.password().unwrap_or("")),
    ))
}

/// The `Authorization` value of basic authentication.
pub(crate) fn basic(user: &str, password: &str) -> String {
    format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"))
    )
}

/// The answer of `response`, its body read in pieces (a 2xx one up to
/// `max_bytes`, another up to a short start), each piece by `deadline`.
fn read_answer(
    response: ureq::Response,
    deadline: Deadline,
    max_bytes: u64,
    meter: Option<&crate::progress::Meter>,
) -> Result<Answer, Failure> {
    let status = response.status();
    let headers = response
        .headers_names()
        .into_iter()
        .filter_map(|name| {
            let value = response.header(&name)?.to_string();
            Some((name.to_ascii_lowercase(), value))
        })
        .collect();
    let success = (200..300).contains(&status);
    let limit = if success {
        max_bytes
    } else {
        max_bytes.min(MAX_ERROR_BODY_BYTES)
    };
    let announced = response
        .header("content-length")
        .and_then(|l| l.trim().parse::<u64>().ok());
    if success && announced.is_some_and(|n| n > limit) {
        return Err(Failure::TooLarge(limit));
    }
    // Only a body that is kept is progress.
    let meter = meter.filter(|_| success);
    if let (Some(meter), Some(total)) = (meter, announced) {
        meter.expect(total);
    }
    let capacity = announced.unwrap_or(0).min(limit).min(16 << 20);
    let mut body = Vec::with_capacity(usize::try_from(capacity).unwrap_or(0));
    let mut reader = response.into_reader();
    let mut piece = vec![0u8; 64 << 10];
    loop {
        if deadline.remaining().is_none() {
            return Err(Failure::TimedOut(deadline.allowed));
        }
        let n = match reader.read(&mut piece) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(Failure::Transport(e.to_string())),
        };
        if let Some(meter) = meter {
            meter.advance(n as u64);
        }
        if (body.len() + n) as u64 > limit {
            if success {
                return Err(Failure::TooLarge(limit));
            }
            let keep = usize::try_from(limit)
                .unwrap_or(0)
                .saturating_sub(body.len());
            body.extend_from_slice(&piece[..keep.min(n)]);
            break;
        }
        body.extend_from_slice(&piece[..n]);
    }
    Ok(Answer {
        status,
        headers,
        body,
    })
}

/// Go's `http.StatusText`, for the codes a file server answers with.
pub(crate) fn reason_phrase(code: u16) -> &'static str {
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

    fn url(text: &str) -> Url {
        Url::parse(text).unwrap()
    }

    #[test]
    fn http_urls() {
        assert!(is_http_url("https://h.example/f.yaml"));
        assert!(is_http_url("HTTP://h.example/f.yaml"));
        assert!(!is_http_url("file:///f.yaml"));
        assert!(!is_http_url("git@h.example:o/r"));
        assert!(!is_http_url("https://"));
    }

    #[test]
    fn redirects_go_to_http_and_https_only_and_never_down_from_https() {
        let https = url("https://h.example/a/b.yaml");
        let http = url("http://h.example/a/b.yaml");
        for (from, location, to) in [
            (&https, "c.yaml", "https://h.example/a/c.yaml"),
            (&https, "/x", "https://h.example/x"),
            (&https, "https://other.example/y", "https://other.example/y"),
            (&http, "https://h.example/z", "https://h.example/z"),
            (&http, "//other.example/w", "http://other.example/w"),
        ] {
            assert_eq!(redirect_target(from, location).unwrap().as_str(), to);
        }
        for (from, location) in [
            (&https, "http://h.example/a/b.yaml"),
            (&https, "file:///etc/passwd"),
            (&http, "file:///etc/passwd"),
            (&http, "data:text/plain,hello"),
            (&http, "unix:/run/docker.sock"),
            (&http, "ftp://h.example/f"),
            (&http, "http://"),
        ] {
            assert!(
                redirect_target(from, location).is_err(),
                "{from} -> {location}"
            );
        }
    }

    #[test]
    fn credentials_go_to_the_same_origin_only() {
        let a = url("https://u:p@h.example/a");
        assert!(same_origin(&a, &url("https://h.example:443/b")));
        assert!(!same_origin(&a, &url("https://h.example:8443/b")));
        assert!(!same_origin(&a, &url("https://other.example/b")));
        assert!(!same_origin(
            &url("http://h.example/a"),
            &url("https://h.example/a")
        ));
    }

    #[test]
    fn user_information_becomes_basic_auth() {
        assert_eq!(
            basic_auth(&url("https://user:p%40ss@h.example/")).as_deref(),
            Some("Basic dXNlcjpwQHNz")
        );
        assert_eq!(
            basic_auth(&url("https://token@h.example/")).as_deref(),
            Some("Basic dG9rZW46")
        );
        assert_eq!(basic_auth(&url("https://h.example/")), None);
    }
}
