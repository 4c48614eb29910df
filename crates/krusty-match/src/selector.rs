//! Kustomize's resource selector, the fields of a patch `target` (and of
//! a replacement's `select` and `reject`, and of the SDK's `Selector`):
//! `group`, `version`, `kind`, `name` and `namespace` as Go regular
//! expressions matched against the whole value, `labelSelector` and
//! `annotationSelector` as Kubernetes label selectors. An empty field
//! matches anything. What is selected is a [`Subject`]: each caller says
//! how its objects give their ids, labels and annotations.
//!
//! ```
//! use std::borrow::Cow;
//! use krusty_match::selector::{Fields, Selector, Subject};
//!
//! struct Web;
//! impl Subject for Web {
//!     fn group(&self) -> &str { "apps" }
//!     fn version(&self) -> &str { "v1" }
//!     fn kind(&self) -> &str { "Deployment" }
//!     fn any_name(&self, matches: impl Fn(&str) -> bool) -> bool { matches("web") }
//!     fn any_namespace(&self, matches: impl Fn(&str) -> bool) -> bool { matches("prod") }
//!     fn label(&self, key: &str) -> Option<Cow<'_, str>> {
//!         (key == "tier").then_some(Cow::Borrowed("front"))
//!     }
//!     fn annotation(&self, _: &str) -> Option<Cow<'_, str>> { None }
//! }
//!
//! let fields = Fields { kind: "Deployment|StatefulSet", label_selector: "tier", ..Fields::default() };
//! assert!(Selector::compile(&fields).unwrap().matches(&Web));
//! ```

use std::borrow::Cow;
use std::fmt;

use regex::Regex;

use crate::go_regex;
use crate::label_selector::LabelSelector;

/// One field of a selector.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    /// `group`, the group of `apiVersion`.
    Group,
    /// `version`, the version of `apiVersion`.
    Version,
    /// `kind`.
    Kind,
    /// `name`.
    Name,
    /// `namespace`.
    Namespace,
    /// `labelSelector`.
    LabelSelector,
    /// `annotationSelector`.
    AnnotationSelector,
}

impl Field {
    /// The field's key in a selector mapping, as Kustomize spells it.
    pub const fn name(self) -> &'static str {
        match self {
            Field::Group => "group",
            Field::Version => "version",
            Field::Kind => "kind",
            Field::Name => "name",
            Field::Namespace => "namespace",
            Field::LabelSelector => "labelSelector",
            Field::AnnotationSelector => "annotationSelector",
        }
    }
}

impl fmt::Display for Field {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The text of a selector's fields, as written; empty ones match anything.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Fields<'a> {
    /// A regular expression for the group (`""` is the core group's).
    pub group: &'a str,
    /// A regular expression for the version.
    pub version: &'a str,
    /// A regular expression for the kind.
    pub kind: &'a str,
    /// A regular expression for the name.
    pub name: &'a str,
    /// A regular expression for the namespace.
    pub namespace: &'a str,
    /// A label selector over the labels.
    pub label_selector: &'a str,
    /// A label selector over the annotations.
    pub annotation_selector: &'a str,
}

impl<'a> Fields<'a> {
    /// The text of `field`.
    pub fn get(&self, field: Field) -> &'a str {
        match field {
            Field::Group => self.group,
            Field::Version => self.version,
            Field::Kind => self.kind,
            Field::Name => self.name,
            Field::Namespace => self.namespace,
            Field::LabelSelector => self.label_selector,
            Field::AnnotationSelector => self.annotation_selector,
        }
    }
}

/// Why a selector does not compile: the first field that does not, and
/// why, in Go's `regexp` (or apimachinery's) words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    /// The field.
    pub field: Field,
    /// Why it does not compile (the message alone, without the field).
    pub message: String,
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for FieldError {}

