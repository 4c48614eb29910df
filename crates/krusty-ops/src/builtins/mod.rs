//! Kustomize's built-in generators and transformers, each a standalone
//! operation on a resource map, and [`Builtin`], which reads one from an
//! `apiVersion: builtin` configuration.

pub mod generator;
pub mod hash;
pub mod iam_policy;
pub mod images;
pub mod kv;
pub mod metadata_map;
pub mod nameref;
pub mod namespace;
pub mod prefix_suffix;
pub mod replicas;
pub mod shape;
pub mod value_add;

use krusty_resource::{Origin, ResId, ResMap, Resource};
use krusty_yaml::Node;

use crate::absorb::absorb;
use crate::env::Env;
use crate::error::{OpError, OpResult};
use crate::fieldspec::{specs_from_node, FieldSpec};
use crate::patch::{Json6902Entry, Patch, PatchEntry, PatchSource, StrategicMergePatches};
use crate::replacement::Replacements;
use crate::selector::Selector;
use crate::typed;
use crate::version::KustomizeVersion;
use generator::{Generate, GeneratedKind, GeneratorArgs};
use hash::AddHashSuffixes;
use images::{ImageChange, SetImage, SetImages};
use metadata_map::SetMapEntries;
use namespace::{SetNamespace, SubjectsMode};
use prefix_suffix::AddNameAffixes;
use replicas::SetReplicas;
use value_add::{ConfigSite, ValueAdd};

/// One configured built-in operation.
#[derive(Debug, Clone)]
pub enum Builtin {
    /// ConfigMapGenerator / SecretGenerator.
    Generate(GeneratorArgs),
    /// IAMPolicyGenerator.
    IamPolicy(iam_policy::IamPolicy),
    /// PrefixTransformer, SuffixTransformer, PrefixSuffixTransformer.
    NameAffixes(AddNameAffixes),
    /// LabelTransformer, AnnotationsTransformer.
    MapEntries(SetMapEntries),
    /// NamespaceTransformer.
    Namespace(SetNamespace),
    /// ImageTagTransformer.
    Image(SetImage),
    /// A kustomization's `images:` entries (one ImageTagTransformer each),
    /// applied in one pass.
    Images(SetImages),
    /// ReplicaCountTransformer.
    Replicas(SetReplicas),
    /// A kustomization's `replicas:` entries, applied in one pass.
    ReplicaCounts(Vec<SetReplicas>),
    /// HashTransformer.
    Hash(AddHashSuffixes),
    /// PatchTransformer (`patches:`).
    Patch(PatchEntry),
    /// PatchStrategicMergeTransformer (`patchesStrategicMerge:`).
    StrategicMerge(StrategicMergePatches),
    /// PatchJson6902Transformer (`patchesJson6902:`).
    Json6902(Json6902Entry),
    /// ReplacementTransformer (`replacements:`).
    Replacements(Replacements),
    /// ValueAddTransformer.
    ValueAdd(ValueAdd),
}

/// Records a step that ran over `r` (`times` transformations when `record`);
/// a resource whose records were erased (no origin) takes the step as its
/// origin instead, as in Kustomize.
fn record_step(r: &mut Resource, origin: &Origin, times: usize, record: bool) {
    if r.meta.origin.is_none() {
        r.meta.origin = Some(Box::new(origin.clone()));
    } else if record {
        for _ in 0..times {
            r.meta.transformations.push(origin.clone());
        }
    }
}

impl Builtin {
    /// Runs the operation over `resources` in `env` (files are read through
    /// it). `origin` names the configuration: generated resources record it
    /// as their origin, transformed ones as a transformation.
    pub fn apply(&self, resources: &mut ResMap, env: &Env<'_>, origin: &Origin) -> OpResult<()> {
        let generated = match self {
            Builtin::Generate(args) => Some(args.generate(env.files)?),
            Builtin::IamPolicy(p) => Some(p.generate()?),
            _ => None,
        };
        if let Some(mut generated) = generated {
            generated.meta.origin = Some(Box::new(origin.clone()));
            return absorb(resources, generated, env.version).map_err(|e| match self {
                Builtin::Generate(args) => args.locate(e),
                _ => e,
            });
        }
        self.transform(resources, env)?;
        if env.record_transformations || env.build_records {
            // A batch of entries counts as one transformer per entry.
            let times = match self {
                Builtin::Images(op) => op.changes.len(),
                Builtin::ReplicaCounts(ops) => ops.len(),
                _ => 1,
            };
            for r in resources.resources_mut_keeping_identity() {
                if r.meta.origin.is_some() {
                    r.annotations_through_string_map();
                }
                record_step(r, origin, times, env.record_transformations);
            }
        }
        Ok(())
    }

