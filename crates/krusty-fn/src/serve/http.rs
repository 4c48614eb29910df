//! The HTTP server: `POST` a ResourceList, get the output ResourceList.
//!
//! Statuses: 200 with the output list; 422 with the output list when the
//! function failed (specification v1's exit code 1); 400 for a body that
//! is not a ResourceList; 405 for a method other than POST; 406 for an
//! `Accept` allowing none of the types below; 413 for a body over
//! [`MAX_MESSAGE_BYTES`]; 415 for a `Content-Type` other than `text/yaml`,
//! `application/json` or [`NODE_MEDIA_TYPE`]; 500 when the function
//! panicked. Every path is served alike.
//!
//! The answer's type follows `Accept`, HTTP's way: each of `text/yaml`,
//! `application/yaml`, `application/x-yaml`, `text/x-yaml` (YAML) and
//! `application/json` (JSON) gets the weight (`q`, 1 when not given) of
//! the most specific range naming it (`text/yaml`, then `text/*`, then
//! `*/*`); the one of highest weight above 0 is served, and on a tie the
//! one named outright rather than through a wildcard, then the one named
//! first. A wildcard alone gets YAML, the default, under a type it
//! allows: `*/*` and `text/*` get `text/yaml`, `application/*` gets
//! `application/yaml`. No `Accept` (or an empty one) gets `text/yaml`.
//! The answer's `Content-Type` is the type chosen. [`NODE_MEDIA_TYPE`]
//! (krusty-yaml's binary encoding of the list) is served only when named
//! outright, never for a wildcard: a client asks for it by name when it
//! reads it.
//!
//! A request may carry a deadline in the header `Krm-Timeout`, written as
//! gRPC's `grpc-timeout` (`30S`, `1500m`; [`crate::cancel`]): the function
//! sees it, and when it passes, or when the client goes away, the function
//! is told it is cancelled; a request past its deadline gets 504. A
//! malformed `Krm-Timeout` gets 400.
//!
//! A connection must send a request's headers within
//! [`HEADER_READ_TIMEOUT`] of being opened (or of its previous answer),
//! else it is closed: an idle or slow client cannot hold one forever.

use std::convert::Infallible;
use std::time::Duration;

use http_body_util::{BodyExt, Full, LengthLimitError, Limited};
use hyper::body::{Bytes, Incoming};
use hyper::header::{HeaderMap, HeaderValue, ACCEPT, ALLOW, CONTENT_TYPE};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::watch;

use super::eval::{answer, Encoding, Function, Refusal};
use super::listen::{stopped, Listener};
use super::ServeError;
use crate::answer::NODE_MEDIA_TYPE;
use crate::cancel::{parse_timeout, Cancellation};
use crate::grpc::MAX_MESSAGE_BYTES;

/// How long a connection may take to send a request's headers, from its
/// opening or its previous answer, before it is closed.
pub(crate) const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// The request header that gives the request's deadline, as a timeout
/// from its arrival in `grpc-timeout`'s form.
pub const TIMEOUT_HEADER: &str = "krm-timeout";

/// Answers connections on `listener` until `stop`, then waits for the
/// requests under way (the caller bounds that wait).
pub(crate) async fn serve(
    listener: Listener,
    function: Function,
    stop: watch::Receiver<bool>,
) -> Result<(), ServeError> {
    let graceful = GracefulShutdown::new();
    let stop_signal = stopped(stop);
    tokio::pin!(stop_signal);
    loop {
        let accepted = tokio::select! {
            accepted = accept(&listener) => accepted,
            () = &mut stop_signal => break,
        };
        match accepted {
            Ok(Stream::Tcp(s)) => connection(s, &function, &graceful),
            Ok(Stream::Unix(s)) => connection(s, &function, &graceful),
            Err(e) => {
                // Out of file descriptors, or a connection reset before it
                // was accepted: keep serving, without spinning.
                eprintln!("accepting an HTTP connection: {e}");
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            }
        }
    }
    drop(listener);
    graceful.shutdown().await;
    Ok(())
}

enum Stream {
    Tcp(tokio::net::TcpStream),
    Unix(tokio::net::UnixStream),
}

async fn accept(listener: &Listener) -> std::io::Result<Stream> {
    match listener {
        Listener::Tcp(l) => l.accept().await.map(|(s, _)| Stream::Tcp(s)),
        Listener::Unix(l, _) => l.accept().await.map(|(s, _)| Stream::Unix(s)),
    }
}

