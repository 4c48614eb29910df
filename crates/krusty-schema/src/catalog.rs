//! The catalog API (KEP-2906), read strictly: `Catalog` and
//! `KRMFunctionCatalog` files (a list of functions) and standalone
//! `KRMFunctionDefinition` files (one function). Every field is known and
//! typed; an error names the file, the line and column, and the field.
//!
//! Besides the KEP's schema, the forms its examples use are accepted: a
//! function's `kind` written directly (instead of `names.kind`), a
//! `runtime` beside `versions` (it applies to every version), a
//! `starlark: URL` runtime, and `requireFilesystem` for
//! `requireStorageMount`. `docs/catalog.md` lists them.

use krusty_yaml::{Node, Pos, Value};

use crate::error::{SchemaError, SchemaResult};

/// The API version of catalogs and definitions.
pub const API_VERSION: &str = "config.kubernetes.io/v1alpha1";

/// A catalog file (or a definition file, as a catalog of one function).
#[derive(Debug, Clone, PartialEq)]
pub struct Catalog {
    /// `kind`: `Catalog`, `KRMFunctionCatalog` or `KRMFunctionDefinition`.
    pub kind: String,
    /// `metadata.name` (empty when not given).
    pub name: String,
    /// The functions, in file order.
    pub functions: Vec<FunctionDef>,
}

/// One function of a catalog.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FunctionDef {
    /// `group`: the group of its configs' apiVersion.
    pub group: String,
    /// `names.kind` (or `kind`): the kind of its configs.
    pub kind: String,
    /// `description`.
    pub description: String,
    /// `publisher`.
    pub publisher: String,
    /// `versions`, in file order.
    pub versions: Vec<VersionDef>,
    /// `home`.
    pub home: String,
    /// `maintainers`.
    pub maintainers: Vec<String>,
    /// `tags`.
    pub tags: Vec<String>,
}

/// One version of a function.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct VersionDef {
    /// `name`: the version of its configs' apiVersion.
    pub name: String,
    /// `schema.openAPIV3Schema`: what its configs must fit.
    pub schema: Option<Node>,
    /// `idempotent`: the same config and input always give the same output.
    pub idempotent: bool,
    /// `conformWithSpecVersions`: the function specification versions it
    /// follows (`v1`, `v2`).
    pub spec_versions: Vec<String>,
    /// `runtime` (its own, or the one written beside `versions`).
    pub runtime: RuntimeDef,
    /// `usage`.
    pub usage: String,
    /// `examples`.
    pub examples: Vec<String>,
    /// `license`.
    pub license: String,
    /// `maintainers`.
    pub maintainers: Vec<String>,
}

/// How a function version runs.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RuntimeDef {
    /// `container`.
    pub container: Option<ContainerDef>,
    /// `exec.platforms`.
    pub exec: Option<Vec<Platform>>,
    /// `starlark`: the URL of a program (the KEP's examples' form).
    pub starlark: Option<String>,
}

/// A container runtime.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ContainerDef {
    /// `image`.
    pub image: String,
    /// `sha256`: the image's digest (64 hex digits); it then runs by digest.
    pub sha256: Option<String>,
    /// `requireNetwork`.
    pub require_network: bool,
    /// `requireStorageMount` (or `requireFilesystem`).
    pub require_storage_mount: bool,
}

/// One platform of an exec runtime.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Platform {
    /// `bin`: the executable's name (in an archive: its path in it).
    pub bin: String,
    /// `os`: Go's name (`linux`, `darwin`, `windows`).
    pub os: String,
    /// `arch`: Go's name (`amd64`, `arm64`).
    pub arch: String,
    /// `uri`: `https://`, `oci://` or `file://`.
    pub uri: String,
    /// `sha256` of what `uri` names (required to run; checked before).
    pub sha256: Option<String>,
}

