//! The Go types builtin plugin configs decode into, and the check of a
//! config against them that fails where Kustomize's decoding fails, in its
//! words.
//!
//! Kustomize hands a builtin its config as YAML written from the config's
//! JSON form (keys sorted), and the builtin decodes it one of two ways:
//! - through JSON ([`Decoder::Json`]): a scalar is accepted where a string
//!   is expected, and the first mismatch is reported as Go's
//!   `json: cannot unmarshal array into Go struct field
//!   LabelTransformerPlugin.labels of type map[string]string`;
//! - with go-yaml v3 ([`Decoder::Yaml`]): every mismatch is reported, each
//!   with its line in that rewritten YAML, as `yaml: unmarshal errors:` then
//!   `line 8: cannot unmarshal !!seq into string`.

use krusty_yaml::keyorder::natural_less;
use krusty_yaml::{Node, Value};

use crate::typed;
use crate::version::KustomizeVersion;

/// The Go type of one field.
#[derive(Debug)]
pub enum Shape {
    /// A string (or a type defined on one), named as Go names it.
    Str(&'static str),
    /// A `bool`.
    Bool,
    /// An integer type such as `int64`.
    Int(&'static str),
    /// A map with string keys (`map[string]string`) and values of the shape.
    Map(&'static str, &'static Shape),
    /// A slice (`[]types.FieldSpec`) of items of the shape.
    List(&'static str, &'static Shape),
    /// A struct: its Go type (`types.Image`), its own name (`Image`) and the
    /// fields checked (others are not looked at).
    Struct(&'static str, &'static str, &'static [(&'static str, Shape)]),
}

/// How a builtin decodes its config.
#[derive(Debug, Clone, Copy)]
pub enum Decoder {
    /// YAML turned into JSON, then Go's `encoding/json`; the error follows
    /// the words given here.
    Json(&'static str),
    /// go-yaml v3, straight from the rewritten YAML.
    Yaml,
}

/// A builtin's config type: the plugin struct's name and its fields.
#[derive(Debug)]
pub struct ConfigType {
    /// The plugin struct, e.g. `LabelTransformerPlugin`.
    pub name: &'static str,
    /// How the config is decoded.
    pub decoder: Decoder,
    /// The fields of the plugin struct that are checked.
    pub fields: &'static [(&'static str, Shape)],
}

/// Why a config does not fit its builtin's type, in Kustomize's words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// The first mismatch Go's JSON decoding stops at, after the
    /// decoder's words ([`Decoder::Json`]).
    #[error("{words}{mismatch}")]
    Json {
        /// The words before the mismatch.
        words: &'static str,
        /// The mismatch.
        mismatch: JsonMismatch,
    },
    /// Every mismatch go-yaml v3 finds, one a line.
    #[error("yaml: unmarshal errors:\n  {}", join_lines(.0))]
    Yaml(Vec<YamlMismatch>),
}

/// go-yaml's mismatches, one a line, indented after the first.
fn join_lines(mismatches: &[YamlMismatch]) -> String {
    let lines: Vec<String> = mismatches.iter().map(ToString::to_string).collect();
    lines.join("\n  ")
}

/// A JSON value Go cannot decode into its struct field (`json: cannot
/// unmarshal array into Go struct field X.y of type string`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("json: cannot unmarshal {found} into Go struct field {owner}.{field} of type {go_type}")]
pub struct JsonMismatch {
    /// What the value is (`array`, `number 3.5`).
    pub found: String,
    /// The Go struct the field is in.
    pub owner: &'static str,
    /// The field's path within it (`replica.count`).
    pub field: String,
    /// The field's Go type.
    pub go_type: &'static str,
}

/// A value go-yaml v3 cannot decode into its field (`line 5: cannot
/// unmarshal !!str `true` into bool`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: cannot unmarshal {tag}{} into {go_type}", shown(.value))]
pub struct YamlMismatch {
    /// The line of the value in the YAML Kustomize writes for the config.
    pub line: usize,
    /// The value's short tag (`!!seq`).
    pub tag: &'static str,
    /// A scalar's text as go-yaml shows it (cut to seven characters and
    /// `...` when longer than ten); none for a collection.
    pub value: Option<String>,
    /// The field's Go type.
    pub go_type: &'static str,
}

