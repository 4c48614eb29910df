//! Network reads are bounded, redirects are safe and credentials never
//! leak, against servers on loopback: small `std::net` servers written
//! here (a server that trickles its headers or body, one that sends
//! without end, redirects to other schemes and in a loop, a fake OCI
//! registry), `openssl s_server` for an HTTPS redirect to plain HTTP, and
//! the git server of `tests/support` for credentials in git URLs.
//!
//! Each server stops by itself: it accepts a bounded number of
//! connections for a bounded time, and sends a bounded number of bytes.

mod support;

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use krusty_fetch::{FetchOptions, Fetcher, Limits, CATALOG_MEDIA_TYPE};
use support::oci::base64;
use support::{
    bare_clone, git_command, make_certificates, output_text, run, scratch, serve, write,
};

/// The secret of the URLs with credentials.
const TOKEN: &str = "s3cret-t0ken";

/// How long a test server lives at most.
const SERVER_LIFETIME: Duration = Duration::from_secs(90);

/// What a test server answers to one request.
#[derive(Clone)]
enum Reply {
    /// A complete answer: status line and headers (without the blank
    /// line), and body (`Content-Length` added).
    Full(String, Vec<u8>),
    /// A 302 to this location.
    Redirect(String),
    /// The head, then one byte of a body of `Content-Length: 200` every
    /// 300 ms.
    TrickleBody,
    /// The status line, then one byte of a header every 300 ms.
    TrickleHeaders,
    /// The head (no length: the body ends when the connection closes),
    /// then bytes without end, up to 256 MiB.
    Endless(String),
}

/// One request a test server received.
#[derive(Debug, Clone)]
struct Seen {
    path: String,
    authorization: Option<String>,
}

/// A loopback HTTP server answering `route(request, its port)`; it records each
/// request and counts the body bytes it managed to send.
struct Server {
    port: u16,
    seen: Arc<Mutex<Vec<Seen>>>,
    sent: Arc<AtomicU64>,
}

impl Server {
    fn start(route: impl Fn(&Seen, u16) -> Reply + Send + Sync + 'static) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
        let port = listener.local_addr().expect("bound").port();
        listener.set_nonblocking(true).expect("non-blocking");
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sent = Arc::new(AtomicU64::new(0));
        let route = Arc::new(route);
        let (seen2, sent2) = (Arc::clone(&seen), Arc::clone(&sent));
        std::thread::spawn(move || {
            let started = Instant::now();
            let mut accepted = 0;
            while started.elapsed() < SERVER_LIFETIME && accepted < 200 {
                match listener.accept() {
                    Ok((stream, _)) => {
                        accepted += 1;
                        let (route, seen, sent) =
                            (Arc::clone(&route), Arc::clone(&seen2), Arc::clone(&sent2));
                        std::thread::spawn(move || {
                            let _ = answer(stream, port, &*route, &seen, &sent);
                        });
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(10)),
                }
            }
        });
        Server { port, seen, sent }
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }

    fn sent(&self) -> u64 {
        self.sent.load(Ordering::SeqCst)
    }
}

