//! Determining the function to execute (KEP-2906): a config without a
//! runtime of its own is looked up by apiVersion and kind in the official
//! catalog, then in the catalogs its layer names, in order; the first
//! function serving it wins, and becomes a call with the catalog's runtime
//! and traits.

use krusty_fn::object;
use krusty_resource::Resource;
use krusty_runtime::{FunctionCall, Policy, Runtime, ServerProtocol, StarlarkSource, Traits};

use super::image::{by_digest, without_sha256};
use super::schema::{Catalog, ContainerDef, FunctionDef, Platform, VersionDef};
use super::{official, CatalogRef, Loaded, Store};
use crate::error::{BuildError, BuildResult};
use crate::loader::Loader;

const LOCAL_CONFIG: &str = "config.kubernetes.io/local-config";

/// The call of the catalog function serving `config`, looked up in the
/// official catalog, then in `catalogs` in order. `None` when there is
/// nothing to look in (no official catalog, no catalogs): the caller's
/// rule for a config without a runtime applies. A match in an untrusted
/// catalog, a catalog that cannot be fetched before the match, or no
/// match at all, is an error.
pub fn resolve(
    config: &Resource,
    loader: &Loader,
    catalogs: &[CatalogRef],
    store: &Store,
    policy: &Policy,
) -> BuildResult<Option<FunctionCall>> {
    lookup(config, loader, catalogs, store, policy, official::catalog())
}

/// [`resolve`] with the official catalog given.
pub(crate) fn lookup(
    config: &Resource,
    loader: &Loader,
    catalogs: &[CatalogRef],
    store: &Store,
    policy: &Policy,
    official: Option<&Result<Catalog, official::Unreadable>>,
) -> BuildResult<Option<FunctionCall>> {
    if catalogs.is_empty() && official.is_none() {
        return Ok(None);
    }
    let id = config.id();
    let api_version = config.api_version();
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
    let kind = config.kind();
    let in_config = |e: BuildError| e.context(format!("function config {id}"));
    if let Some(official) = official {
        let catalog = official
            .as_ref()
            .map_err(|e| in_config(BuildError::new(e.to_string())))?;
        if let Some((f, v)) = super::find(catalog, group, version, kind) {
            let from = Found {
                label: official::LABEL.to_string(),
                function: f,
                version: v,
                base: loader.root.clone(),
            };
            return call(config, loader, store, policy, &from)
                .map(Some)
                .map_err(in_config);
        }
    }
    for reference in catalogs {
        let loaded = store
            .load(reference)
            .map_err(|e| in_config(e.located(&reference.file, reference.pos)))?;
        let Some((f, v)) = super::find(&loaded.catalog, group, version, kind) else {
            continue;
        };
        if !store.trusts(&loaded) {
            return Err(in_config(BuildError::new(untrusted(
                reference, &loaded, store, f, v,
            ))));
        }
        // A relative `file://` exec uri of a local catalog is relative to
        // its folder; of a fetched one, to the layer's.
        let from_file = std::path::Path::new(&loaded.from);
        let base = match from_file.parent() {
            Some(dir) if from_file.is_absolute() => dir.to_path_buf(),
            _ => loader.root.clone(),
        };
        let from = Found {
            label: format!("catalog '{}'", reference.written),
            function: f,
            version: v,
            base,
        };
        return call(config, loader, store, policy, &from)
            .map(Some)
            .map_err(in_config);
    }
    let mut searched: Vec<String> = official
        .iter()
        .map(|_| official::LABEL.to_string())
        .collect();
    searched.extend(catalogs.iter().map(|c| format!("'{}'", c.written)));
    Err(in_config(BuildError::new(format!(
        "no runtime is declared (a runtime: field or a config.kubernetes.io/function annotation) and no catalog defines apiVersion {api_version} kind {kind}; catalogs searched: {}",
        searched.join(", ")
    ))))
}

/// The message for a function found in a catalog the user does not
/// trust: the `--trusted-catalog` value naming where it is.
fn untrusted(
    reference: &CatalogRef,
    loaded: &Loaded,
    store: &Store,
    f: &FunctionDef,
    v: &VersionDef,
) -> String {
    let what = format!(
        "{}/{} {} is defined by catalog '{}'",
        f.group, v.name, f.kind, reference.written
    );
    match &loaded.location {
        Some(at) => {
            let value = store.trust().suggestion(at);
            format!(
                "{what}, which is not trusted: run with --trusted-catalog {value} to run its functions; `krusty view catalog {value}` shows what it holds"
            )
        }
        None => format!(
            "{what}, a file ({}) of the remote repository built as the target, which no --trusted-catalog value names: name the catalog by its git reference in catalogs: to trust it",
            loaded.from
        ),
    }
}