/// A scalar's text as go-yaml shows it after its tag (`` `true` ``).
fn shown(value: &Option<String>) -> String {
    value
        .as_ref()
        .map(|v| format!(" `{v}`"))
        .unwrap_or_default()
}

/// Kustomize's prefix for a JSON decoding error.
const JSON: &str = "error unmarshaling JSON: while decoding JSON: ";

const STRING: Shape = Shape::Str("string");

/// `types.FieldSpec`.
const FIELD_SPEC: Shape = Shape::Struct(
    "types.FieldSpec",
    "FieldSpec",
    &[
        ("group", STRING),
        ("version", STRING),
        ("kind", STRING),
        ("path", STRING),
        ("create", Shape::Bool),
    ],
);

/// `fieldSpecs` as JSON decoding names it.
const FIELD_SPECS: (&str, Shape) = ("fieldSpecs", Shape::List("[]types.FieldSpec", &FIELD_SPEC));

/// `fieldSpecs` as go-yaml names it.
const FS_SLICE: (&str, Shape) = ("fieldSpecs", Shape::List("types.FsSlice", &FIELD_SPEC));

/// `types.Selector`.
const SELECTOR: Shape = Shape::Struct(
    "types.Selector",
    "Selector",
    &[
        ("group", STRING),
        ("version", STRING),
        ("kind", STRING),
        ("name", STRING),
        ("namespace", STRING),
        ("annotationSelector", STRING),
        ("labelSelector", STRING),
    ],
);

/// `types.Selector` as Kustomize v5.8.1's Go names its fields in errors:
/// through the embedded `ResId` and `Gvk`.
const SELECTOR_V5_8: Shape = Shape::Struct(
    "types.Selector",
    "Selector",
    &[
        ("ResId.Gvk.group", STRING),
        ("ResId.Gvk.version", STRING),
        ("ResId.Gvk.kind", STRING),
        ("ResId.name", STRING),
        ("ResId.namespace", STRING),
        ("annotationSelector", STRING),
        ("labelSelector", STRING),
    ],
);

/// `types.PatchArgs`, the PatchTransformer's `options` from Kustomize
/// v5.8.1 on.
const PATCH_ARGS: Shape = Shape::Struct(
    "types.PatchArgs",
    "PatchArgs",
    &[
        ("allowNameChange", Shape::Bool),
        ("allowKindChange", Shape::Bool),
    ],
);

/// The config type of builtin `kind` in Kustomize release `version`, for
/// the builtins whose config type differs between releases; else
/// [`config_type`].
pub fn config_type_in(kind: &str, version: KustomizeVersion) -> Option<&'static ConfigType> {
    match kind {
        "PatchTransformer" if version >= KustomizeVersion::V5_8_1 => Some(&ConfigType {
            name: "PatchTransformerPlugin",
            decoder: Decoder::Json(JSON),
            fields: &[
                ("path", STRING),
                ("patch", STRING),
                ("target", SELECTOR_V5_8),
                ("options", PATCH_ARGS),
            ],
        }),
        _ => config_type(kind),
    }
}

