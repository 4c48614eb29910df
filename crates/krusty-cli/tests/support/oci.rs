//! An OCI registry on loopback for tests (Debian's `docker-registry`,
//! plain HTTP; open, with htpasswd basic auth, or with token auth through
//! `oci-token-server.py`), and pushing OCI
//! artifacts to it through the registry's HTTP API: blob uploads and an
//! OCI image manifest with an `artifactType`, the empty config
//! (`application/vnd.oci.empty.v1+json`), the given layers and
//! annotations.
//!
//! ```ignore
//! let registry = OciRegistry::start(&dir).expect("docker-registry");
//! let pushed = registry.push_artifact(
//!     "krm/catalog",
//!     "v1",
//!     "application/vnd.cncf.kubernetes.krm-func-catalog.v1",
//!     &[(krusty_fetch::CATALOG_MEDIA_TYPE, catalog_yaml.as_bytes())],
//!     &[("org.opencontainers.image.title", "catalog.yaml")],
//! );
//! // pushed.reference: oci://127.0.0.1:PORT/krm/catalog:v1
//! // pushed.by_digest: oci://127.0.0.1:PORT/krm/catalog@sha256:…
//! ```

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use krusty_fetch::oci::sha256_hex;

/// The user of registries started with [`OciRegistry::start_with_auth`].
pub const OCI_USER: &str = "tester";
/// Their password.
pub const OCI_PASSWORD: &str = "krusty-secret";
/// bcrypt of [`OCI_PASSWORD`] (cost 4), for the registry's htpasswd file.
const OCI_PASSWORD_BCRYPT: &str = "$2b$04$4yJDRgBduyFYkxZcaWF6rO3fEbpwpTF/xLfb9Bj9gd/v2.dWGFcG6";

/// The media type of an OCI image manifest.
pub const OCI_MANIFEST_MEDIA_TYPE: &str = "application/vnd.oci.image.manifest.v1+json";
/// The media type of the empty config artifacts carry.
pub const OCI_EMPTY_MEDIA_TYPE: &str = "application/vnd.oci.empty.v1+json";

/// The artifact type of a function catalog.
pub const CATALOG_TYPE: &str = "application/vnd.cncf.kubernetes.krm-func-catalog.v1";
/// The artifact type of a function definition.
pub const DEFINITION_TYPE: &str = "application/vnd.cncf.kubernetes.krm-func-definition.v1";
/// The artifact type of an exec function's program.
pub const EXEC_TYPE: &str = "application/vnd.cncf.kubernetes.krm-func-runtime-exec.v1";

/// The open registry every test of this process shares (its data under
/// `area/registry`), if docker-registry is installed.
pub fn shared_registry(area: &str) -> Option<&'static OciRegistry> {
    static REGISTRY: std::sync::OnceLock<Option<OciRegistry>> = std::sync::OnceLock::new();
    REGISTRY
        .get_or_init(|| OciRegistry::start(&super::scratch(area, "registry")))
        .as_ref()
}

/// A docker-registry serving on a free loopback port over plain HTTP; it
/// stops when this value is dropped (or the test process ends).
pub struct OciRegistry {
    /// `127.0.0.1:PORT`, as references name it.
    pub host: String,
    /// How it asks for credentials.
    auth: Auth,
    /// A shell that stops the registry when its stdin closes.
    keeper: Child,
}

/// How a registry asks for [`OCI_USER`] and [`OCI_PASSWORD`].
enum Auth {
    /// It does not.
    Open,
    /// Basic auth on every request (htpasswd).
    Basic,
    /// Bearer tokens from a token service (`oci-token-server.py` on this
    /// port, which wants them in basic auth).
    Token { port: u16, _server: Child },
}

/// An artifact pushed by [`OciRegistry::push_artifact`].
#[derive(Debug, Clone)]
pub struct PushedArtifact {
    /// `oci://127.0.0.1:PORT/REPO:TAG`.
    pub reference: String,
    /// `oci://127.0.0.1:PORT/REPO@sha256:…` (the manifest's digest).
    pub by_digest: String,
    /// `sha256:…` of the manifest.
    pub digest: String,
    /// `sha256:…` of each layer, in order.
    pub layer_digests: Vec<String>,
}