/// Reads one request from `stream` and answers it as `route` says.
fn answer(
    stream: TcpStream,
    port: u16,
    route: &(dyn Fn(&Seen, u16) -> Reply + Send + Sync),
    seen: &Mutex<Vec<Seen>>,
    sent: &AtomicU64,
) -> std::io::Result<()> {
    stream.set_nonblocking(false)?;
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut request_line = String::new();
    reader.read_line(&mut request_line)?;
    let path = request_line
        .split_whitespace()
        .nth(1)
        .unwrap_or("/")
        .to_string();
    let mut authorization = None;
    for _ in 0..100 {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 || line.trim().is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            if name.eq_ignore_ascii_case("authorization") {
                authorization = Some(value.trim().to_string());
            }
        }
    }
    let request = Seen {
        path,
        authorization,
    };
    seen.lock().unwrap().push(request.clone());
    let mut out = stream;
    match route(&request, port) {
        Reply::Full(head, body) => {
            write!(
                out,
                "{head}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            )?;
            out.write_all(&body)?;
        }
        Reply::Redirect(location) => write!(
            out,
            "HTTP/1.1 302 Found\r\nLocation: {location}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        )?,
        Reply::TrickleBody => {
            write!(
                out,
                "HTTP/1.1 200 OK\r\nContent-Length: 200\r\nConnection: close\r\n\r\n"
            )?;
            for _ in 0..200 {
                out.write_all(b"#")?;
                sent.fetch_add(1, Ordering::SeqCst);
                std::thread::sleep(Duration::from_millis(300));
            }
        }
        Reply::TrickleHeaders => {
            write!(out, "HTTP/1.1 200 OK\r\nX-Slow: ")?;
            for _ in 0..200 {
                out.write_all(b"a")?;
                std::thread::sleep(Duration::from_millis(300));
            }
            write!(out, "\r\nContent-Length: 0\r\n\r\n")?;
        }
        Reply::Endless(head) => {
            write!(out, "{head}\r\nConnection: close\r\n\r\n")?;
            let piece = vec![b' '; 64 << 10];
            for _ in 0..(256 << 20) / piece.len() {
                out.write_all(&piece)?;
                sent.fetch_add(piece.len() as u64, Ordering::SeqCst);
            }
        }
    }
    out.flush()
}

/// A 200 answer with `body`.
fn ok(body: &str) -> Reply {
    Reply::Full("HTTP/1.1 200 OK".into(), body.as_bytes().to_vec())
}

/// A 404 answer.
fn not_found() -> Reply {
    Reply::Full("HTTP/1.1 404 Not Found".into(), b"no\n".to_vec())
}

const CONFIG_MAP: &str =
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: remote\ndata:\n  a: b\n";

/// `krusty build DIR ARGS` with a private cache and git without user
/// configuration; its output and how long it took.
fn krusty_build(dir: &Path, args: &[&str], envs: &[(&str, &Path)]) -> (Output, Duration) {
    let started = Instant::now();
    let out = support::krusty_command()
        .arg("build")
        .arg(dir)
        .args(args)
        .env("KRUSTY_CACHE_DIR", dir.join("cache"))
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_TERMINAL_PROMPT", "0")
        .envs(envs.iter().map(|(k, v)| (*k, v.as_os_str())))
        .stdin(Stdio::null())
        .output()
        .expect("krusty runs");
    (out, started.elapsed())
}

/// A folder whose kustomization has `resources:` `entry`, and
/// `extra` lines.
fn tree(name: &str, entry: &str, extra: &str) -> PathBuf {
    let dir = scratch("network-bounds", name);
    write(
        &dir,
        "kustomization.yaml",
        &format!("resources:\n- {entry}\n{extra}"),
    );
    dir
}

/// Fails unless the build failed cleanly (status 1, nothing printed, no
/// panic); its stderr.
fn failed(out: &Output) -> String {
    let (stdout, stderr) = output_text(out);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stdout.is_empty(), "{stdout}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    stderr
}

#[test]
fn a_server_trickling_its_body_meets_the_fetch_timeout() {
    let server = Server::start(|_, _| Reply::TrickleBody);
    let dir = tree("trickle-body", &server.url("/slow.yaml"), "");
    let (out, took) = krusty_build(&dir, &["--fetch-timeout", "2"], &[]);
    let stderr = failed(&out);
    assert!(
        stderr.contains("did not end within 2s (--fetch-timeout)"),
        "{stderr}"
    );
    assert!(took < Duration::from_secs(15), "{took:?}");
    assert!(server.sent() < 30, "{}", server.sent());
}

#[test]
fn a_server_trickling_its_headers_meets_the_fetch_timeout() {
    let server = Server::start(|_, _| Reply::TrickleHeaders);
    let dir = tree("trickle-headers", &server.url("/slow.yaml"), "");
    let (out, took) = krusty_build(&dir, &["--fetch-timeout", "1.5"], &[]);
    let stderr = failed(&out);
    assert!(
        stderr.contains("did not end within 1.5s (--fetch-timeout)"),
        "{stderr}"
    );
    assert!(took < Duration::from_secs(15), "{took:?}");
}

#[test]
fn a_file_larger_than_fetch_max_size_is_refused_before_it_is_read() {
    let big = "#".repeat(2 << 20);
    let server = Server::start(move |r, _| match r.path.as_str() {
        "/announced.yaml" => ok(&big),
        _ => Reply::Endless("HTTP/1.1 200 OK".into()),
    });
    for (name, path) in [
        ("announced", "/announced.yaml"),
        ("endless", "/endless.yaml"),
    ] {
        let dir = tree(name, &server.url(path), "");
        let (out, _) = krusty_build(&dir, &["--fetch-max-size", "1Mi"], &[]);
        let stderr = failed(&out);
        assert!(
            stderr.contains("the file is larger than 1048576 bytes (--fetch-max-size)"),
            "{stderr}"
        );
    }
    // What the kernel buffers, not the 256 MiB the server would send.
    assert!(server.sent() < 64 << 20, "{}", server.sent());
}

#[test]
fn a_redirect_to_another_scheme_is_an_error_not_a_crash() {
    let server = Server::start(|r, _| match r.path.as_str() {
        "/file.yaml" => Reply::Redirect("file:///etc/passwd".into()),
        "/data.yaml" => Reply::Redirect("data:text/plain,kind:%20x".into()),
        "/unix.yaml" => Reply::Redirect("unix:/run/docker.sock".into()),
        _ => not_found(),
    });
    for (name, scheme) in [("file", "file"), ("data", "data"), ("unix", "unix")] {
        let dir = tree(
            &format!("scheme-{name}"),
            &server.url(&format!("/{name}.yaml")),
            "",
        );
        let (out, _) = krusty_build(&dir, &[], &[]);
        let stderr = failed(&out);
        assert!(
            stderr.contains(&format!("unsupported protocol scheme \"{scheme}\"")),
            "{stderr}"
        );
    }
}

#[test]
fn redirects_are_counted() {
    let server = Server::start(|_, _| Reply::Redirect("/again.yaml".into()));
    let dir = tree("redirect-loop", &server.url("/loop.yaml"), "");
    let (out, _) = krusty_build(&dir, &[], &[]);
    let stderr = failed(&out);
    assert!(stderr.contains("stopped after 10 redirects"), "{stderr}");
    assert_eq!(server.seen().len(), 11, "{:?}", server.seen());
}

#[test]
fn https_never_redirects_down_to_http() {
    let plain = Server::start(|_, _| ok(CONFIG_MAP));
    let dir = scratch("network-bounds", "downgrade");
    let tls = make_certificates(&dir.join("tls"));
    let site = dir.join("site");
    std::fs::create_dir_all(&site).unwrap();
    std::fs::write(
        site.join("moved.yaml"),
        format!(
            "HTTP/1.0 302 Found\r\nLocation: {}\r\nContent-Length: 0\r\n\r\n",
            plain.url("/cm.yaml")
        ),
    )
    .unwrap();
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .unwrap()
        .port();
    let mut server = Command::new("openssl")
        .current_dir(&site)
        .args(["s_server", "-quiet", "-HTTP", "-naccept", "4", "-accept"])
        .arg(format!("127.0.0.1:{port}"))
        .arg("-cert")
        .arg(tls.join("server.crt"))
        .arg("-key")
        .arg(tls.join("server.key"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .spawn()
        .expect("openssl s_server");
    support::wait_until(Duration::from_secs(10), Duration::from_millis(50), || {
        TcpStream::connect(("127.0.0.1", port)).is_ok()
    });
    let work = tree(
        "downgrade-tree",
        &format!("https://127.0.0.1:{port}/moved.yaml"),
        "",
    );
    let (out, _) = krusty_build(&work, &[], &[("SSL_CERT_FILE", &tls.join("ca.crt"))]);
    let _ = server.kill();
    let _ = server.wait();
    let stderr = failed(&out);
    assert!(
        stderr.contains("refusing the redirect from https to http"),
        "{stderr}"
    );
    assert!(plain.seen().is_empty(), "{:?}", plain.seen());
}

#[test]
fn credentials_in_file_urls_are_sent_but_never_shown() {
    let expected = format!("Basic {}", base64(format!("user:{TOKEN}").as_bytes()));
    let elsewhere = Server::start(|_, _| ok(CONFIG_MAP));
    let elsewhere_url = elsewhere.url("/cm.yaml");
    let server = Server::start(move |r, _| {
        match r.path.as_str() {
        "/cm.yaml" => ok(CONFIG_MAP),
        "/moved.yaml" => Reply::Redirect("/cm.yaml".into()),
        "/away.yaml" => Reply::Redirect(elsewhere_url.clone()),
        "/catalog.yaml" => ok("apiVersion: config.kubernetes.io/v1alpha1\nkind: Catalog\nmetadata:\n  name: c\nspec:\n  krmFunctions: []\n"),
        _ => not_found(),
    }
    });
    let with_token = |path: &str| format!("http://user:{TOKEN}@127.0.0.1:{}{path}", server.port);
    let origins = "buildMetadata: [originAnnotations]\n";

    // Served: the credentials are sent, the origin shows them redacted;
    // a redirect on the same server keeps them.
    for (name, path) in [("served", "/cm.yaml"), ("moved", "/moved.yaml")] {
        let dir = tree(name, &with_token(path), origins);
        let (out, _) = krusty_build(&dir, &[], &[]);
        let (stdout, stderr) = output_text(&out);
        assert!(out.status.success(), "{stderr}");
        assert!(
            stdout.contains(&format!("path: http://***@127.0.0.1:{}{path}", server.port)),
            "{stdout}"
        );
        assert!(
            !stdout.contains(TOKEN) && !stderr.contains(TOKEN),
            "{stdout}{stderr}"
        );
        assert!(!cache_holds(&dir.join("cache"), TOKEN));
    }
    let seen = server.seen();
    assert!(
        seen.iter()
            .all(|s| s.authorization.as_deref() == Some(expected.as_str())),
        "{seen:?}"
    );

    // A redirect to another server: the credentials stay behind.
    let dir = tree("away", &with_token("/away.yaml"), origins);
    let (out, _) = krusty_build(&dir, &[], &[]);
    assert!(out.status.success(), "{}", output_text(&out).1);
    let seen = elsewhere.seen();
    assert!(
        seen.len() == 1 && seen[0].authorization.is_none(),
        "{seen:?}"
    );

    // Not found: the error names the URL without them.
    let dir = tree("missing", &with_token("/missing.yaml"), "");
    let (out, _) = krusty_build(&dir, &[], &[]);
    let stderr = failed(&out);
    assert!(
        stderr.contains(&format!(
            "http://***@127.0.0.1:{}/missing.yaml",
            server.port
        )) && !stderr.contains(TOKEN),
        "{stderr}"
    );

    // `view catalog` shows the catalog it read without them.
    let out = view_catalog(&dir, &with_token("/catalog.yaml"));
    let (stdout, stderr) = output_text(&out);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stdout.contains("read from: http://***@127.0.0.1:") && !stdout.contains(TOKEN),
        "{stdout}"
    );
}

#[test]
fn credentials_in_git_urls_never_appear_in_output_errors_or_the_cache() {
    let dir = scratch("network-bounds", "git");
    let work = dir.join("work");
    write(&work, "base/kustomization.yaml", "resources:\n- cm.yaml\n");
    write(&work, "base/cm.yaml", CONFIG_MAP);
    run(git_command(&work).args(["init", "-q", "-b", "main"]));
    run(git_command(&work).args(["add", "."]));
    run(git_command(&work).args(["commit", "-q", "-m", "base"]));
    let srv = dir.join("srv");
    std::fs::create_dir_all(&srv).unwrap();
    bare_clone(&work, &srv.join("repo.git"));
    let (_server, port) = serve(&[std::ffi::OsStr::new("0"), srv.as_os_str()]);
    let repo = format!("http://user:{TOKEN}@127.0.0.1:{port}/repo.git");

    let built = tree(
        "git-built",
        &format!("{repo}//base?ref=main"),
        "buildMetadata: [originAnnotations]\n",
    );
    let (out, _) = krusty_build(&built, &[], &[]);
    let (stdout, stderr) = output_text(&out);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stdout.contains(&format!("repo: http://***@127.0.0.1:{port}/repo.git")),
        "{stdout}"
    );
    assert!(
        !stdout.contains(TOKEN) && !stderr.contains(TOKEN),
        "{stdout}{stderr}"
    );
    assert!(!cache_holds(&built.join("cache"), TOKEN));

    let missing = tree("git-missing", &format!("{repo}//base?ref=no-such-ref"), "");
    let (out, _) = krusty_build(&missing, &[], &[]);
    let stderr = failed(&out);
    assert!(
        stderr.contains(&format!("http://***@127.0.0.1:{port}/repo.git"))
            && !stderr.contains(TOKEN),
        "{stderr}"
    );
    assert!(!cache_holds(&missing.join("cache"), TOKEN));
}

/// Whether any name or file under `dir` holds `secret`.
fn cache_holds(dir: &Path, secret: &str) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    entries.flatten().any(|e| {
        let path = e.path();
        e.file_name().to_string_lossy().contains(secret)
            || if path.is_dir() && !path.is_symlink() {
                cache_holds(&path, secret)
            } else {
                std::fs::read(&path).is_ok_and(|b| String::from_utf8_lossy(&b).contains(secret))
            }
    })
}

