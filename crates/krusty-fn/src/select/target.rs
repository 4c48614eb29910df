//! [`Selector`], the fields of a Kustomize patch `target`, and
//! [`CompiledSelector`], the [`Matcher`] it compiles into.

use std::borrow::Cow;

use krusty_match::selector::{self, Field, Fields, Subject};
use krusty_yaml::Node;
use serde::{Deserialize, Serialize};

use super::Matcher;
use crate::kube::KubeObject;
use crate::run::FnError;

/// The fields of a Kustomize patch `target`, read from a functionConfig
/// like any other field (`#[serde(default)] selector: Selector`). Every
/// field set must match: `group`, `version`, `kind`, `name` and
/// `namespace` are regular expressions matched against the whole value
/// (`web-.*`), `labelSelector` and `annotationSelector` are Kubernetes
/// label selectors (`app=web,tier in (a,b),!legacy`). An empty selector
/// matches every item. Any other field is an error naming it, as in a
/// Kustomize patch target: a misspelt `labelselector` must not leave a
/// selector that matches everything.
///
/// The matching is krusty's own ([`krusty_match::selector`]), on the
/// item as written: `namespace` is matched against `metadata.namespace`
/// (`""` when there is none, where a patch target sees `default`), and
/// labels and annotations are their scalars' text (a null value is no
/// value).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase", deny_unknown_fields)]
pub struct Selector {
    /// The group of `apiVersion` (empty for the core group).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub group: String,
    /// The version of `apiVersion`.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub version: String,
    /// The kind.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub kind: String,
    /// `metadata.name`.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// `metadata.namespace`.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    /// A label selector over `metadata.labels`.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub label_selector: String,
    /// A label selector over `metadata.annotations`.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub annotation_selector: String,
}

impl Selector {
    /// The selector ready to match; an invalid expression or label
    /// selector is an error naming the field.
    pub fn compile(&self) -> Result<CompiledSelector, FnError> {
        let fields = Fields {
            group: &self.group,
            version: &self.version,
            kind: &self.kind,
            name: &self.name,
            namespace: &self.namespace,
            label_selector: &self.label_selector,
            annotation_selector: &self.annotation_selector,
        };
        selector::Selector::compile(&fields)
            .map(CompiledSelector)
            .map_err(|e| {
                FnError::Message(match e.field {
                    Field::LabelSelector | Field::AnnotationSelector => {
                        format!("selector {}: {}", e.field, e.message)
                    }
                    field => format!("selector {field} '{}': {}", fields.get(field), e.message),
                })
            })
    }
}

/// A [`Selector`] ready to match.
#[derive(Debug, Clone)]
pub struct CompiledSelector(selector::Selector);

impl Matcher for CompiledSelector {
    fn matches(&self, item: &Node) -> bool {
        self.0.matches(&Item(item))
    }
}

/// An item as a [`Selector`] sees it: its fields as written.
struct Item<'a>(&'a Node);

impl Subject for Item<'_> {
    fn group(&self) -> &str {
        self.0.group()
    }

    fn version(&self) -> &str {
        self.0.version()
    }

    fn kind(&self) -> &str {
        self.0.kind()
    }

    fn any_name(&self, matches: impl Fn(&str) -> bool) -> bool {
        matches(self.0.name())
    }

    fn any_namespace(&self, matches: impl Fn(&str) -> bool) -> bool {
        matches(self.0.namespace())
    }

    fn label(&self, key: &str) -> Option<Cow<'_, str>> {
        self.0.label(key).map(Cow::Borrowed)
    }

    fn annotation(&self, key: &str) -> Option<Cow<'_, str>> {
        self.0.annotation(key).map(Cow::Borrowed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::select::tests::{items, names};

    #[test]
    fn selectors_match_like_patch_targets() {
        let list = items();
        let sel = |yaml: &str| -> CompiledSelector {
            let node = crate::parse_object(yaml).unwrap();
            crate::config::from_node::<Selector>(&node)
                .unwrap()
                .compile()
                .unwrap()
        };
        assert_eq!(names(&list, sel("name: web-.*")), ["web-a", "web-cfg"]);
        assert_eq!(
            names(&list, sel("group: apps\nkind: Deploy")),
            Vec::<&str>::new()
        );
        assert_eq!(
            names(&list, sel("version: v1\ngroup: ''")),
            ["web-a", "db", "web-cfg"]
        );
        assert_eq!(
            names(&list, sel("labelSelector: 'tier in (web, db),env!=prod'")),
            ["db"]
        );
        assert_eq!(names(&list, sel("labelSelector: '!tier'")), ["web-cfg"]);
        assert_eq!(names(&list, sel("annotationSelector: owner")), ["web-cfg"]);
        assert_eq!(names(&list, sel("namespace: prod")), ["web-a"]);
    }

    #[test]
    fn compile_errors_name_the_field() {
        let err = |s: Selector| s.compile().unwrap_err().to_string();
        assert_eq!(
            err(Selector {
                name: "(".into(),
                ..Selector::default()
            }),
            "selector name '(': error parsing regexp: missing closing ): `^(?:()$`"
        );
        let labels = err(Selector {
            label_selector: "a in b".into(),
            ..Selector::default()
        });
        assert!(labels.starts_with("selector labelSelector: "), "{labels}");
    }

    #[test]
    fn unknown_selector_fields_are_errors_naming_them() {
        let read = |yaml: &str| {
            let node = crate::parse_object(yaml).unwrap();
            crate::config::from_node::<Selector>(&node)
        };
        let err = read("kind: Deployment\nlabelselector: tier=web")
            .unwrap_err()
            .to_string();
        assert!(err.contains("labelselector"), "{err}");
        assert!(err.contains("labelSelector"), "{err}");
        assert!(read("label_selector: a=b").is_err());
        let all = read(
            "group: apps\nversion: v1\nkind: Deployment\nname: web\nnamespace: prod\nlabelSelector: a=b\nannotationSelector: c",
        )
        .unwrap();
        assert_eq!(all.label_selector, "a=b");
        assert_eq!(all.annotation_selector, "c");
        assert_eq!(read("{}").unwrap(), Selector::default());
        // Nested in a config, the error names the field too.
        #[derive(Debug, Deserialize)]
        struct Config {
            #[allow(dead_code)]
            #[serde(default)]
            selector: Selector,
        }
        let node = crate::parse_object("selector:\n  labelselector: tier=web").unwrap();
        let err = crate::config::from_node::<Config>(&node)
            .unwrap_err()
            .to_string();
        assert!(err.contains("labelselector"), "{err}");
    }
}