/// A function version found, and the catalog it is in (for messages).
struct Found<'a> {
    label: String,
    function: &'a FunctionDef,
    version: &'a VersionDef,
    /// The folder a relative `file://` exec uri is relative to.
    base: std::path::PathBuf,
}

/// The call of the function `found` for `config`.
fn call(
    config: &Resource,
    loader: &Loader,
    store: &Store,
    policy: &Policy,
    found: &Found,
) -> BuildResult<FunctionCall> {
    let v = found.version;
    let what = || {
        format!(
            "{} function {}/{} {}",
            found.label, found.function.group, v.name, found.function.kind
        )
    };
    if let Some(schema) = &v.schema {
        check_config(config, schema).map_err(|e| e.context(what()))?;
    }
    let (runtime, digest) =
        runtime(v, store, policy, &found.base).map_err(|e| e.context(what()))?;
    let lists = |spec: &str| v.spec_versions.iter().any(|s| s == spec);
    let server = lists("v2").then_some(ServerProtocol::Http);
    let mut node = config.node.clone();
    object::set_annotation(&mut node, LOCAL_CONFIG, "true");
    Ok(FunctionCall {
        label: format!(
            "{} ({} function from {})",
            config.id(),
            runtime.name(),
            found.label
        ),
        runtime,
        config: node,
        dir: loader.root.clone(),
        traits: Traits {
            trusted: true,
            server,
            v2_only: server.is_some() && !lists("v1"),
            idempotent_digest: digest.filter(|_| v.idempotent),
        },
    })
}

/// Checks `config` against a version's `schema.openAPIV3Schema`, before
/// anything is fetched or run; every problem names its field.
fn check_config(config: &Resource, schema: &krusty_yaml::Node) -> BuildResult<()> {
    let schema = krusty_fn::Schema::from_node(schema.clone())
        .map_err(|e| BuildError::new(format!("schema.openAPIV3Schema: {e}")))?;
    let problems = schema.check(&config.node);
    if problems.is_empty() {
        return Ok(());
    }
    let listed: Vec<String> = problems.into_iter().map(|p| p.message).collect();
    Err(BuildError::new(format!(
        "the config does not fit the function's schema: {}",
        listed.join("; ")
    )))
}

/// The runtime of a version on this machine, and the digest naming it
/// exactly (when the catalog gives one): an exec platform for this OS and
/// architecture, else the container, else the Starlark program.
fn runtime(
    v: &VersionDef,
    store: &Store,
    policy: &Policy,
    dir: &std::path::Path,
) -> BuildResult<(Runtime, Option<String>)> {
    let platform = v
        .runtime
        .exec
        .as_deref()
        .and_then(|ps| ps.iter().find(|p| p.os == go_os() && p.arch == go_arch()));
    if let Some(p) = platform {
        return exec(p, store, dir);
    }
    if let Some(c) = &v.runtime.container {
        return container(c, policy, store.fetcher());
    }
    if let Some(url) = &v.runtime.starlark {
        let (program, digest) = super::source::starlark_program(store.fetcher(), url)?;
        return Ok((
            Runtime::Starlark(StarlarkSource::Inline(program)),
            Some(digest),
        ));
    }
    Err(BuildError::new(format!(
        "it has no exec platform for {}/{} and no container or starlark runtime",
        go_os(),
        go_arch()
    )))
}

/// An exec platform's executable, fetched and checked against its sha256.
fn exec(
    p: &Platform,
    store: &Store,
    dir: &std::path::Path,
) -> BuildResult<(Runtime, Option<String>)> {
    let sha256 = p.sha256.as_deref().ok_or_else(|| {
        BuildError::new(format!(
            "exec platform {}/{} ({}) gives no sha256: an executable runs only when its hash is known",
            p.os, p.arch, p.uri
        ))
    })?;
    let path = super::source::executable(store.fetcher(), &p.uri, sha256, &p.bin, dir)?;
    Ok((
        Runtime::Exec {
            path: path.to_string_lossy().into_owned(),
            args: Vec::new(),
            envs: Vec::new(),
        },
        Some(format!("sha256:{sha256}")),
    ))
}