/// A fake registry's challenge, sending clients to its `/token`.
fn challenge(port: u16) -> Reply {
    Reply::Full(
        format!(
            "HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Bearer realm=\"http://127.0.0.1:{port}/token\",service=\"fake\""
        ),
        b"{\"errors\":[{\"code\":\"UNAUTHORIZED\"}]}".to_vec(),
    )
}

/// `krusty view catalog REFERENCE` with a private cache.
fn view_catalog(dir: &Path, reference: &str) -> Output {
    support::krusty_command()
        .args(["view", "catalog", reference])
        .env("KRUSTY_CACHE_DIR", dir.join("cache"))
        .env("DOCKER_CONFIG", dir.join("docker"))
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .expect("krusty runs")
}

#[test]
fn oci_token_answers_are_bounded_before_they_are_buffered() {
    let server = Server::start(|r, port| match r.path.as_str() {
        p if p.starts_with("/token") => {
            Reply::Endless("HTTP/1.1 200 OK\r\nContent-Type: application/json".into())
        }
        _ => challenge(port),
    });
    let dir = scratch("network-bounds", "oci-token");
    let out = view_catalog(&dir, &format!("oci://127.0.0.1:{}/krm/cat:v1", server.port));
    let (_, stderr) = output_text(&out);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("getting a token") && stderr.contains("larger than 262144 bytes"),
        "{stderr}"
    );
    assert!(server.sent() < 64 << 20, "{}", server.sent());
}