fn connection<S>(stream: S, function: &Function, graceful: &GracefulShutdown)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let function = function.clone();
    let service = service_fn(move |request| {
        let function = function.clone();
        async move { Ok::<_, Infallible>(respond(request, function).await) }
    });
    let conn = http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_READ_TIMEOUT)
        .serve_connection(TokioIo::new(stream), service);
    let watched = graceful.watch(conn);
    tokio::spawn(async move {
        // A client that goes away mid-request is its own problem.
        let _ = watched.await;
    });
}

async fn respond(request: Request<Incoming>, function: Function) -> Response<Full<Bytes>> {
    let (head, body) = request.into_parts();
    match admit(&head) {
        Ok((given, accept, request)) => run_function(body, given, accept, request, function).await,
        // Read what the client sends before answering: a connection
        // closed with its request unread is reset, and a client still
        // writing loses the answer.
        Err(refused) => {
            let _ = Limited::new(body, MAX_MESSAGE_BYTES).collect().await;
            *refused
        }
    }
}

/// An admitted request: its body's encoding, the encoding to answer in,
/// and its deadline.
type Admitted = (Encoding, Answering, Cancellation);

/// The body's encoding, the encoding to answer in and the request's
/// deadline, or the answer to a request refused before its body is read
/// (for its method, `Content-Type`, `Accept` or `Krm-Timeout`).
fn admit(head: &hyper::http::request::Parts) -> Result<Admitted, Box<Response<Full<Bytes>>>> {
    if head.method != Method::POST {
        let mut response = text(
            StatusCode::METHOD_NOT_ALLOWED,
            format!(
                "method {} is not allowed: POST a ResourceList\n",
                head.method
            ),
        );
        response
            .headers_mut()
            .insert(ALLOW, HeaderValue::from_static("POST"));
        return Err(Box::new(response));
    }
    let given = content_type(&head.headers)
        .map_err(|e| Box::new(text(StatusCode::UNSUPPORTED_MEDIA_TYPE, format!("{e}\n"))))?;
    let answering = accepted(&head.headers).ok_or_else(|| {
        Box::new(text(
            StatusCode::NOT_ACCEPTABLE,
            format!(
                "Accept must allow text/yaml, application/yaml, application/x-yaml, text/x-yaml, \
                 application/json, {NODE_MEDIA_TYPE}, or a wildcard (*/*, text/*, application/*)\n"
            ),
        ))
    })?;
    let deadline = match head.headers.get(TIMEOUT_HEADER) {
        None => None,
        Some(value) => {
            let timeout = value.to_str().ok().and_then(parse_timeout).ok_or_else(|| {
                Box::new(text(
                    StatusCode::BAD_REQUEST,
                    format!(
                        "{TIMEOUT_HEADER} must be a timeout as grpc-timeout writes one (30S, 1500m), not {value:?}\n"
                    ),
                ))
            })?;
            std::time::Instant::now().checked_add(timeout)
        }
    };
    Ok((given, answering, Cancellation::new(deadline)))
}

/// Runs the function over the body of an admitted request.
async fn run_function(
    body: Incoming,
    given: Encoding,
    accept: Answering,
    request: Cancellation,
    function: Function,
) -> Response<Full<Bytes>> {
    let body = match Limited::new(body, MAX_MESSAGE_BYTES).collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(e) if e.downcast_ref::<LengthLimitError>().is_some() => {
            return text(
                StatusCode::PAYLOAD_TOO_LARGE,
                format!("the body is over {MAX_MESSAGE_BYTES} bytes\n"),
            )
        }
        Err(e) => return text(StatusCode::BAD_REQUEST, format!("reading the body: {e}\n")),
    };
    match answer(function, body.to_vec(), given, accept.encoding, request).await {
        Ok(answer) => {
            let status = if answer.failed {
                StatusCode::UNPROCESSABLE_ENTITY
            } else {
                StatusCode::OK
            };
            let mut response = Response::new(Full::new(Bytes::from(answer.body)));
            *response.status_mut() = status;
            response
                .headers_mut()
                .insert(CONTENT_TYPE, HeaderValue::from_static(accept.media_type));
            response
        }
        Err(Refusal::BadInput(message)) => text(StatusCode::BAD_REQUEST, format!("{message}\n")),
        Err(Refusal::Crashed(message)) => {
            text(StatusCode::INTERNAL_SERVER_ERROR, format!("{message}\n"))
        }
        Err(Refusal::DeadlineExceeded) => text(
            StatusCode::GATEWAY_TIMEOUT,
            format!(
                "the request's deadline ({TIMEOUT_HEADER}) passed before the answer was ready\n"
            ),
        ),
    }
}

fn text(status: StatusCode, message: String) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(message)));
    *response.status_mut() = status;
    response.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