/// The error for the value `node` of the field `field` (a path,
/// `spec.krmFunctions[0].group`; empty: the whole file). Printed with
/// [`SchemaError::place_first`], it reads `file:line:col: field 'f': why`.
fn error(node: &Node, field: &str, message: impl Into<String>) -> SchemaError {
    let e = SchemaError::new(message);
    if field.is_empty() {
        e.located(None, node.pos())
    } else {
        e.in_field(field, node.pos())
    }
}

type Read<T> = SchemaResult<T>;

/// Reads the catalog or definition in `text` (the first document).
pub fn parse(text: &str) -> Read<Catalog> {
    let docs = krusty_yaml::parse_stream(text).map_err(|e| {
        SchemaError::new(format!("not valid YAML: {}", e.message)).located(None, e.pos)
    })?;
    let root = docs.into_iter().find_map(|d| d.root).ok_or_else(|| {
        SchemaError::new("the file is empty").located(None, Pos { line: 1, col: 1 })
    })?;
    parse_root(&root)
}

/// Reads a catalog or definition from its root node.
pub fn parse_root(root: &Node) -> Read<Catalog> {
    let entries = mapping(root, "")?;
    let kind = match root.get("kind") {
        Some(k) => string(k, "kind")?,
        None => {
            return Err(error(
                root,
                "kind",
                "required (Catalog, KRMFunctionCatalog or KRMFunctionDefinition)",
            ))
        }
    };
    match root.get("apiVersion") {
        Some(v) if string(v, "apiVersion")? == API_VERSION => {}
        Some(v) => {
            return Err(error(
                v,
                "apiVersion",
                format!("'{}' is not {API_VERSION}", string(v, "apiVersion")?),
            ))
        }
        None => {
            return Err(error(
                root,
                "apiVersion",
                format!("required ({API_VERSION})"),
            ))
        }
    }
    let definition = match kind.as_str() {
        "Catalog" | "KRMFunctionCatalog" => false,
        "KRMFunctionDefinition" => true,
        other => {
            let at = root.get("kind").unwrap_or(root);
            return Err(error(
                at,
                "kind",
                format!("'{other}' is not Catalog, KRMFunctionCatalog or KRMFunctionDefinition"),
            ));
        }
    };
    let mut catalog = Catalog {
        kind,
        name: String::new(),
        functions: Vec::new(),
    };
    let mut spec = None;
    for (key, value) in entries {
        match key.key_str().unwrap_or("") {
            "apiVersion" | "kind" => {}
            "metadata" => catalog.name = metadata(value)?,
            "spec" => spec = Some(value),
            other => return Err(unknown(key, other)),
        }
    }
    let spec = spec.ok_or_else(|| error(root, "spec", "required"))?;
    if definition {
        catalog.functions.push(function(spec, "spec")?);
        return Ok(catalog);
    }
    for (key, value) in mapping(spec, "spec")? {
        match key.key_str().unwrap_or("") {
            "krmFunctions" => {
                for (i, item) in sequence(value, "spec.krmFunctions")?.iter().enumerate() {
                    catalog
                        .functions
                        .push(function(item, &format!("spec.krmFunctions[{i}]"))?);
                }
            }
            other => return Err(unknown(key, &format!("spec.{other}"))),
        }
    }
    if spec.get("krmFunctions").is_none() {
        return Err(error(spec, "spec.krmFunctions", "required"));
    }
    Ok(catalog)
}

/// `metadata`: its name (labels and annotations are checked, not used).
fn metadata(node: &Node) -> Read<String> {
    let mut name = String::new();
    if node.is_null() {
        return Ok(name);
    }
    for (key, value) in mapping(node, "metadata")? {
        let field = format!("metadata.{}", key.key_str().unwrap_or(""));
        match key.key_str().unwrap_or("") {
            "name" => name = string(value, &field)?,
            "namespace" => {
                string(value, &field)?;
            }
            "labels" | "annotations" => {
                if !value.is_null() {
                    for (k, v) in mapping(value, &field)? {
                        string(v, &format!("{field}.{}", k.key_str().unwrap_or("")))?;
                    }
                }
            }
            other => return Err(unknown(key, &format!("metadata.{other}"))),
        }
    }
    Ok(name)
}

