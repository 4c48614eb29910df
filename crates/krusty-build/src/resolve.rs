//! From a config to the operation it names: one resolver for the configs
//! of a Kustomization's `generators:`, `transformers:` and `validators:`
//! and for a Composition's transformers. A config with another API
//! version than `builtin` is a KRM function (its declared runtime, else a
//! catalog's entry); a `builtin` one is a Helm chart or one of
//! Kustomize's builtins. Each caller words the failures in its own
//! context ([`Unresolved`]).

use krusty_ops::builtins::value_add::ConfigSite;
use krusty_ops::Builtin;
use krusty_resource::{Origin, Resource};

use crate::catalog::CatalogRef;
use crate::context::Context;
use crate::error::BuildError;
use crate::loader::Loader;
use crate::pipeline::{Operation, Role};

/// Why a config names no operation.
pub(crate) enum Unresolved {
    /// Its KRM function cannot be resolved (its runtime, or its catalogs).
    Function(BuildError),
    /// It is not a builtin and declares no runtime, and no catalog has it.
    NoRuntime,
    /// A builtin (or Helm chart) config that cannot be read.
    Config(BuildError),
}

/// The operation `config` names, run in `role`, configured in `loader`'s
/// folder (`catalogs` are those it may be looked up in), recorded as
/// `origin`. With `record_origin`, a function's config carries the origin
/// record of the file it was read from, as a resource does.
pub(crate) fn resolve(
    ctx: &Context,
    config: &Resource,
    loader: &Loader,
    catalogs: &[CatalogRef],
    role: Role,
    origin: Origin,
    record_origin: bool,
) -> Result<Operation, Unresolved> {
    if config.api_version() != "builtin" {
        let declared = crate::functions::resolve(
            config,
            loader,
            &ctx.policy,
            ctx.catalogs.fetcher(),
            ctx.version,
        )
        .map_err(Unresolved::Function)?;
        let mut function = match declared {
            Some(f) => f,
            None => crate::catalog::resolve(config, loader, catalogs, &ctx.catalogs, &ctx.policy)
                .map_err(Unresolved::Function)?
                .ok_or(Unresolved::NoRuntime)?,
        };
        if record_origin {
            let (records, root) = ctx.records();
            if let Some(text) = records.origin_annotation(&config.meta, root) {
                let key = crate::build_metadata::ORIGIN_ANNOTATION;
                krusty_fn::object::set_annotation(&mut function.config, key, &text);
            }
        }
        return Ok(Operation::new(
            function.label.clone(),
            role,
            function,
            origin,
        ));
    }
    let id = config.id();
    if config.kind() == crate::helm::KIND {
        return crate::helm::config_operation(
            config,
            &id,
            loader,
            &ctx.helm,
            origin,
            role,
            ctx.version,
        )
        .map_err(Unresolved::Config);
    }
    let root_name = loader
        .root
        .file_name()
        .map_or_else(|| loader.root.to_string_lossy(), |n| n.to_string_lossy());
    let site = ConfigSite {
        root_name: &root_name,
        files: loader,
        version: ctx.version,
    };
    let builtin = Builtin::from_config(&config.node, &id, &site)
        .map_err(|e| Unresolved::Config(BuildError::from(e)))?;
    Ok(Operation::new(id.to_string(), role, builtin, origin))
}
