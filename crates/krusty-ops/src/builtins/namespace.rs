//! NamespaceTransformer: moves namespaced resources into one namespace.

use krusty_resource::{ResMap, Resource};
use krusty_yaml::Node;

use crate::error::{OpError, OpResult};
use crate::fieldspec::{apply, CreateKind, FieldSpec, KindIndex};
use crate::parallel;
use crate::version::KustomizeVersion;

/// Which RoleBinding/ClusterRoleBinding subjects get the namespace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SubjectsMode {
    /// Only subjects named `default` (Kustomize's default).
    #[default]
    DefaultOnly,
    /// Every subject of kind ServiceAccount.
    AllServiceAccounts,
    /// No subjects.
    None,
}

impl SubjectsMode {
    /// Parses `setRoleBindingSubjects`.
    pub fn parse(s: &str) -> OpResult<SubjectsMode> {
        match s {
            "" | "defaultOnly" => Ok(SubjectsMode::DefaultOnly),
            "allServiceAccounts" => Ok(SubjectsMode::AllServiceAccounts),
            "none" => Ok(SubjectsMode::None),
            other => Err(OpError::new(format!(
                "invalid value for setRoleBindingSubjects: {other:?} (use defaultOnly, allServiceAccounts or none)"
            ))),
        }
    }
}

/// Sets the namespace of every namespaced resource and of the fields in `specs`.
#[derive(Debug, Clone, PartialEq)]
pub struct SetNamespace {
    /// The namespace.
    pub namespace: String,
    /// Further fields holding a namespace (webhook services, etc.).
    pub specs: Vec<FieldSpec>,
    /// Only set namespaces that are unset or empty.
    pub unset_only: bool,
    /// Which binding subjects to update.
    pub subjects: SubjectsMode,
}

/// The annotation Kustomize v5.8.1 marks the resources of a Helm chart
/// with (a build annotation, never printed).
pub const HELM_GENERATED_ANNOTATION: &str = "internal.config.kubernetes.io/helm-generated";

impl SetNamespace {
    /// Applies the namespace.
    pub fn apply(&self, resources: &mut ResMap, version: KustomizeVersion) -> OpResult<()> {
        if self.namespace.is_empty() {
            return Ok(());
        }
        let index = KindIndex::new(self.specs.iter().map(|s| s.gvk.kind.as_str()));
        parallel::try_each(resources.resources_mut(), |r| {
            // From Kustomize v5.8.1 on, helm sets the namespace of its
            // resources, and this transformer leaves them alone.
            if version >= KustomizeVersion::V5_8_1
                && r.annotation(HELM_GENERATED_ANNOTATION) == Some("true")
            {
                return Ok(());
            }
            r.store_previous_id();
            self.apply_one(r, &index)
                .map_err(|e| e.context("namespace transformation failed"))
        })?;
        resources.check_unique().map_err(|e| {
            OpError::new(format!(
                "namespace transformation produces ID conflict: {e}"
            ))
        })
    }

    /// Sets the namespace of one resource without recording its previous
    /// id or checking for conflicts (Kustomize's namespace filter run on
    /// its own, as ValueAddTransformer runs it).
    pub fn apply_to(&self, r: &mut Resource) -> OpResult<()> {
        self.apply_one(r, &KindIndex::default())
    }

    fn set_value(&self, n: &mut Node) -> OpResult<()> {
        if self.unset_only && !n.as_str().unwrap_or_default().is_empty() {
            return Ok(());
        }
        if n.as_map().is_some() || n.as_seq().is_some() {
            return Err(crate::path::wrong_kind("ScalarNode", n));
        }
        n.replace_keeping_pos(Node::string(self.namespace.as_str()));
        Ok(())
    }

    fn apply_one(&self, r: &mut Resource, index: &KindIndex) -> OpResult<()> {
        let gvk = r.gvk();
        let api_version = r.api_version().to_string();
        if !gvk.is_cluster_scoped() {
            apply(
                &mut r.node,
                &gvk,
                &FieldSpec::any("metadata/namespace", true),
                CreateKind::Scalar,
                &mut |n: &mut Node| self.set_value(n).map_err(not_scalar),
            )?;
        }
        let is_binding = gvk.kind == "RoleBinding" || gvk.kind == "ClusterRoleBinding";
        if is_binding {
            self.set_subjects(&mut r.node)?;
        }
        for spec in index.positions(&gvk.kind).map(|i| &self.specs[i]) {
            if spec.path == "metadata/namespace" {
                continue;
            }
            if spec.path == "metadata/name" && api_version != "v1" {
                continue;
            }
            // Kustomize drops a binding kind's own spec for its subjects'
            // namespaces (the subjects rule above decides them); a spec
            // for any kind, or one naming `subjects` itself, applies.
            if is_binding && !spec.gvk.kind.is_empty() && spec.path == "subjects/namespace" {
                continue;
            }
            // A value of the wrong kind is reported with the field and
            // the object, as Kustomize reports it.
            let mut reached_a_collection = false;
            apply(
                &mut r.node,
                &gvk,
                spec,
                CreateKind::Scalar,
                &mut |n: &mut Node| {
                    let set = self.set_value(n);
                    reached_a_collection = set.is_err();
                    set
                },
            )
            .map_err(|e| match reached_a_collection {
                true => not_scalar(e.context(format!(
                    "considering field '{}' of object {}",
                    spec.path,
                    r.id()
                ))),
                false => e,
            })?;
        }
        Ok(())
    }

    fn set_subjects(&self, node: &mut Node) -> OpResult<()> {
        if self.subjects == SubjectsMode::None {
            return Ok(());
        }
        let Some(subjects) = node.get_mut("subjects").and_then(Node::as_seq_mut) else {
            return Ok(());
        };
        for s in subjects {
            let wanted = match self.subjects {
                SubjectsMode::DefaultOnly => {
                    s.get("name").and_then(Node::as_str) == Some("default")
                }
                SubjectsMode::AllServiceAccounts => {
                    s.get("kind").and_then(Node::as_str) == Some("ServiceAccount")
                }
                SubjectsMode::None => false,
            };
            if !wanted || s.as_map().is_none() {
                continue;
            }
            if s.get("namespace").is_none() {
                s.set("namespace", Node::string(""));
            }
            if let Some(ns) = s.get_mut("namespace") {
                self.set_value(ns).map_err(not_scalar)?;
            }
        }
        Ok(())
    }
}

/// Kustomize's words for a namespace field spec that reaches a map or a
/// list.
fn not_scalar(e: OpError) -> OpError {
    e.context("namespace field specs must target scalar nodes")
}
