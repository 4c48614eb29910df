//! Remote git references as Kustomize v5.5.0 reads them: which strings name
//! a git repository (and which are local paths), the URL given to `git`,
//! the folder inside the repository, and the `ref`, `version`, `timeout`
//! and `submodules` query parameters.

use std::time::Duration;

use crate::go;

/// How long each git command may take unless `?timeout=` says otherwise.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(27);

/// Why a string is no remote git reference, in Kustomize's words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GitUrlError {
    /// It is an absolute path (a local folder).
    #[error("uri looks like abs path: {0}")]
    AbsolutePath(String),
    /// It has no scheme and is not scp-like (`user@host:path`).
    #[error("failed to parse scheme")]
    Scheme,
    /// Nothing names the host.
    #[error("failed to parse host segment")]
    Host,
    /// Nothing names the repository on the host.
    #[error("failed to parse repo path segment")]
    RepoPath,
    /// The folder in the repository goes up out of it.
    #[error("url path exits repo: {0}")]
    ExitsRepo(String),
}

/// A remote git reference: `https://host/org/repo//path?ref=v1`,
/// `git@host:org/repo.git/path`, `file:///srv/repo.git//path` and the other
/// spellings Kustomize accepts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitUrl {
    /// The reference as written (cycles are found by comparing these).
    pub raw: String,
    /// Scheme, user and host: `https://github.com/`, `git@github.com:`,
    /// `file://`.
    pub host: String,
    /// The repository on the host: `org/repo`, `/srv/repo.git`.
    pub repo_path: String,
    /// The folder in the repository to build (`""` for its root).
    pub root_path: String,
    /// The branch, tag or commit (`""`: the remote's default branch).
    pub reference: String,
    /// The limit on each git command.
    pub timeout: Duration,
    /// Whether submodules are checked out too.
    pub submodules: bool,
}

impl GitUrl {
    /// Reads `text` as a remote git reference; the error says why it is not
    /// one (a local path is not), in Kustomize's words.
    pub fn parse(text: &str) -> Result<GitUrl, GitUrlError> {
        if text.starts_with('/') {
            return Err(GitUrlError::AbsolutePath(text.to_string()));
        }
        let (rest, query) = text.split_once('?').unwrap_or((text, ""));
        let (reference, timeout, submodules) = parse_query(query);
        let (host, rest) = split_host(rest)?;
        let segments = if host.starts_with(FILE) {
            None
        } else {
            Some(2)
        };
        let (repo_path, root_path) = split_path(&rest, segments)?;
        Ok(GitUrl {
            raw: text.to_string(),
            host,
            repo_path,
            root_path,
            reference,
            timeout,
            submodules,
        })
    }

    /// The URL given to `git fetch` (Kustomize's "clone spec").
    pub fn clone_url(&self) -> String {
        format!("{}{}", self.host, self.repo_path)
    }

    /// The ref to fetch: the one asked for, else `HEAD`.
    pub fn fetch_ref(&self) -> &str {
        if self.reference.is_empty() {
            "HEAD"
        } else {
            &self.reference
        }
    }
}

const FILE: &str = "file://";
const SCHEMES: [&str; 4] = ["ssh://", "https://", "http://", FILE];

/// `ref` (else `version`), `timeout` and `submodules`, with Kustomize's
/// defaults for what is missing or unreadable.
fn parse_query(query: &str) -> (String, Duration, bool) {
    let defaults = (String::new(), DEFAULT_TIMEOUT, true);
    let Some(values) = go::parse_query(query) else {
        return defaults;
    };
    let get = |key: &str| {
        values
            .iter()
            .find(|(k, _)| k == key)
            .map_or("", |(_, v)| v.as_str())
    };
    let reference = match get("ref") {
        "" => get("version"),
        r => r,
    };
    let timeout = match get("timeout") {
        "" => DEFAULT_TIMEOUT,
        t => match go::atoi(t) {
            Some(secs) if secs > 0 => Duration::from_secs(secs as u64),
            _ => go::parse_duration(t).unwrap_or(DEFAULT_TIMEOUT),
        },
    };
    let submodules = match get("submodules") {
        "" => true,
        s => go::parse_bool(s).unwrap_or(true),
    };
    (reference.to_string(), timeout, submodules)
}

