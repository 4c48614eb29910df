//! Where a catalog is, in the one form `--trusted-catalog` is compared
//! in: a local file by its canonical path, an HTTP(S) URL, a file of a
//! git repository and an OCI artifact each normalised, so that two ways
//! of writing one place compare equal and nothing else does.
//! `docs/catalog.md` ("Trust") states the rules.

use std::fmt::Write;
use std::path::PathBuf;

use krusty_fetch::{GitUrl, OciReference};

/// The file a git reference naming a folder means.
const FOLDER_FILE: &str = "catalog.yaml";

/// Where a catalog is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// A file on this machine, its path canonical (symlinks resolved).
    File(PathBuf),
    /// A file served over HTTP(S), by its normalised URL.
    Url(String),
    /// A file (or a folder, meaning its `catalog.yaml`) of a git repository.
    Git {
        /// The repository's normalised URL.
        repo: String,
        /// The path in the repository, without `.` or empty segments.
        path: String,
        /// The ref asked for (`""`: the default branch).
        reference: String,
    },
    /// An OCI artifact: `registry/repository@sha256:HEX` when a digest is
    /// given (the tag is then ignored), else `registry/repository:tag`.
    Oci(String),
}

impl Location {
    /// The git location `url` names (`None`: the path leaves the
    /// repository).
    pub fn git(url: &GitUrl) -> Option<Location> {
        Some(Location::Git {
            repo: normal_repo(&url.clone_url()),
            path: clean_path(&url.root_path)?,
            reference: url.reference.clone(),
        })
    }

    /// The file `path` of the repository `repo` at `reference`.
    pub fn git_file(repo: &str, path: &str, reference: &str) -> Option<Location> {
        Some(Location::Git {
            repo: normal_repo(repo),
            path: clean_path(path)?,
            reference: reference.to_string(),
        })
    }

    /// The OCI location of `oci://…` (`None`: not a valid reference).
    pub fn oci(text: &str) -> Option<Location> {
        let r = OciReference::parse(text).ok()?;
        let registry = normal_authority(&r.registry, if r.plain_http() { 80 } else { 443 });
        Some(Location::Oci(match (&r.digest, &r.tag) {
            (Some(digest), _) => format!("{registry}/{}@{digest}", r.repository),
            (None, tag) => format!(
                "{registry}/{}:{}",
                r.repository,
                tag.as_deref().unwrap_or("latest")
            ),
        }))
    }

    /// The HTTP(S) location of `url` (`None`: not an http(s) URL).
    pub fn url(url: &str) -> Option<Location> {
        normal_url(url).map(Location::Url)
    }

    /// Whether trusting `self` trusts the catalog at `at`: the same place,
    /// or, for git, `self` a folder and `at` its `catalog.yaml`.
    pub fn covers(&self, at: &Location) -> bool {
        match (self, at) {
            (
                Location::Git {
                    repo,
                    path,
                    reference,
                },
                Location::Git {
                    repo: r,
                    path: p,
                    reference: f,
                },
            ) => repo == r && reference == f && (path == p || join(path, FOLDER_FILE) == *p),
            _ => self == at,
        }
    }

    /// A `--trusted-catalog` value naming this place (a file by its path;
    /// the caller makes it relative when it can).
    pub fn flag_value(&self) -> String {
        match self {
            Location::File(path) => path.display().to_string(),
            Location::Url(url) => url.clone(),
            Location::Git {
                repo,
                path,
                reference,
            } => {
                let mut out = format!("{repo}//{path}");
                if !reference.is_empty() {
                    let _ = write!(out, "?ref={reference}");
                }
                out
            }
            Location::Oci(name) => format!("oci://{name}"),
        }
    }
}