/// The config type of builtin `kind`, for the builtins that have fields.
pub fn config_type(kind: &str) -> Option<&'static ConfigType> {
    Some(match kind {
        "PrefixSuffixTransformer" | "PrefixTransformer" | "SuffixTransformer" => &ConfigType {
            name: "",
            decoder: Decoder::Yaml,
            fields: &[("prefix", STRING), ("suffix", STRING), FS_SLICE],
        },
        "LabelTransformer" => &ConfigType {
            name: "LabelTransformerPlugin",
            decoder: Decoder::Json(JSON),
            fields: &[
                ("labels", Shape::Map("map[string]string", &STRING)),
                FIELD_SPECS,
            ],
        },
        "AnnotationsTransformer" => &ConfigType {
            name: "AnnotationsTransformerPlugin",
            decoder: Decoder::Json(JSON),
            fields: &[
                ("annotations", Shape::Map("map[string]string", &STRING)),
                FIELD_SPECS,
            ],
        },
        "NamespaceTransformer" => &ConfigType {
            name: "NamespaceTransformerPlugin",
            decoder: Decoder::Json(
                "unmarshalling NamespaceTransformer config: error unmarshaling JSON: while decoding JSON: ",
            ),
            fields: &[
                (
                    "metadata",
                    Shape::Struct("v1.ObjectMeta", "ObjectMeta", &[("namespace", STRING)]),
                ),
                ("unsetOnly", Shape::Bool),
                (
                    "setRoleBindingSubjects",
                    Shape::Str("namespace.RoleBindingSubjectMode"),
                ),
                FIELD_SPECS,
            ],
        },
        "ImageTagTransformer" => &ConfigType {
            name: "ImageTagTransformerPlugin",
            decoder: Decoder::Json(JSON),
            fields: &[
                (
                    "imageTag",
                    Shape::Struct(
                        "types.Image",
                        "Image",
                        &[
                            ("name", STRING),
                            ("newName", STRING),
                            ("newTag", STRING),
                            ("tagSuffix", STRING),
                            ("digest", STRING),
                        ],
                    ),
                ),
                FIELD_SPECS,
            ],
        },
        "ReplicaCountTransformer" => &ConfigType {
            name: "ReplicaCountTransformerPlugin",
            decoder: Decoder::Json(JSON),
            fields: &[
                (
                    "replica",
                    Shape::Struct(
                        "types.Replica",
                        "Replica",
                        &[("name", STRING), ("count", Shape::Int("int64"))],
                    ),
                ),
                FIELD_SPECS,
            ],
        },
        "PatchTransformer" => &ConfigType {
            name: "PatchTransformerPlugin",
            decoder: Decoder::Json(JSON),
            fields: &[
                ("path", STRING),
                ("patch", STRING),
                ("target", SELECTOR),
                ("options", Shape::Map("map[string]bool", &Shape::Bool)),
            ],
        },
        "PatchJson6902Transformer" => &ConfigType {
            name: "PatchJson6902TransformerPlugin",
            decoder: Decoder::Json(JSON),
            fields: &[("target", SELECTOR), ("path", STRING)],
        },
        "PatchStrategicMergeTransformer" => &ConfigType {
            name: "PatchStrategicMergeTransformerPlugin",
            decoder: Decoder::Json(JSON),
            fields: &[
                (
                    "paths",
                    Shape::List(
                        "[]types.PatchStrategicMerge",
                        &Shape::Str("types.PatchStrategicMerge"),
                    ),
                ),
                ("patches", STRING),
            ],
        },
        "ReplacementTransformer" => &ConfigType {
            name: "ReplacementTransformerPlugin",
            decoder: Decoder::Json(JSON),
            fields: &[(
                "replacements",
                Shape::List(
                    "[]types.ReplacementField",
                    &Shape::Struct(
                        "types.ReplacementField",
                        "ReplacementField",
                        &[
                            (
                                "source",
                                Shape::Struct("types.SourceSelector", "SourceSelector", &[]),
                            ),
                            ("path", STRING),
                        ],
                    ),
                ),
            )],
        },
        "ValueAddTransformer" => &ConfigType {
            name: "ValueAddTransformerPlugin",
            decoder: Decoder::Json(JSON),
            fields: &[
                ("value", STRING),
                (
                    "targets",
                    Shape::List(
                        "[]builtins.Target",
                        &Shape::Struct("builtins.Target", "Target", &[]),
                    ),
                ),
            ],
        },
        _ => return None,
    })
}

impl ConfigType {
    /// Checks `config` against the type; the error is Kustomize's, without
    /// the `plugin ... fails configuration: ` it is given later.
    pub fn check(&self, config: &Node) -> Result<(), ConfigError> {
        match self.decoder {
            Decoder::Json(words) => {
                let mut path = Vec::new();
                json_fields(config, self.name, self.fields, &mut path)
                    .map_err(|mismatch| ConfigError::Json { words, mismatch })
            }
            Decoder::Yaml => {
                let mut lines = LineCounter { next: 1 };
                let mut errors = Vec::new();
                if let Value::Map(entries) = &config.value {
                    yaml_fields(entries, self.fields, &mut lines, &mut errors);
                }
                if errors.is_empty() {
                    Ok(())
                } else {
                    Err(ConfigError::Yaml(errors))
                }
            }
        }
    }
}