/// Splits scheme, user and host from the rest of the reference.
fn split_host(text: &str) -> Result<(String, String), GitUrlError> {
    let text = strip_prefix_ignore_case(text, "git::").unwrap_or(text);
    let (scheme, text) = SCHEMES
        .iter()
        .find_map(|s| strip_prefix_ignore_case(text, s).map(|rest| (*s, rest)))
        .unwrap_or(("", text));
    let (user, text) = split_user(text);
    let github = text.get(..11).is_some_and(|h| {
        h.eq_ignore_ascii_case("github.com/") || h.eq_ignore_ascii_case("github.com:")
    });
    let scp = scheme.is_empty() && (!user.is_empty() || github);
    if scheme.is_empty() && !scp {
        return Err(GitUrlError::Scheme);
    }
    if scheme == FILE {
        // Everything after file:// is the repository's path, a user-like
        // prefix included.
        return Ok((FILE.to_string(), format!("{user}{text}")));
    }
    let (mut host, rest) = match separator(text, scp) {
        Some(i) => (&text[..=i], &text[i + 1..]),
        None => (text, ""),
    };
    let (mut scheme, mut user) = (scheme, user);
    if github {
        (scheme, user, host) = if scheme == "ssh://" || !user.is_empty() {
            ("", user, "github.com:")
        } else {
            ("https://", "", "github.com/")
        };
    }
    if host.is_empty() {
        return Err(GitUrlError::Host);
    }
    Ok((format!("{scheme}{user}{host}"), rest.to_string()))
}

/// A leading `user@` (a letter, then letters, digits and dashes).
fn split_user(text: &str) -> (&str, &str) {
    let bytes = text.as_bytes();
    if !bytes.first().is_some_and(u8::is_ascii_alphabetic) {
        return ("", text);
    }
    let len = bytes
        .iter()
        .take_while(|b| b.is_ascii_alphanumeric() || **b == b'-')
        .count();
    if bytes.get(len) == Some(&b'@') {
        text.split_at(len + 1)
    } else {
        ("", text)
    }
}

/// Where the host ends: the first `/`, or in scp-like syntax a `:` before
/// it.
fn separator(text: &str, scp: bool) -> Option<usize> {
    let slash = text.find('/');
    if scp {
        if let Some(colon) = text.find(':').filter(|c| *c > 0) {
            if slash.is_none_or(|s| colon < s) {
                return Some(colon);
            }
        }
    }
    slash
}

/// Splits the repository from the folder in it: at `_git/name`, at `//`,
/// after `.git`, else after `segments` names (all of them under file://).
fn split_path(text: &str, segments: Option<usize>) -> Result<(String, String), GitUrlError> {
    let (repo, root) = if let Some(i) = text.find("_git/") {
        let after = &text[i + 5..];
        let (name, sub) = after.split_once('/').unwrap_or((after, ""));
        (format!("{}{name}", &text[..i + 5]), sub.to_string())
    } else if let Some(i) = text.find("//") {
        (text[..i].to_string(), text[i + 2..].to_string())
    } else if let Some(i) = text.find(".git") {
        (text[..i + 4].to_string(), text[i + 4..].to_string())
    } else {
        match segments {
            None => (text.to_string(), String::new()),
            Some(n) => {
                let parts: Vec<&str> = text.split('/').collect();
                if parts.len() < n {
                    return Err(GitUrlError::RepoPath);
                }
                (parts[..n].join("/"), parts[n..].join("/"))
            }
        }
    };
    if repo.is_empty() {
        return Err(GitUrlError::RepoPath);
    }
    if exits_repo(&root) {
        return Err(GitUrlError::ExitsRepo(text.to_string()));
    }
    let root = root.strip_prefix('/').unwrap_or(&root).to_string();
    Ok((repo, root))
}

/// Whether a folder path, cleaned, starts by going up.
fn exits_repo(root: &str) -> bool {
    let mut depth: usize = 0;
    for name in root.trim_start_matches('/').split('/') {
        match name {
            "" | "." => {}
            ".." if depth == 0 => return true,
            ".." => depth -= 1,
            _ => depth += 1,
        }
    }
    false
}

