//! A small synchronous HTTP/1.1 client for spec v2 function servers: one
//! `POST` of a ResourceList per connection, over the server's unix socket,
//! within a deadline.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::{Duration, Instant};

/// A server's answer.
#[derive(Debug)]
pub struct Response {
    /// The status code.
    pub status: u16,
    /// The reason phrase.
    pub reason: String,
    /// The `Content-Type` header, if any.
    pub content_type: Option<String>,
    /// The body.
    pub body: Vec<u8>,
}

impl From<Response> for super::answer::Answer {
    /// A 2xx status is a run; any other a failure.
    fn from(r: Response) -> Self {
        super::answer::Answer {
            failure: (!(200..300).contains(&r.status))
                .then(|| format!("its server answered HTTP {} {}", r.status, r.reason)),
            content_type: r.content_type,
            body: r.body,
            log: String::new(),
        }
    }
}

/// Why a request got no answer.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The server could not be reached, or closed the connection before
    /// answering: it may have died.
    #[error("the connection failed: {0}")]
    Connection(#[source] std::io::Error),
    /// The deadline passed.
    #[error("no answer within the time limit")]
    Timeout,
    /// The answer is larger than allowed.
    #[error("the answer is larger than the output limit")]
    TooLarge,
    /// The answer is not HTTP/1.x as expected.
    #[error("the answer is not valid HTTP: {0}")]
    Malformed(String),
    /// The list could not be written for the request.
    #[error("the list could not be written: {0}")]
    Encode(String),
}

/// The longest status line or header line read.
const MAX_LINE: usize = 16 << 10;

/// Sends `body` (a ResourceList, of type `content_type`) to the server
/// listening on `socket`, asking for an answer as `accept` says, with
/// `timeout` as its deadline (`Krm-Timeout`); the answer must come before
/// `timeout` ends and hold at most `max_body` bytes.
pub fn post(
    socket: &Path,
    body: &[u8],
    content_type: &str,
    accept: &str,
    timeout: Duration,
    max_body: usize,
) -> Result<Response, Error> {
    let deadline = Instant::now() + timeout;
    let stream = UnixStream::connect(socket).map_err(Error::Connection)?;
    // The deadline goes with the request: the function is told when it
    // passes (krusty_fn::cancel).
    let head = format!(
        "POST / HTTP/1.1\r\nHost: krm-function\r\nContent-Type: {content_type}\r\nAccept: {accept}\r\nKrm-Timeout: {}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        krusty_fn::cancel::format_timeout(timeout),
        body.len()
    );
    let mut writer = &stream;
    set_deadline(&stream, deadline)?;
    writer
        .write_all(head.as_bytes())
        .and_then(|()| writer.write_all(body))
        .and_then(|()| writer.flush())
        .map_err(|e| io_error(e, deadline))?;
    let mut reader = BufReader::with_capacity(64 << 10, &stream);
    read_response(&mut reader, &stream, deadline, max_body)
}

/// Sets the socket's timeouts to the time left before `deadline`.
fn set_deadline(stream: &UnixStream, deadline: Instant) -> Result<(), Error> {
    let left = deadline
        .checked_duration_since(Instant::now())
        .filter(|d| !d.is_zero())
        .ok_or(Error::Timeout)?;
    stream
        .set_read_timeout(Some(left))
        .and_then(|()| stream.set_write_timeout(Some(left)))
        .map_err(Error::Connection)
}

/// A timeout from the socket is the deadline's; anything else is the
/// connection's.
fn io_error(e: std::io::Error, deadline: Instant) -> Error {
    use std::io::ErrorKind;
    match e.kind() {
        ErrorKind::WouldBlock | ErrorKind::TimedOut => Error::Timeout,
        _ if Instant::now() >= deadline => Error::Timeout,
        _ => Error::Connection(e),
    }
}