/// One function: a `krmFunctions` item, or a definition's `spec`.
fn function(node: &Node, at: &str) -> Read<FunctionDef> {
    let mut f = FunctionDef::default();
    let mut shared_runtime = None;
    let mut versions = None;
    for (key, value) in mapping(node, at)? {
        let name = key.key_str().unwrap_or("");
        let field = format!("{at}.{name}");
        match name {
            "group" => f.group = string(value, &field)?,
            "names" => {
                for (k, v) in mapping(value, &field)? {
                    match k.key_str().unwrap_or("") {
                        "kind" => f.kind = kind_once(&f.kind, v, &format!("{field}.kind"))?,
                        other => return Err(unknown(k, &format!("{field}.{other}"))),
                    }
                }
            }
            "kind" => f.kind = kind_once(&f.kind, value, &field)?,
            "description" => f.description = string(value, &field)?,
            "publisher" => f.publisher = string(value, &field)?,
            "home" => f.home = string(value, &field)?,
            "maintainers" => f.maintainers = strings(value, &field)?,
            "tags" => f.tags = strings(value, &field)?,
            "runtime" => shared_runtime = Some((runtime(value, &field)?, value)),
            "versions" => versions = Some((value, field)),
            other => return Err(unknown(key, &format!("{at}.{other}"))),
        }
    }
    if f.group.is_empty() {
        return Err(error(node, &format!("{at}.group"), "required"));
    }
    if f.kind.is_empty() {
        return Err(error(node, &format!("{at}.names.kind"), "required"));
    }
    let Some((list, field)) = versions else {
        return Err(error(node, &format!("{at}.versions"), "required"));
    };
    let items = sequence(list, &field)?;
    if items.is_empty() {
        return Err(error(list, &field, "at least one version is required"));
    }
    for (i, item) in items.iter().enumerate() {
        let vfield = format!("{field}[{i}]");
        let (mut v, own) = version(item, &vfield)?;
        match (&shared_runtime, own) {
            (Some(_), Some(own)) => {
                return Err(error(
                    own,
                    &format!("{vfield}.runtime"),
                    format!("the runtime is given beside versions ({at}.runtime) and in this version; give it in one place"),
                ))
            }
            (Some((shared, _)), None) => v.runtime = shared.clone(),
            (None, Some(_)) => {}
            (None, None) => {
                return Err(error(
                    item,
                    &format!("{vfield}.runtime"),
                    "required (in the version, or beside versions for all of them)",
                ))
            }
        }
        f.versions.push(v);
    }
    Ok(f)
}

/// A function's kind, given once (`names.kind` or `kind`).
fn kind_once(before: &str, value: &Node, field: &str) -> Read<String> {
    if !before.is_empty() {
        return Err(error(
            value,
            field,
            "the kind is given twice (names.kind and kind); give one",
        ));
    }
    let kind = string(value, field)?;
    if kind.is_empty() {
        return Err(error(value, field, "must not be empty"));
    }
    Ok(kind)
}

/// One version; with the node of its own runtime, if it has one.
fn version<'a>(node: &'a Node, at: &str) -> Read<(VersionDef, Option<&'a Node>)> {
    let mut v = VersionDef::default();
    let mut own = None;
    for (key, value) in mapping(node, at)? {
        let name = key.key_str().unwrap_or("");
        let field = format!("{at}.{name}");
        match name {
            "name" => v.name = string(value, &field)?,
            "schema" => {
                for (k, schema) in mapping(value, &field)? {
                    match k.key_str().unwrap_or("") {
                        "openAPIV3Schema" => {
                            mapping(schema, &format!("{field}.openAPIV3Schema"))?;
                            v.schema = Some(schema.clone());
                        }
                        other => return Err(unknown(k, &format!("{field}.{other}"))),
                    }
                }
            }
            "idempotent" => v.idempotent = boolean(value, &field)?,
            "conformWithSpecVersions" => v.spec_versions = strings(value, &field)?,
            "runtime" => {
                v.runtime = runtime(value, &field)?;
                own = Some(value);
            }
            "usage" => v.usage = string(value, &field)?,
            "examples" => v.examples = strings(value, &field)?,
            "license" => v.license = string(value, &field)?,
            "maintainers" => v.maintainers = strings(value, &field)?,
            other => return Err(unknown(key, &format!("{at}.{other}"))),
        }
    }
    if v.name.is_empty() {
        return Err(error(node, &format!("{at}.name"), "required"));
    }
    Ok((v, own))
}

