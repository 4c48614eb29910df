//! Transformer configuration: the field specs each built-in uses, starting
//! from Kustomize's defaults and extended by `configurations:` files.

use std::sync::OnceLock;

use krusty_resource::Gvk;
use krusty_yaml::Node;

use crate::error::{OpError, OpResult};
use crate::fieldspec::{merge_all, merged_into_empty, specs_from_node, FieldSpec};
use crate::typed::{self, At, Strictness};
use crate::version::KustomizeVersion;

/// Which fields of which kinds refer to resources of one kind by name.
#[derive(Debug, Clone, PartialEq)]
pub struct NameBackRef {
    /// The kind referred to.
    pub gvk: Gvk,
    /// Fields holding the name.
    pub referrers: Vec<FieldSpec>,
}

/// Field specs for every built-in transformer.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TransformerConfig {
    /// `namePrefix`.
    pub name_prefix: Vec<FieldSpec>,
    /// `nameSuffix`.
    pub name_suffix: Vec<FieldSpec>,
    /// `namespace`.
    pub namespace: Vec<FieldSpec>,
    /// `commonLabels` (metadata, selectors and templates).
    pub common_labels: Vec<FieldSpec>,
    /// `templateLabels` (metadata and templates, for `labels.includeTemplates`).
    pub template_labels: Vec<FieldSpec>,
    /// `labels`: extra fields every `labels:` entry writes to (none by default).
    pub labels: Vec<FieldSpec>,
    /// `commonAnnotations`.
    pub common_annotations: Vec<FieldSpec>,
    /// `nameReference`.
    pub name_reference: Vec<NameBackRef>,
    /// `varReference`.
    pub var_reference: Vec<FieldSpec>,
    /// `images`.
    pub images: Vec<FieldSpec>,
    /// `replicas`.
    pub replicas: Vec<FieldSpec>,
    /// This is Kustomize's default configuration, unchanged (lets merges of
    /// the defaults, which most levels of a build do, skip the work).
    plain_defaults: bool,
}

fn table(text: &str) -> Vec<FieldSpec> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(FieldSpec::from_table_line)
        .collect()
}

fn name_reference_table(text: &str) -> Vec<NameBackRef> {
    let mut out: Vec<NameBackRef> = Vec::new();
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        if let Some(head) = line.strip_prefix("> ") {
            if let Some(spec) = FieldSpec::from_table_line(&format!("{head} -")) {
                out.push(NameBackRef {
                    gvk: spec.gvk,
                    referrers: Vec::new(),
                });
            }
        } else if let (Some(spec), Some(last)) = (FieldSpec::from_table_line(line), out.last_mut())
        {
            last.referrers.push(spec);
        }
    }
    out
}

