//! `edit add|set|remove label|annotation`: `commonLabels`,
//! `commonAnnotations`, and `labels` entries without selectors.

use krusty_schema::KustomizeVersion;
use krusty_yaml::{Node, Value};

use crate::error::{EditError, EditResult};
use crate::file::KustomizationFile;

/// Labels or annotations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `commonLabels` (or a `labels` entry).
    Label,
    /// `commonAnnotations`.
    Annotation,
}

impl Kind {
    /// The word Kustomize's messages use.
    pub fn word(self) -> &'static str {
        match self {
            Kind::Label => "label",
            Kind::Annotation => "annotation",
        }
    }

    /// The kustomization field the commands change.
    pub fn field(self) -> &'static str {
        match self {
            Kind::Label => "commonLabels",
            Kind::Annotation => "commonAnnotations",
        }
    }
}

/// How `edit add label|annotation` adds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AddFlags {
    /// `--force`: overwrite a key already there.
    pub force: bool,
    /// `--without-selector`: a new `labels` entry instead of `commonLabels`.
    pub without_selector: bool,
    /// `--include-templates`: that entry also labels pod templates.
    pub include_templates: bool,
    /// The Kustomize release whose words an error is given in.
    pub release: KustomizeVersion,
}

/// Reads `KEY:VALUE` arguments (a missing `:VALUE` is an empty value, a
/// value in double quotes loses them); a later one for a key wins.
pub fn parse_pairs(args: &[String], kind: Kind) -> EditResult<Vec<(String, String)>> {
    let mut out: Vec<(String, String)> = Vec::new();
    for arg in args {
        let (key, value) = match arg.find(':') {
            Some(0) => {
                return Err(EditError::new(format!(
                    "invalid {}: '{arg}' (need k:v pair where v may be quoted)",
                    kind.word()
                )))
            }
            Some(i) => (&arg[..i], trim_quotes(&arg[i + 1..])),
            None => (arg.as_str(), ""),
        };
        match out.iter_mut().find(|(k, _)| k == key) {
            Some(slot) => slot.1 = value.to_string(),
            None => out.push((key.to_string(), value.to_string())),
        }
    }
    Ok(out)
}

fn trim_quotes(s: &str) -> &str {
    match s.strip_prefix('"').and_then(|s| s.strip_suffix('"')) {
        Some(inner) if s.len() >= 2 => inner,
        _ => s,
    }
}

/// Checks `edit add` arguments before the file is read.
pub fn check_add(
    args: &[String],
    kind: Kind,
    flags: AddFlags,
) -> EditResult<Vec<(String, String)>> {
    if args.is_empty() {
        return Err(EditError::new(format!("must specify {}", kind.word())));
    }
    if flags.include_templates && !flags.without_selector {
        return Err(EditError::new(
            "--without-selector flag must be specified for --include-templates to work",
        ));
    }
    parse_pairs(args, kind)
}

/// `edit add label|annotation`: adds the pairs, failing on a key already
/// there unless forced.
pub fn add(
    k: &mut KustomizationFile,
    kind: Kind,
    pairs: &[(String, String)],
    flags: AddFlags,
) -> EditResult<()> {
    if kind == Kind::Label && flags.without_selector {
        add_labels_entry(k, pairs, flags.include_templates);
        return Ok(());
    }
    let mut map = k.get(kind.field()).cloned().unwrap_or_else(Node::map);
    if !flags.force {
        if let Some((key, _)) = pairs.iter().find(|(key, _)| map.get(key).is_some()) {
            // Kustomize v5.8.1 says how to go on.
            let hint = if flags.release >= KustomizeVersion::V5_8_1 {
                ". Use --force to override."
            } else {
                ""
            };
            return Err(EditError::new(format!(
                "{} {key} already in kustomization file{hint}",
                kind.word()
            )));
        }
    }
    put_all(&mut map, pairs);
    k.set(kind.field(), map);
    Ok(())
}

/// A new `labels` entry (`pairs`, `includeTemplates`), after those there.
fn add_labels_entry(k: &mut KustomizationFile, pairs: &[(String, String)], templates: bool) {
    let mut entry = Node::map();
    if templates {
        entry.set("includeTemplates", Node::plain("true"));
    }
    let mut map = Node::map();
    put_all(&mut map, pairs);
    entry.set("pairs", map);
    let mut list = crate::node::items(k.get("labels"));
    list.push(entry);
    k.set("labels", Node::seq_of(list));
}

/// `edit set label|annotation`: adds or overwrites the pairs.
pub fn set(k: &mut KustomizationFile, kind: Kind, pairs: &[(String, String)]) {
    let mut map = k.get(kind.field()).cloned().unwrap_or_else(Node::map);
    put_all(&mut map, pairs);
    k.set(kind.field(), map);
}

