//! The `Composition` file, read strictly: every field is known, every
//! transformer config has an `apiVersion`, a `kind` and a valid name
//! (defaulted from the kind), and each error names the file, line, column
//! and field.

use std::path::{Path, PathBuf};

use krusty_yaml::{Node, Pos, Value};

pub use crate::decode::child_field;
use crate::decode::{walk, Decode, Dialect, Documents, Entry, Kind, Problem, Strictness::Strict};
use crate::error::{SchemaError, SchemaResult};

/// The API version of a Composition.
pub const API_VERSION: &str = "kustomize.config.k8s.io/v1alpha1";

/// A composition file as written.
#[derive(Debug)]
pub struct CompositionFile {
    /// The file.
    pub path: PathBuf,
    /// `transformersFrom`.
    pub imports: Vec<Import>,
    /// `transformerOverrides`.
    pub overrides: Vec<Override>,
    /// `transformers`.
    pub transformers: Vec<Listed>,
    /// `transformerOrder`, when given, and where its key is written.
    pub order: Option<(Vec<OrderEntry>, Pos)>,
    /// `catalogs` (KEP-2906): the references, and where each is written.
    pub catalogs: Vec<(String, Pos)>,
}

/// A `transformers` entry.
#[derive(Debug)]
pub enum Listed {
    /// A config written in place (checked).
    Inline(Node),
    /// The path of a file of configs, relative to the composition file.
    File {
        /// The path as written.
        path: String,
        /// Where it is written.
        pos: Pos,
    },
}

/// A `transformerOverrides` entry: a strategic merge patch for an
/// imported transformer.
#[derive(Debug)]
pub struct Override {
    /// The patch: a checked transformer config (name defaulted) without its
    /// top-level `$patch`; nested mappings may hold theirs.
    pub patch: Node,
    /// What its top-level `$patch` asks for (merge when it has none).
    pub directive: Directive,
}

/// A strategic merge directive: the value of a mapping's `$patch` key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Directive {
    /// The mapping merges into the one it patches (the default).
    Merge,
    /// The mapping takes the place of the one it patches.
    Replace,
    /// The field is removed.
    Delete,
}

/// The key of a strategic merge directive.
pub const DIRECTIVE_KEY: &str = "$patch";

/// The directive of the mapping `node` of `file`, at `field` (a dotted
/// path, for messages): merge when it has no `$patch`; a `$patch` that is
/// not `merge`, `replace` or `delete` is an error.
pub fn directive(file: &Path, node: &Node, field: &str) -> SchemaResult<Directive> {
    let Some(value) = node.get(DIRECTIVE_KEY) else {
        return Ok(Directive::Merge);
    };
    let at = child_field(field, DIRECTIVE_KEY);
    match value.as_str().filter(|_| !value.is_null()) {
        Some("merge") => Ok(Directive::Merge),
        Some("replace") => Ok(Directive::Replace),
        Some("delete") => Ok(Directive::Delete),
        other => {
            let message = format!(
                "'{}' is not one of merge, replace, delete",
                other.unwrap_or("")
            );
            let d = In(file, Some("transformerOverrides"));
            Err(d.invalid(value, &at, message))
        }
    }
}

/// A `transformersFrom` entry.
#[derive(Debug)]
pub struct Import {
    /// A composition file, or a folder holding one.
    pub path: String,
    /// Where the imported transformers go.
    pub mode: ImportMode,
    /// Where the entry is written.
    pub pos: Pos,
}

/// Where imported transformers go in the consolidated list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImportMode {
    /// Before the local transformers (the default).
    Prepend,
    /// After them.
    Append,
}

/// A `transformerOrder` entry.
#[derive(Debug)]
pub struct OrderEntry {
    /// `apiVersion`, when given.
    pub api_version: Option<String>,
    /// `kind`, when given.
    pub kind: Option<String>,
    /// `name`.
    pub name: String,
    /// Where the entry is written.
    pub pos: Pos,
}

