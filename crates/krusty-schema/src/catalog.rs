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

use krusty_yaml::{Node, Pos};

use crate::decode::walk;
use crate::decode::{Decode, Dialect, Documents, Kind, Problem, Strictness::Strict};
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

/// Krusty's words for a catalog: the failure, located at the value and
/// naming its field (a path, `spec.krmFunctions[0].group`; empty: the
/// whole file). Printed with [`SchemaError::place_first`], it reads
/// `file:line:col: field 'f': why`.
struct Words;

impl Dialect for Words {
    fn error(&self, pos: Pos, field: &str, problem: Problem<'_>) -> SchemaError {
        let e = SchemaError::new(problem.to_string());
        if field.is_empty() {
            e.located(None, pos)
        } else {
            e.in_field(field, pos)
        }
    }

    fn null_is_empty(&self, kind: Kind) -> bool {
        matches!(kind, Kind::Mapping | Kind::Sequence)
    }

    fn item_path(&self, field: &str, index: usize) -> String {
        format!("{field}[{index}]")
    }
}

type Read<T> = SchemaResult<T>;

/// Reads the catalog or definition in `text` (the first document).
pub fn parse(text: &str) -> Read<Catalog> {
    parse_root(&Words.root(text, Documents::First)?)
}

/// The kinds of catalog files.
const KINDS: &str = "Catalog, KRMFunctionCatalog or KRMFunctionDefinition";

/// Reads a catalog or definition from its root node.
pub fn parse_root(root: &Node) -> Read<Catalog> {
    Words.mapping(root, "")?;
    let kind = match root.get("kind") {
        Some(k) => Words.string(k, "kind")?,
        None => return Err(Words.required_as(root, "kind", KINDS)),
    };
    match root.get("apiVersion") {
        Some(v) => match Words.string(v, "apiVersion")? {
            written if written == API_VERSION => {}
            other => {
                let message = format!("'{other}' is not {API_VERSION}");
                return Err(Words.invalid(v, "apiVersion", message));
            }
        },
        None => return Err(Words.required_as(root, "apiVersion", API_VERSION)),
    }
    let definition = match kind.as_str() {
        "Catalog" | "KRMFunctionCatalog" => false,
        "KRMFunctionDefinition" => true,
        other => {
            let at = root.get("kind").unwrap_or(root);
            return Err(Words.invalid(at, "kind", format!("'{other}' is not {KINDS}")));
        }
    };
    let mut catalog = Catalog {
        kind,
        name: String::new(),
        functions: Vec::new(),
    };
    let mut spec = None;
    walk!(Words, root, "", Strict, |e| match e.name {
        "apiVersion" | "kind" => {}
        "metadata" => catalog.name = metadata(e.value)?,
        "spec" => spec = Some(e.value),
    })?;
    let spec = spec.ok_or_else(|| Words.required(root, "spec"))?;
    if definition {
        catalog.functions.push(function(spec, "spec")?);
        return Ok(catalog);
    }
    walk!(Words, spec, "spec", Strict, |e| match e.name {
        "krmFunctions" => {
            for (i, item) in Words.sequence(e.value, &e.path)?.iter().enumerate() {
                let at = format!("{}[{i}]", e.path);
                catalog.functions.push(function(item, &at)?);
            }
        }
    })?;
    if spec.get("krmFunctions").is_none() {
        return Err(Words.required(spec, "spec.krmFunctions"));
    }
    Ok(catalog)
}

/// `metadata`: its name (labels and annotations are checked, not used).
fn metadata(node: &Node) -> Read<String> {
    let mut name = String::new();
    walk!(Words, node, "metadata", Strict, |e| match e.name {
        "name" => name = Words.string(e.value, &e.path)?,
        "namespace" => drop(Words.string(e.value, &e.path)?),
        "labels" | "annotations" => drop(Words.string_map(e.value, &e.path)?),
    })?;
    Ok(name)
}

/// One function: a `krmFunctions` item, or a definition's `spec`.
fn function(node: &Node, at: &str) -> Read<FunctionDef> {
    let mut f = FunctionDef::default();
    let mut shared_runtime = None;
    let mut versions = None;
    walk!(Words, node, at, Strict, |e| match e.name {
        "group" => f.group = Words.string(e.value, &e.path)?,
        "names" => walk!(Words, e.value, &e.path, Strict, |e| match e.name {
            "kind" => f.kind = kind_once(&f.kind, e.value, &e.path)?,
        })?,
        "kind" => f.kind = kind_once(&f.kind, e.value, &e.path)?,
        "description" => f.description = Words.string(e.value, &e.path)?,
        "publisher" => f.publisher = Words.string(e.value, &e.path)?,
        "home" => f.home = Words.string(e.value, &e.path)?,
        "maintainers" => f.maintainers = Words.strings(e.value, &e.path)?,
        "tags" => f.tags = Words.strings(e.value, &e.path)?,
        "runtime" => shared_runtime = Some(runtime(e.value, &e.path)?),
        "versions" => versions = Some((e.value, e.path)),
    })?;
    if f.group.is_empty() {
        return Err(Words.required(node, &format!("{at}.group")));
    }
    if f.kind.is_empty() {
        return Err(Words.required(node, &format!("{at}.names.kind")));
    }
    let Some((list, field)) = versions else {
        return Err(Words.required(node, &format!("{at}.versions")));
    };
    let items = Words.sequence(list, &field)?;
    if items.is_empty() {
        return Err(Words.invalid(list, &field, "at least one version is required"));
    }
    for (i, item) in items.iter().enumerate() {
        let vfield = format!("{field}[{i}]");
        let (mut v, own) = version(item, &vfield)?;
        let runtime = format!("{vfield}.runtime");
        match (&shared_runtime, own) {
            (Some(_), Some(own)) => {
                return Err(Words.invalid(
                    own,
                    &runtime,
                    format!("the runtime is given beside versions ({at}.runtime) and in this version; give it in one place"),
                ))
            }
            (Some(shared), None) => v.runtime = shared.clone(),
            (None, Some(_)) => {}
            (None, None) => {
                let hint = "in the version, or beside versions for all of them";
                return Err(Words.required_as(item, &runtime, hint));
            }
        }
        f.versions.push(v);
    }
    Ok(f)
}