/// The entries of a mapping in the order Kustomize writes them: its JSON
/// form sorts keys bytewise, and go-yaml v2 writes them in its own order.
fn sorted(entries: &[(Node, Node)], order: fn(&str, &str) -> bool) -> Vec<&(Node, Node)> {
    let mut out: Vec<&(Node, Node)> = entries.iter().collect();
    out.sort_by(|(a, _), (b, _)| {
        let (a, b) = (
            a.key_str().unwrap_or_default(),
            b.key_str().unwrap_or_default(),
        );
        if order(a, b) {
            std::cmp::Ordering::Less
        } else if order(b, a) {
            std::cmp::Ordering::Greater
        } else {
            std::cmp::Ordering::Equal
        }
    });
    out
}

fn bytewise(a: &str, b: &str) -> bool {
    a < b
}

/// The field of `fields` a JSON key names: an exact match first, then one
/// without regard to case, as Go's decoding matches. A field written with
/// the embedded structs Go names it through (`ResId.Gvk.kind`) is named by
/// its last part.
fn json_field<'f>(
    key: &str,
    fields: &'f [(&'static str, Shape)],
) -> Option<&'f (&'static str, Shape)> {
    let json_name = |n: &'static str| n.rsplit('.').next().unwrap_or(n);
    let names: Vec<&'static str> = fields.iter().map(|(n, _)| json_name(n)).collect();
    let name = typed::canonical_field(key, &names);
    fields.iter().find(|(n, _)| json_name(n) == name)
}

