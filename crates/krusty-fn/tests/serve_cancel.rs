//! A request's deadline and cancellation reach the function in server
//! mode (`krusty_fn::cancel`): over HTTP (`Krm-Timeout`) and gRPC
//! (`grpc-timeout`) a function waiting for work sees its deadline, is
//! told when it passes, and the client gets 504 or DEADLINE_EXCEEDED; a
//! client that goes away cancels the request too.

#![cfg(feature = "server")]

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use krusty_fn::grpc::{connect, Format, RunRequest};
use krusty_fn::run::ServerAddresses;
use krusty_fn::serve::serve;
use krusty_fn::{cancel, FnError, ResourceList};

/// Per probe (the config's `probe`): 1 once the function saw a deadline,
/// 2 once it saw no deadline, +10 once it was told it is cancelled.
static SEEN: [AtomicU32; 4] = [
    AtomicU32::new(0),
    AtomicU32::new(0),
    AtomicU32::new(0),
    AtomicU32::new(0),
];

/// Waits (up to 30 s) until the request is cancelled, noting what it saw.
fn waiting(list: &mut ResourceList) -> Result<(), FnError> {
    let config: serde_json::Value = list.config()?;
    let probe = config["probe"].as_u64().unwrap_or(0) as usize;
    let seen = &SEEN[probe];
    seen.store(
        if cancel::deadline().is_some() { 1 } else { 2 },
        Ordering::SeqCst,
    );
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(30) {
        if cancel::check().is_err() {
            seen.fetch_add(10, Ordering::SeqCst);
            return cancel::check();
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    Ok(())
}

/// The server's sockets, started once for the tests of this file.
fn sockets() -> &'static (PathBuf, PathBuf) {
    static SOCKETS: OnceLock<(PathBuf, PathBuf)> = OnceLock::new();
    SOCKETS.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("kfn-cancel-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (http, grpc) = (dir.join("http.sock"), dir.join("grpc.sock"));
        let addresses = ServerAddresses {
            http: Some(format!("unix://{}", http.display())),
            grpc: Some(format!("unix://{}", grpc.display())),
        };
        std::thread::spawn(move || serve(&addresses, waiting));
        for path in [&http, &grpc] {
            let started = Instant::now();
            while !path.exists() {
                assert!(started.elapsed() < Duration::from_secs(30), "no server");
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        (http, grpc)
    })
}

fn list(probe: u32) -> String {
    format!("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\nfunctionConfig:\n  kind: C\n  probe: {probe}\n")
}

fn request(body: &str, extra: &str) -> String {
    format!(
        "POST / HTTP/1.1\r\nHost: f\r\nConnection: close\r\nContent-Type: text/yaml\r\n{extra}Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
}

fn wait_until_seen(probe: usize, want: u32) {
    let started = Instant::now();
    while SEEN[probe].load(Ordering::SeqCst) != want {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "probe {probe}: saw {}, not {want}",
            SEEN[probe].load(Ordering::SeqCst)
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn http_answer(socket: &Path, text: &str) -> (u16, String, Duration) {
    let started = Instant::now();
    let mut stream = UnixStream::connect(socket).unwrap();
    stream.write_all(text.as_bytes()).unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let status = answer[9..12].parse().unwrap();
    (status, answer, started.elapsed())
}

#[test]
fn an_http_deadline_reaches_the_function_and_passes_as_504() {
    let (http, _) = sockets();
    let (status, answer, took) = http_answer(http, &request(&list(0), "Krm-Timeout: 300m\r\n"));
    assert_eq!(status, 504, "{answer}");
    assert!(answer.contains("deadline"), "{answer}");
    assert!(took < Duration::from_secs(5), "{took:?}");
    // The function saw the deadline, then was told it passed.
    wait_until_seen(0, 11);
}

#[test]
fn a_malformed_http_deadline_is_refused() {
    let (http, _) = sockets();
    let (status, answer, _) = http_answer(http, &request(&list(3), "Krm-Timeout: soon\r\n"));
    assert_eq!(status, 400, "{answer}");
    assert!(answer.contains("krm-timeout"), "{answer}");
    assert_eq!(SEEN[3].load(Ordering::SeqCst), 0, "the function ran");
}

#[test]
fn a_client_that_goes_away_cancels_its_request() {
    let (http, _) = sockets();
    let mut stream = UnixStream::connect(http).unwrap();
    stream.write_all(request(&list(1), "").as_bytes()).unwrap();
    // The function runs, with no deadline...
    wait_until_seen(1, 2);
    // ...until its client hangs up.
    drop(stream);
    wait_until_seen(1, 12);
}

#[tokio::test]
async fn a_grpc_deadline_reaches_the_function() {
    let (_, grpc) = sockets();
    let mut client = connect(&format!("unix://{}", grpc.display()))
        .await
        .unwrap();
    let mut call = tonic::Request::new(RunRequest {
        resource_list: list(2).into_bytes(),
        format: Format::Yaml.into(),
        accept: Format::Yaml.into(),
        tag: String::new(),
    });
    call.set_timeout(Duration::from_millis(300));
    let started = Instant::now();
    let status = client.run(call).await.unwrap_err();
    assert!(
        matches!(
            status.code(),
            tonic::Code::DeadlineExceeded | tonic::Code::Cancelled
        ),
        "{status:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(5));
    let seen = tokio::task::spawn_blocking(|| wait_until_seen(2, 11));
    seen.await.unwrap();
}
