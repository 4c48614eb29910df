//! A function's own `KRMFunctionDefinition` (KEP-2906): read and checked,
//! and turned into the header of `--help` and the reference of `--doc`.
//!
//! A function attaches its definition at compile time, usually the same
//! text its config's schema comes from:
//!
//! ```no_run
//! const DEFINITION: &str = r#"
//! apiVersion: config.kubernetes.io/v1alpha1
//! kind: KRMFunctionDefinition
//! spec:
//!   group: example.com
//!   names: {kind: SetTeam}
//!   description: Sets the team label.
//!   versions:
//!   - name: v1
//!     schema:
//!       openAPIV3Schema:
//!         type: object
//!         properties:
//!           team: {type: string, description: The team's name.}
//! "#;
//!
//! fn main() -> std::process::ExitCode {
//!     krusty_fn::Function::new(|_list: &mut krusty_fn::ResourceList| Ok(()))
//!         .definition(DEFINITION) // or include_str!("../definition.yaml")
//!         .run()
//! }
//! ```
//!
//! The text is read only when `--help` or `--doc` asks for it, so a
//! mistake in it never slows or fails a run; test it with
//! [`Definition::parse`].

use std::fmt::Write as _;

use krusty_yaml::Node;

/// What is wrong with a definition: the field (a path such as
/// `spec.versions[0].name`; empty for the document itself), the reason,
/// and the line it is on when known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DefinitionError {
    /// The field's path.
    pub path: String,
    /// Why it is wrong.
    pub message: String,
    /// Its 1-based line in the definition's text.
    pub line: Option<u32>,
}