/// What a selector selects: an object with an id, labels and annotations.
pub trait Subject {
    /// The group of its `apiVersion` (`""` for the core group).
    fn group(&self) -> &str;
    /// The version of its `apiVersion`.
    fn version(&self) -> &str;
    /// Its kind.
    fn kind(&self) -> &str;
    /// Whether `matches` holds for a name it goes by (a resource may be
    /// selected by the name it had before a prefix was added).
    fn any_name(&self, matches: impl Fn(&str) -> bool) -> bool;
    /// Whether `matches` holds for a namespace it is in, as selectors see
    /// it (a resource may be selected by the namespace it had before).
    fn any_namespace(&self, matches: impl Fn(&str) -> bool) -> bool;
    /// Label `key`'s value, if it has that label.
    fn label(&self, key: &str) -> Option<Cow<'_, str>>;
    /// Annotation `key`'s value, if it has that annotation.
    fn annotation(&self, key: &str) -> Option<Cow<'_, str>>;
}

/// A selector ready to match: [`IdPatterns`] and the label and annotation
/// selectors.
#[derive(Debug, Clone)]
pub struct Selector {
    id: IdPatterns,
    labels: LabelSelector,
    annotations: LabelSelector,
}

impl Selector {
    /// Compiles every field, in the order of [`Field`]; the first that
    /// does not compile is the error.
    pub fn compile(fields: &Fields<'_>) -> Result<Selector, FieldError> {
        let labels = |field: Field| {
            LabelSelector::parse(fields.get(field)).map_err(|e| FieldError {
                field,
                message: e.to_string(),
            })
        };
        Ok(Selector {
            id: IdPatterns::compile(fields)?,
            labels: labels(Field::LabelSelector)?,
            annotations: labels(Field::AnnotationSelector)?,
        })
    }

    /// Whether `subject` is selected: its id matches (see
    /// [`IdPatterns::matches`]), and its labels and annotations satisfy the
    /// selectors.
    pub fn matches(&self, subject: &impl Subject) -> bool {
        self.id.matches(subject)
            && self.labels.matches(|k| subject.label(k))
            && self.annotations.matches(|k| subject.annotation(k))
    }
}

/// A selector's id part (group, version, kind, name, namespace), each an
/// anchored regular expression.
#[derive(Debug, Clone)]
pub struct IdPatterns {
    group: Pattern,
    version: Pattern,
    kind: Pattern,
    name: Pattern,
    namespace: Pattern,
}

impl IdPatterns {
    /// Compiles the id fields of `fields` (its label and annotation
    /// selectors are not read), in the order of [`Field`].
    pub fn compile(fields: &Fields<'_>) -> Result<IdPatterns, FieldError> {
        let pattern = |field: Field| {
            Pattern::new(fields.get(field)).map_err(|e| FieldError {
                field,
                message: e.to_string(),
            })
        };
        Ok(IdPatterns {
            group: pattern(Field::Group)?,
            version: pattern(Field::Version)?,
            kind: pattern(Field::Kind)?,
            name: pattern(Field::Name)?,
            namespace: pattern(Field::Namespace)?,
        })
    }

    /// Whether `subject`'s group, version and kind match, one of its names
    /// does and one of its namespaces does.
    pub fn matches(&self, subject: &impl Subject) -> bool {
        // The kind first: it rules most subjects out.
        self.kind.matches(subject.kind())
            && self.group.matches(subject.group())
            && self.version.matches(subject.version())
            && (self.namespace.is_any() || subject.any_namespace(|ns| self.namespace.matches(ns)))
            && (self.name.is_any() || subject.any_name(|n| self.name.matches(n)))
    }

    /// Whether no id field is given (the selector selects by labels and
    /// annotations alone).
    pub fn is_empty(&self) -> bool {
        [
            &self.group,
            &self.version,
            &self.kind,
            &self.name,
            &self.namespace,
        ]
        .iter()
        .all(|p| p.is_any())
    }
}

/// One id field: anything when empty, else an anchored regular
/// expression, compared as text when it has no metacharacters (most:
/// `Deployment`, `apps`, `v1`).
#[derive(Debug, Clone)]
enum Pattern {
    Any,
    Text(String),
    Regex(Regex),
}

impl Pattern {
    /// The pattern of `text`; the error is Go's, for `^(?:text)$`.
    fn new(text: &str) -> Result<Pattern, go_regex::RegexError> {
        if text.is_empty() {
            return Ok(Pattern::Any);
        }
        if is_literal(text) {
            return Ok(Pattern::Text(text.to_string()));
        }
        go_regex::compile(&format!("^(?:{text})$")).map(Pattern::Regex)
    }

