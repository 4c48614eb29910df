//! `serve` in process, with a function that panics on request: the
//! request gets HTTP 500 or gRPC INTERNAL, the server keeps serving, and
//! SIGTERM stops it with its sockets removed.

#![cfg(feature = "server")]

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

use krusty_fn::grpc::{connect, Format, RunRequest};
use krusty_fn::run::ServerAddresses;
use krusty_fn::serve::{serve_with, Options};
use krusty_fn::{FnError, KubeObject, ResourceList};

fn function(list: &mut ResourceList) -> Result<(), FnError> {
    let config: serde_json::Value = list.config()?;
    if config["panic"] == true {
        panic!("asked to panic");
    }
    for item in &mut list.items {
        item.set_label("served", "yes");
    }
    Ok(())
}

fn list(panic: bool) -> String {
    format!(
        "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- kind: A\n  metadata:\n    name: a\nfunctionConfig:\n  kind: C\n  panic: {panic}\n"
    )
}

fn http_post(socket: &Path, body: &str) -> (u16, String) {
    let mut stream = UnixStream::connect(socket).unwrap();
    write!(
        stream,
        "POST / HTTP/1.1\r\nHost: f\r\nConnection: close\r\nContent-Type: text/yaml\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let status = answer[9..12].parse().unwrap();
    let body = answer.split_once("\r\n\r\n").unwrap().1.to_string();
    (status, body)
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

#[tokio::test]
async fn a_panicking_request_fails_alone_and_sigterm_stops_the_server() {
    let dir = std::env::temp_dir().join(format!("kfn-inproc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (http, grpc): (PathBuf, PathBuf) = (dir.join("http.sock"), dir.join("grpc.sock"));
    let addresses = ServerAddresses {
        http: Some(format!("unix://{}", http.display())),
        grpc: Some(format!("unix://{}", grpc.display())),
    };
    let options = Options {
        cache_ttl: Some(Duration::from_secs(60)),
    };
    let server = std::thread::spawn(move || serve_with(&addresses, &options, function));
    wait_for(&http, true);
    wait_for(&grpc, true);

    let (status, body) = http_post(&http, &list(true));
    assert_eq!(status, 500, "{body}");
    assert!(
        body.contains("the function panicked: asked to panic"),
        "{body}"
    );
    let (status, body) = http_post(&http, &list(false));
    assert_eq!(status, 200, "{body}");
    assert!(
        body.contains("served: \"yes\"") || body.contains("served: yes"),
        "{body}"
    );

    let address = format!("unix://{}", grpc.display());
    let mut client = connect(&address).await.unwrap();
    let request = |panic| RunRequest {
        resource_list: list(panic).into_bytes(),
        format: Format::Yaml.into(),
        accept: Format::Yaml.into(),
        tag: "t".into(),
    };
    let refused = client.run(request(true)).await.unwrap_err();
    assert_eq!(refused.code(), tonic::Code::Internal, "{refused:?}");
    let answer = client.run(request(false)).await.unwrap().into_inner();
    assert!(!answer.failed);
    assert_eq!(answer.ttl.map(|d| d.seconds), Some(60));
    drop(client);

    let killed = std::process::Command::new("kill")
        .args(["-TERM", &std::process::id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let served = tokio::task::spawn_blocking(move || server.join().unwrap())
        .await
        .unwrap();
    assert!(served.is_ok(), "{served:?}");
    assert!(!http.exists() && !grpc.exists(), "a socket is left behind");
    std::fs::remove_dir_all(&dir).unwrap();
}