impl std::fmt::Display for DefinitionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("KRMFunctionDefinition")?;
        if !self.path.is_empty() {
            write!(f, ", {}", self.path)?;
        }
        if let Some(line) = self.line {
            write!(f, " (line {line})")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for DefinitionError {}

impl From<DefinitionError> for crate::FnError {
    fn from(e: DefinitionError) -> crate::FnError {
        crate::FnError::Message(e.to_string())
    }
}

/// A `KRMFunctionDefinition`: the fields KEP-2906 gives a function.
/// Strings a definition leaves out are empty.
#[derive(Debug, Clone, PartialEq)]
pub struct Definition {
    /// `spec.group`: the group of the functionConfig's apiVersion.
    pub group: String,
    /// `spec.names.kind`: the functionConfig's kind (required).
    pub kind: String,
    /// `spec.description`.
    pub description: String,
    /// `spec.publisher`.
    pub publisher: String,
    /// `spec.home`: the function's home page.
    pub home: String,
    /// `spec.maintainers`.
    pub maintainers: Vec<String>,
    /// `spec.tags`.
    pub tags: Vec<String>,
    /// `spec.versions`, in their order.
    pub versions: Vec<Version>,
}

/// One of `spec.versions`.
#[derive(Debug, Clone, PartialEq)]
pub struct Version {
    /// `name`: the version of the functionConfig's apiVersion (required).
    pub name: String,
    /// `schema.openAPIV3Schema`.
    pub schema: Option<Node>,
    /// `conformWithSpecVersions`: the KRM function specifications it
    /// follows (none listed: v1).
    pub conform_with_spec_versions: Vec<String>,
    /// `idempotent`.
    pub idempotent: Option<bool>,
    /// `usage`: a URI of a README.
    pub usage: String,
    /// `examples`: URIs of READMEs.
    pub examples: Vec<String>,
    /// `license`.
    pub license: String,
    /// `maintainers` (instead of the definition's).
    pub maintainers: Vec<String>,
    /// `runtime.container.image`.
    pub image: String,
}

impl Definition {
    /// Reads a definition (YAML or JSON) and checks it: `kind` is
    /// `KRMFunctionDefinition`, `spec.names.kind` is given, every field
    /// read has its type, every version has a distinct name, and every
    /// schema is a mapping.
    pub fn parse(text: &str) -> Result<Definition, DefinitionError> {
        let error = |path: &str, message: String, line: Option<u32>| DefinitionError {
            path: path.into(),
            message,
            line,
        };
        let docs = krusty_yaml::parse_stream(text).map_err(|e| {
            error(
                "",
                format!("not YAML: {}", e.message),
                Some(e.pos.line).filter(|l| *l > 0),
            )
        })?;
        let root = docs
            .into_iter()
            .find_map(|d| d.root)
            .ok_or_else(|| error("", "the text holds no YAML document".into(), None))?;
        let r = Reader;
        if root.as_map().is_none() {
            return Err(r.wrong("", &root, "a mapping"));
        }
        let kind = r.string(&root, "kind", "")?;
        if kind != "KRMFunctionDefinition" {
            return Err(error(
                "kind",
                if kind.is_empty() {
                    "missing: expected KRMFunctionDefinition".into()
                } else {
                    format!("expected KRMFunctionDefinition, got '{kind}'")
                },
                root.get("kind").map(line),
            ));
        }
        let api_version = r.string(&root, "apiVersion", "")?;
        if !api_version.is_empty() && !api_version.starts_with("config.kubernetes.io/") {
            return Err(error(
                "apiVersion",
                format!("expected config.kubernetes.io/v1alpha1, got '{api_version}'"),
                root.get("apiVersion").map(line),
            ));
        }
        let spec = r
            .mapping(&root, "spec", "")?
            .ok_or_else(|| error("spec", "missing".into(), None))?;
        let names = r
            .mapping(spec, "names", "spec")?
            .ok_or_else(|| error("spec.names", "missing".into(), Some(line(spec))))?;
        let kind = r.string(names, "kind", "spec.names")?;
        if kind.is_empty() {
            return Err(error(
                "spec.names.kind",
                "missing: the kind of the functionConfig".into(),
                Some(line(names)),
            ));
        }
        let mut versions: Vec<Version> = Vec::new();
        if let Some(list) = r.sequence(spec, "versions", "spec")? {
            for (i, v) in list.iter().enumerate() {
                let path = format!("spec.versions[{i}]");
                let version = Version::read(&r, v, &path)?;
                if versions.iter().any(|o| o.name == version.name) {
                    return Err(error(
                        &format!("{path}.name"),
                        format!("version '{}' is defined twice", version.name),
                        v.get("name").map(line),
                    ));
                }
                versions.push(version);
            }
        }
        Ok(Definition {
            group: r.string(spec, "group", "spec")?,
            kind,
            description: r.string(spec, "description", "spec")?,
            publisher: r.string(spec, "publisher", "spec")?,
            home: r.string(spec, "home", "spec")?,
            maintainers: r.strings(spec, "maintainers", "spec")?,
            tags: r.strings(spec, "tags", "spec")?,
            versions,
        })
    }

    /// The functionConfig's apiVersions: `group/version` for each version
    /// (the version alone without a group).
    pub fn api_versions(&self) -> Vec<String> {
        self.versions
            .iter()
            .map(|v| api_version(&self.group, &v.name))
            .collect()
    }

    /// The header of `--help`: the kind, its apiVersions and the
    /// description.
    pub fn help_header(&self) -> String {
        let mut out = self.title();
        out.push('\n');
        if !self.description.is_empty() {
            out.push('\n');
            out.push_str(&wrap(&self.description, "", WIDTH));
        }
        out
    }

    /// The reference `--doc` prints: the description, who publishes the
    /// function, and for each version its specification versions, links
    /// and the fields of its config's schema.
    pub fn reference(&self) -> String {
        let mut out = self.help_header();
        let about: Vec<(&str, String)> = [
            ("Publisher", self.publisher.clone()),
            ("Home", self.home.clone()),
            ("Maintainers", self.maintainers.join(", ")),
            ("Tags", self.tags.join(", ")),
        ]
        .into_iter()
        .filter(|(_, v)| !v.is_empty())
        .collect();
        if !about.is_empty() {
            out.push('\n');
            for (name, value) in about {
                let _ = writeln!(out, "{name}: {value}");
            }
        }
        if self.versions.is_empty() {
            out.push_str("\nThe definition lists no versions.\n");
        }
        for v in &self.versions {
            out.push('\n');
            v.reference(&self.group, &self.kind, &mut out);
        }
        out
    }

    fn title(&self) -> String {
        let apis = self.api_versions();
        match (apis.is_empty(), self.group.is_empty()) {
            (false, _) => format!("{} ({})", self.kind, apis.join(", ")),
            (true, false) => format!("{} ({})", self.kind, self.group),
            (true, true) => self.kind.clone(),
        }
    }
}

impl Version {
    fn read(r: &Reader, v: &Node, path: &str) -> Result<Version, DefinitionError> {
        if v.as_map().is_none() {
            return Err(r.wrong(path, v, "a mapping"));
        }
        let name = r.string(v, "name", path)?;
        if name.is_empty() {
            return Err(DefinitionError {
                path: format!("{path}.name"),
                message: "missing: the version of the functionConfig's apiVersion".into(),
                line: Some(line(v)),
            });
        }
        let schema_path = format!("{path}.schema");
        let schema = match r.mapping(v, "schema", path)? {
            None => None,
            Some(s) => {
                let key = "openAPIV3Schema";
                let Some(found) = r.mapping(s, key, &schema_path)? else {
                    return Err(DefinitionError {
                        path: format!("{schema_path}.{key}"),
                        message: "missing: the schema of the functionConfig".into(),
                        line: Some(line(s)),
                    });
                };
                Some(found.clone())
            }
        };
        let image = match r.mapping(v, "runtime", path)? {
            None => String::new(),
            Some(rt) => match r.mapping(rt, "container", &format!("{path}.runtime"))? {
                None => String::new(),
                Some(c) => r.string(c, "image", &format!("{path}.runtime.container"))?,
            },
        };
        Ok(Version {
            name,
            schema,
            conform_with_spec_versions: r.strings(v, "conformWithSpecVersions", path)?,
            idempotent: r.boolean(v, "idempotent", path)?,
            usage: r.string(v, "usage", path)?,
            examples: r.strings(v, "examples", path)?,
            license: r.string(v, "license", path)?,
            maintainers: r.strings(v, "maintainers", path)?,
            image,
        })
    }

    fn reference(&self, group: &str, kind: &str, out: &mut String) {
        let _ = writeln!(
            out,
            "Version {}: apiVersion {}, kind {kind}",
            self.name,
            api_version(group, &self.name)
        );
        let specs = if self.conform_with_spec_versions.is_empty() {
            "v1 (none listed)".to_string()
        } else {
            self.conform_with_spec_versions.join(", ")
        };
        let _ = writeln!(out, "  KRM function specification: {specs}");
        if let Some(idempotent) = self.idempotent {
            let _ = writeln!(
                out,
                "  Idempotent: {}",
                if idempotent { "yes" } else { "no" }
            );
        }
        for (name, value) in [
            ("Image", &self.image),
            ("License", &self.license),
            ("Usage", &self.usage),
        ] {
            if !value.is_empty() {
                let _ = writeln!(out, "  {name}: {value}");
            }
        }
        if !self.maintainers.is_empty() {
            let _ = writeln!(out, "  Maintainers: {}", self.maintainers.join(", "));
        }
        if !self.examples.is_empty() {
            out.push_str("  Examples:\n");
            for e in &self.examples {
                let _ = writeln!(out, "    {e}");
            }
        }
        match &self.schema {
            None => out.push_str("  No schema: the definition does not describe the config.\n"),
            Some(schema) => {
                out.push_str("\n  Config fields:\n");
                if let Some(d) = schema.get("description").and_then(Node::as_str) {
                    out.push_str(&wrap(d, "    ", WIDTH));
                }
                let before = out.len();
                fields(schema, "", out);
                if out.len() == before {
                    let _ = writeln!(out, "    (any: {})", type_name(schema));
                }
            }
        }
    }
}

/// Reads typed fields, naming the path of a field of the wrong type.
struct Reader;

impl Reader {
    fn wrong(&self, path: &str, node: &Node, expected: &str) -> DefinitionError {
        let got = if node.as_map().is_some() {
            "a mapping".to_string()
        } else if node.as_seq().is_some() {
            "a list".to_string()
        } else {
            format!("'{}'", node.as_str().unwrap_or("null"))
        };
        DefinitionError {
            path: path.into(),
            message: format!("expected {expected}, got {got}"),
            line: Some(line(node)),
        }
    }

    fn field<'a>(&self, node: &'a Node, key: &str) -> Option<&'a Node> {
        node.get(key).filter(|n| !n.is_null())
    }

    fn string(&self, node: &Node, key: &str, at: &str) -> Result<String, DefinitionError> {
        match self.field(node, key) {
            None => Ok(String::new()),
            Some(n) => n
                .as_str()
                .map(str::to_string)
                .ok_or_else(|| self.wrong(&join(at, key), n, "a string")),
        }
    }

    fn boolean(&self, node: &Node, key: &str, at: &str) -> Result<Option<bool>, DefinitionError> {
        match self.field(node, key) {
            None => Ok(None),
            Some(n) => match n.as_str() {
                Some("true") => Ok(Some(true)),
                Some("false") => Ok(Some(false)),
                _ => Err(self.wrong(&join(at, key), n, "true or false")),
            },
        }
    }

    fn strings(&self, node: &Node, key: &str, at: &str) -> Result<Vec<String>, DefinitionError> {
        let path = join(at, key);
        let Some(list) = self.sequence(node, key, at)? else {
            return Ok(Vec::new());
        };
        list.iter()
            .enumerate()
            .map(|(i, n)| {
                n.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| self.wrong(&format!("{path}[{i}]"), n, "a string"))
            })
            .collect()
    }

    fn mapping<'a>(
        &self,
        node: &'a Node,
        key: &str,
        at: &str,
    ) -> Result<Option<&'a Node>, DefinitionError> {
        match self.field(node, key) {
            None => Ok(None),
            Some(n) if n.as_map().is_some() => Ok(Some(n)),
            Some(n) => Err(self.wrong(&join(at, key), n, "a mapping")),
        }
    }

    fn sequence<'a>(
        &self,
        node: &'a Node,
        key: &str,
        at: &str,
    ) -> Result<Option<&'a [Node]>, DefinitionError> {
        match self.field(node, key) {
            None => Ok(None),
            Some(n) => n
                .as_seq()
                .map(|s| Some(&s[..]))
                .ok_or_else(|| self.wrong(&join(at, key), n, "a list")),
        }
    }
}

