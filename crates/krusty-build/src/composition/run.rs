//! Running a consolidated composition: each transformer in order over the
//! resources, each one's output the next one's input. Builtins and KRM
//! functions run as the same operations a Kustomization runs;
//! `ResourceGenerator`/`ResourceAccumulator` add the resources of files and
//! folders; an inline `Kustomization` gets the resources so far as its
//! first resources.

use std::path::Path;

use krusty_ops::{FieldSpec, KustomizeVersion, TransformerConfig};
use krusty_resource::{Origin, ResMap, Resource};
use krusty_yaml::Node;

use super::consolidate::Transformer;
use crate::context::Context;
use crate::error::{BuildError, BuildResult};
use crate::kustomization::Kustomization;
use crate::loader::{LoadRestrictor, Loader};
use crate::pipeline::{InlineKustomization, Operation, Pipeline, ResourcePaths, Role};
use crate::resolve::Unresolved;

/// The API version of an inline Kustomization.
const KUSTOMIZATION_API: &str = "kustomize.config.k8s.io/v1beta1";

/// The pipeline of `list`: each transformer planned into its operation
/// (all of them before any runs, so a config that cannot run is reported
/// before the functions ahead of it have run).
pub(crate) fn pipeline(
    ctx: &Context,
    list: &[Transformer],
    restrictor: LoadRestrictor,
) -> BuildResult<Pipeline> {
    let mut operations = Vec::with_capacity(list.len());
    for t in list {
        let mut loader = Loader::new(&t.dir, restrictor)?
            .with_fetcher(ctx.fetcher())
            .counting(std::sync::Arc::clone(&ctx.reads));
        loader.inputs = ctx.inputs.clone();
        operations.push(operation(ctx, &loader, t)?);
    }
    Ok(Pipeline::new(operations))
}

/// Runs `list` over `input`.
pub(crate) fn run(
    ctx: &mut Context,
    list: &[Transformer],
    restrictor: LoadRestrictor,
    input: ResMap,
) -> BuildResult<ResMap> {
    let pipeline = pipeline(ctx, list, restrictor)?;
    let mut resmap = input;
    // Every operation is placed: the loader and site given here are not
    // used.
    let loader = Loader::new(Path::new("/"), restrictor)?;
    pipeline.run(ctx, &loader, "", &mut resmap)?;
    Ok(resmap)
}

/// The operation a transformer config is, placed in its folder and named
/// in errors by its file and line.
fn operation(ctx: &Context, loader: &Loader, t: &Transformer) -> BuildResult<Operation> {
    // Loading resources and inline Kustomizations are named by the
    // transformer and its line; builtins and functions by their file and
    // line, as in a Kustomization.
    let whole = || {
        (
            format!("{} (line {})", t.describe(), t.config.pos().line),
            format!("composition file {}", t.file.display()),
        )
    };
    let in_step = |e: BuildError| {
        let (label, site) = whole();
        e.context(format!("running transformer {label}"))
            .context(site)
    };
    let (op, site) = match (t.api_version(), t.kind()) {
        ("builtin", "ResourceGenerator") | ("builtin", "ResourceAccumulator") => {
            let field = if t.kind() == "ResourceGenerator" {
                "files"
            } else {
                "paths"
            };
            let (label, site) = whole();
            let paths = resource_paths(t, field).map_err(in_step)?;
            let op = Operation::new(label, Role::Transformer, ResourcePaths { paths }, origin(t));
            (op, site)
        }
        (KUSTOMIZATION_API, "Kustomization") => {
            let (label, site) = whole();
            let inline = InlineKustomization {
                kustomization: inline_kustomization(t, ctx.version).map_err(in_step)?,
                file: t.file.clone(),
            };
            (
                Operation::new(label, Role::Transformer, inline, origin(t)),
                site,
            )
        }
        ("builtin", kind) => {
            let role = match kind {
                "ConfigMapGenerator"
                | "SecretGenerator"
                | "IAMPolicyGenerator"
                | crate::helm::KIND => Role::Generator,
                _ => Role::Transformer,
            };
            let op = builtin_operation(ctx, loader, t, role).map_err(in_step)?;
            (op, site(t))
        }
        _ => {
            let op = function_operation(ctx, loader, t).map_err(in_step)?;
            (op, site(t))
        }
    };
    Ok(op.placed(loader.clone(), site))
}

/// Names the file and line a transformer is configured at, in messages.
fn site(t: &Transformer) -> String {
    format!(
        "composition file {}, line {}",
        t.file.display(),
        t.config.pos().line
    )
}

