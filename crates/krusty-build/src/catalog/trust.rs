//! `--trusted-catalog`: the places whose catalogs' functions may run. A
//! value names a place the user chose (a file by its path from the
//! current directory, a URL, a git reference, an OCI reference), never a
//! name a catalog gives itself, which any tree can copy.

use std::path::{Path, PathBuf};

use krusty_fetch::GitUrl;

use super::location::Location;

/// The places the user trusts, and the directory their paths are
/// relative to.
#[derive(Debug, Default)]
pub struct Trust {
    places: Vec<Location>,
    cwd: PathBuf,
}

impl Trust {
    /// The places `values` name, local paths relative to `cwd` (a
    /// canonical directory). A value that names no place trusts nothing
    /// ([`places`] says why).
    pub fn new(values: &[String], cwd: &Path) -> Trust {
        Trust {
            places: values
                .iter()
                .filter_map(|v| places(v, cwd).ok())
                .flatten()
                .collect(),
            cwd: cwd.to_path_buf(),
        }
    }

    /// Whether the catalog at `at` is trusted.
    pub fn trusts(&self, at: &Location) -> bool {
        self.places.iter().any(|p| p.covers(at))
    }

    /// The `--trusted-catalog` value that trusts `at`, quoted for a shell
    /// where it must be: a file by its path from the current directory
    /// when it is below it, else by its absolute path.
    pub fn suggestion(&self, at: &Location) -> String {
        let value = match at {
            Location::File(path) => match path.strip_prefix(&self.cwd) {
                Ok(rel) if !self.cwd.as_os_str().is_empty() && !rel.as_os_str().is_empty() => {
                    rel.display().to_string()
                }
                _ => path.display().to_string(),
            },
            other => other.flag_value(),
        };
        shell_word(&value)
    }
}

/// What a `--trusted-catalog` value may be, for messages.
const FORMS: &str = "a catalog is trusted by where it is: its file (a path from the current directory), its https:// URL, its git reference or its oci:// reference; a metadata.name trusts nothing, since any tree can copy a name";

/// A `--trusted-catalog` value that names no place, and why.
#[derive(Debug, thiserror::Error)]
#[error("--trusted-catalog '{value}': {why}; {FORMS}")]
pub struct Untrusted {
    /// The value as given.
    pub value: String,
    /// Why it names no place.
    pub why: NoPlace,
}

