//! The servers as a separate process (this test executable run again as
//! its `child_server` test): a connection that never sends its headers is
//! closed, SIGTERM and SIGHUP stop the server even while a connection
//! holds an unfinished request (the unix sockets removed), and `Accept`
//! picks the answer's type.

#![cfg(feature = "server")]

use std::io::{ErrorKind, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use krusty_fn::run::ServerAddresses;
use krusty_fn::serve::{serve, SHUTDOWN_GRACE};
use krusty_fn::{FnError, KubeObject, ResourceList};

/// The variables that make `child_server` serve (else it does nothing).
const HTTP_VAR: &str = "KRUSTY_FN_TEST_CHILD_HTTP";
const GRPC_VAR: &str = "KRUSTY_FN_TEST_CHILD_GRPC";

fn function(list: &mut ResourceList) -> Result<(), FnError> {
    for item in &mut list.items {
        item.set_label("served", "yes");
    }
    Ok(())
}

/// Not a test of its own: the server the other tests start.
#[test]
fn child_server() {
    let Ok(http) = std::env::var(HTTP_VAR) else {
        return;
    };
    let addresses = ServerAddresses {
        http: Some(http),
        grpc: std::env::var(GRPC_VAR).ok(),
    };
    serve(&addresses, function).unwrap();
}

struct Server {
    child: Child,
    dir: tempfile::TempDir,
}

impl Server {
    fn start(with_grpc: bool) -> Server {
        let dir = tempfile::tempdir().unwrap();
        let mut command = Command::new(std::env::current_exe().unwrap());
        command
            .args(["child_server", "--exact", "--nocapture", "--test-threads=1"])
            .env(
                HTTP_VAR,
                format!("unix://{}", dir.path().join("http.sock").display()),
            )
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        if with_grpc {
            command.env(
                GRPC_VAR,
                format!("unix://{}", dir.path().join("grpc.sock").display()),
            );
        }
        let child = command.spawn().unwrap();
        let server = Server { child, dir };
        wait_for(&server.http(), true);
        if with_grpc {
            wait_for(&server.grpc(), true);
        }
        server
    }

    fn http(&self) -> PathBuf {
        self.dir.path().join("http.sock")
    }

    fn grpc(&self) -> PathBuf {
        self.dir.path().join("grpc.sock")
    }

    fn signal(&self, name: &str) {
        let sent = Command::new("kill")
            .args([&format!("-{name}"), &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(sent.success());
    }

    /// Waits at most `limit` for the process to exit.
    fn wait(&mut self, limit: Duration) -> Option<ExitStatus> {
        let start = Instant::now();
        while start.elapsed() < limit {
            if let Some(status) = self.child.try_wait().unwrap() {
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn wait_for(path: &Path, present: bool) {
    for _ in 0..3000 {
        if path.exists() == present {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!(
        "{} never became {}",
        path.display(),
        if present { "present" } else { "absent" }
    );
}

/// Reads until the server closes the connection (or `limit` passes):
/// what it sent, and whether it closed it.
fn read_until_closed(stream: &mut UnixStream, limit: Duration) -> (String, bool) {
    stream.set_read_timeout(Some(limit)).unwrap();
    let mut got = Vec::new();
    let mut buf = [0; 4096];
    loop {
        match stream.read(&mut buf) {
            Ok(0) => return (String::from_utf8_lossy(&got).into_owned(), true),
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == ErrorKind::ConnectionReset => {
                return (String::from_utf8_lossy(&got).into_owned(), true)
            }
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                return (String::from_utf8_lossy(&got).into_owned(), false)
            }
            Err(e) => panic!("reading: {e}"),
        }
    }
}

const LIST: &str = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- kind: A\n  metadata:\n    name: a\n";

/// Posts `LIST` with `accept` (no header when `None`): the status, the
/// answer's `Content-Type` and its body.
fn post(socket: &Path, accept: Option<&str>) -> (u16, String, String) {
    let mut stream = UnixStream::connect(socket).unwrap();
    let accept = accept.map_or(String::new(), |a| format!("Accept: {a}\r\n"));
    write!(
        stream,
        "POST / HTTP/1.1\r\nHost: f\r\nConnection: close\r\nContent-Type: text/yaml\r\n{accept}Content-Length: {}\r\n\r\n{LIST}",
        LIST.len()
    )
    .unwrap();
    let (answer, closed) = read_until_closed(&mut stream, Duration::from_secs(30));
    assert!(closed, "no complete answer: {answer}");
    let (head, body) = answer.split_once("\r\n\r\n").unwrap();
    let status = head[9..12].parse().unwrap();
    let content_type = head
        .lines()
        .find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("content-type")
                .then(|| value.trim().to_string())
        })
        .unwrap_or_default();
    (status, content_type, body.to_string())
}

#[test]
fn a_connection_that_never_sends_its_headers_is_closed() {
    let mut server = Server::start(false);
    let start = Instant::now();
    let mut partial = UnixStream::connect(server.http()).unwrap();
    partial
        .write_all(b"POST / HTTP/1.1\r\nHost: f\r\n")
        .unwrap();
    let mut silent = UnixStream::connect(server.http()).unwrap();
    let (_, closed) = read_until_closed(&mut partial, Duration::from_secs(25));
    let waited = start.elapsed();
    assert!(closed, "a partial request header kept its connection open");
    assert!(
        waited >= Duration::from_secs(8) && waited < Duration::from_secs(20),
        "closed after {waited:?} (the timeout is 10 s)"
    );
    let (_, closed) = read_until_closed(&mut silent, Duration::from_secs(5));
    assert!(closed, "a connection that sends nothing stayed open");
    // The server still serves.
    let (status, _, body) = post(&server.http(), None);
    assert_eq!(status, 200, "{body}");
    server.signal("TERM");
    assert!(server.wait(Duration::from_secs(10)).unwrap().success());
}

/// Stops the server with `signal` while a connection holds unfinished
/// headers and another an unfinished body; it exits 0 within the grace
/// period (and some slack), its unix sockets removed.
fn stops_on(signal: &str) {
    let mut server = Server::start(true);
    let mut headers = UnixStream::connect(server.http()).unwrap();
    headers
        .write_all(b"POST / HTTP/1.1\r\nHost: f\r\n")
        .unwrap();
    let mut body = UnixStream::connect(server.http()).unwrap();
    body.write_all(
        b"POST / HTTP/1.1\r\nHost: f\r\nContent-Type: text/yaml\r\nContent-Length: 1000\r\n\r\napiVersion: ",
    )
    .unwrap();
    let mut grpc = UnixStream::connect(server.grpc()).unwrap();
    grpc.write_all(b"PRI * HTTP/2.0\r\n").unwrap();
    // Let the server take the connections in.
    std::thread::sleep(Duration::from_millis(300));
    let start = Instant::now();
    server.signal(signal);
    let status = server
        .wait(SHUTDOWN_GRACE + Duration::from_secs(4))
        .unwrap_or_else(|| panic!("still running {:?} after SIG{signal}", start.elapsed()));
    assert!(status.success(), "{status}");
    assert!(!server.http().exists(), "the HTTP socket is left behind");
    assert!(!server.grpc().exists(), "the gRPC socket is left behind");
    for stream in [&mut headers, &mut body, &mut grpc] {
        let (_, closed) = read_until_closed(stream, Duration::from_secs(2));
        assert!(closed, "a connection outlived the server");
    }
}

#[test]
fn sigterm_stops_the_server_despite_unfinished_requests() {
    stops_on("TERM");
}

#[test]
fn sighup_stops_the_server_despite_unfinished_requests() {
    stops_on("HUP");
}

#[test]
fn accept_picks_the_answer_type_and_an_idle_server_stops_at_once() {
    let mut server = Server::start(false);
    let socket = server.http();
    let yaml = |want: &str, accept: Option<&str>| {
        let (status, content_type, body) = post(&socket, accept);
        assert_eq!(status, 200, "{accept:?}: {body}");
        assert_eq!(content_type, want, "{accept:?}");
        assert!(
            body.starts_with("apiVersion: config.kubernetes.io/v1"),
            "{body}"
        );
        assert!(body.contains("served:"), "{body}");
    };
    yaml("text/yaml", None);
    yaml("text/yaml", Some("*/*"));
    yaml("text/yaml", Some("text/*"));
    yaml("text/yaml", Some("text/yaml"));
    yaml("application/yaml", Some("application/*"));
    yaml("application/yaml", Some("application/yaml"));
    yaml("application/x-yaml", Some("application/x-yaml"));
    yaml("text/yaml", Some("application/json;q=0.2, text/*;q=0.9"));
    for accept in [
        "application/json",
        "text/html;q=1, application/json;q=0.1",
        "*/*, application/json",
    ] {
        let (status, content_type, body) = post(&socket, Some(accept));
        assert_eq!(status, 200, "{accept}: {body}");
        assert_eq!(content_type, "application/json", "{accept}");
        assert!(
            body.starts_with('{') && body.contains("\"served\""),
            "{body}"
        );
    }
    for accept in ["text/html", "image/*", "*/*;q=0"] {
        let (status, content_type, body) = post(&socket, Some(accept));
        assert_eq!(status, 406, "{accept}: {body}");
        assert!(content_type.starts_with("text/plain"), "{content_type}");
        assert!(body.contains("Accept must allow"), "{body}");
    }
    // No connection open: SIGTERM stops it well within the grace period.
    let start = Instant::now();
    server.signal("TERM");
    assert!(server.wait(Duration::from_secs(3)).unwrap().success());
    assert!(start.elapsed() < SHUTDOWN_GRACE, "{:?}", start.elapsed());
    assert!(!socket.exists());
}
