//! Checking a `functionConfig` against an OpenAPI v3 schema, the
//! `schema.openAPIV3Schema` of a `KRMFunctionDefinition` (KEP-2906), as
//! kyaml's framework does for a `ValidationSchemaProvider`.
//!
//! The structural subset of OpenAPI v3 that CRDs use is understood:
//! `type` (`object`, `array`, `string`, `integer`, `number`, `boolean`),
//! `properties`, `required`, `additionalProperties` (a schema or `false`),
//! `items`, `enum`, `nullable`, `minimum`/`maximum` (and their
//! `exclusive…` flags), `minLength`/`maxLength`, `pattern`,
//! `minItems`/`maxItems`, `allOf`, `anyOf`, `oneOf`, `not` and
//! `x-kubernetes-preserve-unknown-fields`. Other keywords (`format`,
//! `description`, `default`, …) do not constrain. A field the schema's
//! `properties` do not name is accepted unless `additionalProperties` is
//! `false`, as in OpenAPI; the `apiVersion`, `kind` and `metadata` of the
//! config itself are never checked against the top level.

use krusty_yaml::{Node, Resolved, Value};

use crate::result::FnResult;
use crate::run::FnError;

/// A parsed schema (kept as the node it was read from).
#[derive(Debug, Clone)]
pub struct Schema {
    root: Node,
}

/// The fields every resource has, which a function's schema describes
/// rarely and never constrains.
const RESOURCE_FIELDS: [&str; 3] = ["apiVersion", "kind", "metadata"];

impl Schema {
    /// A schema from its YAML (or JSON) text.
    pub fn parse(text: &str) -> Result<Schema, FnError> {
        let root = crate::parse_object(text)?;
        Schema::from_node(root)
    }

    /// A schema from a node.
    pub fn from_node(root: Node) -> Result<Schema, FnError> {
        if root.as_map().is_none() {
            return Err(FnError::Message("a schema must be a mapping".into()));
        }
        Ok(Schema { root })
    }

    /// The `schema.openAPIV3Schema` of version `version` of a
    /// `KRMFunctionDefinition` (YAML or JSON text); with one version, its
    /// name need not match.
    pub fn from_definition(text: &str, version: &str) -> Result<Schema, FnError> {
        let definition = crate::parse_object(text)?;
        let versions = definition
            .get("spec")
            .and_then(|s| s.get("versions"))
            .and_then(Node::as_seq)
            .ok_or_else(|| FnError::Message("the definition has no spec.versions list".into()))?;
        let name = |v: &Node| v.get("name").and_then(Node::as_str).map(str::to_string);
        let chosen = versions
            .iter()
            .find(|v| name(v).as_deref() == Some(version))
            .or(if versions.len() == 1 {
                versions.first()
            } else {
                None
            })
            .ok_or_else(|| {
                FnError::Message(format!("the definition has no version named '{version}'"))
            })?;
        let schema = chosen
            .get("schema")
            .and_then(|s| s.get("openAPIV3Schema"))
            .ok_or_else(|| {
                FnError::Message(format!(
                    "version '{}' of the definition has no schema.openAPIV3Schema",
                    name(chosen).unwrap_or_default()
                ))
            })?;
        Schema::from_node(schema.clone())
    }

    /// The problems of `config` against this schema, as error results
    /// naming the field (none when it fits).
    pub fn check(&self, config: &Node) -> Vec<FnResult> {
        let mut problems = Vec::new();
        check(&self.root, config, "", true, &mut problems);
        problems
            .into_iter()
            .map(|(field, message)| {
                let at = if field.is_empty() {
                    "the config"
                } else {
                    &field
                };
                FnResult::error(format!("{at}: {message}"))
                    .about(config)
                    .at_field(field)
            })
            .collect()
    }
}

/// A field path with a key or index appended.
fn child(path: &str, step: &str) -> String {
    if path.is_empty() {
        step.to_string()
    } else if step.starts_with('[') {
        format!("{path}{step}")
    } else {
        format!("{path}.{step}")
    }
}