/// Why a `--trusted-catalog` value names no place.
#[derive(Debug, thiserror::Error)]
pub enum NoPlace {
    /// It is a malformed OCI reference.
    #[error(transparent)]
    Oci(#[from] krusty_fetch::FetchError),
    /// It starts as an HTTP(S) URL but is none.
    #[error("not a URL")]
    NotAUrl,
    /// It is empty.
    #[error("an empty value names nothing")]
    Empty,
    /// No file is there (the directory it is relative to; empty when
    /// that is unknown).
    #[error("no such file (from {})", display_dir(.0))]
    NoFile(PathBuf),
    /// The path cannot be resolved.
    #[error("{}: {source}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// The path names no file (where it leads).
    #[error("{} is not a file (a local catalog is trusted by its file)", .0.display())]
    NotAFile(PathBuf),
}

/// The places the `--trusted-catalog` value `value` names (local paths
/// relative to `cwd`), or why it names none.
pub fn places(value: &str, cwd: &Path) -> Result<Vec<Location>, Untrusted> {
    let refused = |why: NoPlace| Untrusted {
        value: value.to_string(),
        why,
    };
    if krusty_fetch::is_oci_reference(value) {
        return match krusty_fetch::OciReference::parse(value) {
            Ok(_) => Ok(Location::oci(value).into_iter().collect()),
            Err(e) => Err(refused(e.into())),
        };
    }
    let git = GitUrl::parse(value).ok().and_then(|u| Location::git(&u));
    if krusty_fetch::is_http_url(value) {
        let url = Location::url(value).ok_or_else(|| refused(NoPlace::NotAUrl))?;
        return Ok(std::iter::once(url).chain(git).collect());
    }
    let file = local_file(value, cwd);
    match (git, file) {
        (Some(git), Ok(file)) => Ok(vec![git, file]),
        (Some(git), Err(_)) => Ok(vec![git]),
        (None, Ok(file)) => Ok(vec![file]),
        (None, Err(why)) => Err(refused(why)),
    }
}

/// The local catalog file `value` names from `cwd`.
fn local_file(value: &str, cwd: &Path) -> Result<Location, NoPlace> {
    if value.is_empty() {
        return Err(NoPlace::Empty);
    }
    let path = cwd.join(value);
    let canonical = std::fs::canonicalize(&path).map_err(|source| {
        if source.kind() == std::io::ErrorKind::NotFound {
            NoPlace::NoFile(cwd.to_path_buf())
        } else {
            NoPlace::Io { path, source }
        }
    })?;
    if !canonical.is_file() {
        return Err(NoPlace::NotAFile(canonical));
    }
    Ok(Location::File(canonical))
}

/// `dir` for messages (the current directory when it is unknown).
fn display_dir(dir: &Path) -> String {
    if dir.as_os_str().is_empty() {
        "the current directory".into()
    } else {
        dir.display().to_string()
    }
}

/// `value` as one shell word: as it is when it holds only characters no
/// shell treats specially, else in single quotes.
fn shell_word(value: &str) -> String {
    let plain = !value.is_empty()
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-:@%+=,".contains(&b));
    if plain {
        value.to_string()
    } else {
        format!("'{}'", value.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A folder `name` holding `catalog.yaml` and `sub/catalog.yaml`.
    fn tree(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("krusty-trust-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        std::fs::write(dir.join("catalog.yaml"), "").unwrap();
        std::fs::write(dir.join("sub/catalog.yaml"), "").unwrap();
        std::fs::canonicalize(dir).unwrap()
    }

    #[test]
    fn a_path_names_the_file_it_leads_to_from_the_current_directory() {
        let dir = tree("paths");
        let file = |rel: &str| Location::File(dir.join(rel));
        let trust = Trust::new(&["catalog.yaml".into()], &dir);
        assert!(trust.trusts(&file("catalog.yaml")));
        assert!(
            !trust.trusts(&file("sub/catalog.yaml")),
            "the same relative path elsewhere is another file"
        );
        let sub = dir.join("sub");
        let from_sub = Trust::new(&["catalog.yaml".into(), "../catalog.yaml".into()], &sub);
        assert!(from_sub.trusts(&file("sub/catalog.yaml")));
        assert!(from_sub.trusts(&file("catalog.yaml")));
        assert_eq!(
            trust.suggestion(&file("sub/catalog.yaml")),
            "sub/catalog.yaml"
        );
        assert_eq!(
            from_sub.suggestion(&file("catalog.yaml")),
            dir.join("catalog.yaml").display().to_string()
        );
    }

    #[test]
    fn a_name_or_a_missing_file_names_nothing_and_says_so() {
        let dir = tree("names");
        for (value, why) in [
            ("example-co", "no such file"),
            ("sub", "is not a file"),
            ("", "an empty value names nothing"),
            ("oci://reg.example/Upper", "invalid OCI reference"),
        ] {
            let err = places(value, &dir).unwrap_err().to_string();
            assert!(
                err.contains(why) && err.contains("a metadata.name trusts nothing"),
                "{value}: {err}"
            );
        }
        assert!(!Trust::new(&["example-co".into()], &dir)
            .trusts(&Location::File(dir.join("catalog.yaml"))));
    }

    #[test]
    fn urls_and_git_references_name_both_forms() {
        let dir = tree("urls");
        let trust = Trust::new(&["https://Host.example/org/repo//team?ref=v1".into()], &dir);
        assert!(
            trust.trusts(&Location::url("https://host.example:443/org/repo//team?ref=v1").unwrap())
        );
        assert!(trust.trusts(
            &Location::git_file("https://host.example/org/repo", "team/catalog.yaml", "v1")
                .unwrap()
        ));
        assert!(!trust.trusts(
            &Location::git_file("https://host.example/org/repo", "team/catalog.yaml", "").unwrap()
        ));
        assert_eq!(
            trust.suggestion(&Location::git_file("https://h/r", "c.yaml", "v1").unwrap()),
            "'https://h/r//c.yaml?ref=v1'"
        );
    }

    #[test]
    fn shell_words() {
        assert_eq!(shell_word("catalog.yaml"), "catalog.yaml");
        assert_eq!(shell_word("a b"), "'a b'");
        assert_eq!(shell_word("it's"), r"'it'\''s'");
        assert_eq!(shell_word("$(x)"), "'$(x)'");
    }
}