fn line(node: &Node) -> u32 {
    node.pos().line
}

fn join(at: &str, key: &str) -> String {
    if at.is_empty() {
        key.to_string()
    } else {
        format!("{at}.{key}")
    }
}

fn api_version(group: &str, version: &str) -> String {
    if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    }
}

/// The width descriptions are wrapped to.
const WIDTH: usize = 76;

/// The properties of `schema` (also those of its `allOf` parts), each a
/// line `path: type, facts` with its description below, then theirs.
fn fields(schema: &Node, path: &str, out: &mut String) {
    let required: Vec<&str> = parts(schema)
        .filter_map(|s| s.get("required").and_then(Node::as_seq))
        .flat_map(|r| r.iter().filter_map(Node::as_str))
        .collect();
    for part in parts(schema) {
        let Some(props) = part.get("properties").and_then(Node::as_map) else {
            continue;
        };
        for (key, prop) in props.iter() {
            let Some(key) = key.as_str() else { continue };
            let here = child_path(path, key);
            field(prop, &here, required.contains(&key), out);
        }
    }
    for (key, step) in [("items", "[]"), ("additionalProperties", ".<name>")] {
        let Some(inner) = schema.get(key).filter(|i| i.as_map().is_some()) else {
            continue;
        };
        let here = format!("{path}{step}");
        let here = here.trim_start_matches('.');
        if says_more_than_its_type(inner) {
            field(inner, here, false, out);
        } else {
            fields(inner, here, out);
        }
    }
}