/// Where a transformer's changes come from, in build records.
fn origin(t: &Transformer) -> Origin {
    Origin::Configured {
        configured_in: t.file.clone(),
        api_version: t.api_version().to_string(),
        kind: t.kind().to_string(),
        name: t.name().to_string(),
        namespace: t
            .config
            .get_path(&["metadata", "namespace"])
            .and_then(Node::as_str)
            .unwrap_or("")
            .to_string(),
    }
}

/// The paths listed in `field` (files, or folders holding a kustomization
/// or a composition, which are built).
fn resource_paths(t: &Transformer, field: &str) -> BuildResult<Vec<String>> {
    let paths = match t.config.get(field) {
        Some(list) => list.as_seq().ok_or_else(|| {
            BuildError::new(format!(
                "field '{field}' must be a list (line {})",
                list.pos().line
            ))
        })?,
        None => {
            return Err(BuildError::new(format!("field '{field}' is required")));
        }
    };
    paths
        .iter()
        .map(|item| {
            item.as_str()
                .filter(|_| !item.is_null())
                .map(str::to_string)
                .ok_or_else(|| {
                    BuildError::new(format!(
                        "field '{field}': entries must be paths (line {})",
                        item.pos().line
                    ))
                })
        })
        .collect()
}

/// An inline Kustomization, read from its config.
fn inline_kustomization(t: &Transformer, version: KustomizeVersion) -> BuildResult<Kustomization> {
    let mut k = Kustomization::from_node(t.config.clone(), &t.source, version)
        .map_err(|e| BuildError::from(e).context("invalid inline Kustomization"))?;
    // Its entries are named by the transformer's line, not their own.
    k.positions = Default::default();
    Ok(k)
}

/// A builtin's (or Helm chart's) operation in `role`; a config without
/// `fieldSpecs` gets Kustomize's default field specs for that builtin
/// (those its Kustomization field uses).
fn builtin_operation(
    ctx: &Context,
    loader: &Loader,
    t: &Transformer,
    role: Role,
) -> BuildResult<Operation> {
    let mut config = t.config.clone();
    if config.get("fieldSpecs").is_none_or(Node::is_null) {
        if let Some(specs) = default_specs(t.kind(), ctx.version) {
            config.set("fieldSpecs", Node::seq_of(specs.iter().map(spec_node)));
        }
    }
    let resource = Resource::from_node(config).map_err(BuildError::from)?;
    Ok(resolved(ctx, loader, t, &resource, role)?.labelled(t.describe()))
}

/// The default field specs of a builtin transformer.
fn default_specs(kind: &str, version: KustomizeVersion) -> Option<&'static [FieldSpec]> {
    let d = TransformerConfig::defaults(version);
    Some(match kind {
        "PrefixSuffixTransformer" | "PrefixTransformer" => &d.name_prefix,
        "SuffixTransformer" => &d.name_suffix,
        "LabelTransformer" => &d.common_labels,
        "AnnotationsTransformer" => &d.common_annotations,
        "NamespaceTransformer" => &d.namespace,
        "ImageTagTransformer" => &d.images,
        "ReplicaCountTransformer" => &d.replicas,
        _ => return None,
    })
}

/// A field spec as a config writes it.
fn spec_node(spec: &FieldSpec) -> Node {
    let mut node = Node::map();
    for (key, value) in [
        ("group", &spec.gvk.group),
        ("version", &spec.gvk.version),
        ("kind", &spec.gvk.kind),
    ] {
        if !value.is_empty() {
            node.set(key, Node::string(value.as_str()));
        }
    }
    node.set("path", Node::string(spec.path.as_str()));
    if spec.create {
        node.set("create", Node::plain("true"));
    }
    node
}

/// A KRM function's operation.
fn function_operation(ctx: &Context, loader: &Loader, t: &Transformer) -> BuildResult<Operation> {
    let resource = Resource::from_node(t.config.clone()).map_err(BuildError::from)?;
    resolved(ctx, loader, t, &resource, Role::Transformer)
}

/// The operation the transformer's config (as `resource`) names, in
/// `role`, through the resolver Kustomizations use.
fn resolved(
    ctx: &Context,
    loader: &Loader,
    t: &Transformer,
    resource: &Resource,
    role: Role,
) -> BuildResult<Operation> {
    let origin = origin(t);
    crate::resolve::resolve(ctx, resource, loader, &t.catalogs, role, origin, false).map_err(|e| match e {
        Unresolved::Function(e) | Unresolved::Config(e) => e,
        Unresolved::NoRuntime => BuildError::new(
            "not a builtin, and no KRM function runtime is declared (a runtime: field or a config.kubernetes.io/function annotation)",
        ),
    })
}