/// Whether `docker-registry` is installed; says loudly what is skipped
/// when it is not.
pub fn docker_registry_or_skip(what: &str) -> bool {
    let found = Command::new("docker-registry")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        eprintln!(
            "SKIPPED {what}: no docker-registry for the OCI registry (apt-get install docker-registry; .ci/run installs it)"
        );
    }
    found
}

impl OciRegistry {
    /// Starts an open registry keeping its data and log in `dir`; `None`
    /// (after a `SKIPPED` message) when docker-registry is not installed.
    pub fn start(dir: &Path) -> Option<OciRegistry> {
        OciRegistry::launch(dir, |_| Some((Auth::Open, String::new())))
    }

    /// Starts a registry that asks for basic auth ([`OCI_USER`],
    /// [`OCI_PASSWORD`]) on every request; `None` as for [`start`].
    ///
    /// [`start`]: OciRegistry::start
    pub fn start_with_auth(dir: &Path) -> Option<OciRegistry> {
        OciRegistry::launch(dir, |dir| {
            let htpasswd = dir.join("htpasswd");
            std::fs::write(&htpasswd, format!("{OCI_USER}:{OCI_PASSWORD_BCRYPT}\n"))
                .expect("htpasswd");
            let config = format!(
                "auth: {{htpasswd: {{realm: krusty-test, path: {}}}}}\n",
                htpasswd.display()
            );
            Some((Auth::Basic, config))
        })
    }

    /// Starts a registry in token auth mode: it sends clients to a token
    /// service (started here, on loopback) that gives a bearer token for
    /// [`OCI_USER`] and [`OCI_PASSWORD`] only; `None` as for [`start`], or
    /// when python3 or openssl is missing.
    ///
    /// [`start`]: OciRegistry::start
    pub fn start_with_token_auth(dir: &Path) -> Option<OciRegistry> {
        OciRegistry::launch(dir, |dir| {
            let (key, cert) = (dir.join("token.key"), dir.join("token.crt"));
            let made = Command::new("openssl")
                .args([
                    "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "30",
                ])
                .args(["-subj", "/CN=krusty-token-issuer", "-keyout"])
                .arg(&key)
                .arg("-out")
                .arg(&cert)
                .output()
                .is_ok_and(|o| o.status.success());
            if !made {
                eprintln!("SKIPPED the token auth registry: openssl could not make a key");
                return None;
            }
            let script =
                Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/oci-token-server.py");
            let mut server = Command::new("python3")
                .arg(script)
                .arg("0")
                .arg(&key)
                .arg(&cert)
                .args(["krusty-registry", OCI_USER, OCI_PASSWORD])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .spawn()
                .ok()?;
            let mut line = String::new();
            std::io::BufRead::read_line(
                &mut std::io::BufReader::new(server.stdout.as_mut().expect("piped")),
                &mut line,
            )
            .ok()?;
            let port: u16 = line.trim().parse().ok()?;
            let config = format!(
                "auth: {{token: {{realm: \"http://127.0.0.1:{port}/token\", service: krusty-registry, issuer: krusty-test-issuer, rootcertbundle: {}}}}}\n",
                cert.display()
            );
            Some((
                Auth::Token {
                    port,
                    _server: server,
                },
                config,
            ))
        })
    }

    /// Starts a registry whose `auth:` configuration (and [`Auth`])
    /// `auth` makes in the registry's folder.
    fn launch(
        dir: &Path,
        auth: impl FnOnce(&Path) -> Option<(Auth, String)>,
    ) -> Option<OciRegistry> {
        if !docker_registry_or_skip("the OCI registry tests") {
            return None;
        }
        std::fs::create_dir_all(dir).expect("registry folder");
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free loopback port")
            .port();
        let (mode, auth) = auth(dir)?;
        let config = dir.join("registry.yml");
        std::fs::write(
            &config,
            format!(
                "version: 0.1\nlog: {{level: warn, accesslog: {{disabled: true}}}}\nstorage: {{filesystem: {{rootdirectory: {}}}}}\nhttp: {{addr: 127.0.0.1:{port}}}\n{auth}",
                dir.join("registry-data").display()
            ),
        )
        .expect("registry.yml");
        let keeper = Command::new("sh")
            .arg("-c")
            .arg("docker-registry serve \"$1\" >\"$1.log\" 2>&1 & cat >/dev/null; kill $!")
            .arg("sh")
            .arg(&config)
            .stdin(Stdio::piped())
            .spawn()
            .expect("sh starts docker-registry");
        let started = Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "docker-registry did not listen on {port}: {}",
                std::fs::read_to_string(config.with_extension("yml.log")).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        Some(OciRegistry {
            host: format!("127.0.0.1:{port}"),
            auth: mode,
            keeper,
        })
    }