/// Checks the fields of a struct named `owner`, the first mismatch in key
/// order being the error.
fn json_fields(
    node: &Node,
    owner: &'static str,
    fields: &[(&'static str, Shape)],
    path: &mut Vec<&'static str>,
) -> Result<(), JsonMismatch> {
    let Value::Map(entries) = &node.value else {
        return Ok(());
    };
    for (key, value) in sorted(entries, bytewise) {
        let Some((name, shape)) = json_field(key.key_str().unwrap_or_default(), fields) else {
            continue;
        };
        path.push(name);
        let result = json_value(value, shape, owner, path);
        path.pop();
        result?;
    }
    Ok(())
}

/// Checks one value of field `path` of struct `owner`.
fn json_value(
    n: &Node,
    shape: &Shape,
    owner: &'static str,
    path: &mut Vec<&'static str>,
) -> Result<(), JsonMismatch> {
    let found = typed::json_type(n);
    if found == "null" {
        return Ok(());
    }
    let mismatch = |found: String, go_type: &'static str| {
        Err(JsonMismatch {
            found,
            owner,
            field: path.join("."),
            go_type,
        })
    };
    match shape {
        // A scalar becomes a string on its way to JSON.
        Shape::Str(_) if n.as_scalar().is_some() => Ok(()),
        Shape::Str(go) => mismatch(found.into(), go),
        Shape::Bool if found == "bool" => Ok(()),
        Shape::Bool => mismatch(found.into(), "bool"),
        Shape::Int(go) if found == "number" => {
            match typed::integer(n, typed::At { owner, path: "" }) {
                Ok(_) => Ok(()),
                Err(_) => mismatch(format!("number {}", typed::lenient_string(n)), go),
            }
        }
        Shape::Int(go) => mismatch(found.into(), go),
        Shape::Map(go, item) => match &n.value {
            Value::Map(entries) => {
                for (_, v) in sorted(entries, bytewise) {
                    json_value(v, item, owner, path)?;
                }
                Ok(())
            }
            _ => mismatch(found.into(), go),
        },
        Shape::List(go, item) => match &n.value {
            Value::Seq(items) => items
                .iter()
                .try_for_each(|i| json_value(i, item, owner, path)),
            _ => mismatch(found.into(), go),
        },
        Shape::Struct(go, name, fields) => match &n.value {
            Value::Map(_) => json_fields(n, name, fields, path),
            _ => mismatch(found.into(), go),
        },
    }
}

/// The line numbers of the YAML Kustomize writes for a config: go-yaml v2's
/// block style, sequences at their key's indentation, a string with a line
/// break as a literal block.
struct LineCounter {
    next: usize,
}

impl LineCounter {
    /// Lines a value takes after its key's line (or its `- ` line): a
    /// scalar none but its literal block's, an empty collection none.
    fn skip_value(&mut self, n: &Node) {
        if !self.children(n) {
            if let Value::Scalar(s) = &n.value {
                self.next += literal_lines(n, &s.text);
            }
        }
    }

    /// The lines of the entries or items of `n` when it is a non-empty
    /// mapping or sequence (written one a line, from the current line);
    /// false, counting nothing, for any other value.
    fn children(&mut self, n: &Node) -> bool {
        match &n.value {
            Value::Map(entries) if !entries.is_empty() => {
                for (_, v) in sorted(entries, natural_less) {
                    self.entry(v);
                }
                true
            }
            Value::Seq(items) if !items.is_empty() => {
                for item in items.iter() {
                    self.item(item);
                }
                true
            }
            _ => false,
        }
    }

    /// A mapping entry whose value is `v`, from its key's line: its line.
    fn entry(&mut self, v: &Node) -> usize {
        let key_line = self.next;
        self.next += 1;
        let at = match &v.value {
            Value::Map(e) if !e.is_empty() => self.next,
            Value::Seq(i) if !i.is_empty() => self.next,
            _ => key_line,
        };
        self.skip_value(v);
        at
    }

    /// A sequence item `v`, from its `- ` line: its line.
    fn item(&mut self, v: &Node) -> usize {
        let at = self.next;
        if !self.children(v) {
            self.next += 1;
            self.skip_value(v);
        }
        at
    }
}

/// The lines of a literal block after its indicator, for a string with a
/// line break; none for any other scalar.
fn literal_lines(n: &Node, text: &str) -> usize {
    if typed::json_type(n) != "string" || !text.contains('\n') {
        return 0;
    }
    text.strip_suffix('\n').unwrap_or(text).split('\n').count()
}

/// go-yaml's short tag for a value as Kustomize writes it.
fn yaml_tag(n: &Node) -> &'static str {
    match &n.value {
        Value::Map(_) => "!!map",
        Value::Seq(_) => "!!seq",
        Value::Scalar(_) => match typed::json_type(n) {
            "bool" => "!!bool",
            "null" => "!!null",
            "number"
                if typed::integer(
                    n,
                    typed::At {
                        owner: "",
                        path: "",
                    },
                )
                .is_ok() =>
            {
                "!!int"
            }
            "number" => "!!float",
            _ => "!!str",
        },
    }
}

/// go-yaml v3's `line L: cannot unmarshal !!str `text` into bool`.
fn yaml_error(n: &Node, line: usize, go_type: &'static str) -> YamlMismatch {
    let value = n.as_scalar().map(|_| {
        let text = typed::lenient_string(n);
        if text.len() > 10 {
            format!("{}...", text.get(..7).unwrap_or(&text))
        } else {
            text
        }
    });
    YamlMismatch {
        line,
        tag: yaml_tag(n),
        value,
        go_type,
    }
}