/// One field's lines, then its own fields.
fn field(schema: &Node, path: &str, required: bool, out: &mut String) {
    let mut facts = vec![type_name(schema)];
    if required {
        facts.push("required".into());
    }
    if schema.get("nullable").and_then(Node::as_str) == Some("true") {
        facts.push("nullable".into());
    }
    if let Some(values) = schema.get("enum").and_then(Node::as_seq) {
        let values: Vec<String> = values.iter().map(literal).collect();
        facts.push(format!("one of: {}", values.join(", ")));
    }
    if let Some(default) = schema.get("default") {
        facts.push(format!("default: {}", literal(default)));
    }
    for (key, name) in [
        ("format", "format"),
        ("pattern", "pattern"),
        ("minimum", "minimum"),
        ("maximum", "maximum"),
        ("minLength", "min length"),
        ("maxLength", "max length"),
        ("minItems", "min items"),
        ("maxItems", "max items"),
        ("minProperties", "min properties"),
        ("maxProperties", "max properties"),
    ] {
        if let Some(v) = schema.get(key) {
            facts.push(format!("{name}: {}", literal(v)));
        }
    }
    for (key, how) in [("oneOf", "exactly one"), ("anyOf", "at least one")] {
        if let Some(alts) = schema.get(key).and_then(Node::as_seq) {
            facts.push(format!("matches {how} of {} schemas ({key})", alts.len()));
        }
    }
    let _ = writeln!(out, "    {path}: {}", facts.join(", "));
    if let Some(d) = schema.get("description").and_then(Node::as_str) {
        out.push_str(&wrap(d, "        ", WIDTH));
    }
    fields(schema, path, out);
}