/// The body's encoding from `Content-Type` (parameters such as `charset`
/// ignored), or the header's text when it names neither.
fn content_type(headers: &HeaderMap) -> Result<Encoding, UnsupportedType> {
    let given = headers
        .get(CONTENT_TYPE)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
        .unwrap_or_default();
    match media_type(&given).as_str() {
        "text/yaml" => Ok(Encoding::Yaml),
        "application/json" => Ok(Encoding::Json),
        NODE_MEDIA_TYPE => Ok(Encoding::Node),
        _ => Err(UnsupportedType(given)),
    }
}

/// A request's `Content-Type` that names no encoding a function reads
/// (the header's text, empty when it is missing).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Content-Type must be text/yaml, application/json or {NODE_MEDIA_TYPE}, not {0:?}")]
struct UnsupportedType(String);

/// The media type an answer is given under, and its encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Answering {
    media_type: &'static str,
    encoding: Encoding,
}

/// The types an answer can be given in, in the order a wildcard picks
/// them (the last, [`NODE_MEDIA_TYPE`], only when named outright).
const ANSWER_TYPES: [Answering; 6] = [
    Answering {
        media_type: "text/yaml",
        encoding: Encoding::Yaml,
    },
    Answering {
        media_type: "application/yaml",
        encoding: Encoding::Yaml,
    },
    Answering {
        media_type: "application/x-yaml",
        encoding: Encoding::Yaml,
    },
    Answering {
        media_type: "text/x-yaml",
        encoding: Encoding::Yaml,
    },
    Answering {
        media_type: "application/json",
        encoding: Encoding::Json,
    },
    Answering {
        media_type: NODE_MEDIA_TYPE,
        encoding: Encoding::Node,
    },
];

/// The answer's type from `Accept` (see the module's documentation):
/// `text/yaml` when the header is absent or empty; `None` when it allows
/// none of [`ANSWER_TYPES`].
fn accepted(headers: &HeaderMap) -> Option<Answering> {
    let joined = headers
        .get_all(ACCEPT)
        .iter()
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
        .collect::<Vec<_>>()
        .join(",");
    if joined.trim().is_empty() {
        return Some(ANSWER_TYPES[0]);
    }
    // Each range: its type, its subtype, its weight.
    let ranges: Vec<(String, String, f32)> = joined
        .split(',')
        .filter_map(|range| {
            let media = media_type(range);
            let (kind, subtype) = media.split_once('/')?;
            let quality = range
                .split(';')
                .skip(1)
                .find_map(|p| {
                    let (name, value) = p.split_once('=')?;
                    if name.trim().eq_ignore_ascii_case("q") {
                        value.trim().parse::<f32>().ok()
                    } else {
                        None
                    }
                })
                .unwrap_or(1.0)
                .clamp(0.0, 1.0);
            Some((kind.trim().to_string(), subtype.trim().to_string(), quality))
        })
        .collect();
    // For each type it can answer in: the most specific range naming it
    // (specificity 2: exact, 1: `type/*`, 0: `*/*`), first one on a tie.
    let mut best: Option<(f32, u8, std::cmp::Reverse<usize>, Answering)> = None;
    for candidate in ANSWER_TYPES {
        let (kind, subtype) = candidate.media_type.split_once('/').unwrap_or_default();
        let mut chosen: Option<(u8, usize, f32)> = None;
        for (position, (k, s, q)) in ranges.iter().enumerate() {
            let specificity = match (k.as_str(), s.as_str()) {
                (k, s) if k == kind && s == subtype => 2,
                (k, "*") if k == kind => 1,
                ("*", "*") => 0,
                _ => continue,
            };
            if chosen.is_none_or(|(c, _, _)| specificity > c) {
                chosen = Some((specificity, position, *q));
            }
        }
        let Some((specificity, position, quality)) = chosen else {
            continue;
        };
        if quality <= 0.0 || (candidate.encoding == Encoding::Node && specificity < 2) {
            continue;
        }
        let key = (quality, specificity, std::cmp::Reverse(position), candidate);
        let better = best.is_none_or(|(q, s, p, _)| {
            (quality, specificity, std::cmp::Reverse(position)) > (q, s, p)
        });
        if better {
            best = Some(key);
        }
    }
    best.map(|(_, _, _, answering)| answering)
}