/// Reads the status line, the headers and the body.
fn read_response(
    reader: &mut BufReader<&UnixStream>,
    stream: &UnixStream,
    deadline: Instant,
    max_body: usize,
) -> Result<Response, Error> {
    let status_line = read_line(reader, stream, deadline)?;
    if status_line.is_empty() {
        return Err(Error::Connection(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            "closed before answering",
        )));
    }
    let (status, reason) = parse_status(&status_line)?;
    let mut length = None;
    let mut chunked = false;
    let mut content_type = None;
    loop {
        let line = read_line(reader, stream, deadline)?;
        if line.is_empty() {
            break;
        }
        let (name, value) = line
            .split_once(':')
            .ok_or_else(|| Error::Malformed(format!("header line {line:?}")))?;
        let value = value.trim();
        match name.trim().to_ascii_lowercase().as_str() {
            "content-length" => {
                let n: usize = value
                    .parse()
                    .map_err(|_| Error::Malformed(format!("Content-Length {value:?}")))?;
                length = Some(n);
            }
            "transfer-encoding" => chunked = value.eq_ignore_ascii_case("chunked"),
            "content-type" => content_type = Some(value.to_string()),
            _ => {}
        }
    }
    let body = match (chunked, length) {
        (true, _) => read_chunked(reader, stream, deadline, max_body)?,
        (false, Some(n)) if n > max_body => return Err(Error::TooLarge),
        (false, Some(n)) => read_exact(reader, stream, deadline, n)?,
        (false, None) => read_to_end(reader, stream, deadline, max_body)?,
    };
    Ok(Response {
        status,
        reason,
        content_type,
        body,
    })
}

/// `HTTP/1.1 200 OK` → (200, "OK").
fn parse_status(line: &str) -> Result<(u16, String), Error> {
    let bad = || Error::Malformed(format!("status line {line:?}"));
    let rest = line.strip_prefix("HTTP/1.").ok_or_else(bad)?;
    let mut parts = rest.splitn(3, ' ');
    let _minor = parts.next().ok_or_else(bad)?;
    let code = parts
        .next()
        .and_then(|c| c.parse::<u16>().ok())
        .filter(|c| (100..600).contains(c))
        .ok_or_else(bad)?;
    Ok((code, parts.next().unwrap_or("").trim().to_string()))
}

/// One line without its CRLF; empty at the end of the headers (and at the
/// end of the stream).
fn read_line(
    reader: &mut BufReader<&UnixStream>,
    stream: &UnixStream,
    deadline: Instant,
) -> Result<String, Error> {
    set_deadline(stream, deadline)?;
    let mut line = Vec::new();
    reader
        .by_ref()
        .take(MAX_LINE as u64)
        .read_until(b'\n', &mut line)
        .map_err(|e| io_error(e, deadline))?;
    if line.len() >= MAX_LINE {
        return Err(Error::Malformed("a header line is too long".into()));
    }
    let text = String::from_utf8(line)
        .map_err(|_| Error::Malformed("a header line is not UTF-8".into()))?;
    Ok(text.trim_end_matches(['\r', '\n']).to_string())
}

/// One read into `buf` before `deadline` (retried when interrupted).
fn read_some(
    reader: &mut BufReader<&UnixStream>,
    stream: &UnixStream,
    deadline: Instant,
    buf: &mut [u8],
) -> Result<usize, Error> {
    loop {
        set_deadline(stream, deadline)?;
        match reader.read(buf) {
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(io_error(e, deadline)),
            Ok(k) => return Ok(k),
        }
    }
}

fn read_exact(
    reader: &mut BufReader<&UnixStream>,
    stream: &UnixStream,
    deadline: Instant,
    n: usize,
) -> Result<Vec<u8>, Error> {
    let mut body = vec![0u8; n];
    let mut filled = 0;
    while filled < n {
        match read_some(reader, stream, deadline, &mut body[filled..])? {
            0 => {
                return Err(Error::Malformed(format!(
                    "the body ended after {filled} of {n} bytes"
                )))
            }
            k => filled += k,
        }
    }
    Ok(body)
}

fn read_to_end(
    reader: &mut BufReader<&UnixStream>,
    stream: &UnixStream,
    deadline: Instant,
    max_body: usize,
) -> Result<Vec<u8>, Error> {
    let mut body = Vec::new();
    let mut chunk = vec![0u8; 64 << 10];
    loop {
        match read_some(reader, stream, deadline, &mut chunk)? {
            0 => return Ok(body),
            k if body.len() + k > max_body => return Err(Error::TooLarge),
            k => body.extend_from_slice(&chunk[..k]),
        }
    }
}

