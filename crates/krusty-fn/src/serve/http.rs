//! The HTTP server: `POST` a ResourceList, get the output ResourceList.
//!
//! Statuses: 200 with the output list; 422 with the output list when the
//! function failed (specification v1's exit code 1); 400 for a body that
//! is not a ResourceList; 405 for a method other than POST; 406 for an
//! `Accept` allowing neither `text/yaml` nor `application/json`; 413 for a
//! body over [`MAX_MESSAGE_BYTES`]; 415 for a `Content-Type` other than
//! `text/yaml` or `application/json`; 500 when the function panicked.
//! Every path is served alike.

use std::convert::Infallible;

use http_body_util::{BodyExt, Full, LengthLimitError, Limited};
use hyper::body::{Bytes, Incoming};
use hyper::header::{HeaderMap, HeaderValue, ACCEPT, ALLOW, CONTENT_TYPE};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use hyper_util::server::graceful::GracefulShutdown;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::watch;

use super::eval::{answer, Encoding, Function, Refusal};
use super::listen::{stopped, Listener};
use crate::grpc::MAX_MESSAGE_BYTES;

/// Answers connections on `listener` until `stop`, then waits for the
/// requests under way.
pub(crate) async fn serve(
    listener: Listener,
    function: Function,
    stop: watch::Receiver<bool>,
) -> Result<(), String> {
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
    let conn = http1::Builder::new().serve_connection(TokioIo::new(stream), service);
    let watched = graceful.watch(conn);
    tokio::spawn(async move {
        // A client that goes away mid-request is its own problem.
        let _ = watched.await;
    });
}

async fn respond(request: Request<Incoming>, function: Function) -> Response<Full<Bytes>> {
    let (head, body) = request.into_parts();
    match admit(&head) {
        Ok(accept) => run_function(body, accept, function).await,
        // Read what the client sends before answering: a connection
        // closed with its request unread is reset, and a client still
        // writing loses the answer.
        Err(refused) => {
            let _ = Limited::new(body, MAX_MESSAGE_BYTES).collect().await;
            *refused
        }
    }
}

/// The encoding to answer in, or the answer to a request refused before
/// its body is read (for its method, `Content-Type` or `Accept`).
fn admit(head: &hyper::http::request::Parts) -> Result<Encoding, Box<Response<Full<Bytes>>>> {
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
    if let Err(given) = content_type(&head.headers) {
        return Err(Box::new(text(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            format!("Content-Type must be text/yaml or application/json, not {given:?}\n"),
        )));
    }
    accepted(&head.headers).ok_or_else(|| {
        Box::new(text(
            StatusCode::NOT_ACCEPTABLE,
            "Accept must allow text/yaml, application/json or */*\n".to_string(),
        ))
    })
}

/// Runs the function over the body of an admitted request.
async fn run_function(
    body: Incoming,
    accept: Encoding,
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
    match answer(function, body.to_vec(), accept).await {
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
                .insert(CONTENT_TYPE, HeaderValue::from_static(accept.media_type()));
            response
        }
        Err(Refusal::BadInput(message)) => text(StatusCode::BAD_REQUEST, format!("{message}\n")),
        Err(Refusal::Crashed(message)) => {
            text(StatusCode::INTERNAL_SERVER_ERROR, format!("{message}\n"))
        }
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
fn content_type(headers: &HeaderMap) -> Result<Encoding, String> {
    let given = headers
        .get(CONTENT_TYPE)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
        .unwrap_or_default();
    match media_type(&given).as_str() {
        "text/yaml" => Ok(Encoding::Yaml),
        "application/json" => Ok(Encoding::Json),
        _ => Err(given),
    }
}

/// The answer's encoding from `Accept`: the acceptable type of highest
/// quality among `text/yaml`, `application/json` and `*/*` (YAML); YAML
/// when the header is absent or empty; `None` when it allows neither.
fn accepted(headers: &HeaderMap) -> Option<Encoding> {
    let ranges: Vec<String> = headers
        .get_all(ACCEPT)
        .iter()
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
        .collect();
    let joined = ranges.join(",");
    if joined.trim().is_empty() {
        return Some(Encoding::Yaml);
    }
    let mut best: Option<(f32, Encoding)> = None;
    for range in joined.split(',') {
        let encoding = match media_type(range).as_str() {
            "text/yaml" | "*/*" => Encoding::Yaml,
            "application/json" => Encoding::Json,
            _ => continue,
        };
        let quality = range
            .split(';')
            .skip(1)
            .find_map(|p| {
                p.trim()
                    .strip_prefix("q=")
                    .and_then(|q| q.trim().parse::<f32>().ok())
            })
            .unwrap_or(1.0);
        if quality > 0.0 && best.is_none_or(|(q, _)| quality > q) {
            best = Some((quality, encoding));
        }
    }
    best.map(|(_, encoding)| encoding)
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
        let accept = |values: &[&str]| accepted(&headers(ACCEPT, values));
        assert_eq!(accept(&[]), Some(Encoding::Yaml));
        assert_eq!(accept(&["*/*"]), Some(Encoding::Yaml));
        assert_eq!(accept(&["application/json"]), Some(Encoding::Json));
        assert_eq!(
            accept(&["text/html, application/json;q=0.5"]),
            Some(Encoding::Json)
        );
        assert_eq!(
            accept(&["text/yaml;q=0.2", "application/json;q=0.9"]),
            Some(Encoding::Json)
        );
        assert_eq!(accept(&["application/json;q=0, */*"]), Some(Encoding::Yaml));
        assert_eq!(accept(&["text/html"]), None);
    }

    #[test]
    fn content_type_ignores_parameters_and_case() {
        let given = |v: &str| content_type(&headers(CONTENT_TYPE, &[v]));
        assert_eq!(given("Text/YAML; charset=utf-8"), Ok(Encoding::Yaml));
        assert_eq!(given("application/json"), Ok(Encoding::Json));
        assert_eq!(given("application/yaml"), Err("application/yaml".into()));
        assert_eq!(content_type(&HeaderMap::new()), Err(String::new()));
    }
}
