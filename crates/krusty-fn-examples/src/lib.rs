//! Example KRM functions written with [`krusty_fn`], each also built as
//! an executable (`src/bin/`) that works as an exec function or, packaged
//! in an image, as a container function:
//!
//! - [`configmap_generator`]: a generator that makes a ConfigMap;
//! - [`set_labels`]: a transformer that sets labels at field specs, on
//!   the resources a selector chooses;
//! - [`require_limits`]: a validator that wants CPU and memory limits on
//!   every container;
//! - [`inject_sidecar`]: a transformer that injects a typed sidecar
//!   container into selected workloads;
//! - [`render_template`]: a generator rendering a minijinja template with
//!   the functionConfig as data;
//! - [`image_policy`]: a validator whose results name the field and its
//!   current value;
//! - [`set_annotations`]: a transformer configured by a plain ConfigMap.

pub mod configmap_generator;
pub mod image_policy;
pub mod inject_sidecar;
#[cfg(feature = "templates")]
pub mod render_template;
pub mod require_limits;
pub mod set_annotations;
pub mod set_labels;

/// Where a workload kind keeps its pod spec, as a path.
pub fn pod_spec_path(kind: &str) -> Option<&'static str> {
    match kind {
        "Pod" => Some("spec"),
        "Deployment"
        | "StatefulSet"
        | "DaemonSet"
        | "ReplicaSet"
        | "Job"
        | "ReplicationController" => Some("spec.template.spec"),
        "CronJob" => Some("spec.jobTemplate.spec.template.spec"),
        _ => None,
    }
}