/// A `runtime`: at least one of `container`, `exec` and `starlark`.
fn runtime(node: &Node, at: &str) -> Read<RuntimeDef> {
    let mut r = RuntimeDef::default();
    for (key, value) in mapping(node, at)? {
        let name = key.key_str().unwrap_or("");
        let field = format!("{at}.{name}");
        match name {
            "container" => r.container = Some(container(value, &field)?),
            "exec" => r.exec = Some(exec(value, &field)?),
            "starlark" => r.starlark = Some(nonempty(value, &field)?),
            other => return Err(unknown(key, &format!("{at}.{other}"))),
        }
    }
    if r.container.is_none() && r.exec.is_none() && r.starlark.is_none() {
        return Err(error(
            node,
            at,
            "one of container, exec and starlark is required",
        ));
    }
    Ok(r)
}

fn container(node: &Node, at: &str) -> Read<ContainerDef> {
    let mut c = ContainerDef::default();
    for (key, value) in mapping(node, at)? {
        let name = key.key_str().unwrap_or("");
        let field = format!("{at}.{name}");
        match name {
            "image" => c.image = nonempty(value, &field)?,
            "sha256" => c.sha256 = Some(digest(value, &field)?),
            "requireNetwork" => c.require_network = boolean(value, &field)?,
            "requireStorageMount" | "requireFilesystem" => {
                c.require_storage_mount = boolean(value, &field)?
            }
            other => return Err(unknown(key, &format!("{at}.{other}"))),
        }
    }
    if c.image.is_empty() {
        return Err(error(node, &format!("{at}.image"), "required"));
    }
    Ok(c)
}

fn exec(node: &Node, at: &str) -> Read<Vec<Platform>> {
    let mut platforms = None;
    for (key, value) in mapping(node, at)? {
        let name = key.key_str().unwrap_or("");
        let field = format!("{at}.{name}");
        match name {
            "platforms" => {
                let mut list = Vec::new();
                for (i, item) in sequence(value, &field)?.iter().enumerate() {
                    list.push(platform(item, &format!("{field}[{i}]"))?);
                }
                platforms = Some(list);
            }
            other => return Err(unknown(key, &format!("{at}.{other}"))),
        }
    }
    platforms.ok_or_else(|| error(node, &format!("{at}.platforms"), "required"))
}

fn platform(node: &Node, at: &str) -> Read<Platform> {
    let mut p = Platform::default();
    for (key, value) in mapping(node, at)? {
        let name = key.key_str().unwrap_or("");
        let field = format!("{at}.{name}");
        match name {
            "bin" => p.bin = nonempty(value, &field)?,
            "os" => p.os = nonempty(value, &field)?,
            "arch" => p.arch = nonempty(value, &field)?,
            "uri" => p.uri = nonempty(value, &field)?,
            "sha256" => p.sha256 = Some(digest(value, &field)?),
            other => return Err(unknown(key, &format!("{at}.{other}"))),
        }
    }
    for (name, value) in [
        ("bin", &p.bin),
        ("os", &p.os),
        ("arch", &p.arch),
        ("uri", &p.uri),
    ] {
        if value.is_empty() {
            return Err(error(node, &format!("{at}.{name}"), "required"));
        }
    }
    Ok(p)
}

fn unknown(key: &Node, field: &str) -> SchemaError {
    error(key, field, "unknown field")
}

fn mapping<'a>(node: &'a Node, field: &str) -> Read<&'a [(Node, Node)]> {
    if node.is_null() {
        return Ok(&[]);
    }
    node.as_map()
        .map(|m| m.as_slice())
        .ok_or_else(|| error(node, field, "must be a mapping"))
}