    /// Pushes an artifact to `repo:tag`: each of `layers` (media type,
    /// content) as a blob, the empty config, and an OCI image manifest
    /// with `artifact_type` and `annotations`. Pushing again to the same
    /// tag moves it.
    pub fn push_artifact(
        &self,
        repo: &str,
        tag: &str,
        artifact_type: &str,
        layers: &[(&str, &[u8])],
        annotations: &[(&str, &str)],
    ) -> PushedArtifact {
        let config = self.push_blob(repo, b"{}");
        let mut descriptors = Vec::new();
        let mut layer_digests = Vec::new();
        for (media_type, content) in layers {
            let digest = self.push_blob(repo, content);
            descriptors.push(format!(
                r#"{{"mediaType":{},"digest":"{digest}","size":{}}}"#,
                json_string(media_type),
                content.len()
            ));
            layer_digests.push(digest);
        }
        let annotations = if annotations.is_empty() {
            String::new()
        } else {
            let fields: Vec<String> = annotations
                .iter()
                .map(|(k, v)| format!("{}:{}", json_string(k), json_string(v)))
                .collect();
            format!(r#","annotations":{{{}}}"#, fields.join(","))
        };
        let manifest = format!(
            r#"{{"schemaVersion":2,"mediaType":"{OCI_MANIFEST_MEDIA_TYPE}","artifactType":{},"config":{{"mediaType":"{OCI_EMPTY_MEDIA_TYPE}","digest":"{config}","size":2}},"layers":[{}]{annotations}}}"#,
            json_string(artifact_type),
            descriptors.join(",")
        );
        let digest = self.push_manifest(repo, tag, OCI_MANIFEST_MEDIA_TYPE, manifest.as_bytes());
        PushedArtifact {
            reference: format!("oci://{}/{repo}:{tag}", self.host),
            by_digest: format!("oci://{}/{repo}@{digest}", self.host),
            digest,
            layer_digests,
        }
    }

    /// Puts `manifest` (of `media_type`, as given: it need not be valid)
    /// at `repo:reference`; returns its digest.
    pub fn push_manifest(
        &self,
        repo: &str,
        reference: &str,
        media_type: &str,
        manifest: &[u8],
    ) -> String {
        let answer = self.request(
            "PUT",
            &format!("/v2/{repo}/manifests/{reference}"),
            &[("Content-Type", media_type)],
            manifest,
        );
        assert_eq!(answer.status, 201, "manifest PUT: {}", answer.text());
        format!("sha256:{}", sha256_hex(manifest))
    }

    /// Uploads `content` as a blob of `repo` (monolithic: POST, then PUT
    /// with the digest); returns its digest.
    pub fn push_blob(&self, repo: &str, content: &[u8]) -> String {
        let digest = format!("sha256:{}", sha256_hex(content));
        let started = self.request("POST", &format!("/v2/{repo}/blobs/uploads/"), &[], b"");
        assert_eq!(started.status, 202, "blob upload POST: {}", started.text());
        let location = started
            .header("location")
            .expect("an upload location")
            .to_string();
        let path = match location.find("/v2/") {
            Some(i) => &location[i..],
            None => &location,
        };
        let separator = if path.contains('?') { '&' } else { '?' };
        let done = self.request(
            "PUT",
            &format!("{path}{separator}digest={digest}"),
            &[("Content-Type", "application/octet-stream")],
            content,
        );
        assert_eq!(done.status, 201, "blob PUT: {}", done.text());
        digest
    }

    /// A docker configuration folder (for `DOCKER_CONFIG`) made in `dir`
    /// whose `config.json` holds credentials for this registry under
    /// `auths`: `login`, else [`OCI_USER`] and [`OCI_PASSWORD`].
    pub fn docker_config(&self, dir: &Path, login: Option<(&str, &str)>) -> PathBuf {
        let (user, password) = login.unwrap_or((OCI_USER, OCI_PASSWORD));
        std::fs::create_dir_all(dir).expect("docker config folder");
        std::fs::write(
            dir.join("config.json"),
            format!(
                r#"{{"auths":{{"{}":{{"auth":"{}"}}}}}}"#,
                self.host,
                base64(format!("{user}:{password}").as_bytes())
            ),
        )
        .expect("config.json");
        dir.to_path_buf()
    }

    /// One HTTP/1.1 request to the registry (with its credentials).
    fn request(&self, method: &str, path: &str, headers: &[(&str, &str)], body: &[u8]) -> Answer {
        let mut stream = TcpStream::connect(&self.host).expect("connect to the registry");
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .expect("timeout");
        let mut head = format!(
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\nContent-Length: {}\r\n",
            self.host,
            body.len()
        );
        match &self.auth {
            Auth::Open => {}
            Auth::Basic => head.push_str(&format!("Authorization: {}\r\n", basic_auth())),
            Auth::Token { port, .. } => {
                let repo = path
                    .strip_prefix("/v2/")
                    .and_then(|p| {
                        p.split_once("/blobs/")
                            .or_else(|| p.split_once("/manifests/"))
                    })
                    .map_or("", |(repo, _)| repo);
                let token = bearer_token(*port, repo);
                head.push_str(&format!("Authorization: Bearer {token}\r\n"));
            }
        }
        for (name, value) in headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str("\r\n");
        stream.write_all(head.as_bytes()).expect("send");
        stream.write_all(body).expect("send");
        let mut raw = Vec::new();
        stream.read_to_end(&mut raw).expect("answer");
        Answer::parse(&raw)
    }
}

impl Drop for OciRegistry {
    fn drop(&mut self) {
        drop(self.keeper.stdin.take());
        let _ = self.keeper.wait();
    }
}

/// A registry's answer.
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Answer {
    fn parse(raw: &[u8]) -> Answer {
        let end = raw
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .expect("an HTTP answer");
        let head = String::from_utf8_lossy(&raw[..end]);
        let mut lines = head.lines();
        let status = lines
            .next()
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|s| s.parse().ok())
            .expect("a status line");
        let headers = lines
            .filter_map(|l| l.split_once(':'))
            .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
            .collect();
        Answer {
            status,
            headers,
            body: raw[end + 4..].to_vec(),
        }
    }

    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    fn text(&self) -> String {
        format!("{} {}", self.status, String::from_utf8_lossy(&self.body))
    }
}

/// The `Authorization` value for [`OCI_USER`] and [`OCI_PASSWORD`].
fn basic_auth() -> String {
    format!(
        "Basic {}",
        base64(format!("{OCI_USER}:{OCI_PASSWORD}").as_bytes())
    )
}

/// A token for pushing to and pulling from `repo`, from the token service
/// on `port`.
fn bearer_token(port: u16, repo: &str) -> String {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect to the token service");
    let request = format!(
        "GET /token?service=krusty-registry&scope=repository:{repo}:pull,push HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: {}\r\nConnection: close\r\n\r\n",
        basic_auth()
    );
    stream.write_all(request.as_bytes()).expect("send");
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).expect("answer");
    let answer = Answer::parse(&raw);
    assert_eq!(answer.status, 200, "token: {}", answer.text());
    let body = String::from_utf8_lossy(&answer.body).into_owned();
    let start = body.find("\"token\": \"").expect("a token") + "\"token\": \"".len();
    body[start..]
        .split('"')
        .next()
        .expect("a token")
        .to_string()
}

/// `text` as a JSON string.
fn json_string(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Standard base64, padded.
pub fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | u32::from(*b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}