impl OrderEntry {
    /// Whether the entry names the transformer config of this
    /// `api_version`, `kind` and `name`: its name, and its kind and
    /// apiVersion where the entry gives them.
    pub fn names(&self, api_version: &str, kind: &str, name: &str) -> bool {
        name == self.name
            && self.kind.as_deref().is_none_or(|k| k == kind)
            && self.api_version.as_deref().is_none_or(|a| a == api_version)
    }

    /// The entry as written, for messages.
    pub fn describe(&self) -> String {
        match (&self.api_version, &self.kind) {
            (None, None) => format!("name '{}'", self.name),
            _ => format!(
                "{} {} '{}'",
                self.api_version.as_deref().unwrap_or("*"),
                self.kind.as_deref().unwrap_or("*"),
                self.name
            ),
        }
    }
}

/// Krusty's words for a composition file (and the list a transformer
/// config is checked for): `composition file FILE: list: message (line
/// L, column C)`.
struct In<'a>(&'a Path, Option<&'a str>);

impl Dialect for In<'_> {
    fn error(&self, pos: Pos, field: &str, problem: Problem<'_>) -> SchemaError {
        let message = match &problem {
            Problem::Unknown(_) => format!("unknown field '{field}'"),
            Problem::Mismatch(Kind::Mapping, _) if field.is_empty() => {
                "a composition must be a YAML mapping".to_string()
            }
            Problem::Mismatch(..) => format!("field '{field}' {problem}"),
            Problem::Required(_) => format!("field '{field}' is {problem}"),
            Problem::EmptyValue => format!("field '{field}' is empty"),
            Problem::SecondDocument => {
                "a composition file holds one YAML document; a second one starts here".to_string()
            }
            Problem::Invalid(m) if !field.is_empty() => format!("field '{field}': {m}"),
            _ => problem.to_string(),
        };
        let e = SchemaError::new(match self.1 {
            Some(list) => format!("{list}: {message}"),
            None => message,
        });
        match problem {
            Problem::EmptyFile => e,
            _ => e.located(None, pos),
        }
        .context(format!("composition file {}", self.0.display()))
    }

    fn null_is_empty(&self, kind: Kind) -> bool {
        kind == Kind::Sequence
    }
}

/// Reads the composition in `text`, the content of `path`.
pub fn parse(path: &Path, text: &str) -> SchemaResult<CompositionFile> {
    let d = In(path, None);
    // One file, one composition: what follows it would be ignored.
    let root = d.root(text, Documents::One)?;
    let mut file = CompositionFile {
        path: path.to_path_buf(),
        imports: Vec::new(),
        overrides: Vec::new(),
        transformers: Vec::new(),
        order: None,
        catalogs: Vec::new(),
    };
    let (mut api_version, mut kind) = (None, None);
    walk!(d, &root, "", Strict, |e| match e.name {
        "apiVersion" => api_version = Some(e.value),
        "kind" => kind = Some(e.value),
        "metadata" => check_metadata(path, e.value, e.name)?,
        "transformersFrom" => {
            for item in d.sequence(e.value, e.name)? {
                file.imports.push(import(path, item)?);
            }
        }
        "transformerOverrides" => {
            for item in d.sequence(e.value, e.name)? {
                file.overrides.push(override_entry(path, item)?);
            }
        }
        "transformers" => {
            for item in d.sequence(e.value, e.name)? {
                file.transformers.push(match &item.value {
                    Value::Scalar(s) if !item.is_null() => Listed::File {
                        path: s.text.to_string(),
                        pos: item.pos(),
                    },
                    _ => {
                        let mut config = item.clone();
                        check_transformer(path, &mut config, e.name)?;
                        Listed::Inline(config)
                    }
                });
            }
        }
        "catalogs" => {
            for item in d.sequence(e.value, e.name)? {
                let written = d.text(item, e.name)?;
                file.catalogs.push((written.to_string(), item.pos()));
            }
        }
        "transformerOrder" => {
            let order = d
                .sequence(e.value, e.name)?
                .iter()
                .map(|i| order_entry(path, i));
            file.order = Some((order.collect::<SchemaResult<_>>()?, e.key.pos()));
        }
    })?;
    for (name, node, wanted) in [
        ("apiVersion", api_version, API_VERSION),
        ("kind", kind, "Composition"),
    ] {
        match node.and_then(|n| Some((n, n.as_str()?))) {
            Some((_, written)) if written == wanted => {}
            Some((n, other)) => {
                return Err(d.invalid(n, name, format!("'{other}' is not {wanted}")))
            }
            None => return Err(d.required_as(&root, name, wanted)),
        }
    }
    Ok(file)
}

