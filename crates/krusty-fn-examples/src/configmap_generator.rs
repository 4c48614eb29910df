//! A generator: appends a ConfigMap made from its functionConfig.
//!
//! ```yaml
//! apiVersion: fn.krusty.dev/v1
//! kind: ConfigMapGenerator
//! metadata:
//!   name: settings        # the ConfigMap's name unless spec.name is set
//! spec:
//!   name: app-settings
//!   namespace: web        # optional
//!   data: {LOG_LEVEL: info}
//!   hash: true            # ask the orchestrator for a content-hash suffix
//! ```

use std::collections::BTreeMap;

use krusty_fn::Node;
use krusty_fn::{object, FnError, FnResult, ResourceList};
use serde::Deserialize;

#[derive(Deserialize, Default)]
#[serde(default)]
struct Config {
    metadata: Metadata,
    spec: Spec,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Metadata {
    name: String,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Spec {
    name: String,
    namespace: String,
    data: BTreeMap<String, String>,
    hash: bool,
}

/// Appends the configured ConfigMap to the list.
pub fn generate(list: &mut ResourceList) -> Result<(), FnError> {
    let config: Config = list.config()?;
    let name = if config.spec.name.is_empty() {
        config.metadata.name
    } else {
        config.spec.name
    };
    if name.is_empty() {
        return Err("spec.name (or metadata.name) is required".into());
    }
    let mut cm = object::new_resource("v1", "ConfigMap", &name);
    if !config.spec.namespace.is_empty() {
        object::set_path(
            &mut cm,
            &["metadata", "namespace"],
            Node::string(&config.spec.namespace),
        );
    }
    if config.spec.hash {
        object::set_annotation(&mut cm, "kustomize.config.k8s.io/needs-hash", "true");
    }
    let mut data = Node::map();
    for (k, v) in &config.spec.data {
        data.set(k, Node::string(v));
    }
    cm.set("data", data);
    list.results.push(FnResult::info(format!(
        "generated ConfigMap {name} with {} keys",
        config.spec.data.len()
    )));
    list.items.push(cm);
    Ok(())
}
