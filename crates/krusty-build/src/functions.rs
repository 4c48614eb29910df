//! KRM functions configured in `generators:`, `transformers:` and
//! `validators:` (and in compositions): what a config declares, resolved
//! against the kustomization's folder into a call that the build's
//! [`Host`](krusty_runtime::Host) runs.

use krusty_fetch::Fetcher;
use krusty_fn::object;
use krusty_ops::KustomizeVersion;
use krusty_resource::Resource;
use krusty_runtime::{FunctionCall, Policy, Runtime, StarlarkSource};

use crate::error::{BuildError, BuildResult};
use crate::loader::{clean, Loader};

const LOCAL_CONFIG: &str = "config.kubernetes.io/local-config";

/// The function a config declares, if it declares one. Exec paths and
/// Starlark files are resolved against the kustomization's directory;
/// Starlark files are read under its load restrictions, exec paths are not
/// subject to them (`--enable-exec` is the user's trust in them). A
/// Starlark program by URL comes through `fetcher`, once it may run. An
/// exec spec's `envs` (Kustomize v5.7.0) are kept for `version` v5.8.1
/// and dropped for v5.5.0, which does not know them.
pub fn resolve(
    config: &Resource,
    loader: &Loader,
    policy: &Policy,
    fetcher: &Fetcher,
    version: KustomizeVersion,
) -> BuildResult<Option<FunctionCall>> {
    let id = config.id();
    let runtime = match krusty_runtime::runtime_of(&config.node) {
        Ok(Some(r)) => r,
        Ok(None) => return Ok(None),
        Err(e) => return Err(BuildError::new(format!("function config {id}: {e}"))),
    };
    let server = krusty_runtime::server_of(&config.node)
        .map_err(|e| BuildError::new(format!("function config {id}: {e}")))?;
    let label = format!("{id} ({} function)", runtime.name());
    let in_config = |e: BuildError| e.context(format!("function config {id}"));
    let runtime = match runtime {
        Runtime::Exec { path, args, envs } => Runtime::Exec {
            path: {
                loader.record(&clean(&loader.root.join(&path)));
                exec_path(&path, &loader.root).map_err(in_config)?
            },
            args,
            envs: if version >= KustomizeVersion::V5_8_1 {
                envs
            } else {
                Vec::new()
            },
        },
        Runtime::Starlark(StarlarkSource::Path(path)) => {
            let file = loader.file(&path).map_err(in_config)?;
            let program = loader.read(&file, None).map_err(in_config)?;
            Runtime::Starlark(StarlarkSource::Inline(program))
        }
        Runtime::Starlark(StarlarkSource::Url(url)) => {
            // Fetch only what may run.
            policy
                .permit(
                    &Runtime::Starlark(StarlarkSource::Url(url.clone())),
                    &krusty_runtime::Traits::default(),
                )
                .map_err(|e| in_config(BuildError::new(e.to_string())))?;
            // Through the fetch layer: the build's cache, `--offline`
            // and its bounds, as a catalog's Starlark program.
            let (program, _digest) =
                crate::catalog::source::starlark_program(fetcher, &url).map_err(in_config)?;
            Runtime::Starlark(StarlarkSource::Inline(program))
        }
        other => other,
    };
    let mut config = config.node.clone();
    object::set_annotation(&mut config, LOCAL_CONFIG, "true");
    Ok(Some(FunctionCall {
        runtime,
        config,
        dir: loader.root.clone(),
        label,
        traits: krusty_runtime::Traits {
            server,
            ..krusty_runtime::Traits::default()
        },
    }))
}

/// The executable an exec function's `path` names: an absolute path as
/// it is, a relative one against the kustomization's directory `root`.
fn exec_path(path: &str, root: &std::path::Path) -> BuildResult<String> {
    let resolved = root.join(path);
    let problem = match std::fs::metadata(&resolved) {
        Ok(m) if m.is_dir() => "is a directory, not an executable".to_string(),
        Ok(_) => return Ok(resolved.to_string_lossy().into_owned()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => "no such file or directory".into(),
        Err(e) => e.to_string(),
    };
    Err(BuildError::new(format!(
        "exec path '{path}' (relative to {}): {problem}",
        root.display()
    )))
}