/// The JSON type of a node, as OpenAPI names them.
fn type_of(node: &Node) -> &'static str {
    match &node.value {
        Value::Map(_) => "object",
        Value::Seq(_) => "array",
        Value::Scalar(_) => match krusty_yaml::resolve_input(node) {
            Resolved::Null => "null",
            Resolved::Bool(_) => "boolean",
            Resolved::Int(_) => "integer",
            Resolved::Float(_) => "number",
            Resolved::Str(_) | Resolved::Owned(_) => "string",
        },
    }
}

/// A node's number, if it is one.
fn number(node: &Node) -> Option<f64> {
    match krusty_yaml::resolve_input(node) {
        Resolved::Int(i) => Some(i as f64),
        Resolved::Float(f) => Some(f),
        _ => None,
    }
}

/// A node's string, if it is one.
fn string(node: &Node) -> Option<String> {
    match krusty_yaml::resolve_input(node) {
        Resolved::Str(s) => Some(s.to_string()),
        Resolved::Owned(s) => Some(s),
        _ => None,
    }
}

/// Whether two nodes hold the same JSON value (for `enum`).
fn same_value(a: &Node, b: &Node) -> bool {
    crate::config::to_json_value(a) == crate::config::to_json_value(b)
}

/// Checks `value` at `path` against `schema`, adding `(field, message)`
/// problems. `top` marks the config itself, whose resource fields are not
/// checked.
fn check(schema: &Node, value: &Node, path: &str, top: bool, out: &mut Vec<(String, String)>) {
    let keyword = |k: &str| schema.get(k);
    let flag = |k: &str| keyword(k).and_then(Node::as_str) == Some("true");
    let found = type_of(value);
    if found == "null" {
        if !flag("nullable") && keyword("type").is_some() {
            out.push((path.to_string(), "must not be null".into()));
        }
        return;
    }
    if let Some(wanted) = keyword("type").and_then(Node::as_str) {
        let fits = wanted == found || (wanted == "number" && found == "integer");
        if !fits {
            out.push((
                path.to_string(),
                format!("must be of type {wanted}, not {found}"),
            ));
            return;
        }
    }
    if let Some(choices) = keyword("enum").and_then(Node::as_seq) {
        if !choices.iter().any(|c| same_value(c, value)) {
            let listed: Vec<String> = choices
                .iter()
                .map(|c| crate::config::to_json_value(c).to_string())
                .collect();
            out.push((
                path.to_string(),
                format!("must be one of {}", listed.join(", ")),
            ));
        }
    }
    check_bounds(schema, value, path, out);
    check_combinators(schema, value, path, top, out);
    match &value.value {
        Value::Map(entries) => check_object(schema, entries, path, top, out),
        Value::Seq(items) => {
            if let Some(item_schema) = keyword("items") {
                for (i, item) in items.iter().enumerate() {
                    check(
                        item_schema,
                        item,
                        &child(path, &format!("[{i}]")),
                        false,
                        out,
                    );
                }
            }
        }
        Value::Scalar(_) => {}
    }
}

/// `minimum`, `maximum`, lengths, `pattern` and item counts.
fn check_bounds(schema: &Node, value: &Node, path: &str, out: &mut Vec<(String, String)>) {
    let limit = |k: &str| schema.get(k).and_then(number);
    let exclusive = |k: &str| schema.get(k).and_then(Node::as_str) == Some("true");
    let mut problem = |message: String| out.push((path.to_string(), message));
    if let Some(n) = number(value) {
        if let Some(min) = limit("minimum") {
            if n < min || (exclusive("exclusiveMinimum") && n == min) {
                problem(format!("must be at least {min}"));
            }
        }
        if let Some(max) = limit("maximum") {
            if n > max || (exclusive("exclusiveMaximum") && n == max) {
                problem(format!("must be at most {max}"));
            }
        }
    }
    if let Some(s) = string(value).filter(|_| type_of(value) == "string") {
        let length = s.chars().count() as f64;
        if let Some(message) = out_of(schema, length, ["minLength", "maxLength"], |bound, n| {
            format!("must be {bound} {n} characters long")
        }) {
            problem(message);
        }
        if let Some(pattern) = schema.get("pattern").and_then(Node::as_str) {
            match regex::Regex::new(pattern) {
                Ok(re) if !re.is_match(&s) => problem(format!("must match the pattern {pattern}")),
                Ok(_) => {}
                Err(e) => problem(format!("the schema's pattern {pattern} is not valid: {e}")),
            }
        }
    }
    if let Some(items) = value.as_seq() {
        let count = items.len() as f64;
        if let Some(message) = out_of(schema, count, ["minItems", "maxItems"], |bound, n| {
            format!("must have {bound} {n} items")
        }) {
            problem(message);
        }
    }
}