/// A container runtime: by digest when the catalog gives one; without
/// one, a semantic-version tag is refused. With `--verify-key`, the image
/// runs only once its signature is checked ([`krusty_fetch::Fetcher::verify_image`]).
fn container(
    c: &ContainerDef,
    policy: &Policy,
    fetcher: &krusty_fetch::Fetcher,
) -> BuildResult<(Runtime, Option<String>)> {
    let image = match &c.sha256 {
        Some(hex) => by_digest(&c.image, hex)?,
        None => without_sha256(&c.image)?,
    };
    if c.require_storage_mount && policy.mounts.is_empty() {
        return Err(BuildError::new(
            "the function requires a storage mount: run with --mount type=bind,src=PATH,dst=PATH[,rw=true] to give it one",
        ));
    }
    fetcher.verify_image(&image)?;
    Ok((
        Runtime::Container {
            image,
            network: c.require_network,
            mounts: Vec::new(),
            envs: Vec::new(),
        },
        c.sha256.as_ref().map(|h| format!("sha256:{h}")),
    ))
}

/// This machine's operating system, as Go names it.
pub(crate) fn go_os() -> &'static str {
    match std::env::consts::OS {
        "macos" => "darwin",
        other => other,
    }
}

/// This machine's architecture, as Go names it.
pub(crate) fn go_arch() -> &'static str {
    match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        "x86" => "386",
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    const A: &str = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";

    fn catalog(name: &str, image: &str) -> String {
        format!("apiVersion: config.kubernetes.io/v1alpha1\nkind: Catalog\nmetadata: {{name: {name}}}\nspec:\n  krmFunctions:\n  - group: example.com\n    names: {{kind: SetLabels}}\n    versions:\n    - name: v1\n      idempotent: true\n      runtime: {{container: {{image: '{image}', sha256: {A}}}}}\n")
    }

    fn config(api_version: &str) -> Resource {
        let text = format!("apiVersion: {api_version}\nkind: SetLabels\nmetadata: {{name: x}}\n");
        let root = krusty_yaml::parse_stream(&text)
            .unwrap()
            .remove(0)
            .root
            .unwrap();
        Resource::from_node(root).unwrap()
    }

    /// A folder holding `files`, a loader there, and references to them.
    fn setup(name: &str, files: &[(&str, String)]) -> (Loader, Vec<CatalogRef>) {
        let dir =
            std::env::temp_dir().join(format!("krusty-catalog-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        for (file, text) in files {
            std::fs::write(dir.join(file), text).unwrap();
        }
        let loader = Loader::new(&dir, crate::loader::LoadRestrictor::RootOnly).unwrap();
        let written: Vec<String> = files.iter().map(|(f, _)| f.to_string()).collect();
        let refs = CatalogRef::list(&written, &[], &loader, &dir.join("kustomization.yaml"));
        (loader, refs)
    }

    /// A store trusting `trusted`, paths from `loader`'s folder.
    fn store(loader: &Loader, trusted: &[&str]) -> Store {
        let fetcher = Arc::new(krusty_fetch::Fetcher::new(Default::default()));
        let values: Vec<String> = trusted.iter().map(|t| t.to_string()).collect();
        Store::trusting(fetcher, crate::catalog::Trust::new(&values, &loader.root))
    }

    fn image(call: &FunctionCall) -> String {
        match &call.runtime {
            Runtime::Container { image, .. } => image.clone(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_official_catalog_comes_first_and_needs_no_trust() {
        let (loader, refs) = setup("official", &[("c.yaml", catalog("mine", "mine:v1"))]);
        let official = official::from_text(&catalog("official", "official:v1"));
        let call = lookup(
            &config("example.com/v1"),
            &loader,
            &refs,
            &store(&loader, &[]),
            &Policy::default(),
            official.as_ref(),
        )
        .unwrap()
        .unwrap();
        assert_eq!(image(&call), format!("official@sha256:{A}"));
        assert!(call.traits.trusted);
        assert_eq!(call.traits.idempotent_digest, Some(format!("sha256:{A}")));
        assert!(
            official::from_text("  \n").is_none(),
            "an empty embedded text is no catalog"
        );
    }

    #[test]
    fn catalogs_are_searched_in_order_and_need_trust_by_their_file() {
        let (loader, refs) = setup(
            "order",
            &[
                ("one.yaml", catalog("one", "one:v1")),
                ("two.yaml", catalog("two", "two:v1")),
            ],
        );
        let policy = Policy::default();
        let found = |trusted: &[&str]| {
            lookup(
                &config("example.com/v1"),
                &loader,
                &refs,
                &store(&loader, trusted),
                &policy,
                None,
            )
        };
        assert_eq!(
            image(&found(&["one.yaml"]).unwrap().unwrap()),
            format!("one@sha256:{A}")
        );
        let err = found(&["two.yaml"]).unwrap_err().to_string();
        assert!(err.contains("catalog 'one.yaml', which is not trusted: run with --trusted-catalog one.yaml to run its functions"), "{err}");
        let err = found(&["one"]).unwrap_err().to_string();
        assert!(
            err.contains("which is not trusted"),
            "a metadata.name trusts nothing: {err}"
        );
        let none = lookup(
            &config("example.com/v2"),
            &loader,
            &refs,
            &store(&loader, &["one.yaml"]),
            &policy,
            None,
        )
        .unwrap_err()
        .to_string();
        assert!(none.contains("no catalog defines apiVersion example.com/v2 kind SetLabels; catalogs searched: 'one.yaml', 'two.yaml'"), "{none}");
        assert!(lookup(
            &config("example.com/v1"),
            &loader,
            &[],
            &store(&loader, &[]),
            &policy,
            None
        )
        .unwrap()
        .is_none());
    }

    #[test]
    fn a_spec_v2_version_runs_as_an_http_server_and_only_idempotent_ones_are_cached() {
        let v2 = catalog("v2", "img:v1").replace(
            "idempotent: true",
            "idempotent: false\n      conformWithSpecVersions: [v1, v2]",
        );
        let resolved = |case: &str, text: String| {
            let (loader, refs) = setup(case, &[("c.yaml", text)]);
            let found = lookup(
                &config("example.com/v1"),
                &loader,
                &refs,
                &store(&loader, &["c.yaml"]),
                &Policy::default(),
                None,
            );
            found.unwrap().unwrap()
        };
        let call = resolved("v2", v2);
        assert_eq!(call.traits.server, Some(ServerProtocol::Http));
        assert!(!call.traits.v2_only, "it lists v1 too");
        assert_eq!(call.traits.idempotent_digest, None);
        let only =
            catalog("v2", "img:v1").replace("idempotent: true", "conformWithSpecVersions: [v2]");
        let call = resolved("v2-only", only);
        assert!(
            call.traits.v2_only,
            "a failing server cannot fall back to v1"
        );
    }

    #[test]
    fn a_config_must_fit_its_versions_schema_before_anything_runs() {
        let with_schema = catalog("s", "img:v1").replace(
            "idempotent: true",
            "idempotent: true\n      schema:\n        openAPIV3Schema:\n          type: object\n          required: [labels]\n          properties:\n            labels: {type: object, additionalProperties: {type: string}}",
        );
        let (loader, refs) = setup("schema", &[("c.yaml", with_schema)]);
        let run = |config: &Resource| {
            lookup(
                config,
                &loader,
                &refs,
                &store(&loader, &["c.yaml"]),
                &Policy::default(),
                None,
            )
        };
        let mut fits = config("example.com/v1");
        fits.node = krusty_yaml::parse_stream(
            "apiVersion: example.com/v1\nkind: SetLabels\nmetadata: {name: x}\nlabels: {team: web}\n",
        )
        .unwrap()
        .remove(0)
        .root
        .unwrap();
        assert!(run(&fits).unwrap().is_some());
        let err = run(&config("example.com/v1")).unwrap_err().to_string();
        assert!(
            err.contains("the config does not fit the function's schema: labels: is required"),
            "{err}"
        );
        fits.node = krusty_yaml::parse_stream(
            "apiVersion: example.com/v1\nkind: SetLabels\nmetadata: {name: x}\nlabels: {replicas: 3}\n",
        )
        .unwrap()
        .remove(0)
        .root
        .unwrap();
        let err = run(&fits).unwrap_err().to_string();
        assert!(
            err.contains("labels.replicas: must be of type string, not integer"),
            "{err}"
        );
    }
}
