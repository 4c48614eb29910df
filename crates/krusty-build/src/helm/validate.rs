//! The checks a chart's fields pass before any of them reaches helm, in
//! the rules helm and Kubernetes apply to them: release names and
//! namespaces as DNS names, versions as semantic versions or version
//! constraints, repositories as URLs helm can pull from, chart names as
//! one folder name (or several, `/`-separated), and name templates
//! without the functions that read the environment or the network.
//! Together with the `--flag=value` and `--` forms of [`super::args`], no
//! value can be read by helm as an option.

use crate::error::{BuildError, BuildResult};

use krusty_schema::helm::ChartConfig;

/// The longest release name helm accepts.
const MAX_RELEASE_NAME: usize = 53;

/// The longest namespace (a DNS-1123 label).
const MAX_NAMESPACE: usize = 63;

/// The functions of helm's name templates that read krusty's environment
/// or the network (sprig's `env`, `expandenv` and `getHostByName`; helm
/// leaves them out of chart templates, not of `--name-template`).
const UNSAFE_TEMPLATE_FUNCTIONS: [&str; 3] = ["env", "expandenv", "getHostByName"];

/// Checks every field of `chart` that becomes a helm argument.
pub fn chart(chart: &ChartConfig) -> BuildResult<()> {
    chart_name(&chart.name)?;
    if !chart.release_name.is_empty() {
        release_name(&chart.release_name)?;
    }
    if !chart.namespace.is_empty() {
        namespace(&chart.namespace)?;
    }
    if !chart.version.is_empty() && !is_version_constraint(&chart.version) {
        return Err(invalid(
            "version",
            &chart.version,
            "not a semantic version or version constraint (such as 1.2.3, ~1.2 or >=1.0.0 <2.0.0)",
        ));
    }
    if !chart.repo.is_empty() {
        repo(&chart.repo)?;
    }
    if let Some(kube) = chart.kube_version.as_deref() {
        if !is_version(kube, false) {
            return Err(invalid(
                "kubeVersion",
                kube,
                "not a Kubernetes version (such as 1.31 or v1.31.2)",
            ));
        }
    }
    name_template(&chart.name_template)
}

/// The error for `field`'s `value`.
fn invalid(field: &str, value: &str, why: &str) -> BuildError {
    BuildError::new(format!("{field} {value:?}: {why}"))
}

/// A chart name: the folder of the chart under the chart home, one or
/// more `/`-separated names of letters, digits, `.`, `_` and `-`, each
/// starting with a letter, digit or `_`.
fn chart_name(name: &str) -> BuildResult<()> {
    let segment_ok = |s: &str| {
        s.bytes()
            .next()
            .is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_')
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
    };
    if name.split('/').all(segment_ok) {
        return Ok(());
    }
    Err(invalid(
        "name",
        name,
        "a chart name is letters, digits, '.', '_' and '-', starting with a letter, digit or '_' (folders separated by '/')",
    ))
}

/// A release name as helm checks it: a DNS-1123 subdomain of at most 53
/// characters.
fn release_name(name: &str) -> BuildResult<()> {
    if name.len() <= MAX_RELEASE_NAME && name.split('.').all(is_dns_label) {
        return Ok(());
    }
    Err(invalid(
        "releaseName",
        name,
        "invalid release name, must match regex ^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$ and the length must not be longer than 53",
    ))
}

/// A namespace as Kubernetes checks it: a DNS-1123 label.
fn namespace(name: &str) -> BuildResult<()> {
    if name.len() <= MAX_NAMESPACE && is_dns_label(name) {
        return Ok(());
    }
    Err(invalid(
        "namespace",
        name,
        "a namespace must be a lowercase RFC 1123 label: at most 63 lowercase letters, digits and '-', starting and ending with a letter or digit",
    ))
}

/// `[a-z0-9]([-a-z0-9]*[a-z0-9])?`.
fn is_dns_label(s: &str) -> bool {
    let alnum = |b: &u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    let bytes = s.as_bytes();
    bytes.first().is_some_and(alnum)
        && bytes.last().is_some_and(alnum)
        && bytes.iter().all(|b| alnum(b) || *b == b'-')
}

/// A repository helm can pull from: an `http://`, `https://` or `oci://`
/// URL with a host (helm has no other protocol, and no local one).
fn repo(repo: &str) -> BuildResult<()> {
    let scheme_ok = repo
        .split_once("://")
        .filter(|(scheme, _)| matches!(*scheme, "http" | "https" | "oci"))
        .and_then(|(_, rest)| rest.split('/').next())
        .is_some_and(|host| !host.is_empty());
    let printable = repo.bytes().all(|b| b.is_ascii_graphic());
    if scheme_ok && printable {
        return Ok(());
    }
    Err(invalid(
        "repo",
        &krusty_fetch::redact(repo),
        "a chart repository is an http://, https:// or oci:// URL with a host (helm pulls from nothing else)",
    ))
}