impl TransformerConfig {
    /// Kustomize's default configuration in release `version`.
    pub fn defaults(version: KustomizeVersion) -> &'static TransformerConfig {
        static DEFAULTS: [OnceLock<TransformerConfig>; KustomizeVersion::ALL.len()] =
            [OnceLock::new(), OnceLock::new()];
        DEFAULTS[version as usize].get_or_init(|| {
            let mut images = table(include_str!("defaults/images.txt"));
            if version >= KustomizeVersion::V5_8_1 {
                // Image volumes, after the container lists of the same level.
                let volumes = table(include_str!("defaults/images_v5_8.txt"));
                images.insert(2, volumes[0].clone());
                images.push(volumes[1].clone());
            }
            TransformerConfig {
                name_prefix: table(include_str!("defaults/name_prefix.txt")),
                name_suffix: table(include_str!("defaults/name_suffix.txt")),
                namespace: table(include_str!("defaults/namespace.txt")),
                common_labels: table(include_str!("defaults/common_labels.txt")),
                template_labels: table(include_str!("defaults/template_labels.txt")),
                labels: Vec::new(),
                common_annotations: table(include_str!("defaults/common_annotations.txt")),
                name_reference: name_reference_table(include_str!("defaults/name_reference.txt")),
                var_reference: table(include_str!("defaults/var_reference.txt")),
                images,
                replicas: table(include_str!("defaults/replicas.txt")),
                plain_defaults: true,
            }
        })
    }

    /// Reads a `configurations:` file; unknown fields are errors, as in Kustomize.
    pub fn from_node(node: &Node) -> OpResult<TransformerConfig> {
        let mut c = TransformerConfig::default();
        if node.is_null() {
            return Ok(c);
        }
        if node.as_map().is_none() {
            return Err(OpError::new(format!(
                "a transformer configuration must be a mapping{}",
                typed::location(node)
            )));
        }
        let known = [
            "namePrefix",
            "nameSuffix",
            "namespace",
            "commonLabels",
            "templateLabels",
            "labels",
            "commonAnnotations",
            "varReference",
            "images",
            "replicas",
            "nameReference",
        ];
        for (name, v) in typed::fields(node, &known, "TransformerConfig", Strictness::Strict)? {
            let specs = || specs_from_node(v, name, Strictness::Strict);
            match name {
                "namePrefix" => c.name_prefix = specs()?,
                "nameSuffix" => c.name_suffix = specs()?,
                "namespace" => c.namespace = specs()?,
                "commonLabels" => c.common_labels = specs()?,
                "templateLabels" => c.template_labels = specs()?,
                "labels" => c.labels = specs()?,
                "commonAnnotations" => c.common_annotations = specs()?,
                "varReference" => c.var_reference = specs()?,
                "images" => c.images = specs()?,
                "replicas" => c.replicas = specs()?,
                _ => c.name_reference = back_refs_from_node(v)?,
            }
        }
        Ok(c)
    }

    /// Adds `other`'s specs to this configuration.
    pub fn merge(&mut self, other: &TransformerConfig) -> OpResult<()> {
        // Most levels of a build merge the plain defaults; merging them into
        // nothing or into themselves changes nothing (tested below), and
        // skipping the work keeps large builds fast.
        if other.plain_defaults {
            if self.plain_defaults {
                return Ok(());
            }
            if self.is_empty() {
                *self = other.clone();
                return Ok(());
            }
        }
        if !other.is_empty() {
            self.plain_defaults = false;
        }
        self.merge_specs(other)
    }

    /// This configuration merged into an empty one, as Kustomize merges a
    /// component's configuration back into its parent's (see
    /// [`merged_into_empty`]; name references are kept as they are).
    pub fn merged_into_empty(&self) -> OpResult<TransformerConfig> {
        if self.plain_defaults {
            return Ok(self.clone());
        }
        Ok(TransformerConfig {
            name_prefix: merged_into_empty(&self.name_prefix)?,
            name_suffix: merged_into_empty(&self.name_suffix)?,
            namespace: merged_into_empty(&self.namespace)?,
            common_labels: merged_into_empty(&self.common_labels)?,
            template_labels: merged_into_empty(&self.template_labels)?,
            labels: merged_into_empty(&self.labels)?,
            common_annotations: merged_into_empty(&self.common_annotations)?,
            name_reference: self.name_reference.clone(),
            var_reference: merged_into_empty(&self.var_reference)?,
            images: merged_into_empty(&self.images)?,
            replicas: merged_into_empty(&self.replicas)?,
            plain_defaults: false,
        })
    }

    /// `true` when this is Kustomize's default configuration, unchanged.
    pub fn is_plain_defaults(&self) -> bool {
        self.plain_defaults
    }

    /// `true` when no transformer has a field spec.
    pub fn is_empty(&self) -> bool {
        self.name_prefix.is_empty()
            && self.name_suffix.is_empty()
            && self.namespace.is_empty()
            && self.common_labels.is_empty()
            && self.template_labels.is_empty()
            && self.labels.is_empty()
            && self.common_annotations.is_empty()
            && self.name_reference.is_empty()
            && self.var_reference.is_empty()
            && self.images.is_empty()
            && self.replicas.is_empty()
    }

    /// The merge itself, spec by spec.
    fn merge_specs(&mut self, other: &TransformerConfig) -> OpResult<()> {
        merge_all(&mut self.name_prefix, &other.name_prefix)?;
        merge_all(&mut self.name_suffix, &other.name_suffix)?;
        merge_all(&mut self.namespace, &other.namespace)?;
        merge_all(&mut self.common_labels, &other.common_labels)?;
        merge_all(&mut self.template_labels, &other.template_labels)?;
        merge_all(&mut self.labels, &other.labels)?;
        merge_all(&mut self.common_annotations, &other.common_annotations)?;
        merge_all(&mut self.var_reference, &other.var_reference)?;
        merge_all(&mut self.images, &other.images)?;
        merge_all(&mut self.replicas, &other.replicas)?;
        for br in &other.name_reference {
            match self.name_reference.iter_mut().find(|b| b.gvk == br.gvk) {
                Some(existing) => merge_all(&mut existing.referrers, &br.referrers)?,
                None => self.name_reference.push(br.clone()),
            }
        }
        Ok(())
    }
}