/// What `say` makes of the bound of `keys` (minimum, maximum) that
/// `count` is outside of, if it is.
fn out_of(
    schema: &Node,
    count: f64,
    [min, max]: [&str; 2],
    say: impl Fn(&str, f64) -> String,
) -> Option<String> {
    let limit = |k: &str| schema.get(k).and_then(number);
    match (limit(min), limit(max)) {
        (Some(low), _) if count < low => Some(say("at least", low)),
        (_, Some(high)) if count > high => Some(say("at most", high)),
        _ => None,
    }
}

/// `allOf`, `anyOf`, `oneOf` and `not`.
fn check_combinators(
    schema: &Node,
    value: &Node,
    path: &str,
    top: bool,
    out: &mut Vec<(String, String)>,
) {
    let fits = |s: &Node| {
        let mut found = Vec::new();
        check(s, value, path, top, &mut found);
        found.is_empty()
    };
    if let Some(all) = schema.get("allOf").and_then(Node::as_seq) {
        for s in all {
            check(s, value, path, top, out);
        }
    }
    if let Some(any) = schema.get("anyOf").and_then(Node::as_seq) {
        if !any.iter().any(fits) {
            out.push((
                path.to_string(),
                "must match at least one schema of anyOf".into(),
            ));
        }
    }
    if let Some(one) = schema.get("oneOf").and_then(Node::as_seq) {
        let matching = one.iter().filter(|s| fits(s)).count();
        if matching != 1 {
            out.push((
                path.to_string(),
                format!("must match exactly one schema of oneOf (matches {matching})"),
            ));
        }
    }
    if let Some(not) = schema.get("not") {
        if fits(not) {
            out.push((path.to_string(), "must not match the schema of not".into()));
        }
    }
}