fn sequence<'a>(node: &'a Node, field: &str) -> Read<&'a [Node]> {
    if node.is_null() {
        return Ok(&[]);
    }
    node.as_seq()
        .map(|s| s.as_slice())
        .ok_or_else(|| error(node, field, "must be a list"))
}

/// A string: any scalar but null, a boolean or a number written plain.
fn string(node: &Node, field: &str) -> Read<String> {
    use krusty_yaml::Resolved;
    match (&node.value, krusty_yaml::resolve_input(node)) {
        (Value::Scalar(_), Resolved::Str(s)) => Ok(s.to_string()),
        (Value::Scalar(_), Resolved::Owned(s)) => Ok(s),
        _ => Err(error(node, field, "must be a string")),
    }
}

fn nonempty(node: &Node, field: &str) -> Read<String> {
    let s = string(node, field)?;
    if s.is_empty() {
        return Err(error(node, field, "must not be empty"));
    }
    Ok(s)
}

fn strings(node: &Node, field: &str) -> Read<Vec<String>> {
    sequence(node, field)?
        .iter()
        .enumerate()
        .map(|(i, item)| string(item, &format!("{field}[{i}]")))
        .collect()
}

fn boolean(node: &Node, field: &str) -> Read<bool> {
    match (&node.value, krusty_yaml::resolve_input(node)) {
        (Value::Scalar(_), krusty_yaml::Resolved::Bool(b)) => Ok(b),
        _ => Err(error(node, field, "must be true or false")),
    }
}

