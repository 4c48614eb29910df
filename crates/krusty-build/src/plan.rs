//! Turning a kustomization's fields into the ordered list of built-in
//! operations Kustomize runs for them.

use krusty_ops::builtins::generator::GeneratorArgs;
use krusty_ops::builtins::images::SetImages;
use krusty_ops::builtins::metadata_map::SetMapEntries;
use krusty_ops::builtins::namespace::{SetNamespace, SubjectsMode};
use krusty_ops::builtins::prefix_suffix::AddNameAffixes;
use krusty_ops::builtins::replicas::SetReplicas;
use krusty_ops::fieldspec::merge_into;
use krusty_ops::patch::StrategicMergePatches;
use krusty_ops::replacement::Replacements;
use krusty_ops::{Builtin, FieldSpec, KustomizeVersion, TransformerConfig};
use krusty_resource::Resource;

use crate::catalog::CatalogRef;
use crate::context::Context;
use crate::error::{BuildError, BuildResult};
use crate::level::Config;
use crate::loader::Loader;
use crate::pipeline::{Build, CompositionFile, Operation, Role};
use crate::resolve::Unresolved;
use krusty_resource::Origin;
use std::borrow::Cow;
use std::path::{Path, PathBuf};

/// A builtin configured by a kustomization field, run in `role`.
fn field_operation(label: &str, role: Role, builtin: Builtin, k_path: &Path) -> Operation {
    let origin = Origin::Configured {
        configured_in: k_path.to_path_buf(),
        api_version: "builtin".into(),
        kind: label.to_string(),
        name: String::new(),
        namespace: String::new(),
    };
    Operation::new(label, role, builtin, origin)
}

fn op_err(e: krusty_ops::OpError) -> BuildError {
    BuildError::from(e)
}

/// This kustomization's `configurations:` files with the defaults merged
/// into them, in Kustomize's order (the shared defaults themselves when it
/// has none).
pub(crate) fn own_config(
    loader: &Loader,
    k: &Kustomization,
    k_path: &Path,
    version: KustomizeVersion,
) -> BuildResult<Config> {
    if k.configurations.is_empty() {
        return Ok(Cow::Borrowed(TransformerConfig::defaults(version)));
    }
    // Kustomize merges the files in order, then the result into its
    // defaults.
    let mut files = TransformerConfig::default();
    for (i, path) in k.configurations.iter().enumerate() {
        let pos = crate::kustomization::EntryPositions::at(&k.positions.configurations, i);
        let (file, _, roots) = loader
            .yaml_documents(path)
            .map_err(|e| e.located(k_path, pos))?;
        for mut root in roots {
            // Kustomize decodes them with go-yaml v2 (`create: yes` is true).
            krusty_yaml::retype_as_go_yaml_v2(&mut root);
            let c = TransformerConfig::from_node(&root).map_err(|e| {
                op_err(e).context(format!("configurations file {}", file.display()))
            })?;
            files.merge(&c).map_err(op_err)?;
        }
    }
    let mut config = TransformerConfig::defaults(version).clone();
    config.merge(&files).map_err(op_err)?;
    Ok(Cow::Owned(config))
}

use crate::kustomization::Kustomization;

/// The configuration declared by the OpenAPI definitions in `crds:` files.
pub(crate) fn crd_config(
    loader: &Loader,
    k: &Kustomization,
    k_path: &Path,
) -> BuildResult<TransformerConfig> {
    let mut config = TransformerConfig::default();
    for (i, path) in k.crds.iter().enumerate() {
        let pos = crate::kustomization::EntryPositions::at(&k.positions.crds, i);
        let (file, _, roots) = loader
            .yaml_documents(path)
            .map_err(|e| e.located(k_path, pos))?;
        if roots.is_empty() && loader.read(&file, None)?.is_empty() {
            // Kustomize crashes on an empty file here.
            return Err(BuildError::new(format!(
                "crds file {} is empty",
                file.display()
            )));
        }
        for root in roots {
            let c = krusty_ops::crds::config_from_definitions(&root)
                .map_err(|e| op_err(e).context(format!("crds file {}", file.display())))?;
            config.merge(&c).map_err(op_err)?;
        }
    }
    Ok(config)
}