fn import(path: &Path, item: &Node) -> SchemaResult<Import> {
    let d = In(path, None);
    let mut out = Import {
        path: String::new(),
        mode: ImportMode::Prepend,
        pos: item.pos(),
    };
    walk!(d, item, "transformersFrom", Strict, |e| match e.name {
        "path" => out.path = d.text(e.value, &e.path)?.to_string(),
        "importMode" => {
            out.mode = match d.text(e.value, &e.path)? {
                "prepend" => ImportMode::Prepend,
                "append" => ImportMode::Append,
                other => {
                    let message = format!("'{other}' is not one of prepend, append");
                    return Err(d.invalid(e.value, &e.path, message));
                }
            }
        }
    })?;
    if out.path.is_empty() {
        return Err(d.required(item, "transformersFrom.path"));
    }
    Ok(out)
}

/// A `transformerOverrides` entry: its directives valid, and the config
/// they leave checked as a transformer config.
fn override_entry(path: &Path, item: &Node) -> SchemaResult<Override> {
    let field = "transformerOverrides";
    let mut patch = item.clone();
    if patch.as_map().is_none() {
        check_transformer(path, &mut patch, field)?;
    }
    check_directives(path, &patch, "")?;
    let directive = directive(path, &patch, "")?;
    patch.remove(DIRECTIVE_KEY);
    // The fields are those of a transformer config once the directives
    // are taken out; the name defaulted there is the patch's too.
    let mut checked = without_directives(&patch);
    check_transformer(path, &mut checked, field)?;
    if patch.get_path(&["metadata", "name"]).is_none() {
        if let Some(name) = checked.get_path(&["metadata", "name"]).cloned() {
            if patch.get("metadata").is_none_or(Node::is_null) {
                patch.set("metadata", Node::map());
            }
            if let Some(metadata) = patch.get_mut("metadata") {
                metadata.set("name", name);
            }
        }
    }
    Ok(Override { patch, directive })
}

/// Checks every `$patch` in the mappings of `node` (at `field`), lists
/// aside: lists replace whole, so what they hold is data. `metadata` may
/// not be deleted: its name says which transformer the override is for.
fn check_directives(path: &Path, node: &Node, field: &str) -> SchemaResult<()> {
    let Some(entries) = node.as_map() else {
        return Ok(());
    };
    if field == "metadata" && directive(path, node, field)? == Directive::Delete {
        let pos = node.get(DIRECTIVE_KEY).map_or(node.pos(), Node::pos);
        let message =
            "field 'metadata' cannot be deleted: it names the transformer the override applies to";
        let d = In(path, Some("transformerOverrides"));
        return Err(d.error(pos, "", Problem::Invalid(message.to_string())));
    }
    directive(path, node, field)?;
    for (key, value) in entries {
        let name = key.key_str().unwrap_or("");
        if name == DIRECTIVE_KEY {
            continue;
        }
        let inner = child_field(field, name);
        check_directives(path, value, &inner)?;
    }
    Ok(())
}

/// `node` with the `$patch` keys of its mappings taken out (lists as
/// they are).
fn without_directives(node: &Node) -> Node {
    let mut out = node.clone();
    if let Some(entries) = out.as_map_mut() {
        entries.retain(|(key, _)| key.key_str() != Some(DIRECTIVE_KEY));
        for (_, value) in entries.iter_mut() {
            *value = without_directives(value);
        }
    }
    out
}