/// A name template without the functions that read the environment or
/// the network ([`UNSAFE_TEMPLATE_FUNCTIONS`]).
fn name_template(template: &str) -> BuildResult<()> {
    match template_functions(template)
        .into_iter()
        .find(|f| UNSAFE_TEMPLATE_FUNCTIONS.contains(f))
    {
        Some(f) => Err(invalid(
            "nameTemplate",
            template,
            &format!(
                "calls {f}; a name template may not read krusty's environment or the network ({})",
                UNSAFE_TEMPLATE_FUNCTIONS.join(", ")
            ),
        )),
        None => Ok(()),
    }
}

/// The identifiers a Go template's actions name as functions: words in
/// `{{ … }}` outside string, raw string and character literals and
/// comments, not preceded by `.` or `$` (fields and variables).
fn template_functions(template: &str) -> Vec<&str> {
    let mut found = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find("{{") {
        let action = &rest[open + 2..];
        let Some(end) = action_end(action) else {
            // An action never closed: helm fails on it; read the rest.
            collect_identifiers(action, &mut found);
            break;
        };
        collect_identifiers(&action[..end], &mut found);
        rest = &action[end + 2..];
    }
    found
}

/// Where the action starting `text` ends (its `}}`), skipping literals
/// and comments.
fn action_end(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' | b'\'' | b'`' => i = skip_literal(bytes, i),
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                i = text[i + 2..]
                    .find("*/")
                    .map_or(bytes.len(), |e| i + 2 + e + 2)
            }
            b'}' if bytes.get(i + 1) == Some(&b'}') => return Some(i),
            _ => i += 1,
        }
    }
    None
}

/// The index after the literal that starts at `start`.
fn skip_literal(bytes: &[u8], start: usize) -> usize {
    let quote = bytes[start];
    let mut i = start + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' if quote != b'`' => i += 2,
            b if b == quote => return i + 1,
            _ => i += 1,
        }
    }
    bytes.len()
}

/// Adds the function-like identifiers of one action's text to `found`.
fn collect_identifiers<'a>(action: &'a str, found: &mut Vec<&'a str>) {
    let bytes = action.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if matches!(b, b'"' | b'\'' | b'`') {
            i = skip_literal(bytes, i);
        } else if b == b'/' && bytes.get(i + 1) == Some(&b'*') {
            i = action[i + 2..]
                .find("*/")
                .map_or(bytes.len(), |e| i + 2 + e + 2);
        } else if b.is_ascii_alphabetic() || b == b'_' {
            let start = i;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            let before = start.checked_sub(1).map(|p| bytes[p]);
            if !matches!(before, Some(b'.' | b'$')) {
                found.push(&action[start..i]);
            }
        } else {
            i += 1;
        }
    }
}

