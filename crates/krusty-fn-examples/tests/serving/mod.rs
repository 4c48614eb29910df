//! Shared by the spec v2 server tests: a function server started as a
//! child process, a plain HTTP/1.1 client over TCP or a unix socket, and
//! the example fixtures' inputs with their spec v1 answers.

#![allow(dead_code)] // each test file uses its own part

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// The examples: fixtures directory and executable.
pub const EXAMPLES: [(&str, &str); 7] = [
    (
        "configmap-generator",
        env!("CARGO_BIN_EXE_krm-configmap-generator"),
    ),
    ("set-labels", env!("CARGO_BIN_EXE_krm-set-labels")),
    ("require-limits", env!("CARGO_BIN_EXE_krm-require-limits")),
    ("inject-sidecar", env!("CARGO_BIN_EXE_krm-inject-sidecar")),
    ("render-template", env!("CARGO_BIN_EXE_krm-render-template")),
    ("image-policy", env!("CARGO_BIN_EXE_krm-image-policy")),
    ("set-annotations", env!("CARGO_BIN_EXE_krm-set-annotations")),
];

/// The set-labels example.
pub const SET_LABELS: &str = env!("CARGO_BIN_EXE_krm-set-labels");

/// The Python v2 HTTP function written without the SDK.
pub fn python_function() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../krusty-fn/tests/python/krm_v2_http.py")
}

/// A list set-labels labels (`team: web`).
pub const LIST: &str = "apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: a # keep me
functionConfig:
  apiVersion: fn.krusty.dev/v1
  kind: SetLabels
  metadata:
    name: labels
  labels:
    team: web
";

/// A list whose config has no labels: set-labels fails with an error result.
pub const FAILING_LIST: &str = "apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: a
functionConfig:
  apiVersion: fn.krusty.dev/v1
  kind: SetLabels
  metadata:
    name: labels
";

/// A scratch directory for sockets, removed when dropped.
pub struct Scratch(pub PathBuf);

impl Scratch {
    pub fn new(name: &str) -> Scratch {
        // Short: a unix socket path has at most 107 bytes.
        let dir = std::env::temp_dir().join(format!("kfn-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    pub fn socket(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A function server run as a child process; killed when dropped.
pub struct Server {
    pub child: Child,
    /// The addresses announced on stderr, by protocol ("HTTP", "gRPC").
    pub announced: Vec<(String, String)>,
    stderr: mpsc::Receiver<String>,
}

impl Server {
    /// Starts `program args…` and waits until it announced `servers`
    /// servers (`serving PROTOCOL on ADDRESS` on stderr).
    pub fn start(program: &Path, args: &[&str], envs: &[(&str, &str)], servers: usize) -> Server {
        let mut command = Command::new(program);
        command
            .args(args)
            .env_remove("KRM_FUNCTION_HTTP_ADDRESS")
            .env_remove("KRM_FUNCTION_GRPC_ADDRESS")
            .envs(envs.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let mut child = command
            .spawn()
            .unwrap_or_else(|e| panic!("starting {}: {e}", program.display()));
        let (tx, stderr) = mpsc::channel();
        let pipe = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut announced = Vec::new();
        while announced.len() < servers {
            let line = stderr
                .recv_timeout(Duration::from_secs(30))
                .unwrap_or_else(|_| panic!("{} announced no server", program.display()));
            if let Some(rest) = line.strip_prefix("serving ") {
                if let Some((protocol, address)) = rest.split_once(" on ") {
                    announced.push((protocol.to_string(), address.to_string()));
                }
            }
        }
        Server {
            child,
            announced,
            stderr,
        }
    }

    /// The address announced for `protocol`.
    pub fn address(&self, protocol: &str) -> String {
        self.announced
            .iter()
            .find(|(p, _)| p == protocol)
            .map(|(_, a)| a.clone())
            .unwrap_or_else(|| panic!("no {protocol} server announced"))
    }

    /// Sends SIGTERM.
    pub fn terminate(&self) {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
    }

    /// Waits for the process to end (at most 30 s).
    pub fn wait(&mut self) -> ExitStatus {
        for _ in 0..3000 {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        panic!("the server did not stop");
    }

    /// What the server wrote on stderr so far (after its announcements).
    pub fn stderr(&self) -> String {
        self.stderr.try_iter().collect::<Vec<_>>().join("\n")
    }

    /// `true` while the process runs.
    pub fn running(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An HTTP response.
#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn text(&self) -> String {
        String::from_utf8(self.body.clone()).unwrap()
    }
}

/// Sends one HTTP/1.1 request to `address` (`host:port` or
/// `unix:///path`) on a new connection.
pub fn request(
    address: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Response {
    let mut head = format!("{method} {path} HTTP/1.1\r\nHost: function\r\nConnection: close\r\n");
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
    let mut raw = Vec::new();
    let mut send = |stream: &mut dyn ReadWrite| {
        stream.write_all(head.as_bytes())?;
        stream.write_all(body)?;
        stream.read_to_end(&mut raw)
    };
    if let Some(path) = address.strip_prefix("unix://") {
        send(&mut std::os::unix::net::UnixStream::connect(path).unwrap())
    } else {
        send(&mut std::net::TcpStream::connect(address).unwrap())
    }
    .unwrap_or_else(|e| panic!("HTTP request to {address}: {e}"));
    parse_response(&raw)
}

/// POSTs `body` with a `Content-Type` and, when given, an `Accept`.
pub fn post(address: &str, content_type: &str, accept: Option<&str>, body: &str) -> Response {
    let mut headers = vec![("Content-Type", content_type)];
    if let Some(accept) = accept {
        headers.push(("Accept", accept));
    }
    request(address, "POST", "/", &headers, body.as_bytes())
}

trait ReadWrite: Read + Write {}
impl<T: Read + Write> ReadWrite for T {}

fn parse_response(raw: &[u8]) -> Response {
    let end = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or_else(|| panic!("no HTTP head in {:?}", String::from_utf8_lossy(raw)));
    let head = String::from_utf8_lossy(&raw[..end]).into_owned();
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_string(), v.trim().to_string()))
        .collect();
    Response {
        status,
        headers,
        body: raw[end + 4..].to_vec(),
    }
}

/// Runs `program` as spec v1 over `input`: stdout and exit code.
pub fn run_v1(program: &Path, input: &str) -> (String, i32) {
    let mut child = Command::new(program)
        .env_remove("KRM_FUNCTION_HTTP_ADDRESS")
        .env_remove("KRM_FUNCTION_GRPC_ADDRESS")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_string();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    (
        String::from_utf8(out.stdout).unwrap(),
        out.status.code().unwrap(),
    )
}

/// Every fixture of an example: its name and its input ResourceList.
pub fn fixture_inputs(example: &str) -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(example);
    krusty_fn::testing::cases(&root)
        .unwrap()
        .into_iter()
        .map(|dir| {
            let input = krusty_fn::testing::fixture_input(&dir).unwrap();
            (dir.display().to_string(), input)
        })
        .collect()
}

/// A ResourceList of `count` ConfigMaps, each with a 1 KiB value, and the
/// set-labels config.
pub fn big_list(count: usize) -> String {
    let mut list =
        String::from("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n");
    let value = "x".repeat(1024);
    for i in 0..count {
        list.push_str(&format!(
            "- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: cm-{i}\n  data:\n    value: {value}\n"
        ));
    }
    list.push_str("functionConfig:\n  apiVersion: fn.krusty.dev/v1\n  kind: SetLabels\n  metadata:\n    name: labels\n  labels:\n    team: web\n");
    list
}