    fn transform(&self, resources: &mut ResMap, env: &Env<'_>) -> OpResult<()> {
        match self {
            Builtin::Generate(_) | Builtin::IamPolicy(_) => Ok(()),
            Builtin::NameAffixes(op) => op.apply(resources),
            Builtin::MapEntries(op) => op.apply(resources, env),
            Builtin::Namespace(op) => op.apply(resources, env.version),
            Builtin::Image(op) => op.apply(resources),
            Builtin::Images(op) => op.apply(resources),
            Builtin::Replicas(op) => op.apply(resources),
            Builtin::ReplicaCounts(ops) => replicas::apply_all(ops, resources),
            Builtin::Hash(op) => op.apply(resources),
            Builtin::Patch(op) => op.apply(resources, env),
            Builtin::StrategicMerge(op) => op.apply(resources, env),
            Builtin::Json6902(op) => op.apply(resources, env),
            Builtin::Replacements(op) => op.apply(resources, env),
            Builtin::ValueAdd(op) => op.apply(resources),
        }
    }

    /// Reads an `apiVersion: builtin` configuration. `id` names it in
    /// errors; `site` is where it is configured.
    pub fn from_config(config: &Node, id: &ResId, site: &ConfigSite<'_>) -> OpResult<Builtin> {
        let kind = id.gvk.kind.as_str();
        let fail = |e: OpError| OpError::new(format!("plugin {id} fails configuration: {e}"));
        if let Some(config_type) = shape::config_type_in(kind, site.version) {
            config_type
                .check(config)
                .map_err(|e| fail(OpError::new(e.to_string())))?;
        }
        let specs = || -> OpResult<Option<Vec<FieldSpec>>> {
            match config.get("fieldSpecs") {
                Some(n) if !n.is_null() => Ok(Some(specs_from_node(
                    n,
                    "fieldSpecs",
                    typed::Strictness::Lenient,
                )?)),
                _ => Ok(None),
            }
        };
        let text = |k: &str| config.get(k).map(typed::lenient_string).unwrap_or_default();
        let required_specs = || -> OpResult<Vec<FieldSpec>> {
            specs()?.ok_or_else(|| OpError::new("fieldSpecs is not expected to be nil"))
        };
        let built = match kind {
            "ConfigMapGenerator" => Builtin::Generate(GeneratorArgs::from_node(
                GeneratedKind::ConfigMap,
                config,
                "",
                false,
                site.version,
            )?),
            "SecretGenerator" => Builtin::Generate(GeneratorArgs::from_node(
                GeneratedKind::Secret,
                config,
                "",
                false,
                site.version,
            )?),
            "IAMPolicyGenerator" => Builtin::IamPolicy(iam_policy::IamPolicy::from_config(config)),
            "PrefixSuffixTransformer" => Builtin::NameAffixes(AddNameAffixes {
                prefix: text("prefix"),
                suffix: text("suffix"),
                specs: required_specs().map_err(fail)?,
            }),
            "PrefixTransformer" => Builtin::NameAffixes(AddNameAffixes {
                prefix: text("prefix"),
                suffix: String::new(),
                specs: required_specs().map_err(fail)?,
            }),
            "SuffixTransformer" => Builtin::NameAffixes(AddNameAffixes {
                prefix: String::new(),
                suffix: text("suffix"),
                specs: required_specs().map_err(fail)?,
            }),
            "LabelTransformer" | "AnnotationsTransformer" => {
                let field = if kind == "LabelTransformer" {
                    "labels"
                } else {
                    "annotations"
                };
                Builtin::MapEntries(SetMapEntries {
                    pairs: config
                        .get(field)
                        .map(typed::lenient_string_map)
                        .unwrap_or_default(),
                    specs: specs()?.unwrap_or_default(),
                })
            }
            "NamespaceTransformer" => Builtin::Namespace(SetNamespace {
                namespace: config
                    .get_path(&["metadata", "namespace"])
                    .map(typed::lenient_string)
                    .unwrap_or_default(),
                specs: specs()?.unwrap_or_default(),
                unset_only: config.get("unsetOnly").and_then(Node::as_str) == Some("true"),
                subjects: SubjectsMode::parse(&text("setRoleBindingSubjects"))?,
            }),
            "ImageTagTransformer" => {
                let tag = config.get("imageTag");
                let field = |k: &str| {
                    tag.and_then(|t| t.get(k))
                        .map(typed::lenient_string)
                        .unwrap_or_default()
                };
                Builtin::Image(SetImage::new(
                    ImageChange {
                        name: field("name"),
                        new_name: field("newName"),
                        new_tag: field("newTag"),
                        tag_suffix: field("tagSuffix"),
                        digest: field("digest"),
                    },
                    specs()?.unwrap_or_default(),
                )?)
            }
            "ReplicaCountTransformer" => {
                let replica = config.get("replica");
                let name = replica
                    .and_then(|r| r.get("name"))
                    .map(typed::lenient_string)
                    .unwrap_or_default();
                let count = replica
                    .and_then(|r| r.get("count"))
                    .and_then(Node::as_str)
                    .unwrap_or("0");
                let count = count.parse::<i64>().map_err(|_| {
                    OpError::new(format!("replica count {count:?} is not an integer"))
                })?;
                Builtin::Replicas(SetReplicas {
                    name,
                    count,
                    specs: specs()?.unwrap_or_default(),
                    written_at: krusty_yaml::Pos::default(),
                })
            }
            "HashTransformer" => Builtin::Hash(AddHashSuffixes),
            "PatchTransformer" => Builtin::Patch(patch_entry(config, site.version).map_err(fail)?),
            "PatchStrategicMergeTransformer" => Builtin::StrategicMerge(StrategicMergePatches {
                paths: config
                    .get("paths")
                    .and_then(Node::as_seq)
                    .map(|items| items.iter().map(typed::lenient_string).collect())
                    .unwrap_or_default(),
                patches: text("patches"),
            }),
            "ReplacementTransformer" => Builtin::Replacements(
                Replacements::from_config(config, site.version).map_err(fail)?,
            ),
            "PatchJson6902Transformer" => Builtin::Json6902(json6902_entry(config).map_err(fail)?),
            "ValueAddTransformer" => {
                Builtin::ValueAdd(ValueAdd::from_config(config, site).map_err(fail)?)
            }
            _ => return Err(OpError::new(format!("unable to load builtin {}", id.gvk))),
        };
        Ok(built)
    }
}