/// Whether `text` is a version helm reads (`v?X[.Y[.Z]][-pre][+build]`),
/// with `x`, `X` or `*` for a number when `wildcards`.
fn is_version(text: &str, wildcards: bool) -> bool {
    let text = text.strip_prefix('v').unwrap_or(text);
    let (core, build) = match text.split_once('+') {
        Some((core, build)) => (core, Some(build)),
        None => (text, None),
    };
    let (numbers, pre) = match core.split_once('-') {
        Some((numbers, pre)) => (numbers, Some(pre)),
        None => (core, None),
    };
    let parts: Vec<&str> = numbers.split('.').collect();
    let number_ok = |p: &&str| {
        (!p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
            || (wildcards && matches!(*p, "x" | "X" | "*"))
    };
    let idents_ok = |s: &str| {
        s.split('.')
            .all(|id| !id.is_empty() && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'))
    };
    (1..=3).contains(&parts.len())
        && parts.iter().all(number_ok)
        && pre.is_none_or(idents_ok)
        && build.is_none_or(idents_ok)
}

/// Whether `text` is exactly one version `X.Y.Z[-pre][+build]` (with an
/// optional `v`): the version a chart is pulled at, not a range.
pub fn is_exact_version(text: &str) -> bool {
    let core = text.strip_prefix('v').unwrap_or(text);
    let numbers = core.split(['-', '+']).next().unwrap_or_default();
    numbers.split('.').count() == 3 && is_version(text, false)
}

/// The comparison operators of helm's version constraints.
const OPERATORS: [&str; 11] = ["!=", ">=", "=>", "<=", "=<", "~>", "=", ">", "<", "~", "^"];

/// Whether `text` is a version constraint as helm's `--version` reads
/// it: alternatives separated by `||`, each constraints separated by
/// commas or blanks (`>=1.2 <2`, `~1.2.3`, `^1`, `1.2.x`, `*`) or a range
/// `1.2 - 1.4.5`.
pub fn is_version_constraint(text: &str) -> bool {
    !text.trim().is_empty() && text.split("||").all(is_constraint_group)
}

/// One alternative of a constraint.
fn is_constraint_group(group: &str) -> bool {
    let words: Vec<&str> = group
        .split(|c: char| c == ',' || c.is_ascii_whitespace())
        .filter(|w| !w.is_empty())
        .collect();
    if words.is_empty() {
        return false;
    }
    let mut i = 0;
    while i < words.len() {
        let word = words[i];
        if words.get(i + 1) == Some(&"-") {
            // A range: VERSION - VERSION.
            let Some(upper) = words.get(i + 2) else {
                return false;
            };
            if !is_version(word, true) || !is_version(upper, true) {
                return false;
            }
            i += 3;
            continue;
        }
        let op = OPERATORS.iter().find(|op| word.starts_with(**op));
        let version = match op {
            Some(op) if word.len() == op.len() => {
                // The operator stands alone: its version is the next word.
                i += 1;
                match words.get(i) {
                    Some(v) => *v,
                    None => return false,
                }
            }
            Some(op) => &word[op.len()..],
            None => word,
        };
        if !is_version(version, true) {
            return false;
        }
        i += 1;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn release_names_follow_helm() {
        for ok in ["rel", "a-b.c", "1", &"a".repeat(53)] {
            assert!(release_name(ok).is_ok(), "{ok}");
        }
        for bad in [
            "--post-renderer=/x",
            "-x",
            "Rel",
            "a_b",
            "a.",
            ".a",
            "a..b",
            &"a".repeat(54),
        ] {
            let e = release_name(bad).unwrap_err().to_string();
            assert!(e.starts_with("releaseName \""), "{e}");
        }
    }

    #[test]
    fn namespaces_are_dns_labels() {
        assert!(namespace("apps-1").is_ok());
        for bad in ["--kubeconfig=/x", "a.b", "A", "-a", &"a".repeat(64)] {
            assert!(namespace(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn versions_and_constraints() {
        for ok in [
            "1.2.3",
            "v1.2.3-rc.1+build.5",
            "1.2",
            "~1.2",
            "^1",
            ">=1.0.0 <2.0.0",
            ">= 1.0, < 2",
            "1.2.x",
            "*",
            "1.2 - 1.4.5",
            "1.x || >=2.5.0",
            "~>1.2",
        ] {
            assert!(is_version_constraint(ok), "{ok}");
        }
        for bad in [
            "--devel",
            "-1",
            "",
            "1.2.3.4",
            "1.2/../x",
            "latest",
            ">=",
            "1 -",
            "1.2.3 || ",
        ] {
            assert!(!is_version_constraint(bad), "{bad}");
        }
        assert!(is_exact_version("1.2.3") && is_exact_version("v1.0.0-rc.1+b"));
        assert!(!is_exact_version("1.2") && !is_exact_version("~1.2.3"));
    }

    #[test]
    fn repositories_are_urls_helm_pulls_from() {
        for ok in [
            "https://charts.example",
            "http://127.0.0.1:8080/x",
            "oci://r/c",
        ] {
            assert!(repo(ok).is_ok(), "{ok}");
        }
        for bad in [
            "--repo=x",
            "file:///etc",
            "ftp://h/x",
            "./charts",
            "https://",
            "https:// x",
            "s3://bucket",
        ] {
            assert!(repo(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn chart_names_are_folder_names() {
        for ok in ["kitchen", "kube-prometheus-stack", "team/app", "_x", "a.b"] {
            assert!(chart_name(ok).is_ok(), "{ok}");
        }
        for bad in [
            "--untardir=/x",
            "../x",
            "a/../b",
            ".",
            "..",
            "/abs",
            "a//b",
            "a b",
        ] {
            assert!(chart_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn name_templates_may_not_read_the_environment() {
        for ok in [
            "{{ \"rel\" }}",
            "{{ printf \"env-%s\" \"x\" }}",
            "{{ .Values.env }}",
            "{{ $env := 1 }}x",
            "plain env text",
            "{{/* env */}}x",
        ] {
            assert!(name_template(ok).is_ok(), "{ok}");
        }
        for bad in [
            "{{ env \"HOME\" }}",
            "{{- \"HOME\" | env -}}",
            "{{ (expandenv \"$HOME\") }}",
            "a{{ getHostByName \"x\" }}",
            "{{ \"}}\" }}{{ env \"X\" }}",
        ] {
            let e = name_template(bad).unwrap_err().to_string();
            assert!(e.starts_with("nameTemplate "), "{e}");
        }
    }
}