/// ConfigMap generators, Secret generators, Helm charts, then the
/// `generators:` field.
pub(crate) fn generators(
    ctx: &mut Context,
    loader: &Loader,
    k: &Kustomization,
    k_path: &Path,
) -> BuildResult<Vec<Operation>> {
    let mut operations = Vec::new();
    let with_options = |g: &GeneratorArgs| {
        let mut g = g.clone();
        if let Some(global) = &k.generator_options {
            g.options = g.options.clone().with_global(global);
        }
        g
    };
    for g in k.config_map_generator.iter().chain(&k.secret_generator) {
        let kind = format!("{:?}Generator", g.kind);
        let op = field_operation(
            &kind,
            Role::Generator,
            Builtin::Generate(with_options(g)),
            k_path,
        );
        operations.push(op.labelled(format!("{kind} {}", g.name)));
    }
    let rule = crate::helm::NamespaceRule {
        version: ctx.version,
        inherited: &ctx.helm_root_namespace,
    };
    operations.extend(crate::helm::field_operations(
        &ctx.helm, loader, k, k_path, &rule,
    )?);
    operations.extend(configured(
        ctx,
        loader,
        &k.generators,
        &k.positions.generators,
        "generators",
        k,
        k_path,
    )?);
    Ok(operations)
}

/// The built-in transformers in Kustomize's order, then `transformers:`.
pub(crate) fn transformers(
    ctx: &mut Context,
    loader: &Loader,
    k: &Kustomization,
    k_path: &Path,
    config: &TransformerConfig,
) -> BuildResult<Vec<Operation>> {
    let mut operations: Vec<Operation> = Vec::new();
    let mut push = |label: &str, b: Builtin| {
        operations.push(field_operation(label, Role::Transformer, b, k_path))
    };
    if !k.patches_strategic_merge.is_empty() {
        push(
            "PatchStrategicMergeTransformer",
            Builtin::StrategicMerge(StrategicMergePatches {
                paths: k.patches_strategic_merge.clone(),
                patches: String::new(),
            }),
        );
    }
    for entry in &k.patches {
        push("PatchTransformer", Builtin::Patch(entry.clone()));
    }
    if !k.namespace.is_empty() {
        push(
            "NamespaceTransformer",
            Builtin::Namespace(SetNamespace {
                namespace: k.namespace.clone(),
                specs: config.namespace.clone(),
                unset_only: false,
                subjects: SubjectsMode::DefaultOnly,
            }),
        );
    }
    if !k.name_prefix.is_empty() {
        push(
            "PrefixTransformer",
            Builtin::NameAffixes(AddNameAffixes {
                prefix: k.name_prefix.clone(),
                suffix: String::new(),
                specs: config.name_prefix.clone(),
            }),
        );
    }
    if !k.name_suffix.is_empty() {
        push(
            "SuffixTransformer",
            Builtin::NameAffixes(AddNameAffixes {
                prefix: String::new(),
                suffix: k.name_suffix.clone(),
                specs: config.name_suffix.clone(),
            }),
        );
    }
    for entry in &k.labels {
        let mut specs: Vec<FieldSpec> = entry.fields.clone();
        if entry.include_selectors {
            merge_into(&mut specs, &config.common_labels).map_err(op_err)?;
        } else {
            let metadata = [FieldSpec::any("metadata/labels", true)];
            merge_into(&mut specs, &metadata).map_err(op_err)?;
            if entry.include_templates {
                merge_into(&mut specs, &config.template_labels).map_err(op_err)?;
            }
        }
        merge_into(&mut specs, &config.labels).map_err(op_err)?;
        push(
            "LabelTransformer",
            Builtin::MapEntries(SetMapEntries {
                pairs: entry.pairs.clone(),
                specs,
            }),
        );
    }
    // Kustomize runs the commonLabels transformer whenever `labels:` or
    // `commonLabels:` has entries (with no pairs it changes nothing, but
    // it is recorded among a resource's transformations).
    if !k.common_labels.is_empty() || !k.labels.is_empty() {
        push(
            "LabelTransformer",
            Builtin::MapEntries(SetMapEntries {
                pairs: k.common_labels.clone(),
                specs: config.common_labels.clone(),
            }),
        );
    }
    if !k.common_annotations.is_empty() {
        push(
            "AnnotationsTransformer",
            Builtin::MapEntries(SetMapEntries {
                pairs: k.common_annotations.clone(),
                specs: config.common_annotations.clone(),
            }),
        );
    }
    for entry in &k.patches_json6902 {
        push("PatchJson6902Transformer", Builtin::Json6902(entry.clone()));
    }
    if !k.replicas.is_empty() {
        let ops = k
            .replicas
            .iter()
            .map(|(name, count, written_at)| SetReplicas {
                name: name.clone(),
                count: *count,
                specs: config.replicas.clone(),
                written_at: *written_at,
            })
            .collect();
        push("ReplicaCountTransformer", Builtin::ReplicaCounts(ops));
    }
    if !k.images.is_empty() {
        let op = SetImages::new(k.images.clone(), config.images.clone()).map_err(op_err)?;
        push("ImageTagTransformer", Builtin::Images(op));
    }
    if !k.replacements.is_empty() {
        push(
            "ReplacementTransformer",
            Builtin::Replacements(Replacements {
                entries: k.replacements.clone(),
            }),
        );
    }
    operations.extend(configured(
        ctx,
        loader,
        &k.transformers,
        &k.positions.transformers,
        "transformers",
        k,
        k_path,
    )?);
    Ok(operations)
}