/// `required`, `properties` and `additionalProperties` of an object.
fn check_object(
    schema: &Node,
    entries: &[(Node, Node)],
    path: &str,
    top: bool,
    out: &mut Vec<(String, String)>,
) {
    let properties = schema.get("properties");
    let preserve = schema
        .get("x-kubernetes-preserve-unknown-fields")
        .and_then(Node::as_str)
        == Some("true");
    let additional = schema.get("additionalProperties");
    if let Some(required) = schema.get("required").and_then(Node::as_seq) {
        for name in required.iter().filter_map(Node::as_str) {
            if !entries.iter().any(|(k, _)| k.key_str() == Some(name)) {
                out.push((child(path, name), "is required".into()));
            }
        }
    }
    for (key, value) in entries {
        let name = key.key_str().unwrap_or_default();
        if top && RESOURCE_FIELDS.contains(&name) {
            continue;
        }
        let field = child(path, name);
        match properties.and_then(|p| p.get(name)) {
            Some(s) => check(s, value, &field, false, out),
            None => match additional {
                Some(a) if a.as_str() == Some("false") && !preserve => {
                    out.push((field, "is not a known field".into()))
                }
                Some(a) if a.as_map().is_some() => check(a, value, &field, false, out),
                _ => {}
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCHEMA: &str = r#"
type: object
required: [spec]
additionalProperties: false
properties:
  spec:
    type: object
    required: [image]
    properties:
      image: {type: string, pattern: "^[a-z./-]+(:[a-z0-9.]+)?$"}
      replicas: {type: integer, minimum: 1, maximum: 10}
      mode: {type: string, enum: [fast, safe]}
      ratio: {type: number, exclusiveMaximum: true, maximum: 1}
      ports:
        type: array
        maxItems: 2
        items:
          type: object
          required: [port]
          properties:
            port: {type: integer}
            name: {type: string, minLength: 2}
      extra:
        type: object
        additionalProperties: {type: string}
      note: {type: string, nullable: true}
      either:
        oneOf:
        - {type: string}
        - {type: integer}
"#;

    fn problems(config: &str) -> Vec<(String, String)> {
        let schema = Schema::parse(SCHEMA).unwrap();
        let config = crate::parse_object(config).unwrap();
        schema
            .check(&config)
            .into_iter()
            .map(|r| (r.field.map(|f| f.path).unwrap_or_default(), r.message))
            .collect()
    }

    #[test]
    fn a_fitting_config_has_no_problems() {
        let config = "apiVersion: fn.example.com/v1\nkind: Fn\nmetadata: {name: x}\nspec:\n  image: nginx:1.25\n  replicas: 3\n  mode: safe\n  ratio: 0.5\n  ports: [{port: 80, name: web}]\n  extra: {a: b}\n  note: null\n  either: 3\n";
        assert_eq!(problems(config), vec![]);
    }

    #[test]
    fn every_problem_names_its_field() {
        let config = "spec:\n  replicas: 11\n  mode: quick\n  ratio: 1\n  ports: [{name: w}, {port: '80'}, {port: 1}]\n  extra: {a: 1}\n  either: true\nunknown: 1\n";
        let found = problems(config);
        let expected = [
            ("spec.image", "spec.image: is required"),
            ("spec.replicas", "spec.replicas: must be at most 10"),
            ("spec.mode", "spec.mode: must be one of \"fast\", \"safe\""),
            ("spec.ratio", "spec.ratio: must be at most 1"),
            ("spec.ports", "spec.ports: must have at most 2 items"),
            ("spec.ports[0].port", "spec.ports[0].port: is required"),
            (
                "spec.ports[0].name",
                "spec.ports[0].name: must be at least 2 characters long",
            ),
            (
                "spec.ports[1].port",
                "spec.ports[1].port: must be of type integer, not string",
            ),
            (
                "spec.extra.a",
                "spec.extra.a: must be of type string, not integer",
            ),
            (
                "spec.either",
                "spec.either: must match exactly one schema of oneOf (matches 0)",
            ),
            ("unknown", "unknown: is not a known field"),
        ];
        for (field, message) in expected {
            assert!(
                found.contains(&(field.to_string(), message.to_string())),
                "missing {field}: {message} in {found:#?}"
            );
        }
        assert_eq!(found.len(), expected.len(), "{found:#?}");
    }

    #[test]
    fn a_missing_config_is_checked_as_empty() {
        assert_eq!(
            problems("{}"),
            vec![("spec".to_string(), "spec: is required".to_string())]
        );
    }

    #[test]
    fn the_schema_comes_from_a_definition_version() {
        let definition = "apiVersion: config.kubernetes.io/v1alpha1\nkind: KRMFunctionDefinition\nspec:\n  group: fn.example.com\n  names: {kind: Fn}\n  versions:\n  - name: v1\n    schema:\n      openAPIV3Schema: {type: object, required: [team]}\n  - name: v2\n    schema:\n      openAPIV3Schema: {type: object}\n";
        let v1 = Schema::from_definition(definition, "v1").unwrap();
        assert_eq!(v1.check(&crate::parse_object("{}").unwrap()).len(), 1);
        let v2 = Schema::from_definition(definition, "v2").unwrap();
        assert!(v2.check(&crate::parse_object("{}").unwrap()).is_empty());
        let err = Schema::from_definition(definition, "v3").unwrap_err();
        assert_eq!(err.to_string(), "the definition has no version named 'v3'");
    }
}