/// Whether `url` is a plain `http://` URL (scheme in any case) whose host
/// is not loopback (`127.0.0.0/8`, `::1`, `localhost`): what a catalog
/// is never read over. The host is what follows the last `@` of the
/// authority, which ends at the first `/`, `\`, `?` or `#`; anything but
/// a loopback address or `localhost` exactly is not loopback.
pub fn plain_http_off_loopback(url: &str) -> bool {
    let Some((scheme, rest)) = url.split_once("://") else {
        return false;
    };
    if !scheme.eq_ignore_ascii_case("http") {
        return false;
    }
    let authority = rest.split(['/', '\\', '?', '#']).next().unwrap_or_default();
    let host_port = authority.rsplit('@').next().unwrap_or_default();
    let host = match host_port.strip_prefix('[') {
        Some(v6) => v6
            .strip_suffix(']')
            .or_else(|| v6.rsplit_once("]:").map(|(h, _)| h)),
        None => Some(host_port.rsplit_once(':').map_or(host_port, |(h, _)| h)),
    };
    let loopback = host.is_some_and(|h| {
        h.eq_ignore_ascii_case("localhost")
            || h.parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.is_loopback())
    });
    !loopback
}

/// `path` joined to `name` (`name` alone for the root).
fn join(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_string()
    } else {
        format!("{path}/{name}")
    }
}

/// A path in a repository without empty or `.` segments; `None` when a
/// `..` leaves the repository.
fn clean_path(path: &str) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            _ => parts.push(part),
        }
    }
    Some(parts.join("/"))
}

/// The port a URL scheme implies.
fn default_port(scheme: &str) -> Option<u16> {
    match scheme {
        "http" => Some(80),
        "https" => Some(443),
        "ssh" => Some(22),
        _ => None,
    }
}

/// An HTTP(S) URL normalised: scheme and host in lower case, the default
/// port dropped, dot segments removed, percent-escapes of unreserved
/// characters decoded and the others' hex digits in upper case, trailing
/// slashes of the path dropped, the fragment dropped. `None` when `url`
/// is not an `http://` or `https://` URL.
pub fn normal_url(url: &str) -> Option<String> {
    let (scheme, rest) = url.split_once("://")?;
    let scheme = scheme.to_ascii_lowercase();
    if scheme != "http" && scheme != "https" {
        return None;
    }
    let rest = rest.split('#').next().unwrap_or_default();
    let (before_query, query) = match rest.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (rest, None),
    };
    // As URL parsers read http(s) URLs: a backslash before the query is a
    // slash.
    let before_query = before_query.replace('\\', "/");
    let (authority, path) = match before_query.find('/') {
        Some(i) => before_query.split_at(i),
        None => (before_query.as_str(), ""),
    };
    if authority.is_empty() {
        return None;
    }
    let port = default_port(&scheme).unwrap_or_default();
    let mut out = format!("{scheme}://{}", normal_authority(authority, port));
    out.push_str(remove_dots(&percent(path)).trim_end_matches('/'));
    if let Some(q) = query {
        out.push('?');
        out.push_str(&percent(q));
    }
    Some(out)
}

/// A repository URL (a git reference's clone URL) normalised: for
/// `scheme://` forms as [`normal_url`] (`ssh://` too, port 22) without
/// the query; scp-like `user@host:path` with the host in lower case;
/// trailing slashes dropped. Other spellings of one repository (scp-like
/// against `ssh://`, with and without `.git`) stay different.
pub fn normal_repo(repo: &str) -> String {
    let repo = repo.trim_end_matches('/');
    if let Some(path) = repo.strip_prefix("file://") {
        return format!("file://{path}");
    }
    if let Some((scheme, rest)) = repo.split_once("://") {
        let scheme = scheme.to_ascii_lowercase();
        let (authority, path) = match rest.find('/') {
            Some(i) => rest.split_at(i),
            None => (rest, ""),
        };
        let port = default_port(&scheme).unwrap_or_default();
        return format!(
            "{scheme}://{}{}",
            normal_authority(authority, port),
            remove_dots(&percent(path)).trim_end_matches('/')
        );
    }
    // scp-like: [user@]host:path
    match repo.split_once(':') {
        Some((user_host, path)) => {
            let (user, host) = match user_host.rsplit_once('@') {
                Some((u, h)) => (format!("{u}@"), h),
                None => (String::new(), user_host),
            };
            format!("{user}{}:{path}", host.to_ascii_lowercase())
        }
        None => repo.to_string(),
    }
}