/// The schema and the parts of its `allOf`.
fn parts(schema: &Node) -> impl Iterator<Item = &Node> {
    std::iter::once(schema).chain(
        schema
            .get("allOf")
            .and_then(Node::as_seq)
            .into_iter()
            .flat_map(|s| s.iter()),
    )
}

/// An item or value schema gets a line of its own when it says more
/// than its type (which its parent's type already names) and its fields.
fn says_more_than_its_type(schema: &Node) -> bool {
    schema.as_map().is_some_and(|m| {
        m.iter().any(|(k, _)| {
            !matches!(
                k.as_str(),
                Some("type" | "items" | "additionalProperties" | "properties" | "required")
            )
        })
    })
}

/// `string`, `array of string`, `object of integer`, `integer or string`,
/// `any`.
fn type_name(schema: &Node) -> String {
    let flag = |key: &str| schema.get(key).and_then(Node::as_str) == Some("true");
    if flag("x-kubernetes-int-or-string") {
        return "integer or string".into();
    }
    let declared = schema.get("type").and_then(Node::as_str);
    let t = declared.unwrap_or(if schema.get("properties").is_some() {
        "object"
    } else if schema.get("items").is_some() {
        "array"
    } else {
        ""
    });
    match t {
        "array" => match schema.get("items").filter(|i| i.as_map().is_some()) {
            Some(items) => format!("array of {}", type_name(items)),
            None => "array".into(),
        },
        "object" => {
            let values = schema
                .get("additionalProperties")
                .filter(|v| v.as_map().is_some());
            match values {
                Some(v) if schema.get("properties").is_none() => {
                    format!("object of {}", type_name(v))
                }
                _ if flag("x-kubernetes-preserve-unknown-fields") => "object (any fields)".into(),
                _ => "object".into(),
            }
        }
        "" => "any".into(),
        other => other.into(),
    }
}

/// A value as JSON: `"web"`, `3`, `true`, `["a","b"]`.
fn literal(node: &Node) -> String {
    serde_json::to_string(node).unwrap_or_else(|_| node.as_str().unwrap_or("?").to_string())
}

/// `a.b`, or `a["b.c"]` for a key that is not a plain name.
fn child_path(path: &str, key: &str) -> String {
    let plain = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '<' | '>'));
    match (path.is_empty(), plain) {
        (true, true) => key.to_string(),
        (false, true) => format!("{path}.{key}"),
        (_, false) => format!("{path}[{}]", serde_json::Value::from(key)),
    }
}

