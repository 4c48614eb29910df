//! The values file given to `helm template`: the chart's values file as
//! it is, or, with `valuesInline`, the inline values merged with it (or
//! alone) per `valuesMerge`, written as Kustomize writes them.
//!
//! Kustomize reads the values file for a merge with YAML 1.2 typing (its
//! kyaml parser) but hands it to helm untouched otherwise (helm reads
//! YAML 1.1, where `yes` is true): a chart's `enabled: yes` is a boolean
//! unless inline values are merged with it, when it becomes the string
//! `"yes"`. Inline values are typed as the kustomization is (YAML 1.1).

use krusty_ops::patch::smp;
use krusty_ops::schema::Schema;
use krusty_ops::typed;
use krusty_yaml::{Node, Value};

use crate::error::{BuildError, BuildResult};

/// How `valuesInline` combines with the values file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Merge {
    /// Inline values win over the file's (the default).
    Override,
    /// The file's values win; inline values only add.
    Merge,
    /// The inline values alone.
    Replace,
}

impl Merge {
    /// The mode named `text` (`""` is the default); `None` for an unknown
    /// name.
    pub fn parse(text: &str) -> Option<Merge> {
        match text {
            "" | "override" => Some(Merge::Override),
            "merge" => Some(Merge::Merge),
            "replace" => Some(Merge::Replace),
            _ => None,
        }
    }
}

/// The text of the values file for inline values `inline` and the values
/// file's text `file` (read only for `Override` and `Merge`).
pub fn merged(
    inline: &Node,
    mode: Merge,
    file: impl FnOnce() -> BuildResult<String>,
) -> BuildResult<String> {
    let mut inline = inline.clone();
    stringify_keys(&mut inline);
    let values = match mode {
        Merge::Replace => inline,
        Merge::Override | Merge::Merge => {
            let text = file()?;
            let chart = parse_values(&text)?;
            let (target, patch) = match mode {
                Merge::Override => (chart, inline),
                _ => (inline, chart),
            };
            smp::merge(target, patch, Schema::kubernetes())
                .map_err(|e| BuildError::new(format!("could not merge values: {e}")))?
                .unwrap_or_else(Node::map)
        }
    };
    // The merge writes keys plainly: those that were strings stay strings.
    let mut values = values;
    stringify_keys(&mut values);
    krusty_yaml::to_kustomize_yaml(&values)
        .map_err(|e| BuildError::new(format!("could not write merged values: {e}")))
}

/// Makes every mapping key of `node` a string, as Kustomize's reading of
/// the kustomization (through JSON) does: a key `n` (false in YAML 1.1)
/// becomes `"false"`, a key `1` becomes `"1"`.
fn stringify_keys(node: &mut Node) {
    match &mut node.value {
        Value::Map(entries) => {
            for (key, value) in entries.iter_mut() {
                if typed::json_type(key) != "string" {
                    *key = Node::string(typed::lenient_string(key));
                }
                stringify_keys(value);
            }
        }
        Value::Seq(items) => items.iter_mut().for_each(stringify_keys),
        Value::Scalar(_) => {}
    }
}

/// The values file's document (an empty mapping for an empty file).
fn parse_values(text: &str) -> BuildResult<Node> {
    let docs = krusty_yaml::parse_stream(text).map_err(|e| {
        BuildError::new(format!(
            "could not parse values file into rnode: {}",
            e.message
        ))
    })?;
    let root = docs
        .into_iter()
        .find_map(|d| d.root)
        .unwrap_or_else(Node::map);
    if root.as_map().is_none() && !root.is_null() {
        return Err(BuildError::new(
            "could not parse merged values into map: the values file is not a mapping",
        ));
    }
    Ok(if root.is_null() { Node::map() } else { root })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `text`'s root as a kustomization holds it (go-yaml v2 types).
    fn node(text: &str) -> Node {
        let mut docs = krusty_yaml::parse_stream(text).expect("YAML");
        let mut root = docs.remove(0).root.expect("a document");
        krusty_yaml::retype_as_go_yaml_v2(&mut root);
        root
    }

    const CHART: &str = "a: 1\nm: {k: v, n: 1}\nl: [1, 2]\nenabled: yes\n";

    /// Inline keys and values are YAML 1.1 (`n` is false, `y` true), the
    /// file's YAML 1.2, as in Kustomize.
    #[test]
    fn override_lets_inline_values_win() {
        let inline = node("m: {n: 2, x: [y]}\nl: [3]\nenabled: on\n");
        let out = merged(&inline, Merge::Override, || Ok(CHART.into())).unwrap();
        assert_eq!(
            out,
            "a: 1\nenabled: true\nl:\n- 3\nm:\n  \"false\": 2\n  k: v\n  \"n\": 1\n  x:\n  - true\n"
        );
    }

    #[test]
    fn merge_lets_the_file_win_and_reads_it_as_yaml_1_2() {
        let inline = node("a: 5\nb: 6\n");
        let out = merged(&inline, Merge::Merge, || Ok(CHART.into())).unwrap();
        assert_eq!(
            out,
            "a: 1\nb: 6\nenabled: \"yes\"\nl:\n- 1\n- 2\nm:\n  k: v\n  \"n\": 1\n"
        );
    }

    #[test]
    fn replace_ignores_the_file() {
        let inline = node("b: 6\n");
        let out = merged(&inline, Merge::Replace, || Err(BuildError::new("not read"))).unwrap();
        assert_eq!(out, "b: 6\n");
    }

    #[test]
    fn modes_have_kustomize_names() {
        assert_eq!(Merge::parse(""), Some(Merge::Override));
        assert_eq!(Merge::parse("merge"), Some(Merge::Merge));
        assert_eq!(Merge::parse("replace"), Some(Merge::Replace));
        assert_eq!(Merge::parse("Merge"), None);
    }
}
