//! A validator: every container (and init container) of every workload
//! must set CPU and memory limits. Each missing limit is an error result
//! naming the resource, the field and the file.
//!
//! ```yaml
//! apiVersion: fn.krusty.dev/v1
//! kind: RequireLimits
//! metadata:
//!   name: limits
//! resources: [cpu, memory]   # the default
//! ```

use krusty_fn::Node;
use krusty_fn::{FnError, FnResult, ResourceList};
use serde::Deserialize;

#[derive(Deserialize)]
#[serde(default)]
struct Config {
    resources: Vec<String>,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            resources: vec!["cpu".into(), "memory".into()],
        }
    }
}

/// Where each workload kind keeps its pod spec.
fn pod_spec_path(kind: &str) -> Option<&'static [&'static str]> {
    match kind {
        "Pod" => Some(&["spec"]),
        "Deployment"
        | "StatefulSet"
        | "DaemonSet"
        | "ReplicaSet"
        | "Job"
        | "ReplicationController" => Some(&["spec", "template", "spec"]),
        "CronJob" => Some(&["spec", "jobTemplate", "spec", "template", "spec"]),
        _ => None,
    }
}

/// Reports every container without the required limits.
pub fn validate(list: &mut ResourceList) -> Result<(), FnError> {
    let config: Config = list.config()?;
    let mut results = Vec::new();
    for item in &list.items {
        let kind = item.get("kind").and_then(Node::as_str).unwrap_or("");
        let Some(path) = pod_spec_path(kind) else {
            continue;
        };
        let Some(pod) = item.get_path(path) else {
            continue;
        };
        for list_name in ["initContainers", "containers"] {
            let containers = pod.get(list_name).and_then(Node::as_seq);
            for (i, c) in containers.into_iter().flatten().enumerate() {
                let name = c.get("name").and_then(Node::as_str).unwrap_or("?");
                for resource in &config.resources {
                    let set = c
                        .get_path(&["resources", "limits", resource])
                        .is_some_and(|v| !v.is_null());
                    if !set {
                        let field = format!(
                            "{}.{list_name}[{i}].resources.limits.{resource}",
                            path.join(".")
                        );
                        results.push(
                            FnResult::error(format!("container '{name}' has no {resource} limit"))
                                .about(item)
                                .at_field(field),
                        );
                    }
                }
            }
        }
    }
    if results.is_empty() {
        results.push(FnResult::info("every container sets its limits"));
    }
    list.results.extend(results);
    Ok(())
}