/// A sha256 digest: 64 hex digits, optionally after `sha256:`; kept in
/// lower case without the prefix.
fn digest(node: &Node, field: &str) -> Read<String> {
    let text = string(node, field)?;
    let hex = text.strip_prefix("sha256:").unwrap_or(&text);
    if hex.len() != 64 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(error(
            node,
            field,
            format!("'{text}' is not a sha256 digest (64 hexadecimal digits)"),
        ));
    }
    Ok(hex.to_ascii_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEX: &str = "a428de44a9059f31a59237a5881c2d2cffa93757d99026156e4ea544577ab7f3";

    fn failure(text: &str) -> String {
        parse(text).unwrap_err().place_first("c.yaml")
    }

    #[test]
    fn the_keps_minimal_example_has_its_runtime_beside_versions() {
        let c = parse(
            "apiVersion: config.kubernetes.io/v1alpha1\nkind: Catalog\nmetadata: \n  name: \"example-co-functions\"\nspec: \n  krmFunctions: \n  - group: example.com\n    names:\n      kind: JavaApplication\n    description: \"A Kustomize function that represents a Java based app\"\n    versions:\n    - name: v1\n    - name: v2\n    runtime: \n      container: \n        image: example/module_providers/java:v1.0.0\n",
        )
        .unwrap();
        assert_eq!(c.name, "example-co-functions");
        let f = &c.functions[0];
        assert_eq!(
            (f.group.as_str(), f.kind.as_str()),
            ("example.com", "JavaApplication")
        );
        assert_eq!(f.versions.len(), 2);
        for v in &f.versions {
            let image = &v.runtime.container.as_ref().unwrap().image;
            assert_eq!(image, "example/module_providers/java:v1.0.0");
        }
    }

    #[test]
    fn the_keps_full_example_with_kind_written_directly_and_exec_platforms() {
        let text = format!(
            "apiVersion: config.kubernetes.io/v1alpha1
kind: KRMFunctionCatalog
metadata:
  name: example-co-functions
  labels:
    author: ExampleCo
spec:
  krmFunctions:
  - group: example.com
    names:
      kind: SetNamespace
    description: A short description
    publisher: example.com
    versions:
      - name: v1
        schema:
          openAPIV3Schema: {{type: object}}
        idempotent: true
        conformWithSpecVersions: [v1, v2]
        runtime:
          container:
            image: docker.example.co/functions/set-namespace:v1.2.3
            sha256: {HEX}
            requireNetwork: true
            requireStorageMount: false
        usage: https://example.com/usage.md
        examples:
          - https://example.com/a.md
        license: Apache 2.0
    maintainers: [foo@example.com]
    tags: [mutator, namespace]
  - group: example.com
    kind: SetLogger
    versions:
      - name: v1
        runtime:
          exec:
            platforms:
              - bin: foo-amd64-linux
                os: linux
                arch: amd64
                uri: https://example.com/foo-amd64-linux.tar.gz
                sha256: sha256:{}
    home: https://example.com
",
            HEX.to_uppercase()
        );
        let c = parse(&text).unwrap();
        assert_eq!(c.kind, "KRMFunctionCatalog");
        let ns = &c.functions[0];
        assert_eq!(ns.tags, ["mutator", "namespace"]);
        let v = &ns.versions[0];
        assert!(v.idempotent);
        assert_eq!(v.spec_versions, ["v1", "v2"]);
        let container = v.runtime.container.as_ref().unwrap();
        assert_eq!(container.sha256.as_deref(), Some(HEX));
        assert!(container.require_network && !container.require_storage_mount);
        let logger = &c.functions[1];
        assert_eq!(logger.kind, "SetLogger");
        let p = &logger.versions[0].runtime.exec.as_ref().unwrap()[0];
        assert_eq!((p.os.as_str(), p.arch.as_str()), ("linux", "amd64"));
        assert_eq!(p.sha256.as_deref(), Some(HEX), "prefix dropped, lower case");
    }

    #[test]
    fn a_definition_is_a_catalog_of_one_and_the_examples_other_forms_read() {
        let c = parse(
            "apiVersion: config.kubernetes.io/v1alpha1\nkind: KRMFunctionDefinition\nspec:\n  group: example.co\n  names: {kind: Groovy}\n  versions:\n  - name: v1\n    runtime:\n      starlark: https://example.co/f.star\n  - name: v2\n    runtime:\n      container: {image: x, requireFilesystem: true}\n",
        )
        .unwrap();
        assert_eq!(c.functions.len(), 1);
        let f = &c.functions[0];
        assert_eq!(
            f.versions[0].runtime.starlark.as_deref(),
            Some("https://example.co/f.star")
        );
        assert!(
            f.versions[1]
                .runtime
                .container
                .as_ref()
                .unwrap()
                .require_storage_mount
        );
    }

    #[test]
    fn errors_name_the_line_column_and_field() {
        let head = "apiVersion: config.kubernetes.io/v1alpha1\nkind: Catalog\nspec:\n  krmFunctions:\n  - group: g\n    names: {kind: K}\n    versions:\n    - name: v1\n";
        let cases = [
            (
                format!("{head}      runtime: {{container: {{image: i}}}}\n      colour: red\n"),
                "c.yaml:10:7: field 'spec.krmFunctions[0].versions[0].colour': unknown field",
            ),
            (
                format!("{head}      idempotent: sometimes\n      runtime: {{container: {{image: i}}}}\n"),
                "c.yaml:9:19: field 'spec.krmFunctions[0].versions[0].idempotent': must be true or false",
            ),
            (
                format!("{head}      runtime: {{container: {{image: i, sha256: abc}}}}\n"),
                "field 'spec.krmFunctions[0].versions[0].runtime.container.sha256': 'abc' is not a sha256 digest",
            ),
            (
                format!("{head}      runtime: {{}}\n"),
                "field 'spec.krmFunctions[0].versions[0].runtime': one of container, exec and starlark is required",
            ),
            (
                format!("{head}      maintainers: a\n      runtime: {{container: {{image: i}}}}\n"),
                "c.yaml:9:20: field 'spec.krmFunctions[0].versions[0].maintainers': must be a list",
            ),
            (
                format!("{head}      runtime: {{container: {{image: i}}}}\n    runtime: {{container: {{image: j}}}}\n"),
                "c.yaml:9:16: field 'spec.krmFunctions[0].versions[0].runtime': the runtime is given beside versions",
            ),
            (
                format!("{head}    kind: K\n    runtime: {{container: {{image: j}}}}\n"),
                "c.yaml:9:11: field 'spec.krmFunctions[0].kind': the kind is given twice",
            ),
            (
                format!("{head}      runtime: {{exec: {{platforms: [{{bin: b, os: linux, arch: amd64}}]}}}}\n"),
                "field 'spec.krmFunctions[0].versions[0].runtime.exec.platforms[0].uri': required",
            ),
            (
                format!("{head}    - runtime: {{container: {{image: i}}}}\n    runtime: {{container: {{image: j}}}}\n"),
                "c.yaml:9:7: field 'spec.krmFunctions[0].versions[1].name': required",
            ),
            (
                "apiVersion: config.kubernetes.io/v1alpha1\nkind: Catalog\nspec:\n  krmFunctions:\n  - names: {kind: K}\n    versions: [{name: v1, runtime: {container: {image: i}}}]\n".to_string(),
                "c.yaml:5:5: field 'spec.krmFunctions[0].group': required",
            ),
            (
                "apiVersion: config.kubernetes.io/v1alpha1\nkind: Catalog\nspec:\n  krmFunctions:\n  - group: g\n    names: {kind: K}\n".to_string(),
                "field 'spec.krmFunctions[0].versions': required",
            ),
            (
                "apiVersion: config.kubernetes.io/v1\nkind: Catalog\nspec: {krmFunctions: []}\n".to_string(),
                "c.yaml:1:13: field 'apiVersion': 'config.kubernetes.io/v1' is not config.kubernetes.io/v1alpha1",
            ),
            (
                "apiVersion: config.kubernetes.io/v1alpha1\nkind: Catalogue\nspec: {krmFunctions: []}\n".to_string(),
                "c.yaml:2:7: field 'kind': 'Catalogue' is not Catalog, KRMFunctionCatalog or KRMFunctionDefinition",
            ),
            (
                "apiVersion: config.kubernetes.io/v1alpha1\nkind: Catalog\nspec: {functions: []}\n".to_string(),
                "c.yaml:3:8: field 'spec.functions': unknown field",
            ),
            (
                "apiVersion: config.kubernetes.io/v1alpha1\nkind: Catalog\nmetadata: {name: [a]}\nspec: {krmFunctions: []}\n".to_string(),
                "c.yaml:3:18: field 'metadata.name': must be a string",
            ),
            ("kind: [\n".to_string(), "c.yaml:"),
            ("".to_string(), "c.yaml:1:1: the file is empty"),
        ];
        for (text, want) in cases {
            let got = failure(&text);
            assert!(got.contains(want), "want {want:?} in {got:?} for\n{text}");
        }
    }

    #[test]
    fn an_exec_platform_may_omit_its_hash_until_it_is_run() {
        let c = parse("apiVersion: config.kubernetes.io/v1alpha1\nkind: Catalog\nspec:\n  krmFunctions:\n  - group: g\n    kind: K\n    versions:\n    - name: v1\n      runtime: {exec: {platforms: [{bin: b, os: linux, arch: amd64, uri: 'file:///f'}]}}\n").unwrap();
        let p = &c.functions[0].versions[0].runtime.exec.as_ref().unwrap()[0];
        assert_eq!(p.sha256, None);
    }

    #[test]
    fn the_place_comes_first_with_what_was_read_after_it() {
        let pos = Pos { line: 3, col: 7 };
        let e = SchemaError::new("why")
            .in_field("spec.x", pos)
            .context("reading");
        assert_eq!(
            e.place_first("c.yaml"),
            "c.yaml:3:7: reading: field 'spec.x': why"
        );
        let e = SchemaError::new("why").located(Some("other.yaml"), pos);
        assert_eq!(e.place_first("c.yaml"), "other.yaml:3:7: why");
        let e = SchemaError::new("why").context("reading");
        assert_eq!(e.place_first("c.yaml"), "c.yaml: reading: why");
        let e = SchemaError::new("why").in_field("spec.x", Pos::default());
        assert_eq!(e.place_first("c.yaml"), "c.yaml: field 'spec.x': why");
    }
}