/// Checks `edit set annotation` keys (Kubernetes' syntax for annotation
/// keys).
pub fn check_annotation_keys(pairs: &[(String, String)]) -> EditResult<()> {
    if pairs.iter().all(|(key, _)| valid_annotation_key(key)) {
        Ok(())
    } else {
        Err(EditError::new("invalid annotation key: see the syntax and character set rules at https://kubernetes.io/docs/concepts/overview/working-with-objects/annotations/"))
    }
}

/// `[prefix/]name`: a prefix of letters, digits, `-` and `.` starting with
/// a letter and ending with a letter or digit (at most 253 characters), a
/// name of letters, digits, `-`, `_` and `.` starting and ending with a
/// letter or digit (at most 63).
fn valid_annotation_key(key: &str) -> bool {
    let (prefix, name) = match key.split_once('/') {
        Some((p, n)) => (Some(p), n),
        None => (None, key),
    };
    let edges = |s: &str, first: fn(u8) -> bool| {
        let b = s.as_bytes();
        !b.is_empty() && first(b[0]) && b[b.len() - 1].is_ascii_alphanumeric()
    };
    let prefix_ok = prefix.is_none_or(|p| {
        p.len() <= 253
            && edges(p, |c| c.is_ascii_alphabetic())
            && p.bytes()
                .all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'.')
    });
    prefix_ok
        && name.len() <= 63
        && edges(name, |c| c.is_ascii_alphanumeric())
        && name
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
}

/// Reads `edit remove label|annotation`'s one argument: comma-separated
/// keys. Kustomize's messages here say "label" for annotations too.
pub fn parse_keys(args: &[String]) -> EditResult<Vec<String>> {
    let word = Kind::Label.word();
    match args {
        [] => Err(EditError::new(format!("must specify {word}"))),
        [one] => one
            .split(',')
            .map(|key| {
                if key.is_empty() {
                    Err(EditError::new(format!(
                        "invalid {word}: '' (name is empty)"
                    )))
                } else {
                    Ok(key.to_string())
                }
            })
            .collect(),
        _ => Err(EditError::new(format!(
            "{word}s must be comma-separated, with no spaces"
        ))),
    }
}

/// `edit remove label|annotation`: removes the keys; unless `ignore`, each
/// must be there.
pub fn remove(
    k: &mut KustomizationFile,
    kind: Kind,
    keys: &[String],
    ignore: bool,
) -> EditResult<()> {
    let Some(mut map) = k.get(kind.field()).cloned() else {
        if ignore {
            return Ok(());
        }
        return Err(EditError::new(format!(
            "{} is not defined in kustomization file",
            kind.field()
        )));
    };
    for key in keys {
        if map.remove(key).is_none() && !ignore {
            return Err(EditError::new(format!(
                "{} {key} is not defined in kustomization file",
                kind.word()
            )));
        }
    }
    k.set_or_remove(kind.field(), map);
    Ok(())
}

/// Sets each pair in a mapping node: a key there gets the new value in
/// place, a new key goes where Kustomize's writer sorts it (see
/// [`crate::node::put_sorted`]), whatever the order of the arguments.
fn put_all(map: &mut Node, pairs: &[(String, String)]) {
    if !matches!(map.value, Value::Map(_)) {
        *map = Node::map();
    }
    for (key, value) in pairs {
        match map.get_mut(key) {
            Some(slot) => *slot = crate::node::replacing(Some(slot), value),
            None => crate::node::put_sorted(
                map,
                Node::string(key.as_str()),
                Node::string(value.as_str()),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn pairs_read_as_kustomize_reads_them() {
        let pairs =
            parse_pairs(&strings(&["a:1", "b", "c:\"x:y\"", "a:2"]), Kind::Label).expect("valid");
        assert_eq!(
            pairs,
            [("a", "2"), ("b", ""), ("c", "x:y")].map(|(k, v)| (k.to_string(), v.to_string()))
        );
        assert_eq!(
            parse_pairs(&strings(&[":v"]), Kind::Annotation)
                .unwrap_err()
                .0,
            "invalid annotation: ':v' (need k:v pair where v may be quoted)"
        );
    }

    #[test]
    fn annotation_keys() {
        for ok in ["a", "a.b/c-d_e", "example.com/x", "A1"] {
            assert!(valid_annotation_key(ok), "{ok}");
        }
        for bad in ["", "-a", "a-", "1x.com/y", "a/b/c", "a/"] {
            assert!(!valid_annotation_key(bad), "{bad}");
        }
    }
}