/// `text` with every line prefixed by `indent`, paragraphs wrapped to
/// `width` columns; the author's line breaks are kept.
fn wrap(text: &str, indent: &str, width: usize) -> String {
    let mut out = String::new();
    for source in text.trim_end().lines() {
        let mut line = String::from(indent);
        for word in source.split_whitespace() {
            if line.len() > indent.len() && line.len() + 1 + word.len() > width {
                out.push_str(&line);
                out.push('\n');
                line = String::from(indent);
            }
            if line.len() > indent.len() {
                line.push(' ');
            }
            line.push_str(word);
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEF: &str = "\
apiVersion: config.kubernetes.io/v1alpha1
kind: KRMFunctionDefinition
spec:
  group: example.com
  names: {kind: SetTeam}
  description: Sets the team label on every resource.
  publisher: example.com
  versions:
  - name: v1
    idempotent: true
    license: Apache 2.0
    usage: https://example.com/set-team
    examples: [https://example.com/set-team/basic]
    schema:
      openAPIV3Schema:
        type: object
        required: [team]
        properties:
          team: {type: string, description: The team's name., minLength: 1}
          mode: {type: string, enum: [add, replace], default: add}
          owners:
            type: array
            items:
              type: object
              required: [name]
              properties:
                name: {type: string}
                \"example.com/x\": {type: integer}
          extra: {type: object, additionalProperties: {type: string}}
          tags: {type: array, items: {type: string, pattern: \"^[a-z]+$\", description: A tag.}}
          ports:
            type: object
            additionalProperties:
              type: object
              properties:
                port: {type: integer, x-kubernetes-int-or-string: true}
";

    #[test]
    fn a_definition_reads_into_its_fields() {
        let d = Definition::parse(DEF).unwrap();
        assert_eq!(d.kind, "SetTeam");
        assert_eq!(d.api_versions(), ["example.com/v1"]);
        assert_eq!(d.versions[0].idempotent, Some(true));
        assert_eq!(
            d.versions[0].examples,
            ["https://example.com/set-team/basic"]
        );
        assert_eq!(
            d.help_header(),
            "SetTeam (example.com/v1)\n\nSets the team label on every resource.\n"
        );
        let doc = d.reference();
        assert!(
            doc.contains("    team: string, required, min length: 1\n        The team's name.\n"),
            "{doc}"
        );
        assert!(
            doc.contains("    mode: string, one of: \"add\", \"replace\", default: \"add\"\n"),
            "{doc}"
        );
        assert!(doc.contains("    owners: array of object\n    owners[].name: string, required\n    owners[][\"example.com/x\"]: integer\n"), "{doc}");
        assert!(doc.contains("    extra: object of string\n"), "{doc}");
        assert!(doc.contains("    tags: array of string\n    tags[]: string, pattern: \"^[a-z]+$\"\n        A tag.\n"), "{doc}");
        assert!(
            doc.contains("    ports: object of object\n    ports.<name>.port: integer or string\n"),
            "{doc}"
        );
        assert!(
            doc.contains("  KRM function specification: v1 (none listed)\n"),
            "{doc}"
        );
    }

    #[test]
    fn a_wrong_definition_names_the_field() {
        let err = |text: &str| Definition::parse(text).unwrap_err().to_string();
        assert_eq!(
            err("kind: Kustomization\n"),
            "KRMFunctionDefinition, kind (line 1): expected KRMFunctionDefinition, got 'Kustomization'"
        );
        assert_eq!(
            err("kind: KRMFunctionDefinition\nspec:\n  names: {}\n"),
            "KRMFunctionDefinition, spec.names.kind (line 3): missing: the kind of the functionConfig"
        );
        assert_eq!(
            err("kind: KRMFunctionDefinition\nspec:\n  names: {kind: A}\n  versions:\n  - name: v1\n    examples: https://x\n"),
            "KRMFunctionDefinition, spec.versions[0].examples (line 6): expected a list, got 'https://x'"
        );
        assert_eq!(
            err("kind: KRMFunctionDefinition\nspec:\n  names: {kind: A}\n  versions:\n  - name: v1\n    schema: {openAPIV3Schema: [a]}\n"),
            "KRMFunctionDefinition, spec.versions[0].schema.openAPIV3Schema (line 6): expected a mapping, got a list"
        );
        assert_eq!(
            err("kind: KRMFunctionDefinition\nspec:\n  names: {kind: A}\n  versions: [{name: v1}, {name: v1}]\n"),
            "KRMFunctionDefinition, spec.versions[1].name (line 4): version 'v1' is defined twice"
        );
        assert!(
            err("{a: [}\n").starts_with("KRMFunctionDefinition"),
            "{}",
            err("{a: [}\n")
        );
        assert!(err("").contains("no YAML document"));
    }

    #[test]
    fn descriptions_wrap_and_keep_their_lines() {
        let long = "word ".repeat(30);
        let wrapped = wrap(&long, "  ", 20);
        assert!(wrapped
            .lines()
            .all(|l| l.len() <= 20 && l.starts_with("  word")));
        assert_eq!(wrap("a\nb\n", "- ", 76), "- a\n- b\n");
    }
}