#[test]
fn oci_manifests_are_bounded_before_they_are_buffered() {
    let server = Server::start(|_, _| {
        Reply::Endless(
            "HTTP/1.1 200 OK\r\nContent-Type: application/vnd.oci.image.manifest.v1+json".into(),
        )
    });
    let dir = scratch("network-bounds", "oci-manifest");
    let reference = format!("oci://127.0.0.1:{}/krm/cat:v1", server.port);
    let out = view_catalog(&dir, &reference);
    let (_, stderr) = output_text(&out);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&reference)
            && stderr.contains("reading the manifest")
            && stderr.contains("larger than 4194304 bytes"),
        "{stderr}"
    );
    assert!(server.sent() < 64 << 20, "{}", server.sent());
}

#[test]
fn an_oci_pull_meets_the_fetch_timeout() {
    let server = Server::start(|_, _| Reply::TrickleBody);
    let dir = scratch("network-bounds", "oci-trickle");
    let fetcher = Fetcher::new(FetchOptions {
        cache_dir: Some(dir.join("cache")),
        limits: Limits {
            timeout: Duration::from_secs(2),
            ..Limits::default()
        },
        ..FetchOptions::default()
    });
    let started = Instant::now();
    let err = fetcher
        .oci_layer(
            &format!("oci://127.0.0.1:{}/krm/cat:v1", server.port),
            &[CATALOG_MEDIA_TYPE],
        )
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("reading the manifest") && err.contains("did not end within 2s"),
        "{err}"
    );
    assert!(started.elapsed() < Duration::from_secs(15));
}