fn read_chunked(
    reader: &mut BufReader<&UnixStream>,
    stream: &UnixStream,
    deadline: Instant,
    max_body: usize,
) -> Result<Vec<u8>, Error> {
    let mut body = Vec::new();
    loop {
        let line = read_line(reader, stream, deadline)?;
        let size = line.split(';').next().unwrap_or("").trim();
        let size = usize::from_str_radix(size, 16)
            .map_err(|_| Error::Malformed(format!("chunk size {line:?}")))?;
        if size == 0 {
            // Trailers, up to the empty line.
            while !read_line(reader, stream, deadline)?.is_empty() {}
            return Ok(body);
        }
        if body.len() + size > max_body {
            return Err(Error::TooLarge);
        }
        body.extend(read_exact(reader, stream, deadline, size)?);
        if !read_line(reader, stream, deadline)?.is_empty() {
            return Err(Error::Malformed("a chunk does not end with CRLF".into()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::net::UnixListener;

    const Y: &str = "text/yaml";

    /// A one-shot server answering `answer` (after reading the request).
    fn serve(
        answer: &'static [u8],
        delay: Duration,
    ) -> (std::path::PathBuf, std::thread::JoinHandle<Vec<u8>>) {
        let dir = std::env::temp_dir().join(format!(
            "krusty-http-{}-{}",
            std::process::id(),
            super::super::next_id()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let socket = dir.join("s.sock");
        let listener = UnixListener::bind(&socket).unwrap();
        let handle = std::thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            let mut request = Vec::new();
            let mut buf = [0u8; 4096];
            // Read the head and the body (Content-Length bytes).
            loop {
                let n = s.read(&mut buf).unwrap();
                request.extend_from_slice(&buf[..n]);
                let text = String::from_utf8_lossy(&request);
                if let Some((head, body)) = text.split_once("\r\n\r\n") {
                    let len: usize = head
                        .lines()
                        .find_map(|l| l.strip_prefix("Content-Length: "))
                        .unwrap()
                        .parse()
                        .unwrap();
                    if body.len() >= len {
                        break;
                    }
                }
            }
            std::thread::sleep(delay);
            let _ = s.write_all(answer);
            request
        });
        (socket, handle)
    }

    #[test]
    fn content_length_chunked_and_until_close() {
        for answer in [
            &b"HTTP/1.1 200 OK\r\nContent-Type: text/yaml\r\nContent-Length: 5\r\n\r\nhello"[..],
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nhel\r\n2;x=y\r\nlo\r\n0\r\n\r\n",
            b"HTTP/1.0 200 OK\r\n\r\nhello",
        ] {
            let answer: &'static [u8] = Box::leak(answer.to_vec().into_boxed_slice());
            let (socket, server) = serve(answer, Duration::ZERO);
            let r = post(&socket, b"kind: ResourceList\n", Y, Y, Duration::from_secs(5), 1 << 20).unwrap();
            assert_eq!((r.status, r.body.as_slice()), (200, &b"hello"[..]));
            let request = String::from_utf8(server.join().unwrap()).unwrap();
            assert!(request.starts_with("POST / HTTP/1.1\r\n"), "{request}");
            assert!(request.contains("Content-Type: text/yaml\r\n"), "{request}");
            assert!(request.contains("Krm-Timeout: 5000m\r\n"), "{request}");
            assert!(request.ends_with("\r\n\r\nkind: ResourceList\n"), "{request}");
        }
    }

    #[test]
    fn errors_say_what_went_wrong() {
        let (socket, _s) = serve(b"SMTP ready\r\n\r\n", Duration::ZERO);
        let e = post(&socket, b"x", Y, Y, Duration::from_secs(5), 1 << 20).unwrap_err();
        assert!(matches!(e, Error::Malformed(_)), "{e}");
        let (socket, _s) = serve(
            b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc",
            Duration::ZERO,
        );
        let e = post(&socket, b"x", Y, Y, Duration::from_secs(5), 1 << 20).unwrap_err();
        assert!(e.to_string().contains("ended after 3 of 10"), "{e}");
        let (socket, _s) = serve(
            b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n",
            Duration::ZERO,
        );
        assert!(matches!(
            post(&socket, b"x", Y, Y, Duration::from_secs(5), 4),
            Err(Error::TooLarge)
        ));
        let (socket, _s) = serve(b"HTTP/1.1 200 OK\r\n\r\n", Duration::from_secs(3));
        let started = Instant::now();
        assert!(matches!(
            post(&socket, b"x", Y, Y, Duration::from_millis(300), 1 << 20),
            Err(Error::Timeout)
        ));
        assert!(started.elapsed() < Duration::from_secs(2));
        let gone = std::env::temp_dir().join("krusty-http-no-such.sock");
        assert!(matches!(
            post(&gone, b"x", Y, Y, Duration::from_secs(1), 1),
            Err(Error::Connection(_))
        ));
    }
}