/// `[userinfo@]host[:port]` with the host in lower case and the port
/// dropped when it is `default` (or empty); the user part as written.
fn normal_authority(authority: &str, default: u16) -> String {
    let (user, host_port) = match authority.rsplit_once('@') {
        Some((u, h)) => (format!("{u}@"), h),
        None => (String::new(), authority),
    };
    let (host, port) = match host_port.strip_prefix('[') {
        Some(v6) => match v6.split_once(']') {
            Some((h, after)) => (format!("[{h}]"), after.strip_prefix(':')),
            None => (host_port.to_string(), None),
        },
        None => match host_port.rsplit_once(':') {
            Some((h, p)) => (h.to_string(), Some(p)),
            None => (host_port.to_string(), None),
        },
    };
    let mut out = user;
    out.push_str(&host.to_ascii_lowercase());
    match port {
        None | Some("") => {}
        Some(p) => match p.parse::<u16>() {
            Ok(n) if n == default => {}
            Ok(n) => {
                let _ = write!(out, ":{n}");
            }
            Err(_) => {
                out.push(':');
                out.push_str(p);
            }
        },
    }
    out
}

/// Percent-escapes of unreserved characters decoded, the others' hex
/// digits in upper case (RFC 3986, 6.2.2).
fn percent(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes.get(i + 1..i + 3).filter(|_| bytes[i] == b'%');
        match hex.and_then(|h| std::str::from_utf8(h).ok()) {
            Some(h) if h.bytes().all(|b| b.is_ascii_hexdigit()) => {
                let value = u8::from_str_radix(h, 16).unwrap_or_default();
                if value.is_ascii_alphanumeric() || b"-._~".contains(&value) {
                    out.push(value as char);
                } else {
                    out.push('%');
                    out.push_str(&h.to_ascii_uppercase());
                }
                i += 3;
            }
            _ => {
                let len = utf8_len(bytes[i]);
                out.push_str(&text[i..i + len]);
                i += len;
            }
        }
    }
    out
}

/// The length of the UTF-8 sequence starting with `first`.
fn utf8_len(first: u8) -> usize {
    match first {
        0xF0..=0xFF => 4,
        0xE0..=0xEF => 3,
        0xC0..=0xDF => 2,
        _ => 1,
    }
}