fn order_entry(path: &Path, item: &Node) -> SchemaResult<OrderEntry> {
    let d = In(path, None);
    let mut out = OrderEntry {
        api_version: None,
        kind: None,
        name: String::new(),
        pos: item.pos(),
    };
    let text = |e: &Entry| Ok::<_, SchemaError>(d.text(e.value, &e.path)?.to_string());
    walk!(d, item, "transformerOrder", Strict, |e| match e.name {
        "name" => out.name = text(&e)?,
        "kind" => out.kind = Some(text(&e)?),
        "apiVersion" => out.api_version = Some(text(&e)?),
    })?;
    if out.name.is_empty() {
        return Err(d.required(item, "transformerOrder.name"));
    }
    Ok(out)
}

/// Checks a transformer config written in `field` of `path` (or in a file
/// of configs) and gives it its default name (the kind in kebab case).
pub fn check_transformer(path: &Path, config: &mut Node, field: &str) -> SchemaResult<()> {
    let (d, listed) = (In(path, None), In(path, Some(field)));
    if config.as_map().is_none() {
        let message = format!("an entry of '{field}' must be a transformer config (a mapping)");
        return Err(d.invalid(config, "", message));
    }
    let required = |name: &str| match config.get(name) {
        Some(v) => Ok((d.text(v, name)?.to_string(), v)),
        None => Err(listed.required(config, name)),
    };
    let (api_version, at) = required("apiVersion")?;
    if api_version != "builtin" && !valid_api_version(&api_version) {
        let message = format!("'{api_version}' is not 'builtin' nor GROUP/VERSION in lower case");
        return Err(listed.invalid(at, "apiVersion", message));
    }
    let (kind, _) = required("kind")?;
    if kind.is_empty() {
        return Err(listed.error(config.pos(), "kind", Problem::EmptyValue));
    }
    if let Some(metadata) = config.get("metadata") {
        check_metadata(path, metadata, &format!("{field}.metadata"))?;
    }
    if let Some(runtime) = config.get("runtime") {
        check_runtime(path, runtime)?;
    }
    let name = config.get_path(&["metadata", "name"]);
    match name.and_then(|n| Some((n.as_str()?, n))) {
        Some((name, at)) if !valid_name(name) => {
            let message = format!("'{name}' is not a valid name (lower case letters, digits, '-' and '.', starting and ending with a letter or digit, at most 253 characters)");
            return Err(listed.invalid(at, "metadata.name", message));
        }
        Some(_) => {}
        None => {
            let default = kebab_case(&kind);
            if !valid_name(&default) {
                let message =
                    format!("kind '{kind}' gives no valid default name; set metadata.name");
                return Err(listed.invalid(config, "", message));
            }
            if config.get("metadata").is_none_or(Node::is_null) {
                config.set("metadata", Node::map());
            }
            if let Some(metadata) = config.get_mut("metadata") {
                metadata.set("name", Node::string(default));
            }
        }
    }
    Ok(())
}

/// `metadata`: a mapping of `name`, `namespace`, `labels`, `annotations`.
fn check_metadata(path: &Path, metadata: &Node, field: &str) -> SchemaResult<()> {
    if metadata.is_null() {
        return Ok(());
    }
    let d = In(path, None);
    walk!(d, metadata, field, Strict, |e| match e.name {
        "name" | "namespace" => drop(d.text(e.value, &e.path)?),
        "labels" | "annotations" if !e.value.is_null() => drop(d.mapping(e.value, &e.path)?),
    })
}

/// `runtime`: one of `exec`, `container`, `starlark` with their fields.
fn check_runtime(path: &Path, runtime: &Node) -> SchemaResult<()> {
    let d = In(path, None);
    for (key, value) in d.mapping(runtime, "runtime")? {
        let name = key.key_str().unwrap_or("");
        let known: &[&str] = match name {
            "exec" => &["path", "args"],
            "container" => &["image", "network", "mounts", "envs"],
            "starlark" => &["path", "url"],
            other => {
                let message = format!(
                    "unknown field 'runtime.{other}' (expected one of exec, container, starlark)"
                );
                return Err(d.invalid(key, "", message));
            }
        };
        if !value.is_null() {
            let at = format!("runtime.{name}");
            d.each(value, &at, known, Strict, |_| Ok(()))?;
        }
    }
    Ok(())
}