/// Checks the entries of a struct mapping, counting lines from the first.
fn yaml_fields(
    entries: &[(Node, Node)],
    fields: &[(&'static str, Shape)],
    lines: &mut LineCounter,
    errors: &mut Vec<YamlMismatch>,
) {
    for (key, value) in sorted(entries, natural_less) {
        let shape = fields
            .iter()
            .find(|(n, _)| Some(*n) == key.key_str())
            .map(|(_, s)| s);
        match shape {
            Some(shape) => yaml_entry(value, shape, lines, errors),
            None => {
                lines.entry(value);
            }
        }
    }
}

/// Checks the mapping entry whose value is `n`, `lines` standing at its
/// key; leaves `lines` after the entry.
fn yaml_entry(n: &Node, shape: &Shape, lines: &mut LineCounter, errors: &mut Vec<YamlMismatch>) {
    let start = lines.next;
    let at = lines.entry(n);
    let end = lines.next;
    lines.next = start;
    yaml_entry_value(n, shape, at, lines, errors);
    lines.next = end;
}

/// Checks the value of an entry that sits at line `at`, `lines` standing at
/// the entry's key.
fn yaml_entry_value(
    n: &Node,
    shape: &Shape,
    at: usize,
    lines: &mut LineCounter,
    errors: &mut Vec<YamlMismatch>,
) {
    if yaml_tag(n) == "!!null" {
        return;
    }
    match (shape, &n.value) {
        (Shape::Str(_), Value::Scalar(_)) => {}
        (Shape::Bool, Value::Scalar(_)) if yaml_tag(n) == "!!bool" => {}
        (Shape::Int(_), Value::Scalar(_)) if yaml_tag(n) == "!!int" => {}
        (Shape::Map(_, item), Value::Map(entries)) => {
            lines.next = at;
            for (_, v) in sorted(entries, natural_less) {
                yaml_entry(v, item, lines, errors);
            }
        }
        (Shape::List(_, item), Value::Seq(items)) => {
            lines.next = at;
            for i in items.iter() {
                let start = lines.next;
                let line = lines.item(i);
                let end = lines.next;
                lines.next = start;
                match (item, &i.value) {
                    (Shape::Struct(_, _, fields), Value::Map(entries)) => {
                        yaml_fields(entries, fields, lines, errors)
                    }
                    _ => yaml_entry_value(i, item, line, lines, errors),
                }
                lines.next = end;
            }
        }
        (Shape::Struct(_, _, fields), Value::Map(entries)) => {
            lines.next = at;
            yaml_fields(entries, fields, lines, errors);
        }
        (Shape::Str(go) | Shape::Int(go), _) => errors.push(yaml_error(n, at, go)),
        (Shape::Bool, _) => errors.push(yaml_error(n, at, "bool")),
        (Shape::Map(go, _) | Shape::List(go, _) | Shape::Struct(go, _, _), _) => {
            errors.push(yaml_error(n, at, go))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::test_support::node;

    fn check(kind: &str, text: &str) -> Result<(), String> {
        config_type(kind)
            .unwrap()
            .check(&node(text))
            .map_err(|e| e.to_string())
    }

    #[test]
    fn json_errors_name_the_go_field() {
        assert_eq!(
            check("ReplicaCountTransformer", "replica: {name: web, count: 3.5}"),
            Err("error unmarshaling JSON: while decoding JSON: json: cannot unmarshal number 3.5 into Go struct field Replica.replica.count of type int64".into())
        );
        assert_eq!(
            check("AnnotationsTransformer", "annotations: {a: [b]}"),
            Err("error unmarshaling JSON: while decoding JSON: json: cannot unmarshal array into Go struct field AnnotationsTransformerPlugin.annotations of type string".into())
        );
        assert!(check("AnnotationsTransformer", "annotations: {a: 1, b: true}").is_ok());
    }

    #[test]
    fn yaml_errors_count_lines_of_the_written_config() {
        let head = "apiVersion: builtin\nkind: PrefixSuffixTransformer\nmetadata:\n  name: t\n";
        assert_eq!(
            check(
                "PrefixSuffixTransformer",
                &format!("{head}prefix: [a]\nfieldSpecs: [{{path: metadata/name}}]\n")
            ),
            Err("yaml: unmarshal errors:\n  line 8: cannot unmarshal !!seq into string".into())
        );
        assert_eq!(
            check("PrefixSuffixTransformer", &format!("{head}fieldSpecs: [{{path: [x]}}, {{path: [z], create: 'true'}}]\n")),
            Err("yaml: unmarshal errors:\n  line 4: cannot unmarshal !!seq into string\n  line 5: cannot unmarshal !!str `true` into bool\n  line 7: cannot unmarshal !!seq into string".into())
        );
    }
}