/// Reads a PatchTransformer config (also the shape of a `patches:` entry)
/// as Kustomize release `version` does: from v5.8.1 on, option keys are
/// matched without regard to case.
pub fn patch_entry(config: &Node, version: KustomizeVersion) -> OpResult<PatchEntry> {
    let text = |k: &str| config.get(k).map(typed::lenient_string).unwrap_or_default();
    let patch = text("patch").trim().to_string();
    let path = text("path");
    let shown = || krusty_yaml::to_kustomize_yaml(config).unwrap_or_default();
    let source = match (patch.is_empty(), path.is_empty()) {
        (true, true) => {
            return Err(OpError::new(format!(
                "must specify one of patch and path in\n{}",
                shown()
            )))
        }
        (false, false) => {
            return Err(OpError::new(format!(
                "patch and path can't be set at the same time\n{}",
                shown()
            )))
        }
        (false, true) => PatchSource::Inline(patch),
        (true, false) => PatchSource::Path(path),
    };
    let target = match config.get("target") {
        Some(t) if !t.is_null() => Some(Selector::from_node(
            t,
            "types.Selector",
            typed::Strictness::Lenient,
        )?),
        _ => None,
    };
    let option = |k: &str| {
        let options = config.get("options").and_then(Node::as_map);
        let mut keys: Vec<&(Node, Node)> = options.map(|m| m.iter().collect()).unwrap_or_default();
        keys.sort_by(|a, b| a.0.key_str().cmp(&b.0.key_str()));
        let same = |written: &str| match version {
            KustomizeVersion::V5_5_0 => written == k,
            _ => written.eq_ignore_ascii_case(k),
        };
        keys.iter()
            .rev()
            .find(|(key, _)| same(key.key_str().unwrap_or_default()))
            .and_then(|(_, v)| v.as_str())
            == Some("true")
    };
    Ok(PatchEntry {
        source,
        target,
        allow_name_change: option("allowNameChange"),
        allow_kind_change: option("allowKindChange"),
        text_at: None,
        written_at: krusty_yaml::Pos::default(),
    })
}

/// Reads a PatchJson6902Transformer config (also a `patchesJson6902:` entry).
pub fn json6902_entry(config: &Node) -> OpResult<Json6902Entry> {
    let text = |k: &str| config.get(k).map(typed::lenient_string).unwrap_or_default();
    let target = match config.get("target") {
        Some(t) if !t.is_null() => {
            Selector::from_node(t, "types.Selector", typed::Strictness::Lenient)?
        }
        _ => Selector::default(),
    };
    let path = text("path");
    let op = match config.get("jsonOp").or_else(|| config.get("op")) {
        Some(n) if n.as_scalar().is_some() => typed::lenient_string(n),
        Some(n) if !n.is_null() => krusty_yaml::to_go_json(n),
        _ => String::new(),
    };
    let source = match (path.is_empty(), op.is_empty()) {
        (true, true) => return Err(OpError::new("empty file path and empty jsonOp")),
        (false, false) => return Err(OpError::new("must specify a file path or jsonOp, not both")),
        (false, true) => PatchSource::Path(path),
        (true, false) => PatchSource::Inline(op),
    };
    Ok(Json6902Entry {
        target,
        source,
        text_at: None,
        written_at: krusty_yaml::Pos::default(),
    })
}
