//! A validator: every container image of every workload must name a tag
//! or a digest, must not use the `latest` tag and, when `registries` is
//! set, must come from one of them. Each violation is an error result
//! naming the resource, the field (`…containers[name=app].image`) and its
//! current value.
//!
//! ```yaml
//! apiVersion: fn.krusty.dev/v1
//! kind: ImagePolicy
//! metadata:
//!   name: images
//! registries: [registry.example.com/]   # optional prefixes
//! ```

use krusty_fn::{FnError, FnResult, KubeObject, Node, ResourceList};
use serde::Deserialize;

use crate::pod_spec_path;

#[derive(Deserialize, Default)]
#[serde(default)]
struct Config {
    registries: Vec<String>,
}

/// What is wrong with `image`, if anything.
fn violation(image: &str, registries: &[String]) -> Option<String> {
    if !registries.is_empty() && !registries.iter().any(|r| image.starts_with(r.as_str())) {
        return Some(format!(
            "image '{image}' is not from an allowed registry ({})",
            registries.join(", ")
        ));
    }
    if image.contains('@') {
        return None;
    }
    let last = image.rsplit('/').next().unwrap_or(image);
    match last.split_once(':') {
        None => Some(format!("image '{image}' has no tag")),
        Some((_, "latest")) => Some(format!("image '{image}' uses the latest tag")),
        Some(_) => None,
    }
}

/// Reports every image that breaks the policy.
pub fn validate(list: &mut ResourceList) -> Result<(), FnError> {
    let config: Config = list.config()?;
    let mut results = Vec::new();
    for item in &list.items {
        let Some(pod) = pod_spec_path(item.kind()) else {
            continue;
        };
        for group in ["initContainers", "containers"] {
            let containers = item.at(&format!("{pod}.{group}"))?.and_then(Node::as_seq);
            for c in containers.into_iter().flatten() {
                let name = c.field_str("name")?.unwrap_or_default();
                let image = c.field_str("image")?.unwrap_or_default();
                if let Some(why) = violation(image, &config.registries) {
                    results.push(
                        FnResult::error(why)
                            .about(item)
                            .at_field(format!("{pod}.{group}[name={name}].image"))
                            .with_values(Some(image), None::<&str>),
                    );
                }
            }
        }
    }
    if results.is_empty() {
        results.push(FnResult::info("every image follows the policy"));
    }
    list.results.extend(results);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::violation;

    #[test]
    fn tags_digests_and_registries() {
        let none: Vec<String> = vec![];
        assert!(violation("nginx:1.27", &none).is_none());
        assert!(violation("localhost:5000/nginx", &none).is_some());
        assert!(violation("nginx@sha256:abc", &none).is_none());
        assert!(violation("nginx:latest", &none).is_some());
        assert!(violation("nginx:1", &["r.io/".to_string()]).is_some());
    }
}