#[test]
fn an_oci_blob_redirected_to_another_server_gets_no_credentials() {
    let layer = "kind: Catalog\n";
    let digest = format!("sha256:{}", krusty_fetch::oci::sha256_hex(layer.as_bytes()));
    let store = Server::start(move |_, _| ok(layer));
    let store_url = store.url("/blob");
    let manifest = format!(
        r#"{{"schemaVersion":2,"layers":[{{"mediaType":"{CATALOG_MEDIA_TYPE}","digest":"{digest}","size":{}}}]}}"#,
        layer.len()
    );
    let registry = Server::start(move |r, port| match r.path.as_str() {
        p if p.starts_with("/token") => ok(r#"{"token":"registry-token"}"#),
        _ if r.authorization.as_deref() != Some("Bearer registry-token") => challenge(port),
        p if p.contains("/manifests/") => ok(&manifest),
        p if p.contains("/blobs/") => Reply::Redirect(store_url.clone()),
        _ => not_found(),
    });
    let dir = scratch("network-bounds", "oci-redirect");
    let blob = Fetcher::new(FetchOptions {
        cache_dir: Some(dir.join("cache")),
        ..FetchOptions::default()
    })
    .oci_layer(
        &format!("oci://127.0.0.1:{}/krm/cat:v1", registry.port),
        &[CATALOG_MEDIA_TYPE],
    );
    let blob = blob.expect("pulled");
    assert_eq!(&*blob.bytes, layer.as_bytes());
    // The registry got its token with the blob request; the blob store
    // got nothing.
    assert!(
        registry.seen().iter().any(|s| s.path.contains("/blobs/")
            && s.authorization.as_deref() == Some("Bearer registry-token")),
        "{:?}",
        registry.seen()
    );
    let seen = store.seen();
    assert!(
        seen.len() == 1 && seen[0].authorization.is_none(),
        "{seen:?}"
    );
}