/// A URL path with its `.` and `..` segments removed (RFC 3986, 5.2.4);
/// empty segments (`//`, which git references use) are kept.
fn remove_dots(path: &str) -> String {
    if path.is_empty() {
        return String::new();
    }
    let mut out: Vec<&str> = Vec::new();
    let segments: Vec<&str> = path.split('/').skip(1).collect();
    for (i, segment) in segments.iter().enumerate() {
        let last = i + 1 == segments.len();
        match *segment {
            "." => {
                if last {
                    out.push("");
                }
            }
            ".." => {
                out.pop();
                if last {
                    out.push("");
                }
            }
            s => out.push(s),
        }
    }
    format!("/{}", out.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_compare_in_normal_form() {
        let same = [
            "https://example.co/k/catalog.yaml",
            "HTTPS://Example.CO/k/catalog.yaml",
            "https://example.co:443/k/catalog.yaml",
            "https://example.co/k/catalog.yaml/",
            "https://example.co/k/./x/../catalog.yaml",
            "https://example.co/%6B/catalog.yaml#part",
        ];
        for url in same {
            assert_eq!(
                normal_url(url).as_deref(),
                Some("https://example.co/k/catalog.yaml"),
                "{url}"
            );
        }
        let different = [
            "http://example.co/k/catalog.yaml",
            "https://example.co:8443/k/catalog.yaml",
            "https://example.co/K/catalog.yaml",
            "https://other.example.co/k/catalog.yaml",
            "https://example.co/k/catalog.yaml?ref=v1",
            "https://user@example.co/k/catalog.yaml",
        ];
        for url in different {
            assert_ne!(
                normal_url(url).as_deref(),
                Some("https://example.co/k/catalog.yaml"),
                "{url}"
            );
        }
        assert_eq!(
            normal_url("http://LOCALHOST:80").as_deref(),
            Some("http://localhost")
        );
        assert_eq!(
            normal_url("http://[::1]:8080/a%2fb").as_deref(),
            Some("http://[::1]:8080/a%2Fb")
        );
        assert_eq!(
            normal_url("https://h/org/repo.git//c.yaml?ref=v1").as_deref(),
            Some("https://h/org/repo.git//c.yaml?ref=v1"),
            "a git reference's // is kept"
        );
        assert_eq!(normal_url("oci://h/r"), None);
        assert_eq!(normal_url("https://"), None);
    }

    #[test]
    fn plain_http_is_refused_off_loopback() {
        for url in [
            "http://127.0.0.1:8080/c.yaml",
            "HTTP://127.9.0.1/c.yaml",
            "http://localhost/c.yaml",
            "http://LocalHost:80/c.yaml",
            "http://[::1]:5000/c.yaml",
            "http://[::1]/c.yaml",
            "http://evil.example@127.0.0.1/c.yaml",
            "https://example.co/c.yaml",
            "oci://example.co/c:v1",
        ] {
            assert!(!plain_http_off_loopback(url), "{url}");
        }
        for url in [
            "http://example.co/c.yaml",
            "http://10.0.0.1/c.yaml",
            "http://127.0.0.1@example.co/c.yaml",
            "http://example.co\\@127.0.0.1/c.yaml",
            "http://localhost.example.co/c.yaml",
            "http://127.0.0.1.example.co/c.yaml",
            "http://[::2]/c.yaml",
            "http://0x7f000001/c.yaml",
            "http:///c.yaml",
        ] {
            assert!(plain_http_off_loopback(url), "{url}");
        }
    }

    #[test]
    fn git_locations_name_a_file_or_a_folder_at_a_ref() {
        let parse = |text: &str| Location::git(&GitUrl::parse(text).unwrap()).unwrap();
        let file = parse("https://Host.example:443/org/repo//team/catalog.yaml?ref=v1");
        assert_eq!(
            file,
            Location::Git {
                repo: "https://host.example/org/repo".into(),
                path: "team/catalog.yaml".into(),
                reference: "v1".into()
            }
        );
        assert!(parse("https://host.example/org/repo//team?ref=v1").covers(&file));
        assert!(parse("https://host.example/org/repo//./team/?version=v1").covers(&file));
        assert!(!parse("https://host.example/org/repo//team?ref=v2").covers(&file));
        assert!(!parse("https://host.example/org/repo//other?ref=v1").covers(&file));
        assert!(!parse("https://host.example/org/fork//team?ref=v1").covers(&file));
        assert!(!file.covers(&parse("https://host.example/org/repo//team?ref=v1")));
        assert_eq!(
            file.flag_value(),
            "https://host.example/org/repo//team/catalog.yaml?ref=v1"
        );
        let scp = parse("git@Host.example:org/repo//c.yaml");
        assert_eq!(scp.flag_value(), "git@host.example:org/repo//c.yaml");
        assert_ne!(scp, parse("ssh://git@host.example/org/repo//c.yaml"));
        assert_eq!(
            parse("ssh://git@Host.example:22/org/repo//c.yaml"),
            parse("ssh://git@host.example/org/repo//c.yaml")
        );
        assert_eq!(Location::git_file("https://h/r", "../x", ""), None);
    }

    #[test]
    fn oci_locations_are_by_digest_when_one_is_given() {
        let digest = format!("sha256:{}", "a".repeat(64));
        let by_digest = Location::oci(&format!("oci://Reg.example/krm/c@{digest}")).unwrap();
        assert_eq!(
            by_digest,
            Location::Oci(format!("reg.example/krm/c@{digest}"))
        );
        assert_eq!(
            Location::oci(&format!("oci://reg.example:443/krm/c:v1@{digest}")),
            Some(by_digest.clone()),
            "with a digest, the tag is ignored"
        );
        let tagged = Location::oci("oci://reg.example/krm/c:v1").unwrap();
        assert_ne!(tagged, by_digest, "a tag is not the digest it names now");
        assert_eq!(
            Location::oci("oci://reg.example/krm/c"),
            Location::oci("oci://reg.example/krm/c:latest")
        );
        assert_eq!(
            Location::oci("oci://127.0.0.1:80/krm/c:v1"),
            Location::oci("oci://127.0.0.1/krm/c:v1")
        );
        assert_ne!(
            Location::oci("oci://127.0.0.1:5000/krm/c:v1"),
            Location::oci("oci://127.0.0.1/krm/c:v1")
        );
        assert_eq!(Location::oci("oci://reg.example"), None);
    }
}
