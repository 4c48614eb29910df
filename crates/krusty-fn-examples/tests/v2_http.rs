//! Specification v2 over HTTP: the example functions served by krusty-fn
//! (`--http-addr`, `KRM_FUNCTION_HTTP_ADDRESS`) on loopback TCP and unix
//! sockets, and the Python function written without the SDK
//! (`crates/krusty-fn/tests/python/krm_v2_http.py`), against one HTTP
//! contract; v1 and v2 answers byte for byte alike.

mod serving;

use std::io::Write;
use std::path::Path;

use serving::*;

/// The HTTP contract every v2 function answers by (statuses, headers,
/// bodies), checked against the server at `address`.
fn check_http_contract(address: &str) {
    let get = request(address, "GET", "/", &[], b"");
    assert_eq!(get.status, 405, "{}", get.text());
    assert_eq!(get.header("Allow"), Some("POST"));
    let put = request(
        address,
        "PUT",
        "/",
        &[("Content-Type", "text/yaml")],
        LIST.as_bytes(),
    );
    assert_eq!(put.status, 405);

    let plain = post(address, "text/plain", None, LIST);
    assert_eq!(plain.status, 415, "{}", plain.text());
    let none = request(address, "POST", "/", &[], LIST.as_bytes());
    assert_eq!(none.status, 415);

    let html = post(address, "text/yaml", Some("text/html"), LIST);
    assert_eq!(html.status, 406, "{}", html.text());

    let garbage = post(address, "text/yaml", None, "kind: [");
    assert_eq!(garbage.status, 400);
    assert!(
        garbage.text().contains("ResourceList"),
        "{}",
        garbage.text()
    );
    let not_a_list = post(address, "application/json", None, r#"{"kind":"Pod"}"#);
    assert_eq!(not_a_list.status, 400, "{}", not_a_list.text());

    // JSON in, JSON out.
    let json_list = json_of(LIST);
    let json = post(
        address,
        "application/json",
        Some("application/json"),
        &json_list,
    );
    assert_eq!(json.status, 200, "{}", json.text());
    assert_eq!(json.header("Content-Type"), Some("application/json"));
    let answer: serde_json::Value = serde_json::from_slice(&json.body).unwrap();
    assert_eq!(answer["kind"], "ResourceList");
    assert_eq!(answer["items"][0]["metadata"]["labels"]["team"], "web");

    // JSON in, YAML (the default) out: a JSON document is YAML too.
    for accept in [
        None,
        Some("*/*"),
        Some("text/yaml"),
        Some("text/html, */*;q=0.1"),
    ] {
        let yaml = post(address, "application/json", accept, &json_list);
        assert_eq!(yaml.status, 200, "{accept:?}: {}", yaml.text());
        assert_eq!(yaml.header("Content-Type"), Some("text/yaml"), "{accept:?}");
        let list = krusty_fn::ResourceList::parse(&yaml.text()).unwrap();
        assert_eq!(
            krusty_fn::KubeObject::label(&list.items[0], "team"),
            Some("web"),
            "{accept:?}"
        );
    }

    // A function reporting an error result: 422, the list with the result.
    let failing = post(
        address,
        "application/json",
        Some("application/json"),
        &json_of(FAILING_LIST),
    );
    assert_eq!(failing.status, 422, "{}", failing.text());
    let answer: serde_json::Value = serde_json::from_slice(&failing.body).unwrap();
    assert_eq!(answer["results"][0]["severity"], "error", "{answer}");
    assert_eq!(answer["items"][0]["metadata"]["name"], "a");

    // Any path.
    let elsewhere = request(
        address,
        "POST",
        "/krm/set-labels",
        &[("Content-Type", "application/json")],
        json_list.as_bytes(),
    );
    assert_eq!(elsewhere.status, 200);
}

fn json_of(yaml: &str) -> String {
    krusty_fn::yaml::to_go_json(&krusty_fn::parse_object(yaml).unwrap())
}

#[test]
fn http_contract_over_tcp() {
    let server = Server::start(
        Path::new(SET_LABELS),
        &["--http-addr", "127.0.0.1:0"],
        &[],
        1,
    );
    check_http_contract(&server.address("HTTP"));
}

#[test]
fn http_contract_over_a_unix_socket_named_by_the_environment() {
    let scratch = Scratch::new("env");
    let socket = scratch.socket("http.sock");
    let address = format!("unix://{}", socket.display());
    let server = Server::start(
        Path::new(SET_LABELS),
        &[],
        &[("KRM_FUNCTION_HTTP_ADDRESS", &address)],
        1,
    );
    assert_eq!(server.address("HTTP"), address);
    check_http_contract(&address);
}

#[test]
fn the_flag_wins_over_the_environment_variable() {
    let scratch = Scratch::new("flag");
    let flag = format!("unix://{}", scratch.socket("flag.sock").display());
    let env = format!("unix://{}", scratch.socket("env.sock").display());
    let server = Server::start(
        Path::new(SET_LABELS),
        &["--http-addr", &flag],
        &[("KRM_FUNCTION_HTTP_ADDRESS", &env)],
        1,
    );
    assert_eq!(server.address("HTTP"), flag);
    assert!(!scratch.socket("env.sock").exists());
    assert_eq!(post(&flag, "text/yaml", None, LIST).status, 200);
}

#[test]
fn python_function_without_the_sdk_keeps_the_http_contract() {
    let scratch = Scratch::new("py");
    let address = format!("unix://{}", scratch.socket("py.sock").display());
    let script = python_function();
    let mut server = Server::start(
        Path::new("python3"),
        &[script.to_str().unwrap(), "--http-addr", &address],
        &[],
        1,
    );
    check_http_contract(&address);
    let tcp = Server::start(
        Path::new("python3"),
        &[script.to_str().unwrap(), "--http-addr", "127.0.0.1:0"],
        &[],
        1,
    );
    check_http_contract(&tcp.address("HTTP"));
    server.terminate();
    assert!(server.wait().success());
    assert!(!scratch.socket("py.sock").exists());
}

/// Every example fixture gives the same bytes and the same verdict as
/// specification v1 (exit code 0: 200, 1: 422; no output: 400).
#[test]
fn v1_and_v2_answers_are_byte_identical_for_every_fixture() {
    let scratch = Scratch::new("same");
    for (example, program) in EXAMPLES {
        let socket = scratch.socket(&format!("{example}.sock"));
        let address = format!("unix://{}", socket.display());
        let server = Server::start(Path::new(program), &["--http-addr", &address], &[], 1);
        for (case, input) in fixture_inputs(example) {
            let (stdout, code) = run_v1(Path::new(program), &input);
            let answer = post(&address, "text/yaml", None, &input);
            let expected_status = match (code, stdout.is_empty()) {
                (0, _) => 200,
                (_, false) => 422,
                (_, true) => 400,
            };
            assert_eq!(answer.status, expected_status, "{case}: {}", answer.text());
            if expected_status != 400 {
                assert_eq!(answer.text(), stdout, "{case}");
            }
        }
        drop(server);
        let _ = std::fs::remove_file(&socket);
    }
}

/// The binary node encoding (`application/vnd.krusty.node`) both ways:
/// the same list, and the same status, as v1 for every fixture; asked
/// for first in `Accept`, it is what an SDK server answers, and the
/// Python server (which does not speak it) answers YAML instead.
#[test]
fn binary_answers_hold_the_v1_list_for_every_fixture() {
    const NODE: &str = "application/vnd.krusty.node";
    const NODE_FIRST: &str = "application/vnd.krusty.node, text/yaml;q=0.9";
    let scratch = Scratch::new("node");
    for (example, program) in EXAMPLES {
        let socket = scratch.socket(&format!("{example}.sock"));
        let address = format!("unix://{}", socket.display());
        let server = Server::start(Path::new(program), &["--http-addr", &address], &[], 1);
        for (case, input) in fixture_inputs(example) {
            let Ok(list) = krusty_fn::ResourceList::parse(&input) else {
                continue;
            };
            let (stdout, code) = run_v1(Path::new(program), &input);
            let status = if code == 0 { 200 } else { 422 };
            let mut bytes = Vec::new();
            list.to_binary(&mut bytes);
            let answer = request(
                &address,
                "POST",
                "/",
                &[("Content-Type", NODE), ("Accept", NODE_FIRST)],
                &bytes,
            );
            assert_eq!(answer.status, status, "{case}: {}", answer.text());
            assert_eq!(answer.header("Content-Type"), Some(NODE), "{case}");
            let back = krusty_fn::ResourceList::from_binary(&answer.body).unwrap();
            assert_eq!(back.to_yaml().unwrap(), stdout, "{case}");
            // YAML in, binary out: the list v1 writes, as nodes.
            let mixed = post(&address, "text/yaml", Some(NODE_FIRST), &input);
            assert_eq!(mixed.header("Content-Type"), Some(NODE), "{case}");
            let back = krusty_fn::ResourceList::from_binary(&mixed.body).unwrap();
            assert_eq!(back.to_yaml().unwrap(), stdout, "{case}");
        }
        drop(server);
        let _ = std::fs::remove_file(&socket);
    }
    // Garbled bytes: 400, naming the offset.
    let address = format!("unix://{}", scratch.socket("garbled.sock").display());
    let _server = Server::start(Path::new(SET_LABELS), &["--http-addr", &address], &[], 1);
    let garbled = request(
        &address,
        "POST",
        "/",
        &[("Content-Type", NODE)],
        b"\x89KND\x01\x02\x09",
    );
    assert_eq!(garbled.status, 400, "{}", garbled.text());
    assert!(garbled.text().contains("byte 6"), "{}", garbled.text());
    // A server that does not speak it answers YAML to the same Accept,
    // and refuses the body with 415.
    let py = format!("unix://{}", scratch.socket("py.sock").display());
    let script = python_function();
    let _python = Server::start(
        Path::new("python3"),
        &[script.to_str().unwrap(), "--http-addr", &py],
        &[],
        1,
    );
    let yaml = post(&py, "text/yaml", Some(NODE_FIRST), LIST);
    assert_eq!(yaml.status, 200, "{}", yaml.text());
    assert_ne!(yaml.header("Content-Type"), Some(NODE));
    let refused = request(&py, "POST", "/", &[("Content-Type", NODE)], b"\x89KND\x01");
    assert_eq!(refused.status, 415, "{}", refused.text());
}

#[test]
fn one_server_answers_fifty_sequential_and_many_concurrent_requests() {
    let server = Server::start(
        Path::new(SET_LABELS),
        &["--http-addr", "127.0.0.1:0"],
        &[],
        1,
    );
    let address = server.address("HTTP");
    let (expected, _) = run_v1(Path::new(SET_LABELS), LIST);
    for i in 0..50 {
        let answer = post(&address, "text/yaml", None, LIST);
        assert_eq!(
            (answer.status, answer.text()),
            (200, expected.clone()),
            "request {i}"
        );
    }
    let threads: Vec<_> = (0..16)
        .map(|_| {
            let (address, expected) = (address.clone(), expected.clone());
            std::thread::spawn(move || {
                for _ in 0..5 {
                    let answer = post(&address, "text/yaml", None, LIST);
                    assert_eq!((answer.status, answer.text()), (200, expected.clone()));
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
}

#[test]
fn a_four_megabyte_list_gets_the_v1_answer() {
    let list = big_list(4 * 1024);
    assert!(list.len() > 4 << 20);
    let (expected, code) = run_v1(Path::new(SET_LABELS), &list);
    assert_eq!(code, 0);
    let server = Server::start(
        Path::new(SET_LABELS),
        &["--http-addr", "127.0.0.1:0"],
        &[],
        1,
    );
    let answer = post(&server.address("HTTP"), "text/yaml", None, &list);
    assert_eq!(answer.status, 200);
    assert!(
        answer.text() == expected,
        "the 4 MB answer differs from v1's"
    );
}

#[test]
fn failing_requests_leave_the_server_serving() {
    let mut server = Server::start(
        Path::new(SET_LABELS),
        &["--http-addr", "127.0.0.1:0"],
        &[],
        1,
    );
    let address = server.address("HTTP");
    assert_eq!(post(&address, "text/yaml", None, "kind: [").status, 400);
    assert_eq!(post(&address, "text/yaml", None, FAILING_LIST).status, 422);
    // A client that sends half a request and goes away.
    {
        let mut stream = std::net::TcpStream::connect(&address).unwrap();
        stream
            .write_all(
                b"POST / HTTP/1.1\r\nContent-Type: text/yaml\r\nContent-Length: 1000\r\n\r\nkind",
            )
            .unwrap();
    }
    assert_eq!(post(&address, "text/yaml", None, LIST).status, 200);
    assert!(server.running());
}

/// SIGTERM: the request under way is answered, then the socket is removed
/// and the process exits with 0.
#[test]
fn sigterm_finishes_the_request_under_way_removes_the_socket_and_exits_0() {
    let scratch = Scratch::new("term");
    let socket = scratch.socket("http.sock");
    let address = format!("unix://{}", socket.display());
    let mut server = Server::start(Path::new(SET_LABELS), &["--http-addr", &address], &[], 1);
    let meta = std::fs::metadata(&socket).unwrap();
    assert_eq!(
        std::os::unix::fs::PermissionsExt::mode(&meta.permissions()) & 0o777,
        0o666
    );
    let mut stream = std::os::unix::net::UnixStream::connect(&socket).unwrap();
    let head = format!(
        "POST / HTTP/1.1\r\nHost: f\r\nConnection: close\r\nContent-Type: text/yaml\r\nContent-Length: {}\r\n\r\n",
        LIST.len()
    );
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(&LIST.as_bytes()[..10]).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    server.terminate();
    std::thread::sleep(std::time::Duration::from_millis(300));
    stream.write_all(&LIST.as_bytes()[10..]).unwrap();
    let mut raw = Vec::new();
    std::io::Read::read_to_end(&mut stream, &mut raw).unwrap();
    let answer = String::from_utf8_lossy(&raw);
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    let status = server.wait();
    assert!(status.success(), "{status:?}: {}", server.stderr());
    assert!(!socket.exists(), "the socket is left behind");
}

/// A stale socket from a killed server is replaced; a regular file at the
/// path is not.
#[test]
fn a_stale_socket_is_replaced_but_not_a_regular_file() {
    let scratch = Scratch::new("stale");
    let socket = scratch.socket("http.sock");
    let address = format!("unix://{}", socket.display());
    let mut first = Server::start(Path::new(SET_LABELS), &["--http-addr", &address], &[], 1);
    first.child.kill().unwrap();
    first.wait();
    assert!(socket.exists(), "SIGKILL leaves the socket");
    let second = Server::start(Path::new(SET_LABELS), &["--http-addr", &address], &[], 1);
    assert_eq!(post(&address, "text/yaml", None, LIST).status, 200);
    drop(second);

    let file = scratch.socket("file");
    std::fs::write(&file, "keep me").unwrap();
    let out = std::process::Command::new(SET_LABELS)
        .args(["--http-addr", &format!("unix://{}", file.display())])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("not a socket"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "keep me");
}