/// `GROUP/VERSION`: lower-case letters, digits and dots, then a slash and
/// lower-case letters and digits.
fn valid_api_version(text: &str) -> bool {
    let Some((group, version)) = text.split_once('/') else {
        return false;
    };
    let group_ok = group
        .bytes()
        .next()
        .is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        && group
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'.');
    let version_ok = !version.is_empty()
        && version
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
    group_ok && version_ok
}

/// A DNS subdomain name (RFC 1123), as Kubernetes names objects.
pub fn valid_name(name: &str) -> bool {
    name.len() <= 253
        && !name.is_empty()
        && name.split('.').all(|label| {
            let b = label.as_bytes();
            !b.is_empty()
                && b.first()
                    .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
                && b.last()
                    .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
                && b.iter()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        })
}

/// A kind in kebab case: `JavaApplication` → `java-application`,
/// `HTTPLoadBalancer` → `http-load-balancer`.
pub fn kebab_case(kind: &str) -> String {
    let chars: Vec<char> = kind.chars().collect();
    let mut out = String::new();
    for (i, c) in chars.iter().enumerate() {
        if c.is_uppercase() && i > 0 {
            let previous = chars[i - 1];
            let next_is_lower = chars.get(i + 1).is_some_and(|n| n.is_lowercase());
            if previous.is_lowercase()
                || previous.is_ascii_digit()
                || (previous.is_uppercase() && next_is_lower)
            {
                out.push('-');
            }
        }
        out.extend(c.to_lowercase());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_in_kebab_case() {
        for (kind, name) in [
            ("JavaApplication", "java-application"),
            ("HTTPLoadBalancer", "http-load-balancer"),
            ("ConfigMapGenerator", "config-map-generator"),
            ("Logger", "logger"),
            ("PrefixSuffixTransformer", "prefix-suffix-transformer"),
            ("S3Bucket", "s3-bucket"),
        ] {
            assert_eq!(kebab_case(kind), name);
        }
    }

    #[test]
    fn names_and_api_versions() {
        assert!(valid_name("my-app.v1"));
        assert!(!valid_name("myFancyNamePrefixer"));
        assert!(!valid_name("-a"));
        assert!(!valid_name(&"a".repeat(254)));
        assert!(valid_api_version("example.com/v1"));
        assert!(valid_api_version("kustomize.config.k8s.io/v1beta1"));
        assert!(!valid_api_version("v1"));
        assert!(!valid_api_version("Example.com/v1"));
    }

    #[test]
    fn errors_name_the_file_line_and_column() {
        let path = Path::new("c/composition.yaml");
        let head = "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Composition\n";
        for (text, want) in [
            ("", "composition file c/composition.yaml: the file is empty"),
            (
                "a: [\n",
                "composition file c/composition.yaml: not valid YAML: did not find expected ',' or closing bracket before the end of the stream (line 2, column 1)",
            ),
            (
                &format!("{head}colour: red\n"),
                "composition file c/composition.yaml: unknown field 'colour' (line 3, column 1)",
            ),
            (
                &format!("{head}transformersFrom:\n- path: x\n  importMode: last\n"),
                "composition file c/composition.yaml: field 'transformersFrom.importMode': 'last' is not one of prepend, append (line 5, column 15)",
            ),
            (
                "kind: Composition\n",
                "composition file c/composition.yaml: field 'apiVersion' is required (kustomize.config.k8s.io/v1alpha1) (line 1, column 1)",
            ),
        ] {
            let got = parse(path, text).unwrap_err();
            assert_eq!(got.to_string(), want);
            assert!(got.has_location() == want.ends_with(')'), "{got:?}");
        }
    }

    #[test]
    fn a_transformer_config_gets_its_default_name() {
        let mut config =
            krusty_yaml::first_root("apiVersion: example.com/v1\nkind: JavaApplication\n")
                .unwrap()
                .unwrap();
        check_transformer(Path::new("c.yaml"), &mut config, "transformers").unwrap();
        assert_eq!(
            config
                .get_path(&["metadata", "name"])
                .and_then(Node::as_str),
            Some("java-application")
        );
    }
}