fn back_refs_from_node(node: &Node) -> OpResult<Vec<NameBackRef>> {
    if node.is_null() {
        return Ok(Vec::new());
    }
    let items = node.as_seq().ok_or_else(|| {
        OpError::new(format!(
            "nameReference must be a list{}",
            crate::typed::location(node)
        ))
    })?;
    items
        .iter()
        .map(|item| {
            let mut back_ref = NameBackRef {
                gvk: Gvk::default(),
                referrers: Vec::new(),
            };
            let known = ["group", "version", "kind", "fieldSpecs"];
            for (name, v) in typed::fields(item, &known, "NameBackRefs", Strictness::Strict)? {
                let path = format!("nameReference.{name}");
                let at = At {
                    owner: "NameBackRefs",
                    path: &path,
                };
                match name {
                    "group" => back_ref.gvk.group = typed::string(v, at)?.into(),
                    "version" => back_ref.gvk.version = typed::string(v, at)?.into(),
                    "kind" => back_ref.gvk.kind = typed::string(v, at)?.into(),
                    _ => {
                        back_ref.referrers =
                            specs_from_node(v, "nameReference.fieldSpecs", Strictness::Strict)?
                    }
                }
            }
            Ok(back_ref)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_unchanged_merged_into_empty() {
        let d = TransformerConfig::defaults(KustomizeVersion::default());
        let mut unflagged = d.clone();
        unflagged.plain_defaults = false;
        let merged = unflagged.merged_into_empty().unwrap();
        assert_eq!(merged.name_prefix, d.name_prefix);
        assert_eq!(merged.common_labels, d.common_labels);
        assert_eq!(merged.namespace, d.namespace);
        assert_eq!(merged.var_reference, d.var_reference);
        assert_eq!(merged.images, d.images);
    }

    #[test]
    fn merged_into_empty_drops_an_any_kind_spec_a_kind_spec_stands_for() {
        let widget = FieldSpec {
            gvk: Gvk {
                kind: "Widget".into(),
                ..Gvk::default()
            },
            path: "metadata/name".into(),
            create: false,
        };
        let mut c = TransformerConfig {
            name_prefix: vec![FieldSpec::any("metadata/name", false), widget.clone()],
            ..TransformerConfig::default()
        };
        assert_eq!(
            c.merged_into_empty().unwrap().name_prefix,
            vec![widget.clone()]
        );
        c.name_prefix = vec![FieldSpec::any("metadata/name", true), widget];
        assert!(c.merged_into_empty().is_err());
    }

    #[test]
    fn defaults_load_every_table() {
        let d = TransformerConfig::defaults(KustomizeVersion::default());
        assert_eq!(d.name_prefix, vec![FieldSpec::any("metadata/name", false)]);
        assert!(d.common_labels.len() > 20);
        assert!(d
            .common_labels
            .contains(&FieldSpec::any("metadata/labels", true)));
        let cm = d
            .name_reference
            .iter()
            .find(|b| b.gvk.kind == "ConfigMap")
            .unwrap();
        assert_eq!(cm.gvk.version, "v1");
        assert!(cm.referrers.iter().any(|s| s.gvk.kind == "CronJob"));
        assert_eq!(
            TransformerConfig::defaults(KustomizeVersion::V5_5_0)
                .images
                .len(),
            4
        );
        let images = &TransformerConfig::defaults(KustomizeVersion::V5_8_1).images;
        assert_eq!(
            images[2],
            FieldSpec::any("spec/volumes[]/image/reference", true)
        );
        assert_eq!(
            images[5],
            FieldSpec::any("spec/template/spec/volumes[]/image/reference", true)
        );
    }
}

#[cfg(test)]
mod merge_stability {
    use super::*;

    /// The shortcuts in [`TransformerConfig::merge`] rely on these.
    #[test]
    fn merging_the_defaults_is_stable() {
        let d = TransformerConfig::defaults(KustomizeVersion::default()).clone();
        let mut from_empty = TransformerConfig::default();
        from_empty.merge_specs(&d).unwrap();
        from_empty.plain_defaults = true;
        assert_eq!(from_empty, d);
        let mut twice = d.clone();
        twice.merge_specs(&d).unwrap();
        assert_eq!(twice, d);
    }
}