/// The `validators:` field.
pub(crate) fn validators(
    ctx: &mut Context,
    loader: &Loader,
    k: &Kustomization,
    k_path: &Path,
) -> BuildResult<Vec<Operation>> {
    configured(
        ctx,
        loader,
        &k.validators,
        &k.positions.validators,
        "validators",
        k,
        k_path,
    )
}

/// What an entry of `generators:`, `transformers:` or `validators:` gives.
enum Listed<'a> {
    /// A config (written inline, or read from a file or folder).
    Config(Resource),
    /// A composition: its file, and the entry naming its folder.
    Composition(PathBuf, &'a str),
}

/// Reads the configs named (or written inline) in `generators:`,
/// `transformers:` or `validators:` and makes an operation of each, in
/// the field's role.
fn configured(
    ctx: &mut Context,
    loader: &Loader,
    entries: &[String],
    positions: &[krusty_yaml::Pos],
    field: &str,
    k: &Kustomization,
    k_path: &Path,
) -> BuildResult<Vec<Operation>> {
    let role = match field {
        "generators" => Role::Generator,
        "validators" => Role::Validator,
        _ => Role::Transformer,
    };
    let catalogs = &CatalogRef::list(&k.catalogs, &k.positions.catalogs, loader, k_path);
    // A failure names where its entry is written, unless it says where.
    let here = |i: usize, e: BuildError| {
        e.located(
            k_path,
            crate::kustomization::EntryPositions::at(positions, i),
        )
    };
    // Configs, and compositions (folders holding one): as in Kustomize,
    // the configs written inline first, then those of files and folders,
    // each in entry order.
    let mut inline: Vec<(usize, Listed)> = Vec::new();
    let mut listed: Vec<(usize, Listed)> = Vec::new();
    for (i, entry) in entries.iter().enumerate() {
        if let Some(rs) = inline_configs(entry).map_err(|e| here(i, e))? {
            inline.extend(rs.into_iter().map(|r| (i, Listed::Config(r))));
            continue;
        }
        if let Some(file) = composition_in(loader, entry).map_err(|e| here(i, e))? {
            listed.push((i, Listed::Composition(file, entry.as_str())));
            continue;
        }
        let resources = ctx.load_resources(loader, entry).map_err(|e| here(i, e))?;
        listed.extend(
            resources
                .into_vec()
                .into_iter()
                .map(|r| (i, Listed::Config(r))),
        );
    }
    inline.append(&mut listed);
    inline
        .iter()
        .map(|(i, item)| {
            let here = |e: BuildError| here(*i, e);
            let c = match item {
                Listed::Config(c) => c,
                Listed::Composition(file, entry) => {
                    let origin = Origin::Configured {
                        configured_in: k_path.to_path_buf(),
                        api_version: crate::composition::API_VERSION.into(),
                        kind: "Composition".into(),
                        name: String::new(),
                        namespace: String::new(),
                    };
                    let composition = CompositionFile { file: file.clone() };
                    let label = format!("composition '{entry}'");
                    return Ok(Operation::new(label, role, composition, origin));
                }
            };
            let id = c.id();
            let (configured_in, remote) = match c.meta.origin.as_deref() {
                Some(o) => match (o.local(), o) {
                    (Origin::File(p), Origin::Remote { remote, .. }) => (p.clone(), Some(remote)),
                    (Origin::File(p), _) => (p.clone(), None),
                    _ => (k_path.to_path_buf(), loader.remote.as_ref()),
                },
                None => (k_path.to_path_buf(), loader.remote.as_ref()),
            };
            let origin = Origin::Configured {
                configured_in,
                api_version: c.api_version().to_string(),
                kind: c.kind().to_string(),
                name: c.name().to_string(),
                namespace: c.namespace().to_string(),
            }
            .within(remote);
            let in_field = |e: BuildError| {
                here(e).context(format!(
                    "kustomization file {}: field '{field}'",
                    k_path.display()
                ))
            };
            let resolved = crate::resolve::resolve(ctx, c, loader, catalogs, role, origin, true);
            let op = match resolved {
                Ok(op) => op,
                Err(Unresolved::Function(e)) => return Err(in_field(e)),
                Err(Unresolved::NoRuntime) => {
                    return Err(here(BuildError::new(format!(
                        "{field}: {id} is not a builtin and declares no KRM function runtime (a config.kubernetes.io/function annotation or a runtime: field); krusty does not run legacy exec or Go plugins"
                    ))))
                }
                Err(Unresolved::Config(e)) => return Err(here(e)),
            };
            if c.api_version() == "builtin" {
                check_role(c.kind(), &id, field).map_err(here)?;
            }
            Ok(op)
        })
        .collect()
}

