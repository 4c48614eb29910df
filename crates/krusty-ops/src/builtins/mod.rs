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

use krusty_resource::{Origin, ResId, ResMap};
use krusty_yaml::Node;

use crate::absorb::absorb;
use crate::error::{OpError, OpResult};
use crate::fieldspec::{specs_from_node, FieldSpec};
use crate::files::FileSource;
use crate::typed;
use generator::{GeneratedKind, GeneratorArgs};
use hash::AddHashSuffixes;
use images::{ImageChange, SetImage};
use metadata_map::SetMapEntries;
use namespace::{SetNamespace, SubjectsMode};
use prefix_suffix::AddNameAffixes;
use replicas::SetReplicas;

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
    /// ReplicaCountTransformer.
    Replicas(SetReplicas),
    /// HashTransformer.
    Hash(AddHashSuffixes),
}

impl Builtin {
    /// Runs the operation over `resources`; generators read through `files`.
    /// `origin` names the configuration: generated resources record it as
    /// their origin, transformed ones as a transformation.
    pub fn apply(
        &self,
        resources: &mut ResMap,
        files: &dyn FileSource,
        origin: &Origin,
    ) -> OpResult<()> {
        let generated = match self {
            Builtin::Generate(args) => Some(args.generate(files)?),
            Builtin::IamPolicy(p) => Some(p.generate()?),
            _ => None,
        };
        if let Some(mut generated) = generated {
            generated.meta.origin = Some(origin.clone());
            return absorb(resources, generated);
        }
        self.transform(resources)?;
        for r in resources.resources_mut() {
            r.meta.transformations.push(origin.clone());
        }
        Ok(())
    }

    fn transform(&self, resources: &mut ResMap) -> OpResult<()> {
        match self {
            Builtin::Generate(_) | Builtin::IamPolicy(_) => Ok(()),
            Builtin::NameAffixes(op) => op.apply(resources),
            Builtin::MapEntries(op) => op.apply(resources),
            Builtin::Namespace(op) => op.apply(resources),
            Builtin::Image(op) => op.apply(resources),
            Builtin::Replicas(op) => op.apply(resources),
            Builtin::Hash(op) => op.apply(resources),
        }
    }

    /// Reads an `apiVersion: builtin` configuration. `id` names it in errors.
    pub fn from_config(config: &Node, id: &ResId) -> OpResult<Builtin> {
        let kind = id.gvk.kind.as_str();
        let fail = |e: OpError| OpError::new(format!("plugin {id} fails configuration: {}", e.0));
        let specs = || -> OpResult<Option<Vec<FieldSpec>>> {
            match config.get("fieldSpecs") {
                Some(n) if !n.is_null() => Ok(Some(specs_from_node(n)?)),
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
            )?),
            "SecretGenerator" => Builtin::Generate(GeneratorArgs::from_node(
                GeneratedKind::Secret,
                config,
                "",
                false,
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
                })
            }
            "HashTransformer" => Builtin::Hash(AddHashSuffixes),
            _ => return Err(OpError::new(format!("unable to load builtin {}", id.gvk))),
        };
        Ok(built)
    }
}