fn strip_prefix_ignore_case<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    let head = text.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| &text[prefix.len()..])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (input, clone URL, folder in the repository, ref)
    const CASES: &[(&str, &str, &str, &str)] = &[
        (
            "https://github.com/org/repo//deploy/base?ref=v1.2.0",
            "https://github.com/org/repo",
            "deploy/base",
            "v1.2.0",
        ),
        (
            "github.com/org/repo/deploy?ref=v1",
            "https://github.com/org/repo",
            "deploy",
            "v1",
        ),
        (
            "http://github.com/org/repo.git/dir",
            "https://github.com/org/repo.git",
            "dir",
            "",
        ),
        (
            "git@github.com:org/repo/dir",
            "git@github.com:org/repo",
            "dir",
            "",
        ),
        (
            "git@github.com/org/repo/dir",
            "git@github.com:org/repo",
            "dir",
            "",
        ),
        (
            "ssh://git@github.com/org/repo//a/b?ref=v1",
            "git@github.com:org/repo",
            "a/b",
            "v1",
        ),
        (
            "git::https://host.example/org/repo//x",
            "https://host.example/org/repo",
            "x",
            "",
        ),
        (
            "GIT::HTTPS://host.example/org/repo",
            "https://host.example/org/repo",
            "",
            "",
        ),
        (
            "git@bitbucket.org:company/project.git//path?ref=branch",
            "git@bitbucket.org:company/project.git",
            "path",
            "branch",
        ),
        (
            "git@gitlab.example:infra/k8s/base.git?ref=v0.1.0",
            "git@gitlab.example:infra/k8s/base.git",
            "",
            "v0.1.0",
        ),
        (
            "ssh://git@bitbucket.org/company/project.git//path",
            "ssh://git@bitbucket.org/company/project.git",
            "path",
            "",
        ),
        (
            "https://tfs.example/coll/proj/_git/repo/sub?version=v1",
            "https://tfs.example/coll/proj/_git/repo",
            "sub",
            "v1",
        ),
        (
            "https://codecommit.example/org/repo/dir?ref=b",
            "https://codecommit.example/org/repo",
            "dir",
            "b",
        ),
        (
            "https://example.org/path/to/repo//examples/dev/",
            "https://example.org/path/to/repo",
            "examples/dev/",
            "",
        ),
        (
            "file:///a/b/repo.git//base?ref=main",
            "file:///a/b/repo.git",
            "base",
            "main",
        ),
        ("file:///a/b/repo?ref=main", "file:///a/b/repo", "", "main"),
        (
            "file://git@home/path/repo.git//p",
            "file://git@home/path/repo.git",
            "p",
            "",
        ),
        (
            "https://authority/org/repo/?ref=includes.git/x",
            "https://authority/org/repo",
            "",
            "includes.git/x",
        ),
        (
            "https://h.example/org/repo?ref=a&version=b",
            "https://h.example/org/repo",
            "",
            "a",
        ),
        (
            "https://h.example/org/repo?version=b",
            "https://h.example/org/repo",
            "",
            "b",
        ),
        (
            "http://127.0.0.1:8009/repo.git//base?ref=v1.0.0",
            "http://127.0.0.1:8009/repo.git",
            "base",
            "v1.0.0",
        ),
    ];

    #[test]
    fn remote_forms_split_as_in_kustomize() {
        for (input, clone, root, reference) in CASES {
            let url = GitUrl::parse(input).unwrap_or_else(|e| panic!("{input}: {e}"));
            assert_eq!(
                (
                    url.clone_url().as_str(),
                    url.root_path.as_str(),
                    url.reference.as_str()
                ),
                (*clone, *root, *reference),
                "{input}"
            );
        }
    }

    #[test]
    fn local_paths_and_malformed_urls_are_not_remote() {
        let cases = [
            ("../base", "failed to parse scheme"),
            ("base", "failed to parse scheme"),
            ("/abs/path", "uri looks like abs path: /abs/path"),
            ("git://127.0.0.1/repo.git", "failed to parse scheme"),
            (
                "https://host.example/onlyone",
                "failed to parse repo path segment",
            ),
            ("https://", "failed to parse host segment"),
            (
                "https://h.example/org/repo//../x",
                "url path exits repo: org/repo//../x",
            ),
        ];
        for (input, why) in cases {
            let err = GitUrl::parse(input).err().map(|e| e.to_string());
            assert_eq!(err.as_deref(), Some(why), "{input}");
        }
    }

    #[test]
    fn query_parameters() {
        let url = GitUrl::parse("https://h.example/o/r?timeout=61&submodules=false").unwrap();
        assert_eq!(
            (url.timeout, url.submodules),
            (Duration::from_secs(61), false)
        );
        let url = GitUrl::parse("https://h.example/o/r?timeout=1m30s&submodules=nope").unwrap();
        assert_eq!(
            (url.timeout, url.submodules),
            (Duration::from_secs(90), true)
        );
        let url = GitUrl::parse("https://h.example/o/r?timeout=0").unwrap();
        assert_eq!(url.timeout, DEFAULT_TIMEOUT);
        let url = GitUrl::parse("https://h.example/o/r?ref=a;b").unwrap();
        assert_eq!(url.reference, "");
    }
}