/// A function's kind, given once (`names.kind` or `kind`).
fn kind_once(before: &str, value: &Node, field: &str) -> Read<String> {
    if !before.is_empty() {
        return Err(Words.invalid(
            value,
            field,
            "the kind is given twice (names.kind and kind); give one",
        ));
    }
    nonempty(value, field)
}

/// One version; with the node of its own runtime, if it has one.
fn version<'a>(node: &'a Node, at: &str) -> Read<(VersionDef, Option<&'a Node>)> {
    let mut v = VersionDef::default();
    let mut own = None;
    walk!(Words, node, at, Strict, |e| match e.name {
        "name" => v.name = Words.string(e.value, &e.path)?,
        "schema" => walk!(Words, e.value, &e.path, Strict, |e| match e.name {
            "openAPIV3Schema" =>
                v.schema = Some(Words.mapping(e.value, &e.path).map(|_| e.value.clone())?),
        })?,
        "idempotent" => v.idempotent = Words.boolean(e.value, &e.path)?,
        "conformWithSpecVersions" => v.spec_versions = Words.strings(e.value, &e.path)?,
        "runtime" => {
            v.runtime = runtime(e.value, &e.path)?;
            own = Some(e.value);
        }
        "usage" => v.usage = Words.string(e.value, &e.path)?,
        "examples" => v.examples = Words.strings(e.value, &e.path)?,
        "license" => v.license = Words.string(e.value, &e.path)?,
        "maintainers" => v.maintainers = Words.strings(e.value, &e.path)?,
    })?;
    if v.name.is_empty() {
        return Err(Words.required(node, &format!("{at}.name")));
    }
    Ok((v, own))
}

/// A `runtime`: at least one of `container`, `exec` and `starlark`.
fn runtime(node: &Node, at: &str) -> Read<RuntimeDef> {
    let mut r = RuntimeDef::default();
    walk!(Words, node, at, Strict, |e| match e.name {
        "container" => r.container = Some(container(e.value, &e.path)?),
        "exec" => r.exec = Some(exec(e.value, &e.path)?),
        "starlark" => r.starlark = Some(nonempty(e.value, &e.path)?),
    })?;
    if r.container.is_none() && r.exec.is_none() && r.starlark.is_none() {
        let message = "one of container, exec and starlark is required";
        return Err(Words.invalid(node, at, message));
    }
    Ok(r)
}

/// A container runtime (`requireFilesystem` is the KEP's examples' name
/// for `requireStorageMount`).
fn container(node: &Node, at: &str) -> Read<ContainerDef> {
    let mut c = ContainerDef::default();
    walk!(Words, node, at, Strict, |e| match e.name {
        "image" => c.image = nonempty(e.value, &e.path)?,
        "sha256" => c.sha256 = Some(digest(e.value, &e.path)?),
        "requireNetwork" => c.require_network = Words.boolean(e.value, &e.path)?,
        "requireStorageMount" | "requireFilesystem" => {
            c.require_storage_mount = Words.boolean(e.value, &e.path)?
        }
    })?;
    if c.image.is_empty() {
        return Err(Words.required(node, &format!("{at}.image")));
    }
    Ok(c)
}

fn exec(node: &Node, at: &str) -> Read<Vec<Platform>> {
    let mut platforms = None;
    walk!(Words, node, at, Strict, |e| match e.name {
        "platforms" => {
            let items = Words.sequence(e.value, &e.path)?.iter().enumerate();
            let list = items.map(|(i, item)| platform(item, &format!("{}[{i}]", e.path)));
            platforms = Some(list.collect::<Read<Vec<_>>>()?);
        }
    })?;
    platforms.ok_or_else(|| Words.required(node, &format!("{at}.platforms")))
}

fn platform(node: &Node, at: &str) -> Read<Platform> {
    let mut p = Platform::default();
    walk!(Words, node, at, Strict, |e| match e.name {
        "bin" => p.bin = nonempty(e.value, &e.path)?,
        "os" => p.os = nonempty(e.value, &e.path)?,
        "arch" => p.arch = nonempty(e.value, &e.path)?,
        "uri" => p.uri = nonempty(e.value, &e.path)?,
        "sha256" => p.sha256 = Some(digest(e.value, &e.path)?),
    })?;
    for (name, value) in [
        ("bin", &p.bin),
        ("os", &p.os),
        ("arch", &p.arch),
        ("uri", &p.uri),
    ] {
        if value.is_empty() {
            return Err(Words.required(node, &format!("{at}.{name}")));
        }
    }
    Ok(p)
}

fn nonempty(node: &Node, field: &str) -> Read<String> {
    let s = Words.string(node, field)?;
    if s.is_empty() {
        return Err(Words.error(node.pos(), field, Problem::EmptyValue));
    }
    Ok(s)
}

/// A sha256 digest: 64 hex digits, optionally after `sha256:`; kept in
/// lower case without the prefix.
fn digest(node: &Node, field: &str) -> Read<String> {
    let text = Words.string(node, field)?;
    let hex = text.strip_prefix("sha256:").unwrap_or(&text);
    if hex.len() != 64 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(Words.invalid(
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