/// The built-in generators; every other builtin is a transformer.
const BUILTIN_GENERATORS: [&str; 4] = [
    "ConfigMapGenerator",
    "SecretGenerator",
    "IAMPolicyGenerator",
    crate::helm::KIND,
];

/// Refuses a builtin listed where its role does not fit, once it is
/// configured, as Kustomize does: a generator under `transformers:` or
/// `validators:` (which run as transformers), a transformer under
/// `generators:`.
fn check_role(kind: &str, id: &impl std::fmt::Display, field: &str) -> BuildResult<()> {
    let generator = BUILTIN_GENERATORS.contains(&kind);
    match (field, generator) {
        ("generators", false) => Err(BuildError::new(format!(
            "loading generator plugins: failed to load generator: plugin {id} not a generator"
        ))),
        ("transformers" | "validators", true) => {
            Err(BuildError::new(format!("plugin {id} not a transformer")))
        }
        _ => Ok(()),
    }
}

/// The composition file of the folder `entry` names, if it names a local
/// folder holding one.
fn composition_in(loader: &Loader, entry: &str) -> BuildResult<Option<PathBuf>> {
    if crate::remote::is_remote(entry) {
        return Ok(None);
    }
    match loader.entry(entry) {
        Ok(crate::loader::Entry::Dir(dir)) => {
            for name in crate::composition::FILE_NAMES {
                loader.record(&dir.join(name));
            }
            crate::composition::find(&dir)
        }
        _ => Ok(None),
    }
}

/// Parses an entry written inline as YAML; `None` when it is a path.
fn inline_configs(entry: &str) -> BuildResult<Option<Vec<Resource>>> {
    let Ok(docs) = krusty_yaml::parse_stream(entry) else {
        return Ok(None);
    };
    let roots: Vec<_> = docs.into_iter().filter_map(|d| d.root).collect();
    if roots.is_empty() || roots.iter().any(|r| r.as_map().is_none()) {
        return Ok(None);
    }
    // Kustomize takes the text for a path unless every document has a
    // name, and finds no such file.
    let named = |r: &krusty_yaml::Node| {
        r.get_path(&["metadata", "name"])
            .and_then(krusty_yaml::Node::as_str)
            .is_some_and(|n| !n.is_empty())
    };
    if !roots.iter().all(named) {
        return Err(BuildError::new(
            "an inline config needs metadata.name (without one, the text is read as a path, and there is no such file)",
        ));
    }
    let mut out = Vec::new();
    for root in roots {
        out.push(Resource::from_node(root).map_err(BuildError::from)?);
    }
    Ok(Some(out))
}