    fn is_any(&self) -> bool {
        matches!(self, Pattern::Any)
    }

    fn matches(&self, text: &str) -> bool {
        match self {
            Pattern::Any => true,
            Pattern::Text(t) => t == text,
            Pattern::Regex(re) => re.is_match(text),
        }
    }
}

/// Whether a selector field has no regular-expression metacharacters, so
/// it matches itself alone.
pub fn is_literal(text: &str) -> bool {
    regex::escape(text) == text
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A subject known by two names, in no namespace.
    struct Renamed {
        labels: &'static [(&'static str, &'static str)],
    }

    impl Subject for Renamed {
        fn group(&self) -> &str {
            ""
        }
        fn version(&self) -> &str {
            "v1"
        }
        fn kind(&self) -> &str {
            "ConfigMap"
        }
        fn any_name(&self, matches: impl Fn(&str) -> bool) -> bool {
            matches("p-web") || matches("web")
        }
        fn any_namespace(&self, matches: impl Fn(&str) -> bool) -> bool {
            matches("")
        }
        fn label(&self, key: &str) -> Option<Cow<'_, str>> {
            let found = self.labels.iter().find(|(k, _)| *k == key);
            found.map(|(_, v)| Cow::Borrowed(*v))
        }
        fn annotation(&self, _: &str) -> Option<Cow<'_, str>> {
            None
        }
    }

    fn selects(fields: Fields<'_>) -> bool {
        let subject = Renamed {
            labels: &[("app", "web"), ("replicas", "3")],
        };
        Selector::compile(&fields).unwrap().matches(&subject)
    }

    #[test]
    fn fields_are_anchored_expressions_and_empty_ones_match_anything() {
        assert!(selects(Fields::default()));
        assert!(selects(Fields {
            kind: "ConfigMap",
            version: "v1",
            group: "",
            ..Fields::default()
        }));
        assert!(!selects(Fields {
            kind: "Config",
            ..Fields::default()
        }));
        assert!(!selects(Fields {
            kind: "Config.*|Secret",
            group: "apps",
            ..Fields::default()
        }));
        assert!(selects(Fields {
            kind: "Config.*|Secret",
            ..Fields::default()
        }));
        assert!(!selects(Fields {
            version: "v",
            ..Fields::default()
        }));
    }

    #[test]
    fn any_name_or_namespace_of_the_subject_may_match() {
        assert!(selects(Fields {
            name: "web",
            ..Fields::default()
        }));
        assert!(selects(Fields {
            name: "p-.*",
            ..Fields::default()
        }));
        assert!(!selects(Fields {
            name: "we",
            ..Fields::default()
        }));
        assert!(!selects(Fields {
            namespace: "default",
            ..Fields::default()
        }));
    }

    #[test]
    fn label_and_annotation_selectors_look_values_up() {
        assert!(selects(Fields {
            label_selector: "app=web,replicas>2",
            ..Fields::default()
        }));
        assert!(!selects(Fields {
            label_selector: "app!=web",
            ..Fields::default()
        }));
        assert!(!selects(Fields {
            annotation_selector: "app",
            ..Fields::default()
        }));
    }

    #[test]
    fn the_first_field_that_does_not_compile_is_the_error() {
        let err = Selector::compile(&Fields {
            name: "(",
            namespace: ")",
            label_selector: "a in b",
            ..Fields::default()
        })
        .unwrap_err();
        assert_eq!(err.field, Field::Name);
        assert_eq!(
            err.message,
            "error parsing regexp: missing closing ): `^(?:()$`"
        );
        let err = Selector::compile(&Fields {
            annotation_selector: "a in b",
            ..Fields::default()
        })
        .unwrap_err();
        assert_eq!(err.field, Field::AnnotationSelector);
        assert!(IdPatterns::compile(&Fields {
            label_selector: "a in b",
            ..Fields::default()
        })
        .unwrap()
        .is_empty());
    }

    #[test]
    fn text_without_metacharacters_is_literal() {
        assert!(is_literal("Deployment"));
        assert!(!is_literal("web-.*"));
        assert!(!is_literal("a-b"));
    }
}