fn media_type(value: &str) -> String {
    value
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(name: hyper::header::HeaderName, values: &[&str]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for v in values {
            map.append(name.clone(), HeaderValue::from_str(v).unwrap());
        }
        map
    }

    #[test]
    fn accept_picks_the_preferred_known_type() {
        let accept = |values: &[&str]| {
            accepted(&headers(ACCEPT, values)).map(|a| (a.media_type, a.encoding))
        };
        let yaml = Some(("text/yaml", Encoding::Yaml));
        let json = Some(("application/json", Encoding::Json));
        assert_eq!(accept(&[]), yaml);
        assert_eq!(accept(&[" "]), yaml);
        assert_eq!(accept(&["*/*"]), yaml);
        assert_eq!(accept(&["application/json"]), json);
        assert_eq!(accept(&["text/html, application/json;q=0.5"]), json);
        assert_eq!(accept(&["text/yaml;q=0.2", "application/json;q=0.9"]), json);
        assert_eq!(accept(&["application/json;q=0, */*"]), yaml);
        assert_eq!(accept(&["text/html"]), None);
        assert_eq!(accept(&["image/*, text/html;q=0.9"]), None);
        assert_eq!(accept(&["*/*;q=0"]), None);
        assert_eq!(accept(&["text/*;q=0, application/json;q=0"]), None);
    }

    #[test]
    fn accept_wildcards_and_yaml_spellings() {
        let accept = |values: &[&str]| {
            accepted(&headers(ACCEPT, values)).map(|a| (a.media_type, a.encoding))
        };
        let yaml = |t: &'static str| Some((t, Encoding::Yaml));
        let json = Some(("application/json", Encoding::Json));
        assert_eq!(accept(&["text/*"]), yaml("text/yaml"));
        assert_eq!(accept(&["application/*"]), yaml("application/yaml"));
        assert_eq!(accept(&["Application/YAML"]), yaml("application/yaml"));
        assert_eq!(accept(&["application/x-yaml"]), yaml("application/x-yaml"));
        assert_eq!(accept(&["text/x-yaml"]), yaml("text/x-yaml"));
        // A named type beats a wildcard of the same weight, whatever the
        // order; the first named wins a tie.
        assert_eq!(accept(&["*/*, application/json"]), json);
        assert_eq!(accept(&["application/*, application/json"]), json);
        assert_eq!(accept(&["application/json, text/yaml"]), json);
        assert_eq!(accept(&["text/yaml, application/json"]), yaml("text/yaml"));
        // The most specific range gives a type its weight.
        assert_eq!(
            accept(&["application/*;q=0.9, application/yaml;q=0.1, application/json;q=0.5"]),
            yaml("application/x-yaml")
        );
        assert_eq!(accept(&["text/*;q=0.3, application/json;q=0.8"]), json);
        assert_eq!(
            accept(&["text/*;q=0.8, application/json;q=0.3"]),
            yaml("text/yaml")
        );
        assert_eq!(
            accept(&["text/yaml;q=0, text/*, application/json;q=0.5"]),
            yaml("text/x-yaml")
        );
        assert_eq!(
            accept(&["text/html;level=1;q=0.7, */*;q=0.2"]),
            yaml("text/yaml")
        );
        assert_eq!(accept(&["application/json; Q=0.4, text/plain"]), json);
    }

    #[test]
    fn the_binary_encoding_only_when_named() {
        let accept = |values: &[&str]| {
            accepted(&headers(ACCEPT, values)).map(|a| (a.media_type, a.encoding))
        };
        let node = Some((NODE_MEDIA_TYPE, Encoding::Node));
        let yaml = Some(("text/yaml", Encoding::Yaml));
        assert_eq!(accept(&[NODE_MEDIA_TYPE]), node);
        assert_eq!(
            accept(&["application/vnd.krusty.node, text/yaml;q=0.9"]),
            node
        );
        assert_eq!(
            accept(&["text/yaml, application/vnd.krusty.node;q=0.5"]),
            yaml
        );
        assert_eq!(
            accept(&["application/*"]),
            Some(("application/yaml", Encoding::Yaml))
        );
        assert_eq!(
            accept(&["*/*;q=0.1, application/vnd.krusty.node;q=0"]),
            yaml
        );
        assert_eq!(
            content_type(&headers(CONTENT_TYPE, &["Application/Vnd.Krusty.Node"])),
            Ok(Encoding::Node)
        );
    }

    #[test]
    fn content_type_ignores_parameters_and_case() {
        let given = |v: &str| content_type(&headers(CONTENT_TYPE, &[v]));
        assert_eq!(given("Text/YAML; charset=utf-8"), Ok(Encoding::Yaml));
        assert_eq!(given("application/json"), Ok(Encoding::Json));
        assert_eq!(
            given("application/yaml"),
            Err(UnsupportedType("application/yaml".into()))
        );
        assert_eq!(
            content_type(&HeaderMap::new()),
            Err(UnsupportedType(String::new()))
        );
    }
}
